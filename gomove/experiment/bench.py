"""Benchmarks behind bench.py: each prints one JSON object per figure.

Speed and memory targets live here, never in tests: every figure carries the
target it is measured against (``target``) and whether it met it (``ok``).

The games: ``--data PATH`` (an archive, an SGF file or folder; a folder holding
``tygem-9d-2006-01.zip`` means that archive), else the folder named by the
``GOMOVE_DATA`` environment variable, else ``../shared/data`` from the current
directory; without the archive there, the embedded sample (the setup record
says so). ``scale`` trains through gomove.experiment.runs (torchrun); the
trainers' histories are read by its rule (``History``: row 0 is the trainer's
start, rows 1.. its iterations; the figures per iteration or epoch read rows 1..).
"""

from __future__ import annotations

import io
import json
import multiprocessing as mp
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import torch

from gomove import pretrained
from gomove.board.board import BLACK, SIZE, copy_board, new_board, play
from gomove.board.coords import loc_to_gtp, move_to_loc
from gomove.board.replay import Rules, board_at, game_arrays, replay
from gomove.data.dataset import build_dataset, harvest_cached
from gomove.data.extractor import FeatureExtractor
from gomove.data.harvest import harvest
from gomove.data.loader import BatchLoader
from gomove.experiment.runs import History, launch, read_history
from gomove.features.config import FeatureConfig
from gomove.memory import peak_rss_mb
from gomove.models.territory.crf import SWEEPS as CRF_SWEEPS
from gomove.models.territory.crf import TerritoryCRF
from gomove.play.analysis.engine import AnalysisEngine
from gomove.play.analysis.server import serve
from gomove.play.ownership import ownership
from gomove.play.predict import Predictor
from gomove.play.search.config import SearchConfig, pachi_prior, pachi_pw_prior
from gomove.play.search.search import Search
from gomove.playout.driver import playout, run_playouts
from gomove.playout.policy import PatternPolicy
from gomove.playout.rng import new_rng
from gomove.playout.rule import RULES
from gomove.reading.games import ReadConfig, iter_games
from gomove.samples import sample_path
from gomove.train.config import RankerConfig, SGDConfig, auto_batch_size
from gomove.train.mm.fit import MMConfig, train_mm
from gomove.train.mm.tensor import flat_mm
from gomove.train.rankers.fit import fit_ranker
from gomove.train.sgd.loop import train_sgd

DATA_ENV = "GOMOVE_DATA"  # the folder of the game archives
DEFAULT_DATA = "../shared/data"  # from the current directory, not from this file
ARCHIVE = "tygem-9d-2006-01.zip"  # month 1 of the Tygem 9d games


def emit(record: dict) -> dict:
    print(json.dumps(record), flush=True)
    return record


def games_path(data: str | None = None) -> tuple[str, str | None]:
    """The games to read and, when it is the embedded sample for want of the archive,
    why: data (a folder holding ARCHIVE means that archive; any other path, an archive,
    an SGF file or folder, is read as it is), else $GOMOVE_DATA/ARCHIVE, else
    ../shared/data/ARCHIVE from the current directory, else the embedded sample."""
    if data is not None:
        archive = Path(data) / ARCHIVE
        return (str(archive) if archive.is_file() else data), None
    folder = Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)
    if (folder / ARCHIVE).is_file():
        return str(folder / ARCHIVE), None
    why = f"no {ARCHIVE} in {folder} (give --data, or set ${DATA_ENV}): the embedded sample"
    return sample_path("gnugo-train.zip"), why


def load_games(path: str, n: int, superko: bool = False) -> list:
    return list(iter_games(path, ReadConfig(max_games=n, superko=superko)))


def bench_replay(games: list, repeats: int = 3) -> list[dict]:
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
                    "target": 200_000,
                    "ok": best >= 200_000,
                }
            )
        )
    return out


_EX: FeatureExtractor | None = None


def _positions(game) -> int:
    assert _EX is not None
    return len(_EX.game(game)["winner"])


def _timed(fn: Callable[[], int]) -> tuple[int, float]:
    t = time.perf_counter()
    n = fn()
    return n, time.perf_counter() - t


def bench_extract(
    games: list, harvest_games: list, min_count: int = 10, workers: int | None = None
) -> list[dict]:
    """Full extraction (tactical + shapes) positions/s, one process and all cores."""
    global _EX
    cfg = FeatureConfig(min_count=min_count, superko=True)
    table = harvest(harvest_games, cfg, workers=1, progress=False)
    _EX = FeatureExtractor(cfg, table)
    _positions(games[0])  # compile
    n, dt = _timed(lambda: sum(_positions(g) for g in games))
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
                "target_per_core": 1500,
                "ok": n / dt >= 1500,
            }
        )
    ]
    workers = workers or len(os.sched_getaffinity(0))
    if workers > 1:
        with mp.get_context("fork").Pool(workers) as pool:
            pool.map(_positions, games[:workers])  # warm every worker
            n, dt = _timed(lambda: sum(pool.map(_positions, games, chunksize=4)))
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
                    "target_per_core": 1500,
                    "ok": rate / workers >= 1500,
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


def bench_mm(
    path: str, n_games: int, iters: int = 2, cache_dir: str = "cache", min_count: int = 10
) -> list[dict]:
    """Seconds per MM iteration per million candidates, flat (gomove.train.mm.tensor: numba on
    the CPU, torch on CUDA) and streamed; the flat layout and engine's memory; peak memory.

    The dataset is the one ``train.py data=tygem data.max_games=N`` builds when
    path names the same files (kind "train", same configs): its cache is shared.
    """

    ds = bench_dataset(path, n_games, cache_dir, min_count)
    reg = ds.registry
    groups = reg.group_spans()
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    out = []
    for device in devices:
        rss0 = peak_rss_mb()
        t = time.perf_counter()
        flat = ds.flat()
        engine = flat_mm(flat, device)
        load_s = time.perf_counter() - t
        for name, data in (("flat", engine), ("stream", BatchLoader(ds, batch_size=512))):
            if name == "stream" and ds.n_candidates > 50_000_000:
                continue  # minutes per iteration: the flat figure is the one that matters
            # one iteration first, untimed: compiles the kernels and fills the caches
            for n_iter in (1, iters):
                _, hist = train_mm(
                    data,
                    reg.n_features,
                    groups,
                    MMConfig(max_iters=n_iter, tol=0),
                    device=device,
                    progress=False,
                )
            sec = float(np.mean(History(hist).seconds()))
            out.append(
                emit(
                    {
                        "bench": "mm",
                        "mode": name,
                        "device": device,
                        "games": ds.n_games,
                        "positions": ds.n_positions,
                        "candidates": ds.n_candidates,
                        "features": reg.n_features,
                        "seconds_per_iter": round(sec, 3),
                        "seconds_per_iter_per_million": round(sec / ds.n_candidates * 1e6, 4),
                        "flat_load_seconds": round(load_s, 2),
                        "flat_gb": round((flat.nbytes() + engine.nbytes()) / 1e9, 3),
                        "peak_rss_mb": round(peak_rss_mb()),
                        "rss_growth_mb": round(peak_rss_mb() - rss0),
                        "threads": torch.get_num_threads(),
                    }
                )
            )
        del flat, engine
    return out


def bench_fbt(
    path: str,
    n_games: int,
    cache_dir: str = "cache",
    min_count: int = 10,
    k: int = 10,
    batch_size: int | None = None,
    engines: tuple[str, ...] = ("flat", "padded"),
) -> list[dict]:
    """FBT training speed, positions (and candidates) per second over one SGD epoch:
    full gradient, sampled (S = 10, 30) and LFR, over the flat layout (numba on the CPU,
    gomove.train.sgd.compiled; torch on CUDA when present, gomove.train.sgd.tensor) and
    the padded torch path (CPU, and CUDA when present). The epoch's time excludes
    loading and the untimed first pass.
    batch_size: positions per step (None: the auto batch of the data's positions,
    gomove.train.config.auto_batch_size, as a default run takes)."""

    ds = bench_dataset(path, n_games, cache_dir, min_count)
    batch_size = batch_size or auto_batch_size(ds.n_positions)
    cuda = ["cuda"] if torch.cuda.is_available() else []
    runs = [("flat", d) for d in ["cpu", *cuda]] if "flat" in engines else []
    if "padded" in engines:
        runs += [("padded", d) for d in ["cpu", *cuda]]
    out = []
    for engine, device in runs:
        if engine == "flat":
            t0 = time.perf_counter()
            data = ds.flat()
            load_s = time.perf_counter() - t0
        else:
            data, load_s = BatchLoader(ds, batch_size=batch_size), None
        for name, sample in (("fbt", 0), ("fbt", 10), ("fbt", 30), ("lfr", 0)):
            cfg = SGDConfig(name=name, k=k, sample=sample, epochs=1, batch_size=batch_size)
            # the epoch, not the start pass (row 0: it also brings the pages into memory)
            _, hist = train_sgd(data, ds.registry.n_features, cfg, device=device, progress=False)
            sec = History(hist).seconds()[0]
            out.append(
                emit(
                    {
                        "bench": "fbt",
                        "engine": engine,
                        "model": name,
                        "sample": sample,
                        "k": k,
                        "device": device,
                        "games": ds.n_games,
                        "positions": ds.n_positions,
                        "candidates": ds.n_candidates,
                        "features": ds.registry.n_features,
                        "batch_size": batch_size,
                        "seconds_per_epoch": round(sec, 3),
                        "positions_per_s": round(ds.n_positions / sec),
                        "candidates_per_s": round(ds.n_candidates / sec),
                        "load_seconds": None if load_s is None else round(load_s, 2),
                        "threads": torch.get_num_threads(),
                    }
                )
            )
        del data
    return out


def bench_rankers(path: str, n_games: int, cache_dir: str = "cache", min_count: int = 10):
    """PR, BAR and LBR training speed over one pass of n_games (Wistuba et al. 2012,
    Fig. 10: training time per game), serial numba updates, data loading and the
    temperature calibration excluded. Target: the paper's ordering, BAR the faster
    of the Bayesian filters and LBR the slowest."""
    ds = bench_dataset(path, n_games, cache_dir, min_count)
    data = ds.flat()
    reg = ds.registry
    out, seconds = [], {}
    for name in ("pr", "bar", "lbr"):
        cfg = RankerConfig(name=name)
        _, hist = fit_ranker(cfg, data, reg.group_spans(), reg.n_features, torch.device("cpu"))
        first = History(hist).iterations[0]  # the pass (row 0: the untimed start)
        sec = seconds[name] = first["seconds"]
        record = {
            "bench": "rankers",
            "model": name,
            "games": ds.n_games,
            "positions": ds.n_positions,
            "candidates": ds.n_candidates,
            "seconds_per_pass": round(sec, 3),
            "seconds_per_game": round(sec / ds.n_games, 5),
            "positions_per_s": round(ds.n_positions / sec),
        }
        if "ep_iters" in first:
            record["ep_iters_per_position"] = round(first["ep_iters"], 2)
        out.append(emit(record))
    ok = seconds["bar"] < seconds["lbr"]
    out.append(emit({"bench": "rankers", "target": "bar faster than lbr", "ok": ok}))
    return out


PLAYOUT_TARGETS = {9: 20_000, 19: 5_000}  # uniform, from the empty board, per core
PATTERN_PLAYOUT_TARGETS = {19: 3_700}  # Coulom 2007, 4.3: Crazy Stone's 19x19 rate


def playout_positions(games: list) -> list[tuple[str, object, int]]:
    """(name, board, colour to move): empty 9x9 and 19x19, and a mid-game position of each.

    19x19 mid-game: the position before move 120 of the first game read (a real
    game); 9x9 mid-game (no real 9x9 games here): after 30 moves of a seeded
    uniform playout from the empty board.
    """

    out = [("9x9 empty", new_board(9), BLACK), ("19x19 empty", new_board(19), BLACK)]
    b9 = new_board(9)
    moves = np.zeros(30, np.int32)
    playout(b9, BLACK, 7.0, new_rng(7), 30, np.zeros(81, np.int8), moves)
    mid9 = new_board(9)
    color = BLACK
    for m in moves:
        play(mid9, int(m), color)
        color = 3 - color
    out.insert(1, ("9x9 mid-game (30 random moves)", mid9, color))
    game = next((g for g in games if g.size == 19 and len(g.moves) >= 120), None)
    if game is not None:
        b19, to_move = board_at(game, 120)
        out.append(("19x19 mid-game (move 120)", b19, to_move))
    return out


def _scale_run(overrides: list[str], run_dir: Path, nproc: int, threads: int) -> tuple[dict, float]:
    """One training run under torchrun (torch.distributed.run, nproc processes) on this
    machine: its metrics.json and the median seconds of its iterations (MM: the first
    one compiles) or epochs (SGD), the history's start row left out."""
    env = {"NUMBA_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    metrics = launch(overrides, run_dir, nproc=nproc, env=env)
    return metrics, float(np.median(read_history(run_dir).seconds()))


def bench_scale(
    path: str,
    n_games: int,
    work_dir: str = "cache/scale",
    processes: int = 2,
    mm_iters: int = 3,
    test_games: int = 20,
) -> list[dict]:
    """Extraction, MM iterations and one FBT epoch under torchrun (gloo): positions per
    second and each rank's peak memory, for 1 process on 1 core, 1 process on every
    core (its extraction pool and numba threads) and N processes sharing the cores.

    Speedups are against 1 process on 1 core, the unit torchrun scales (issue 13's
    target: 1.6x for 2 processes on 2 cores); ``*_vs_threads`` says what the
    processes gain over one process already using every core.

    Every configuration extracts into a fresh cache (so the extraction is timed; it
    includes the harvest), then trains MM (mm_iters, tol 0) and FBT k=10 (1 epoch)
    on it. The test set, the first test_games of path, is only there because a run
    evaluates.
    """
    cores = len(os.sched_getaffinity(0))
    configs = [(1, 1), (1, cores), (processes, max(1, cores // processes))]
    rows: dict[tuple[int, int], dict] = {}
    out = []
    for nproc, threads in dict.fromkeys(configs):
        root = Path(work_dir) / f"p{nproc}t{threads}"
        shutil.rmtree(root, ignore_errors=True)
        common = ["data=tygem", f"data.train=[{path}]", f"data.test={path}", "data.val=null",
                  f"data.max_games={n_games}", f"data.max_test_games={test_games}",
                  f"data.cache_dir={root / 'cache'}", f"data.workers={threads}",
                  f"threads={threads}", "progress=false"]  # fmt: skip
        runs = {
            "mm": ["model=mm", f"model.max_iters={mm_iters}", "model.tol=0"],
            "fbt": ["model=fbt", "k=10", "model.epochs=1"],
        }
        record: dict = {"bench": "scale", "processes": nproc, "threads_per_process": threads,
                        "games": n_games}  # fmt: skip
        for name, extra in runs.items():
            metrics, seconds = _scale_run([*common, *extra], root / name, nproc, threads)
            positions = metrics["train_positions"]
            record["positions"] = positions
            if name == "mm":  # the first run extracts; the second finds the caches
                data_s = max(metrics["rank_data_seconds"])
                record["extract_seconds"] = round(data_s, 2)
                record["extract_positions_per_s"] = round(positions / data_s)
            record[f"{name}_seconds"] = round(seconds, 3)
            record[f"{name}_positions_per_s"] = round(positions / seconds)
            record[f"{name}_peak_rss_mb_per_rank"] = [round(m) for m in metrics["rank_peak_rss_mb"]]
        for ref, suffix in (((1, 1), "speedup"), ((1, cores), "vs_threads")):
            if (nproc, threads) != ref and ref in rows:
                for key in ("extract", "mm", "fbt"):
                    rate = record[f"{key}_positions_per_s"] / rows[ref][f"{key}_positions_per_s"]
                    record[f"{key}_{suffix}"] = round(rate, 2)
        if nproc > 1:
            record["target_speedup"] = 0.8 * nproc
            record["ok"] = all(record[f"{k}_speedup"] >= 0.8 * nproc for k in ("extract", "mm"))
        rows[nproc, threads] = record
        out.append(emit(record))
    return out


def bench_playout(
    games: list,
    seconds: float = 1.0,
    repeats: int = 5,
    policy=None,
    label: str = "uniform",
    runner: Callable | None = None,
) -> list[dict]:
    """Uniform playouts per second on one core, best of ``repeats`` runs of ~``seconds``;
    with ``policy`` (gomove.playout.policy.PatternPolicy) the pattern policy's instead,
    with ``runner`` (run_playouts' arguments) another policy's, with no target.

    ``playouts_per_s`` counts the process's CPU time (one core's work, what the
    targets ask), ``wall_playouts_per_s`` the wall clock, which on a shared
    machine also counts the time others hold the core.
    """

    if runner is not None:
        targets: dict[int, float] = {}
    elif policy is None:
        runner, targets = run_playouts, PLAYOUT_TARGETS
    else:
        runner, targets = policy.run_playouts, PATTERN_PLAYOUT_TARGETS
    out = []
    for name, board, to_move in playout_positions(games):
        size = int(board.info[SIZE])
        runner(board, to_move, 7.5, 4, 0)  # compile
        n = 64
        while True:  # size the run to ~seconds
            t = time.perf_counter()
            runner(board, to_move, 7.5, n, 1)
            dt = time.perf_counter() - t
            if dt > seconds / 4:
                break
            n *= 4
        n = max(int(n * seconds / dt), 1)
        best_cpu = best_wall = 0.0
        for r in range(repeats):
            b = copy_board(board)
            t = time.perf_counter()
            c = time.process_time()
            runner(b, to_move, 7.5, n, 100 + r)
            best_cpu = max(best_cpu, n / max(time.process_time() - c, 1e-9))
            best_wall = max(best_wall, n / (time.perf_counter() - t))
        record = {"bench": "playout", "policy": label, "position": name, "size": size}
        record["playouts_per_s"] = round(best_cpu)
        record["wall_playouts_per_s"] = round(best_wall)
        if name.endswith("empty") and size in targets:
            record["target_per_core"] = targets[size]
            record["ok"] = best_cpu >= targets[size]
        out.append(emit(record))
    return out


def bench_pattern_playout(games: list, policy_path: str | None = None) -> list[dict]:
    """Pattern-policy playouts per second (gomove/play/pattern/) on the
    positions of bench_playout; the policy file of ``train.py features=light``,
    or all gammas 1 (``neutral``) when none is given."""

    if policy_path:
        return bench_playout(games, policy=PatternPolicy.load(policy_path), label="pattern")
    return bench_playout(games, policy=PatternPolicy.neutral(), label="pattern (neutral)")


def bench_rule_playout(games: list) -> list[dict]:
    """Rule playouts per second (gomove.playout.rules, the rmc territory features')."""
    return bench_playout(games, label="rules", runner=partial(run_playouts, policy=RULES))


def bench_territory(
    games: list, sweeps: int = CRF_SWEEPS, playouts: tuple[int, ...] = (63, 500)
) -> list[dict]:
    """The territory CRF's ownership map against the playouts': CPU ms a position (process
    time, one core) at moves 50, 100, 150 and 200 of the games, and the ratio to each
    playout count (issue 37's target: 20 times less than 500 playouts)."""
    crf = TerritoryCRF.default()
    boards = [board_at(g, m) for g in games for m in (50, 100, 150, 200) if len(g.moves) >= m]
    crf.predict(*boards[0], 6.5, sweeps=2)  # compile
    ownership(boards[0][0], boards[0][1], 2)

    def per_position(fn: Callable) -> float:
        t0 = time.process_time()
        for board, colour in boards:
            fn(board, colour)
        return 1000 * (time.process_time() - t0) / len(boards)

    crf_ms = per_position(lambda b, c: crf.predict(b, c, 6.5, sweeps=sweeps))
    record = {"bench": "territory", "positions": len(boards),
              "crf_features": crf.features, "crf_sweeps": 0 if crf.independent else sweeps,
              "crf_ms_per_position": round(crf_ms, 3)}  # fmt: skip
    for n in playouts:
        ms = per_position(lambda b, c, n=n: ownership(b, c, n, 6.5))
        record[f"playouts{n}_ms_per_position"] = round(ms, 2)
        record[f"crf_speedup_vs_{n}"] = round(ms / crf_ms, 1)
    return [emit(record)]


def bench_mc_owner(games: list, n_playouts: int = 63) -> list[dict]:
    """The Monte-Carlo owner feature: positions/s on one core, and what it adds to extraction."""
    cfg = FeatureConfig(shapes=False, superko=False)
    owner_cfg = FeatureConfig(
        shapes=False, superko=False, mc_owner=True, mc_owner_playouts=n_playouts
    )
    plain, with_owner = FeatureExtractor(cfg), FeatureExtractor(owner_cfg)
    plain.game(games[0])
    with_owner.game(replace(games[0], moves=games[0].moves[:4]))  # compile
    n, dt_plain = _timed(lambda: sum(len(plain.game(g)["winner"]) for g in games))
    _, dt_owner = _timed(lambda: sum(len(with_owner.game(g)["winner"]) for g in games))
    owner_rate = n / (dt_owner - dt_plain)
    return [
        emit(
            {
                "bench": "mc-owner",
                "playouts_per_position": n_playouts,
                "games": len(games),
                "positions": n,
                "positions_per_s": round(owner_rate, 1),
                "ms_per_position": round(1000 / owner_rate, 2),
                "playouts_per_s": round(owner_rate * n_playouts),
                "tactical_positions_per_s": round(n / dt_plain),
                "tactical_with_owner_positions_per_s": round(n / dt_owner, 1),
            }
        )
    ]


SEARCH_ROWS = {
    "uniform": dict(playouts="uniform", pw=False),
    "pattern": dict(playouts="pattern", pw=False),
    "pattern+pw": dict(playouts="pattern", pw=True),
    "pattern+pw+lgr": dict(playouts="pattern", pw=True, lgr=1),
    "pattern+pw+lgr2": dict(playouts="pattern", pw=True, lgr=2),
    "pattern+pw+tactics": dict(playouts="pattern", pw=True, tactics=1.0),
    "pattern+pw+nakade": dict(playouts="pattern", pw=True, nakade=1.0),
    "pattern+pw+selfatari2": dict(playouts="pattern", pw=True, selfatari_max=2),
    "pattern+pw+local4": dict(playouts="pattern", pw=True, local=1.0, local_min=4.0),
    # Pachi's tree priors, every move of a ranked node open
    "pattern+priors": dict(
        playouts="pattern", pw=True, pw_base=0, prior_eqex=100, prior_even=14, prior_local=45
    ),
    # the model in the tree as Pachi's prior.c uses patterns (its values for the board
    # size: a row may be a function of the size), every move open or by Coulom's schedule
    "pattern+pachiprior": lambda size: dict(playouts="pattern", pw=True, **pachi_prior(size)),
    "pattern+pw+pachiprior": lambda size: dict(playouts="pattern", pw=True, **pachi_pw_prior(size)),
}


def bench_search(
    games: list, policy_path: str | None, model_path: str | None, seconds: float = 2.0
) -> list[dict]:
    """Search simulations per second (CPU time) from the positions of bench_playout, each
    configuration, next to the raw pattern-playout rate of the same position (the
    tree must not be the bottleneck: target >= 80% of it on 19x19 with pattern playouts)."""
    policy = PatternPolicy.load(policy_path) if policy_path else PatternPolicy.neutral()
    predictor = Predictor.from_checkpoint(model_path) if model_path else None
    out = []
    for name, board, to_move in playout_positions(games):
        size = int(board.info[SIZE])
        policy.run_playouts(board, to_move, 7.5, 4, 0)
        n = 2000 if size == 19 else 8000
        c = time.process_time()
        policy.run_playouts(board, to_move, 7.5, n, 1)
        raw = n / max(time.process_time() - c, 1e-9)
        for row, kw in SEARCH_ROWS.items():
            kw = kw(size) if callable(kw) else kw
            if kw["pw"] and predictor is None:
                continue
            cfg = SearchConfig(sims=None, seconds=seconds, resign=0, **kw)
            Search(cfg, policy, predictor).run(board, to_move, 7.5, sims=200)  # compile
            search = Search(cfg, policy, predictor)
            c = time.process_time()
            res = search.run(board, to_move, 7.5)
            rate = res.sims / max(time.process_time() - c, 1e-9)
            record = {"bench": "search", "config": row, "position": name, "size": size,
                      "sims_per_s": round(rate), "raw_pattern_playouts_per_s": round(raw),
                      "ratio_to_raw_pattern": round(rate / raw, 3), "promotions": res.promotions,
                      "tree_nodes": res.tree_nodes}  # fmt: skip
            # the target is the tree's cost over the same playouts: tactics, nakade,
            # selfatari_max and local change the playouts themselves, so their ratio
            # also holds their own cost and has none
            changed = any(kw.get(k) for k in ("tactics", "nakade", "selfatari_max", "local"))
            if row != "uniform" and not changed and size == 19:
                record["target_ratio"] = 0.8
                record["ok"] = rate >= 0.8 * raw
            out.append(emit(record))
    return out


def bench_predict(games: list, model_path: str | None, n_positions: int = 300) -> list[dict]:
    """Full-feature prediction of single positions (Predictor: extraction and scoring),
    positions per second and microseconds each, on positions of real games."""
    if model_path is None:
        return [emit({"bench": "predict", "skipped": "needs --model RUN/model.pt"})]
    predictor = Predictor.from_checkpoint(model_path)
    positions = []
    for g in games:
        for move in range(10, len(g.moves), 25):
            positions.append(board_at(g, move + 1))
            if len(positions) >= n_positions:
                break
        if len(positions) >= n_positions:
            break
    predictor.predict(*positions[0])  # compile
    c = time.process_time()
    for board, color in positions:
        predictor.extractor.position(board, color)
    dt_extract = time.process_time() - c
    c = time.process_time()
    for board, color in positions:
        predictor.predict(board, color)
    dt = time.process_time() - c
    n = len(positions)
    return [emit({"bench": "predict", "model": model_path, "positions": n,
                  "positions_per_s": round(n / dt, 1), "us_per_position": round(1e6 * dt / n),
                  "us_extraction_per_position": round(1e6 * dt_extract / n)})]  # fmt: skip


def bench_analysis(
    games: list, policy_path: str | None, model_path: str | None, stride_1000: int = 10
) -> list[dict]:
    """``gomove analysis`` on a whole real 19x19 game (the first of 200 moves or more):
    every turn at 100 visits, in this process and then by the server's worker pool (one
    worker a core), every stride_1000-th turn at 1,000 visits, and the model's prediction
    alone (``gomove predict``) on every turn; turns per second (wall clock), the score
    playouts included. The models: --policy and --model, else the shipped ones."""
    if policy_path is None and pretrained.POLICY.is_file():
        policy_path = str(pretrained.POLICY)
    if model_path is None and pretrained.MODEL.is_file():
        model_path = str(pretrained.MODEL)
    if policy_path is None or model_path is None:
        return [emit({"bench": "analysis", "skipped": "needs --policy and --model"})]
    game = next((g for g in games if g.size == 19 and len(g.moves) >= 200), None)
    if game is None:
        return [emit({"bench": "analysis", "skipped": "no 19x19 game of 200 moves"})]
    predictor = Predictor.from_checkpoint(model_path)
    policy = PatternPolicy.load(policy_path)
    moves = [["B" if c == BLACK else "W", loc_to_gtp(move_to_loc(m, 19), 19)]
             for c, m in game.moves]  # fmt: skip
    out = []
    for visits, turns in ((100, list(range(len(moves) + 1))),
                          (1000, list(range(0, len(moves) + 1, stride_1000)))):  # fmt: skip
        cfg = SearchConfig(sims=visits, resign=0.0, seed=0)
        engine = AnalysisEngine(lambda size, cfg=cfg: Search(cfg, policy, predictor), predictor,
                                policy, default_visits=visits)  # fmt: skip
        query = {"id": "bench", "moves": moves, "komi": game.komi, "analyzeTurns": turns,
                 "includeOwnership": True, "includePolicy": True}  # fmt: skip
        engine.handle({**query, "analyzeTurns": [10]})  # compile
        t0 = time.perf_counter()
        answers = engine.handle(query)
        dt = time.perf_counter() - t0
        assert all("turnNumber" in r for r in answers), answers[:1]
        out.append(emit({"bench": "analysis", "visits": visits, "turns": len(turns),
                         "seconds": round(dt, 1), "turns_per_s": round(len(turns) / dt, 2),
                         "game_moves": len(moves)}))  # fmt: skip
        if visits == 100:
            workers = os.cpu_count() or 1
            sink = io.StringIO()
            t0 = time.perf_counter()
            serve(engine, io.StringIO(json.dumps(query) + "\n"), sink, workers=workers)
            dt = time.perf_counter() - t0
            assert sink.getvalue().count('"turnNumber"') == len(turns)
            out.append(emit({"bench": "analysis", "visits": visits, "workers": workers,
                             "turns": len(turns), "seconds": round(dt, 1),
                             "turns_per_s": round(len(turns) / dt, 2)}))  # fmt: skip
    boards = [board_at(game, t + 1) for t in range(len(moves) + 1)]  # after t moves
    predictor.predict(*boards[1])
    t0 = time.perf_counter()
    for board, color in boards:
        predictor.predict(board, color)
    dt = time.perf_counter() - t0
    out.append(emit({"bench": "analysis", "visits": 0, "policy_only": True,
                     "turns": len(boards), "seconds": round(dt, 2),
                     "turns_per_s": round(len(boards) / dt, 1)}))  # fmt: skip
    return out


def run(
    which: list[str],
    data: str | None = None,
    n_games: int = 200,
    harvest_games: int = 1000,
    mm_games: int = 1000,
    mm_iters: int = 2,
    cache_dir: str = "cache",
    owner_games: int = 5,
    policy_path: str | None = None,
    model_path: str | None = None,
    fbt_batch: int | None = None,
) -> list[dict]:
    """The benchmarks named in which, on the games of data (``games_path``)."""
    path, why = games_path(data)
    setup = {"bench": "setup", "data": path, "games": n_games}
    emit(setup if why is None else setup | {"note": why})
    games = load_games(path, n_games)
    out: list[dict] = []
    if "replay" in which:
        out += bench_replay(games)
    if "extract" in which:
        hv = load_games(path, harvest_games) if harvest_games > n_games else games
        out += bench_extract(games, hv)
    if "mm" in which:
        out += bench_mm(path, mm_games, mm_iters, cache_dir)
    if "fbt" in which:
        out += bench_fbt(path, mm_games, cache_dir, batch_size=fbt_batch)
    if "rankers" in which:
        out += bench_rankers(path, mm_games, cache_dir)
    if "scale" in which:
        out += bench_scale(path, mm_games, str(Path(cache_dir) / "scale"))
    if "playout" in which:
        out += bench_playout(games)
        out += bench_pattern_playout(games, policy_path)
        out += bench_rule_playout(games)
    if "mc-owner" in which:
        out += bench_mc_owner(games[:owner_games])
    if "territory" in which:
        out += bench_territory(games[:owner_games])
    if "search" in which:
        out += bench_search(games, policy_path, model_path)
    if "predict" in which:
        out += bench_predict(games, model_path)
    if "analysis" in which:
        out += bench_analysis(games, policy_path, model_path)
    out.append(emit({"bench": "memory", "peak_rss_mb": round(peak_rss_mb())}))
    return out
