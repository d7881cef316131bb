"""Labelling positions for simulation balancing: gomove's search or another engine's value.

Positions are sampled from SGF games and each labelled by the search (pattern
playouts, progressive widening) or by another engine over GTP
(``lz-genmove_analyze``: Leela Zero, KataGo, Pachi) with its win rate for BLACK,
written line by line to a JSONL file (gomove.data.value_labels) that a rerun extends.
A stronger program's labels give balancing something to correct: gomove's own
searches end in the very playouts being balanced.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from gomove.board.board import BLACK
from gomove.board.coords import loc_to_gtp, move_to_loc
from gomove.board.replay import board_at
from gomove.data.value_labels import Labelled, read_labels
from gomove.evaluate.match import GtpClient
from gomove.play.predict import Predictor
from gomove.play.search.search import Search
from gomove.play.search.settings import SearchConfig
from gomove.playout.policy import PatternPolicy
from gomove.reading.games import expand_paths, load_game
from gomove.reading.sgf import GameError


def sgf_files(paths: Iterable[str | Path]) -> list[str]:
    """The .sgf files named, or under the folders named, sorted (positions are named by file)."""
    out: list[str] = []
    for p in expand_paths(list(paths)):
        out += [str(f) for f in sorted(p.rglob("*.sgf"))] if p.is_dir() else [str(p)]
    return sorted(out)


def sample_positions(
    sgf_paths: Iterable[str | Path], per_game: int, seed: int, skip_end: int = 5
) -> tuple[list[tuple[str, int]], int]:
    """(sgf, move) pairs, per_game moves drawn without repeats from each game's moves
    1..len - skip_end (settled end positions teach little); returns them and the number
    of files skipped because they do not read."""
    rng = np.random.default_rng(seed)
    out: list[tuple[str, int]] = []
    skipped = 0
    for path in sgf_files(sgf_paths):
        try:
            n = len(load_game(path).moves)
        except (GameError, OSError, ValueError):
            skipped += 1
            continue
        last = n - skip_end
        if last < 1:
            continue
        for m in sorted(rng.choice(np.arange(1, last + 1), min(per_game, last), replace=False)):
            out.append((path, int(m)))
    return out, skipped


_worker: dict = {}


def _init_labeller(
    model: str | None, policy: str | None, sims: int, seed: int, engine: list[str] | None
) -> None:
    if engine is not None:
        _worker["engine"] = GtpClient(engine)
        return
    cfg = SearchConfig(sims=sims, seed=seed, resign=0.0)
    _worker["search"] = Search(cfg, PatternPolicy.load(policy), Predictor.from_checkpoint(model))


def analyze_value(text: str) -> tuple[float, int]:
    """(win rate of the side to move, visits) of the move an ``lz-genmove_analyze``
    answer chose: its last ``info`` line's ``order 0`` block (winrate in 1/10000),
    visits summed over the line's moves."""
    lines = [x for x in text.splitlines() if x.startswith("info ")]
    if not lines:
        raise ValueError(f"no analysis in the answer {text[:80]!r}")
    blocks = [b.split() for b in lines[-1].split("info ")[1:]]
    fields = [dict(zip(b[0::2], b[1::2], strict=False)) for b in blocks]
    try:
        best = next(f for f in fields if f.get("order") == "0")
        return int(best["winrate"]) / 10_000, sum(int(f["visits"]) for f in fields)
    except (StopIteration, KeyError, ValueError):
        raise ValueError(f"no order-0 move with winrate in {lines[-1][:120]!r}") from None


def engine_label(client: GtpClient, sgf: str, move: int, komi: float = 7.5) -> dict:
    """Label the position before move ``move`` of sgf by an engine's genmove analysis."""
    game = load_game(sgf)
    if game.setup:
        raise ValueError(f"{sgf}: setup stones cannot be sent over GTP play commands")
    if not 1 <= move <= len(game.moves):
        raise ValueError(f"{sgf}: move must be in 1..{len(game.moves)}, not {move}")
    client.new_game(game.size, komi)
    for color, m in game.moves[: move - 1]:
        vertex = loc_to_gtp(move_to_loc(m, game.size), game.size)
        client.must(f"play {'b' if color == BLACK else 'w'} {vertex}")
    to_move = game.moves[move - 1][0]
    win, visits = analyze_value(
        client.must(f"lz-genmove_analyze {'b' if to_move == BLACK else 'w'} 100000")
    )
    value = win if to_move == BLACK else 1.0 - win
    return {"sgf": sgf, "move": move, "value": round(value, 5), "sims": visits}


def _label(job: tuple[str, int]) -> dict:
    sgf, move = job
    if "engine" in _worker:
        return engine_label(_worker["engine"], sgf, move)
    board, to_move = board_at(load_game(sgf), move)
    search: Search = _worker["search"]
    search.clear()
    r = search.run(board, to_move, 7.5)
    value = r.winrate if to_move == BLACK else 1.0 - r.winrate
    return {"sgf": sgf, "move": move, "value": round(float(value), 5), "sims": r.sims}


def label_positions(
    jobs: Sequence[tuple[str, int]],
    out: str | Path,
    model: str | None,
    policy: str | None,
    sims: int,
    workers: int = 1,
    seed: int = 0,
    progress: bool = True,
    engine: list[str] | None = None,
) -> list[Labelled]:
    """Label each (sgf, move) by a search of sims simulations (komi 7.5), or by the GTP
    engine command ``engine`` (its own budget), appending to the JSONL file out as each
    finishes; positions already in out are not searched again."""
    out = Path(out)
    done = {(x.sgf, x.move) for x in read_labels(out)} if out.exists() else set()
    todo = [j for j in jobs if j not in done]
    if todo:
        with ProcessPoolExecutor(workers, initializer=_init_labeller,
                                 initargs=(model, policy, sims, seed, engine)) as ex, \
                open(out, "a") as f:  # fmt: skip
            for d in tqdm(ex.map(_label, todo, chunksize=4), total=len(todo), desc="label",
                          disable=not progress):  # fmt: skip
                f.write(json.dumps(d) + "\n")
                f.flush()
                os.fsync(f.fileno())
    return read_labels(out)
