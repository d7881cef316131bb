"""Where were gomove's lost games lost? Its own search traces each one, move by move.

    python scripts/trace_losses.py docs/matches/9x9-15000/pattern+pw \\
        --model RUN/model.pt --policy RUN_LIGHT/policy.npz [--sims 15000] [--workers 2]

For every game of match rows (gomove match folders with results.jsonl and match.json)
that gomove lost, replays its moves and, at each of gomove's turns, runs a fresh search
(no tree kept) for gomove's win rate; between two of gomove's turns, ranks the
opponent's reply by the full model (its rank among the legal moves and pass: the order
in which progressive widening opens them). The drop of a game is the largest fall of
that win rate from one of gomove's turns to the next. Prints a line a game (index,
colour, the move of the drop, the win rates before and after, the opponent's reply and
its model rank), then how often the reply at the drop is ranked beyond the first n
against how often any of the opponent's moves is. The win rates are the engine's own
judgement, not a stronger program's.
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from gomove.board.board import BLACK, WHITE, copy_board, new_board, play
from gomove.board.coords import gtp_to_loc
from gomove.evaluate.match import GameResult, read_results
from gomove.play.predict import Predictor
from gomove.play.search.search import Search
from gomove.play.search.settings import SearchConfig
from gomove.playout.policy import PatternPolicy

_WORKER: dict = {}


def _start(model: str, policy: str, sims: int) -> None:
    cfg = SearchConfig(sims=sims, reuse=False, resign=0, seed=1)
    predictor = Predictor.from_checkpoint(model)
    _WORKER.update(search=Search(cfg, PatternPolicy.load(policy), predictor), predictor=predictor)


def _loc(move: str, size: int) -> tuple[int, int]:
    color, point = move.split()
    return (BLACK if color.upper() == "B" else WHITE), gtp_to_loc(point, size)


def model_rank(predictor: Predictor, board, color: int, loc: int) -> int:
    """1 + how many moves the full model puts before loc (0 when loc is not a candidate)."""
    pred = predictor.predict(board, color)
    order = [int(pred.locs[i]) for i in pred.order()]
    return order.index(loc) + 1 if loc in order else 0


def trace(args: tuple[GameResult, int, float]) -> dict:
    """gomove's win rate at each of its turns, and the model rank of each opponent move."""
    result, size, komi = args
    search, predictor = _WORKER["search"], _WORKER["predictor"]
    me = BLACK if result.gomove_color == "B" else WHITE
    b = new_board(size)
    turns = []  # (move number, gomove's win rate there)
    ranks = []  # (move number, the opponent's move, its model rank)
    for i, move in enumerate(result.moves):
        color, loc = _loc(move, size)
        if color == me:
            res = search.run(copy_board(b), me, komi)
            turns.append((i, float(res.winrate)))
        else:
            ranks.append((i, move, model_rank(predictor, b, color, loc)))
        play(b, loc, color)
    drop = max(
        ((turns[k][1] - turns[k + 1][1], turns[k], turns[k + 1]) for k in range(len(turns) - 1)),
        default=None,
    )
    out = {"index": result.index, "color": result.gomove_color, "moves": len(result.moves),
           "turns": turns, "ranks": ranks}  # fmt: skip
    if drop is not None:
        fall, (i0, w0), (i1, w1) = drop
        reply = next((r for r in ranks if i0 < r[0] < i1), None)
        out["drop"] = {"at": i0 + 1, "before": w0, "after": w1, "fall": fall,
                       "gomove_move": result.moves[i0], "reply": reply}  # fmt: skip
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("rows", type=Path, nargs="+", help="match rows (results.jsonl, match.json)")
    p.add_argument("--model", required=True)
    p.add_argument("--policy", required=True)
    p.add_argument("--sims", type=int, default=15000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--beyond", type=int, default=10, help="rank counted as 'beyond the first n'")
    p.add_argument("--out", type=Path, help="write every trace as JSON lines here")
    args = p.parse_args()
    jobs = []
    for row in args.rows:
        meta = json.loads((row / "match.json").read_text())
        for r in read_results(row).values():
            if not r.gomove_won:
                jobs.append((r, int(meta["size"]), float(meta["komi"])))
    print(f"{len(jobs)} lost games")
    with ProcessPoolExecutor(args.workers, initializer=_start,
                             initargs=(args.model, args.policy, args.sims)) as pool:  # fmt: skip
        traces = list(pool.map(trace, jobs))
    if args.out:
        args.out.write_text("".join(json.dumps(t) + "\n" for t in traces))
    at_drop, all_ranks = [], []
    for t in traces:
        all_ranks += [r[2] for r in t["ranks"]]
        d = t.get("drop")
        if d is None:
            continue
        _, move, rank = d["reply"] or (None, "-", "-")
        if d["reply"]:
            at_drop.append(rank)
        print(f"game {t['index']:3d} {t['color']} ({t['moves']} moves): drop at move {d['at']} "
              f"({d['gomove_move']}) {d['before']:.2f} -> {d['after']:.2f}, "
              f"reply {move} model rank {rank}")  # fmt: skip
    n = args.beyond
    share = sum(r > n or r == 0 for r in at_drop) / max(len(at_drop), 1)
    base = sum(r > n or r == 0 for r in all_ranks) / max(len(all_ranks), 1)
    print(
        f"the opponent's reply at the drop ranked beyond {n} by the model: "
        f"{share:.0%} of {len(at_drop)}; any opponent move: {base:.0%} of {len(all_ranks)}"
    )


if __name__ == "__main__":
    main()
