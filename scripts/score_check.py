"""gomove analysis's scores, win rates and ownership against KataGo's on real positions.

    PYTHONPATH=. python scripts/score_check.py --out runs/score_check/gomove.jsonl \
        --positions ../katago/positions.jsonl --games ../katago/games.jsonl \
        --data ../shared/data/tygem-9d-2006-06.zip [--visits 500] [--ownership crf]

The references are KataGo's evaluations of the same positions (one JSON line each:
``game``, the zip member; ``turn``, the moves played before the position; ``to_move``;
``komi``; ``scoreLead`` and ``winrate`` in Black's view; ``ownership``, 361 values in
Black's view, row by row from A19): ``--positions`` spread over many games,
``--games`` every 5th turn of whole games. Each position is analysed here by the
engine of ``gomove analysis`` with its defaults (the shipped model and policy,
``--tree auto``, seed 0; ``--ownership`` as given), in this process, as KaTrain asks
for it: the game's moves, its komi, Chinese rules, ``maxVisits`` = KaTrain 1.20's
default ``max_visits`` (500, its config.json), Black's view, the ownership asked for.
Each position gets a fresh search (the same seed, whatever the order), and no
``maxTime``, so that a rerun gives the same numbers. Whichever gomove is first on
PYTHONPATH is measured, so one script compares two checkouts.

gomove's answers go to ``--out`` (one JSON line a position; a rerun skips those
done), then the measures are printed, one JSON object:

- ``lead_error``: the median |rootInfo scoreLead - KataGo's scoreLead| at turns
  ``--from`` .. ``--to`` (100 .. 250), with ``lead_bias`` (the mean signed error);
- ``best_gap``: the median |best move's scoreLead - rootInfo's| at those turns;
- ``lead_step``: the mean |change of rootInfo's scoreLead| between analysed turns 5
  apart over the whole games, and KataGo's (``katago_lead_step``);
- ``spearman_winrate``, ``spearman_lead``: Spearman's rank correlations of rootInfo's
  winrate and scoreLead with KataGo's over all positions;
- ``ownership_sign``: the share of points KataGo calls owned (|ownership| >= 0.5) that
  gomove gives to the same colour, and ``ownership_mae``, the mean |difference|, over
  all positions;
- ``score_stdev``: the median rootInfo scoreStdev at turns --from .. --to.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
from sgfmill import sgf

COLUMNS = "ABCDEFGHJKLMNOPQRST"  # GTP: no I
VISITS = 500  # KaTrain 1.20's default max_visits (katrain/config.json, "engine")
ENGINE = None  # each worker's AnalysisEngine (make_engine)


def read_moves(zip_path: Path, names: set[str]) -> dict[str, list[list[str]]]:
    """The main line of each named game of a zip of SGF files, in KataGo's move format."""
    out = {}
    with zipfile.ZipFile(zip_path) as zf:
        for name in sorted(names):
            game = sgf.Sgf_game.from_bytes(zf.read(name))
            moves = []
            for node in game.get_main_sequence()[1:]:
                colour, move = node.get_move()
                if colour is None:
                    continue
                vertex = "pass" if move is None else f"{COLUMNS[move[1]]}{move[0] + 1}"
                moves.append([colour.upper(), vertex])
            out[name] = moves
    return out


def read_reference(path: Path | None) -> list[dict]:
    if path is None or not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def make_engine(ownership: str | None, visits: int):
    """The engine `gomove analysis` builds with its defaults (gomove.cli.analysis)."""
    global ENGINE
    from gomove.cli.model_args import load_model, load_policy, territory_model
    from gomove.play.analysis.engine import AnalysisEngine
    from gomove.play.search.presets import engine_settings
    from gomove.play.search.search import Search

    predictor, policy = load_model(None), load_policy(None)
    territory = territory_model(ownership, None)
    base = {"seed": 0, "resign": 0.0}
    cfg, sized = engine_settings([], "auto", base, predictor, policy is not None)

    def new_search(size: int) -> Search:
        return Search(sized(size) if sized is not None else cfg, policy, predictor)

    ENGINE = AnalysisEngine(new_search, predictor, policy, default_visits=visits, seed=0,
                            territory=territory)  # fmt: skip


def analyse(job: tuple[dict, list[list[str]], int]) -> dict:
    """One reference position analysed: gomove's answer beside the reference's keys."""
    ref, moves, visits = job
    turn = ref["turn"]
    query = {"id": f"{ref['game']}:{turn}", "moves": moves[:turn], "rules": "chinese",
             "komi": ref["komi"], "boardXSize": 19, "boardYSize": 19, "maxVisits": visits,
             "includeOwnership": True,
             "overrideSettings": {"reportAnalysisWinratesAs": "BLACK"}}  # fmt: skip
    ENGINE.searches.clear()  # a fresh search: the same seed whatever the order
    start = time.process_time()
    (r,) = [x for x in ENGINE.handle(query) if "turnNumber" in x or "error" in x]
    if "error" in r:
        raise RuntimeError(f"{query['id']}: {r['error']}")
    root, infos = r["rootInfo"], r["moveInfos"]
    return {
        "game": ref["game"],
        "turn": turn,
        "to_move": root["currentPlayer"],
        "scoreLead": root["scoreLead"],
        "scoreStdev": root.get("scoreStdev"),
        "winrate": root["winrate"],
        "best_scoreLead": infos[0]["scoreLead"] if infos else root["scoreLead"],
        "best_visits": infos[0]["visits"] if infos else 0,
        "moves": len(infos),
        "ownership": [round(x, 3) for x in r["ownership"]],
        "seconds": round(time.process_time() - start, 3),
    }


def run(refs: list[dict], zip_path: Path, out: Path, args: argparse.Namespace) -> list[dict]:
    """gomove's answers for every reference position (those in out kept), in refs' order."""
    done = {(x["game"], x["turn"]): x for x in read_reference(out)}
    todo = [x for x in refs if (x["game"], x["turn"]) not in done]
    if todo:
        moves = read_moves(zip_path, {x["game"] for x in todo})
        jobs = [(x, moves[x["game"]], args.visits) for x in todo]
        out.parent.mkdir(parents=True, exist_ok=True)
        init = (args.ownership, args.visits)
        with out.open("a") as f, multiprocessing.Pool(args.workers, make_engine, init) as pool:
            for i, row in enumerate(pool.imap_unordered(analyse, jobs), 1):
                ref = next(x for x in todo if (x["game"], x["turn"]) == (row["game"], row["turn"]))
                if row["to_move"] != ref["to_move"]:
                    raise RuntimeError(f"{row['game']}:{row['turn']}: another colour to move")
                f.write(json.dumps(row) + "\n")
                f.flush()
                done[(row["game"], row["turn"])] = row
                print(f"{i}/{len(jobs)} {row['game']}:{row['turn']} {row['seconds']} s",
                      file=sys.stderr)  # fmt: skip
    return [done[(x["game"], x["turn"])] for x in refs]


def ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties given their mean rank."""
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x))
    r[order] = np.arange(1, len(x) + 1)
    for v in np.unique(x):
        tie = x == v
        r[tie] = r[tie].mean()
    return r


def spearman(a, b) -> float:
    return float(np.corrcoef(ranks(np.asarray(a, float)), ranks(np.asarray(b, float)))[0, 1])


def lead_steps(rows: list[dict], every: int) -> list[float]:
    """|change of scoreLead| between turns `every` apart of the same game."""
    at = {(x["game"], x["turn"]): x["scoreLead"] for x in rows}
    return [abs(at[(g, t + every)] - lead) for (g, t), lead in at.items()
            if (g, t + every) in at]  # fmt: skip


def mean_or_none(x: list[float]) -> float | None:
    return round(float(np.mean(x)), 2) if x else None


def measures(pos_ref, pos_got, game_ref, game_got, lo: int, hi: int) -> dict:
    """The module docstring's measures of gomove's answers (pos_got, game_got) against the
    references (pos_ref, game_ref), row for row."""
    mid = [(r, g) for r, g in zip(pos_ref, pos_got, strict=True) if lo <= r["turn"] <= hi]
    err = np.array([g["scoreLead"] - r["scoreLead"] for r, g in mid])
    gap = np.array([abs(g["best_scoreLead"] - g["scoreLead"]) for _, g in mid])
    own_ref = np.array([r["ownership"] for r in pos_ref])
    own_got = np.array([g["ownership"] for g in pos_got])
    owned = np.abs(own_ref) >= 0.5
    stdevs = [g["scoreStdev"] for _, g in mid if g["scoreStdev"] is not None]
    rho_wr = spearman([r["winrate"] for r in pos_ref], [g["winrate"] for g in pos_got])
    rho_lead = spearman([r["scoreLead"] for r in pos_ref], [g["scoreLead"] for g in pos_got])
    return {
        "positions": len(pos_ref),
        "positions_mid": len(mid),
        "lead_error": round(float(np.median(np.abs(err))), 2),
        "lead_bias": round(float(err.mean()), 2),
        "best_gap": round(float(np.median(gap)), 2),
        "lead_step": mean_or_none(lead_steps(game_got, 5)),
        "katago_lead_step": mean_or_none(lead_steps(game_ref, 5)),
        "spearman_winrate": round(rho_wr, 3),
        "spearman_lead": round(rho_lead, 3),
        "ownership_sign": round(float((np.sign(own_got) == np.sign(own_ref))[owned].mean()), 4),
        "ownership_mae": round(float(np.abs(own_got - own_ref).mean()), 4),
        "score_stdev": round(float(np.median(stdevs)), 1) if stdevs else None,
        "seconds_per_position": round(float(np.mean([g["seconds"] for g in pos_got])), 3),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])  # fmt: skip
    ap.add_argument("--positions", type=Path, default=Path("../katago/positions.jsonl"))
    ap.add_argument("--games", type=Path, default=Path("../katago/games.jsonl"))
    ap.add_argument("--data", type=Path, default=Path("../shared/data/tygem-9d-2006-06.zip"))
    ap.add_argument("--out", type=Path, required=True,
                    help="gomove's answers (JSON lines; the positions' and, beside it with "
                    "-games before .jsonl, the games')")  # fmt: skip
    ap.add_argument("--visits", type=int, default=VISITS)
    ap.add_argument("--ownership", choices=("playouts", "crf"), default=None)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--from", dest="lo", type=int, default=100)
    ap.add_argument("--to", dest="hi", type=int, default=250)
    args = ap.parse_args(argv)
    pos_ref, game_ref = read_reference(args.positions), read_reference(args.games)
    if not pos_ref:
        sys.exit(f"score_check: no reference positions in {args.positions}")
    pos_got = run(pos_ref, args.data, args.out, args)
    games_out = args.out.with_name(args.out.stem + "-games.jsonl")
    game_got = run(game_ref, args.data, games_out, args) if game_ref else []
    print(json.dumps(measures(pos_ref, pos_got, game_ref, game_got, args.lo, args.hi)))


if __name__ == "__main__":
    main()
