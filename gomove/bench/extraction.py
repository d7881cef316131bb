"""Benchmarks of reading games: replay (``replay``), feature extraction (``extract``),
and the cached dataset the training benchmarks share (``bench_dataset``).

``extract`` prints one row per stage of making a dataset, each in positions a second
and microseconds a position, so a row's cost is the part of the whole it is:
``harvest`` (the shape table of the harvest games, one run, on one core), ``parse``
(sgfmill alone, on the records' bytes), ``read`` (iter_games: unzip, parse,
the rules' replay), ``replay`` (the moves alone), ``legal`` (replay and every
position's legal moves, superko included), ``tactical`` and ``shapes`` (extraction of
those groups alone, legal moves included), ``full`` (FeatureExtractor.game with the
default features: the per-core rate against the target), ``encode`` (the files' rows of
the full output), ``full`` on every core (a pool of processes, as before), and
``dataset`` (build_dataset of the games from their archive into a fresh folder on every
core: reading, extraction, encoding and writing; the per-core rate against the target).
One-process rows but ``harvest`` are the best of 3 runs.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numba import njit

from gomove.bench.common import bench_config, emit, timed
from gomove.board.board import TO_MOVE, legal_moves, new_board, play
from gomove.board.replay import Rules, game_arrays, replay, start_board
from gomove.data.dataset import build_dataset, harvest_cached
from gomove.data.extractor import FeatureExtractor
from gomove.data.harvest import harvest
from gomove.data.store import chunk_rows
from gomove.features.config import FeatureConfig
from gomove.reading.games import ReadConfig, iter_games, records
from gomove.reading.sgf import parse_game


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


@njit(cache=True)
def _legal_replay(b, locs: np.ndarray, colors: np.ndarray, superko: bool, out) -> int:
    """Replay a game with every position's legal moves listed (the ``legal`` row)."""
    n = 0
    for i in range(locs.shape[0]):
        b.info[TO_MOVE] = colors[i]
        n += legal_moves(b, colors[i], superko, out)
        play(b, locs[i], colors[i])
    return n


def _best(fn: Callable[[], object], repeats: int = 3) -> float:
    """The least wall seconds of repeats runs of fn (after one to compile and warm)."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _stage(stage: str, positions: int, seconds: float, **extra) -> dict:
    rate = positions / seconds
    return emit(
        {
            "bench": "extract",
            "stage": stage,
            "processes": 1,
            "positions": positions,
            "positions_per_s": round(rate),
            "us_per_position": round(1e6 / rate, 2),
        }
        | extra
    )


def bench_extract(
    games: list,
    harvest_games: list,
    min_count: int = 10,
    workers: int | None = None,
    path: str | None = None,
) -> list[dict]:
    """Every stage of making a dataset of games (module docstring), positions/s; the
    full extraction on one core and on all, and with path (the games' archive, games
    its first len(games)) the whole dataset build on all cores, against the per-core
    target."""
    global _EX
    target = bench_config().targets.extract_positions_per_s_per_core
    workers = workers or len(os.sched_getaffinity(0))
    cfg = FeatureConfig(min_count=min_count, superko=True)
    harvest(harvest_games[:2], cfg, workers=1, progress=False)  # compile
    t = time.perf_counter()
    table = harvest(harvest_games, cfg, workers=1, progress=False)
    dt = time.perf_counter() - t
    full = FeatureExtractor(cfg, table)
    positions = sum(len(g.moves) for g in games)
    out = [
        _stage("harvest", sum(len(g.moves) for g in harvest_games), dt, games=len(harvest_games))
    ]
    if path is not None:
        moves = {g.source: len(g.moves) for g in games}
        raw = [(s, d) for s, d in _records(path, len(games)) if s in moves]
        dt = _best(lambda: [parse_game(d, s) for s, d in raw])
        out.append(_stage("parse", sum(moves[s] for s, _ in raw), dt))
        rc = ReadConfig(max_games=len(games), superko=True)
        out.append(_stage("read", positions, _best(lambda: list(iter_games(path, rc)))))
    arrays = [game_arrays(g) for g in games]
    no_rules = Rules(False, False)
    dt = _best(lambda: [replay(start_board(ga), ga.locs, ga.colors, no_rules) for ga in arrays])
    out.append(_stage("replay", positions, dt))
    cands = np.empty(19 * 19 + 1, np.int64)
    dt = _best(lambda: [_legal_replay(start_board(ga), ga.locs, ga.colors, True, cands)
                        for ga in arrays])  # fmt: skip
    out.append(_stage("legal", positions, dt))
    for stage, ex in (
        ("tactical", FeatureExtractor(FeatureConfig(shapes=False, superko=True))),
        ("shapes", FeatureExtractor(FeatureConfig(tactical=[], superko=True), table)),
    ):
        out.append(_stage(stage, positions, _best(lambda ex=ex: [ex.game(g) for g in games])))
    parts = []

    def extract_all() -> None:
        parts[:] = [full.game(g) for g in games]

    dt = _best(extract_all)
    n = sum(len(p["winner"]) for p in parts)
    common = {"games": len(games), "patterns": len(table), "target_per_core": target}
    out.append(_stage("full", n, dt, per_core=round(n / dt), ok=n / dt >= target, **common))
    reg = full.registry
    dt = _best(lambda: chunk_rows(parts, list(range(len(parts))), reg.group_names, reg.sizes))
    out.append(_stage("encode", n, dt))
    if workers > 1:
        _EX = full
        try:
            with mp.get_context("fork").Pool(workers) as pool:
                pool.map(_positions, games[:workers])  # warm every worker
                n, dt = timed(lambda: sum(pool.map(_positions, games, chunksize=4)))
        finally:
            _EX = None
        rate = n / dt
        out.append(_stage("full", n, dt, processes=workers, per_core=round(rate / workers),
                          ok=rate / workers >= target, **common))  # fmt: skip
    if path is not None:
        out.append(_bench_build(path, len(games), full, workers, target))
    return out


def _records(path: str, n: int) -> list[tuple[str, bytes]]:
    """The first records of path, enough to hold its first n games (and the skipped)."""
    out = []
    for source, data in records(Path(path)):
        if isinstance(data, bytes):
            out.append((source, data))
        if len(out) >= 2 * n + 100:
            break
    return out


def _bench_build(path: str, n_games: int, ex: FeatureExtractor, workers: int, target) -> dict:
    """The ``dataset`` row: build_dataset of the first n_games of path on every core, in
    chunks of at most 100 games (the default) and at least 4 a worker, so that a few
    hundred games keep every core busy."""
    rc = ReadConfig(max_games=n_games, superko=True)
    shard = max(1, min(100, n_games // (4 * workers)))
    with tempfile.TemporaryDirectory() as cache:
        t = time.perf_counter()
        ds = build_dataset(path, rc, ex, cache, kind="bench", shard_games=shard,
                           workers=workers, progress=False)  # fmt: skip
        dt = time.perf_counter() - t
    rate = ds.n_positions / dt
    return emit(
        {
            "bench": "extract",
            "stage": "dataset",
            "processes": workers,
            "games": ds.n_games,
            "shard_games": shard,
            "positions": ds.n_positions,
            "positions_per_s": round(rate),
            "us_per_position": round(1e6 / rate, 2),
            "per_core": round(rate / workers),
            "target_per_core": target,
            "ok": rate / workers >= target,
        }
    )


def bench_dataset(path: str, n_games: int, cache_dir: str = "cache", min_count: int = 10):
    """The first n_games of path, full features, extracted once into cache_dir (kind "bench")."""

    rc = ReadConfig(max_games=n_games, superko=False)
    cfg = FeatureConfig(min_count=min_count, superko=False)
    table = harvest_cached(path, rc, cfg, cache_dir, progress=False)
    return build_dataset(
        path, rc, FeatureExtractor(cfg, table), cache_dir, kind="train", progress=False
    )
