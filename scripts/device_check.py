"""Train each model on a GPU and on the CPU over the same real games, and compare.

    python scripts/device_check.py --data DIR [--games 2000] [--test-games 500] --out OUT

DIR holds tygem-9d-2006-01.zip (training: its first --games games) and
tygem-9d-2006-06.zip (the test month: its first --test-games games). Every run
is ``train.py data=tygem`` through gomove.experiment.runs.launch, all on one
cache (extracted once); the pairs differ only in ``device``:

- MM: the compiled numba engine on the CPU against the torch engine on CUDA
  (both the flat layout), the same iterations: gammas and test metrics compared;
- FBT k=10: the compiled engine on the CPU against the padded torch batches on
  CUDA, the same epochs: test metrics compared (different engines, so not bit
  for bit);

and each run's seconds per iteration (epoch). Writes OUT/device_check.json
and prints one JSON line per row. Made to run on a lent GPU machine in a few
minutes; on a machine without CUDA the cuda rows are skipped with a message.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity
from torch.profiler import profile as torch_profile

from gomove.data.loader import BatchLoader
from gomove.experiment.bench import bench_dataset
from gomove.experiment.runs import launch, read_history, read_positions, read_run_checkpoint
from gomove.train.config import SGDConfig
from gomove.train.mm.fit import MMConfig, train_mm
from gomove.train.mm.tensor import flat_mm
from gomove.train.sgd.loop import train_sgd


def _overrides(args: argparse.Namespace) -> list[str]:
    data = Path(args.data).resolve()
    return [
        "data=tygem",
        f"data.train=[{data / 'tygem-9d-2006-01.zip'}]",
        "data.val=null",
        f"data.test={data / 'tygem-9d-2006-06.zip'}",
        f"data.max_games={args.games}",
        f"data.max_test_games={args.test_games}",
        f"data.cache_dir={Path(args.out).resolve() / 'cache'}",
        "progress=false",
    ]


def _row(name: str, device: str, run: Path, metrics: dict, wall: float) -> dict:
    secs = read_history(run).seconds()
    return {
        "run": name,
        "device": device,
        "top1": metrics["top1"],
        "log_evidence": metrics["log_evidence"],
        "iterations": metrics["iterations"],
        "seconds_per_iter": float(np.median(secs)) if secs else None,
        "algorithm_seconds": metrics["algorithm_seconds"],
        "wall_seconds": round(wall, 1),
        "train_positions": metrics["train_positions"],
    }


def _train(name: str, device: str, extra: list[str], args: argparse.Namespace) -> dict:
    run = Path(args.out) / f"{name}_{device}"
    t0 = time.perf_counter()
    metrics = launch([*_overrides(args), f"device={device}", *extra], run)
    row = _row(name, device, run, metrics, time.perf_counter() - t0)
    print(json.dumps(row), flush=True)
    return row


def _compare(name: str, args: argparse.Namespace) -> dict:
    """cpu against cuda of one model: test metrics, ranks, and (MM) the gammas."""
    a, b = Path(args.out) / f"{name}_cpu", Path(args.out) / f"{name}_cuda"
    pa, pb = read_positions(a), read_positions(b)
    out = {"compare": name, "same_ranks": float(np.mean(pa["rank"] == pb["rank"]))}
    la, lb = pa["log_p"].astype(np.float64), pb["log_p"].astype(np.float64)
    out["log_p_max_abs_diff"] = float(np.max(np.abs(la - lb)))
    ca, cb = read_run_checkpoint(a), read_run_checkpoint(b)
    for key, t in ca["model"].items():
        # MM: log_gamma, so the absolute difference is gamma's relative one
        diff = (t.double() - cb["model"][key].double()).abs().max()
        out[f"{key}_max_abs_diff"] = float(diff)
    print(json.dumps(out), flush=True)
    return out


def profile(args: argparse.Namespace) -> None:
    """torch.profiler over 2 MM iterations of the flat engine and 1 padded FBT epoch on
    args.device (CUDA: MM's tensor engine): the top operators by CUDA time and the
    count of kernel launches, written to OUT/profile.txt."""
    month = str(Path(args.data).resolve() / "tygem-9d-2006-01.zip")
    ds = bench_dataset(month, args.games, str(Path(args.out) / "cache"), 10)
    engine = flat_mm(ds.flat(), args.device)
    groups = ds.registry.group_spans()
    fbt = SGDConfig(name="fbt", k=10, epochs=1, batch_size=1024)
    data = BatchLoader(ds, batch_size=1024)
    train_mm(engine, ds.registry.n_features, groups, MMConfig(max_iters=1, tol=0),
             device=args.device, progress=False)  # fmt: skip
    train_sgd(data, ds.registry.n_features, fbt, device=args.device, progress=False)
    lines = []
    for name, fn in (
        ("mm, 2 iterations", lambda: train_mm(engine, ds.registry.n_features, groups,
                                              MMConfig(max_iters=2, tol=0), device=args.device,
                                              progress=False)),
        ("fbt padded, 1 epoch", lambda: train_sgd(data, ds.registry.n_features, fbt,
                                                  device=args.device, progress=False)),
    ):  # fmt: skip
        with torch_profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            t0 = time.perf_counter()
            fn()
            if args.device == "cuda":
                torch.cuda.synchronize()
            wall = time.perf_counter() - t0
        events = prof.key_averages()
        launches = sum(e.count for e in events if e.key == "cudaLaunchKernel")
        lines += [f"== {name}: {wall:.2f} s wall, {launches} kernel launches",
                  events.table(sort_by="self_cuda_time_total", row_limit=12)]  # fmt: skip
    text = "\n".join(lines)
    print(text, flush=True)
    (Path(args.out) / "profile.txt").write_text(text)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--games", type=int, default=2000)
    p.add_argument("--test-games", type=int, default=500)
    p.add_argument("--mm-iters", type=int, default=20)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--out", required=True)
    p.add_argument("--profile", action="store_true", help="profile MM and FBT on one device")
    p.add_argument("--device", default="cuda", help="--profile's device")
    args = p.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    if args.profile:
        profile(args)
        return
    devices = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    if devices == ["cpu"]:
        print("no CUDA: the cuda rows are skipped", flush=True)
    else:
        print(json.dumps({"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}))
    rows, comparisons = [], []
    plan = [
        ("mm", ["model=mm", f"model.max_iters={args.mm_iters}", "model.tol=0"]),
        ("fbt", ["model=fbt", "k=10", f"model.epochs={args.epochs}"]),
    ]
    for name, extra in plan:
        for device in devices:
            rows.append(_train(name, device, extra, args))
        if len(devices) == 2:
            comparisons.append(_compare(name, args))
    out = {"rows": rows, "comparisons": comparisons, "args": vars(args)}
    (Path(args.out) / "device_check.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
