"""Benchmarks of training: an MM iteration (``mm``), an SGD epoch of FBT and LFR (``fbt``),
a pass of the rankers (``rankers``), and runs under torchrun (``scale``).

The trainers' histories are read by one rule (gomove.experiment.runs.History: row 0
is the trainer's start, rows 1.. its iterations; the figures per iteration or epoch
read rows 1..).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import numba
import numpy as np
import torch

from gomove.bench.common import bench_config, emit
from gomove.bench.extraction import bench_dataset
from gomove.data.loader import BatchLoader
from gomove.experiment.runs import History, launch, read_history
from gomove.memory import peak_rss_mb
from gomove.train.context import TrainContext
from gomove.train.mm.fit import train_mm
from gomove.train.mm.tensor import flat_mm
from gomove.train.rankers.fit import fit_ranker
from gomove.train.schemas import MMConfig, RankerConfig, SGDConfig, auto_batch_size
from gomove.train.sgd.kernels import Moments, Params, StepSettings, update_rows
from gomove.train.sgd.loop import train_sgd


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
                    MMConfig(max_iters=n_iter, tol=0),
                    data,
                    TrainContext(reg.n_features, groups, device, progress=False),
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
    gomove.train.schemas.auto_batch_size, as a default run takes)."""

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
            _, hist = train_sgd(cfg, data, TrainContext.of(ds.registry, device, progress=False))
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
    return out + bench_fbt_dense(k=k)


def bench_fbt_dense(
    rows: tuple[int, ...] = (1_000_000, 4_000_000), k: int = 10, steps: int = 4
) -> list[dict]:
    """The dense part of an FBT step (gomove.train.sgd.kernels.update_rows: Adam on every
    parameter, the table refreshed) at the model sizes of all pattern sizes on many
    games (0.82 million rows at 27,613 games), on one thread and on numba's all:
    milliseconds a step. Above a million rows it costs more than the batch's gradient."""
    out = []
    rng = np.random.default_rng(0)
    all_threads = numba.get_num_threads()
    for f in rows:
        w = rng.normal(0, 0.1, f).astype(np.float32)
        v = rng.normal(0, 0.1, (f, k)).astype(np.float32)
        grad = rng.normal(0, 1e-3, (f, 1 + k))
        params = Params(w, v, np.zeros((f, 1 + k)))
        moments = Moments(*(np.zeros_like(a) for a in (w, w, v, v)))
        for threads in sorted({1, all_threads}):
            numba.set_num_threads(threads)
            best = float("inf")
            for step in range(1, steps + 2):  # the first compiles or loads the kernel
                hp = StepSettings(True, 1e-3, 0.9, 0.999, 1e-8, step, 1e-7, 1e-6)
                t0 = time.perf_counter()
                update_rows(params, grad, moments, hp, (0,) * (1 + k))
                if step > 1:
                    best = min(best, time.perf_counter() - t0)
            out.append(emit({"bench": "fbt_dense", "rows": f, "k": k, "threads": threads,
                             "ms_per_step": round(best * 1e3, 2)}))  # fmt: skip
        numba.set_num_threads(all_threads)
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
        _, hist = fit_ranker(
            cfg, data, TrainContext(reg.n_features, reg.group_spans(), torch.device("cpu"))
        )
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

    Speedups are against 1 process on 1 core, the unit torchrun scales (the target:
    scale_speedup_per_process times the processes, 1.6x for 2 processes on 2 cores);
    ``*_vs_threads`` says what the processes gain over one process already using every
    core.

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
            target = bench_config().targets.scale_speedup_per_process * nproc
            record["target_speedup"] = target
            record["ok"] = all(record[f"{k}_speedup"] >= target for k in ("extract", "mm"))
        rows[nproc, threads] = record
        out.append(emit(record))
    return out
