"""``gomove bench gpu``: the figures of a GPU machine, CUDA beside numba on its own cores.

On the standard split (all training games of 2006-01..04 by default, the first
1,000 games of 2006-06 as the test month), each phase one JSON row, appended to
``--out`` as it ends so that a run cut short keeps what it measured:

1. ``data``: harvest and extraction of the training and test games with every core
   (the cache ``train.py data=tygem`` builds from the same settings), the disk they
   take and the time to open them (the checksums read once);
2. ``mm``: seconds of one MM iteration (the second: the first compiles and fills the
   caches) with numba on the CPU and torch on CUDA, the engines' memory, and how far
   apart their log-gammas are after the same two iterations;
3. ``fbt``: one FBT k=10 epoch at batch 1,024 (the recipe of docs/results.md) on
   CUDA, timed whole, with the test month's top-1 after it, and ``cpu_steps`` steps of
   the numba engine, timed and scaled to the epoch's steps (the engine is serial: a
   whole epoch takes minutes on any CPU); the two engines' parameters after the same
   first steps from the same start;
4. ``score``: the test month's positions scored by that model on CUDA (padded
   batches cut on the device) and a share of them on the CPU;
5. ``fbt_accuracy`` (with ``fbt_epochs`` above 1): the recipe trained anew for that
   many epochs on CUDA and its test top-1, last so that a run cut short keeps the
   speed rows.

``profile``: then torch.profiler over one MM iteration and 200 FBT steps of the torch
engines, the top operators by device time and the kernel launches written to
``profile.txt`` beside ``out`` (where to look next when a target is missed).

Without CUDA the CUDA rows are skipped with a note, and the CPU rows still run;
``device="cpu"`` runs the torch rows on the CPU instead (slowly): how the whole
command is tried before a GPU machine is lent.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.profiler import ProfilerActivity
from torch.profiler import profile as torch_profile

from gomove.data.dataset import Dataset
from gomove.data.loader import BatchLoader, scoring_batches
from gomove.evaluate.measures import measures, score_positions
from gomove.memory import peak_rss_mb
from gomove.models.fbt import FactorizationBT
from gomove.train.context import TrainContext
from gomove.train.mm.fit import train_mm
from gomove.train.mm.tensor import flat_mm
from gomove.train.move_models import prepare_data
from gomove.train.schemas import MMConfig, SGDConfig
from gomove.train.sgd.compiled import CompiledSGD
from gomove.train.sgd.loop import initial_model, train_sgd
from gomove.train.sgd.tensor import TorchSGD
from gomove.train.trainers import compose_config

TRAIN_MONTHS = ("2006-01", "2006-02", "2006-03", "2006-04")
TEST_MONTH = "2006-06"
FBT = {"k": 10, "batch_size": 1024, "lambda_w": 1e-7, "lambda_v": 1e-6, "seed": 0}


class Rows:
    """The rows measured so far: printed and appended to a JSON-lines file as they come."""

    def __init__(self, out: str | Path | None) -> None:
        self.out = Path(out) if out else None
        self.rows: list[dict] = []
        if self.out:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self.out.write_text("")

    def emit(self, row: dict[str, Any]) -> dict[str, Any]:
        row = {"bench": "gpu", **row}
        self.rows.append(row)
        line = json.dumps(row)
        print(line, flush=True)
        if self.out:
            with open(self.out, "a") as f:
                f.write(line + "\n")
        return row


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def split_config(data_dir: Path, cache_dir: str, max_games: int | None, test_games: int):
    """The train.py config of the standard split over data_dir's month archives (what
    the bench and scripts/gpu_variants.py extract)."""
    months = ",".join(str(data_dir / f"tygem-9d-{m}.zip") for m in TRAIN_MONTHS)
    overrides = [
        "data=tygem",
        f"data.train=[{months}]",
        "data.val=null",
        f"data.test={data_dir / f'tygem-9d-{TEST_MONTH}.zip'}",
        f"data.max_games={'null' if max_games is None else max_games}",
        f"data.max_test_games={test_games}",
        f"data.cache_dir={cache_dir}",
        "progress=false",
    ]
    return compose_config(overrides)


def bench_gpu(
    data_dir: str | Path,
    cache_dir: str = "cache",
    max_games: int | None = None,
    test_games: int = 1000,
    cpu_steps: int = 100,
    fbt_epochs: int = 1,
    out: str | Path | None = None,
    device: str | None = None,
    profile: bool = False,
    speed: bool = True,
) -> list[dict]:
    """The module docstring's rows; out: the JSON-lines file they go to; device: where
    the torch rows run (default: CUDA when present, else none); speed=False skips rows
    2-4 (a second call that only finishes the accuracy row on a cache already built)."""
    rows = Rows(out)
    if device is None:
        device = "cuda" if torch.cuda.is_available() else None
    cuda = torch.device(device) if device else None
    rows.emit({
        "phase": "machine",
        "cuda": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        "torch_rows_on": str(cuda) if cuda else None,
        "torch": torch.__version__,
        "cpu_threads": torch.get_num_threads(),
    })  # fmt: skip
    if cuda is None:
        rows.emit({"phase": "note", "note": "no CUDA: the torch rows are skipped"})
    cfg = split_config(Path(data_dir).resolve(), cache_dir, max_games, test_games)
    t0 = time.perf_counter()
    data = prepare_data(cfg)
    extract_s = time.perf_counter() - t0
    train, test = data.train, data.test
    t0 = time.perf_counter()
    Dataset.open(train.path)  # every file's checksum read once
    rows.emit({
        "phase": "data", "games": train.n_games, "positions": train.n_positions,
        "candidates": train.n_candidates, "test_positions": test.n_positions,
        "seconds": round(extract_s, 1), "disk_gb": round(train.nbytes / 1e9, 3),
        "bytes_per_candidate": round(train.nbytes / max(train.n_candidates, 1), 3),
        "open_seconds": round(time.perf_counter() - t0, 2),
    })  # fmt: skip
    flat = train.flat()
    if speed:
        _bench_mm(rows, flat, data.extractor.registry, cuda)
        model = _bench_fbt(rows, flat, train, test, cuda, cpu_steps)
        _bench_score(rows, model, test, cuda, data.extractor)
        rows.emit({"phase": "memory", "peak_rss_mb": round(peak_rss_mb())})
    if fbt_epochs > 1 and cuda is not None:
        _fbt_accuracy(rows, flat, train.registry.n_features, test, cuda, fbt_epochs)
    if profile and cuda is not None:
        where = rows.out.with_name("profile.txt") if rows.out else Path("profile.txt")
        _profile(flat, data.extractor.registry, cuda, where)
    return rows.rows


def _bench_mm(rows: Rows, flat, reg, cuda: torch.device | None) -> None:
    gammas = {}
    engines = [*([("torch", cuda)] if cuda else []), ("numba", torch.device("cpu"))]
    for engine, device in engines:  # CUDA's row first: it is the one a cut run must keep
        t0 = time.perf_counter()
        passes = flat_mm(flat, device, engine=engine)
        _sync()
        load_s = time.perf_counter() - t0
        model, hist = train_mm(
            MMConfig(max_iters=2, tol=0),
            passes,
            TrainContext(reg.n_features, reg.group_spans(), device, progress=False),
        )
        gammas[engine] = model.log_gamma.detach().cpu().numpy()
        rows.emit({
            "phase": "mm", "engine": engine, "device": str(device),
            "seconds_per_iter": round(float(hist[-1]["seconds"]), 3),
            "first_iter_seconds": round(float(hist[1]["seconds"]), 3),
            "load_seconds": round(load_s, 2), "engine_gb": round(passes.nbytes() / 1e9, 3),
            "cuda_peak_gb": _cuda_peak(device),
        })  # fmt: skip
        del passes
        _free()
    if len(gammas) == 2:
        diff = np.abs(gammas["torch"] - gammas["numba"]).max()
        rows.emit({"phase": "mm_equal", "max_abs_log_gamma_diff": float(diff)})


def _bench_fbt(rows: Rows, flat, train, test, cuda, cpu_steps: int):
    """The FBT rows; returns the model scored next (CUDA's after one epoch, else a CPU
    model of cpu_steps)."""
    n_features = train.registry.n_features
    cfg = SGDConfig(**FBT, epochs=1)
    steps_per_epoch = -(-flat.n_positions // cfg.batch_size)
    start = initial_model(
        cfg, [], TrainContext(n_features, [], torch.device("cpu"), progress=False)
    )
    numba_model = FactorizationBT.from_state_dict(start.state_dict())
    engine = CompiledSGD(numba_model, flat, cfg)
    batches = list(zip(range(cpu_steps + 1), engine, strict=False))
    engine.step(batches[0][1], cfg.lr)  # compiles, warms the caches
    t0 = time.perf_counter()
    for _, pos in batches[1:]:
        engine.step(pos, cfg.lr)
    per_step = (time.perf_counter() - t0) / max(len(batches) - 1, 1)
    rows.emit({
        "phase": "fbt", "engine": "numba", "device": "cpu", "steps_timed": len(batches) - 1,
        "seconds_per_step": round(per_step, 4),
        "seconds_per_epoch_projected": round(per_step * steps_per_epoch, 1),
    })  # fmt: skip
    if cuda is None:
        return numba_model
    twin = FactorizationBT.from_state_dict(start.state_dict()).to(cuda)
    tor = TorchSGD(twin, flat, cfg)
    for _, pos in batches:  # the same first steps from the same start
        tor.step(pos, cfg.lr)
    w_diff = (twin.w.detach().cpu() - numba_model.w.detach()).abs().max()
    v_diff = (twin.v.detach().cpu() - numba_model.v.detach()).abs().max()
    rows.emit({
        "phase": "fbt_equal", "steps": len(batches),
        "max_abs_w_diff": float(w_diff), "max_abs_v_diff": float(v_diff),
    })  # fmt: skip
    del tor, twin, engine
    _free()
    model, secs = _train_fbt(flat, n_features, cuda, 1)
    rows.emit({
        "phase": "fbt", "engine": "torch", "device": str(cuda), "epochs": 1,
        "seconds_per_epoch": round(float(np.median(secs)), 2), "epoch_seconds": secs,
        "test_top1": _top1(model, test, cuda), "cuda_peak_gb": _cuda_peak(cuda),
    })  # fmt: skip
    return model


def _fbt_accuracy(rows: Rows, flat, n_features: int, test, cuda, epochs: int) -> None:
    """The recipe's model after epochs on CUDA, from scratch: its test top-1 against the
    CPU run's (last, so that a run cut short has the speed rows already)."""
    model, secs = _train_fbt(flat, n_features, cuda, epochs)
    rows.emit({
        "phase": "fbt_accuracy", "device": str(cuda), "epochs": epochs,
        "epoch_seconds": secs, "test_top1": _top1(model, test, cuda),
    })  # fmt: skip


def _train_fbt(flat, n_features: int, cuda, epochs: int):
    """FBT k=10 by the torch engine on cuda: the model and each epoch's seconds."""
    cfg = SGDConfig(**FBT, epochs=epochs, engine="torch")
    model, hist = train_sgd(cfg, flat, TrainContext(n_features, [], cuda, progress=False))
    return model, [round(float(h["seconds"]), 2) for h in hist[1:]]


def _top1(model, test, device) -> float:
    records = score_positions(model.log_probs, scoring_batches(test, 1024, device)).arrays()
    return round(measures(records, by_pattern_size=False)["top1"], 5)


def _bench_score(rows: Rows, model, test, cuda, extractor) -> None:
    radius = torch.from_numpy(extractor.shape_radius())
    if cuda is not None and cuda.type != "cpu":
        model = model.to(cuda)
        batches = scoring_batches(test, 1024, cuda)
        score_positions(model.log_probs, batches, shape_radius=radius, device=cuda)  # warm
        _sync()
        t0 = time.perf_counter()
        records = score_positions(model.log_probs, batches, shape_radius=radius, device=cuda)
        _sync()
        sec = time.perf_counter() - t0
        n = len(records.arrays()["rank"])
        rows.emit({"phase": "score", "device": str(cuda), "positions": n,
                   "seconds": round(sec, 2), "positions_per_s": round(n / sec)})  # fmt: skip
    cpu_model = model.to("cpu")
    share = min(test.n_positions, 20_000)
    t0 = time.perf_counter()
    loader = BatchLoader(test, batch_size=1024, max_positions=share)
    score_positions(cpu_model.log_probs, loader, shape_radius=radius, device="cpu")
    sec = time.perf_counter() - t0
    rows.emit({"phase": "score", "device": "cpu", "positions": share, "seconds": round(sec, 2),
               "positions_per_s": round(share / sec),
               "seconds_projected": round(sec * test.n_positions / share, 1)})  # fmt: skip


def _cuda_peak(device: torch.device) -> float | None:
    if device.type != "cuda":
        return None
    return round(torch.cuda.max_memory_allocated(device) / 1e9, 2)


def _free() -> None:
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def _profile(flat, reg, device: torch.device, path: Path) -> None:
    """torch.profiler over one MM iteration and 200 FBT steps of the torch engines on
    device: the top operators by device time, and the kernel launches, into path."""
    passes = flat_mm(flat, device, engine="torch")
    groups, cfg = reg.group_spans(), MMConfig(max_iters=1, tol=0)
    train_mm(cfg, passes, TrainContext(reg.n_features, groups, device, progress=False))  # warm
    sgd_cfg = SGDConfig(**FBT, epochs=1, engine="torch")
    model = initial_model(sgd_cfg, [], TrainContext.of(reg, device, progress=False))
    steps = TorchSGD(model, flat, sgd_cfg)
    batches = [pos for _, pos in zip(range(200), steps, strict=False)]
    steps.step(batches[0], sgd_cfg.lr)  # warm
    jobs = {
        f"mm, 1 iteration ({len(groups)} passes)": lambda: train_mm(
            cfg, passes, TrainContext(reg.n_features, groups, device, progress=False)
        ),
        "fbt torch, 200 steps": lambda: [steps.step(pos, sgd_cfg.lr) for pos in batches],
    }
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    sorts = ["self_cpu_time_total"] + (["self_cuda_time_total"] if device.type == "cuda" else [])
    lines = []
    for name, job in jobs.items():
        t0 = time.perf_counter()
        job()  # unprofiled: the wall time the profiler's own cost does not inflate
        _sync()
        bare = time.perf_counter() - t0
        with torch_profile(activities=activities) as prof:
            t0 = time.perf_counter()
            job()
            _sync()
            wall = time.perf_counter() - t0
        events = prof.key_averages()
        launches = sum(e.count for e in events if e.key == "cudaLaunchKernel")
        lines.append(f"== {name}: {bare:.3f} s wall unprofiled, {wall:.2f} s profiled, "
                     f"{launches} kernel launches")  # fmt: skip
        lines += [f"-- by {s}\n" + events.table(sort_by=s, row_limit=25) for s in sorts]
        print(lines[-len(sorts) - 1], flush=True)
    path.write_text("\n".join(lines) + "\n")
    print(f"profile: {path}", flush=True)
