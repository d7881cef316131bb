"""Benchmarks of reading games: replay (``replay``), feature extraction (``extract``),
and the cached dataset the training benchmarks share (``bench_dataset``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time

from gomove.bench.common import bench_config, emit, timed
from gomove.board.board import new_board
from gomove.board.replay import Rules, game_arrays, replay
from gomove.data.dataset import build_dataset, harvest_cached
from gomove.data.extractor import FeatureExtractor
from gomove.data.harvest import harvest
from gomove.features.config import FeatureConfig
from gomove.reading.games import ReadConfig


def bench_replay(games: list, repeats: int = 3) -> list[dict]:
    """Moves replayed a second on one core (the rules alone), with and without superko."""
    target = bench_config().targets.replay_moves_per_s
    arrays = [game_arrays(g) for g in games]
    out = []
    for superko in (False, True):
        b = new_board(19)
        replay(b, arrays[0].locs[:2], arrays[0].colors[:2], Rules(True, superko))  # compile
        best = 0.0
        for _ in range(repeats):
            t = time.perf_counter()
            moves = 0
            for ga in arrays:
                b = new_board(ga.size, hist_len=len(ga.locs) + 8)
                moves += replay(b, ga.locs, ga.colors, Rules(True, superko))
            best = max(best, moves / (time.perf_counter() - t))
        out.append(
            emit(
                {
                    "bench": "replay",
                    "superko": superko,
                    "games": len(arrays),
                    "moves_per_s": round(best),
                    "target": target,
                    "ok": best >= target,
                }
            )
        )
    return out


_EX: FeatureExtractor | None = None


def _positions(game) -> int:
    assert _EX is not None
    return len(_EX.game(game)["winner"])


def bench_extract(
    games: list, harvest_games: list, min_count: int = 10, workers: int | None = None
) -> list[dict]:
    """Full extraction (tactical + shapes) positions/s, one process and all cores."""
    global _EX
    target = bench_config().targets.extract_positions_per_s_per_core
    cfg = FeatureConfig(min_count=min_count, superko=True)
    table = harvest(harvest_games, cfg, workers=1, progress=False)
    _EX = FeatureExtractor(cfg, table)
    _positions(games[0])  # compile
    n, dt = timed(lambda: sum(_positions(g) for g in games))
    out = [
        emit(
            {
                "bench": "extract",
                "processes": 1,
                "games": len(games),
                "positions": n,
                "patterns": len(table),
                "positions_per_s": round(n / dt),
                "per_core": round(n / dt),
                "target_per_core": target,
                "ok": n / dt >= target,
            }
        )
    ]
    workers = workers or len(os.sched_getaffinity(0))
    if workers > 1:
        with mp.get_context("fork").Pool(workers) as pool:
            pool.map(_positions, games[:workers])  # warm every worker
            n, dt = timed(lambda: sum(pool.map(_positions, games, chunksize=4)))
        rate = n / dt
        out.append(
            emit(
                {
                    "bench": "extract",
                    "processes": workers,
                    "games": len(games),
                    "positions": n,
                    "positions_per_s": round(rate),
                    "per_core": round(rate / workers),
                    "target_per_core": target,
                    "ok": rate / workers >= target,
                }
            )
        )
    _EX = None
    return out


def bench_dataset(path: str, n_games: int, cache_dir: str = "cache", min_count: int = 10):
    """The first n_games of path, full features, extracted once into cache_dir (kind "bench")."""

    rc = ReadConfig(max_games=n_games, superko=False)
    cfg = FeatureConfig(min_count=min_count, superko=False)
    table = harvest_cached(path, rc, cfg, cache_dir, progress=False)
    return build_dataset(
        path, rc, FeatureExtractor(cfg, table), cache_dir, kind="train", progress=False
    )
