"""gomove's MM against Coulom's mm.cpp on identical input: gammas, time per update, memory.

Exports a dataset (or a run's training dataset) as mm's competition file,
builds ``scripts/mm_driver.cpp`` around Pachi's ``mm.cpp`` (g++ -O3), then
in one run, one process after the other (pin the whole script to one core,
``taskset -c 1``, and NUMBA_NUM_THREADS=1 for a single-threaded comparison):

1. cyclic: N sweeps of mm.cpp and N cyclic iterations of gomove's MM from
   gamma = 1; the CPU seconds of every sweep, peak memory (``/usr/bin/time``),
   and the largest relative difference of the gammas;
2. mm's own schedule (its main: greedy by last gain, until no gain reaches
   1e-4, twice): its updates, CPU time and final log-posterior (scored by
   gomove), then gomove's greedy schedule until it reaches that log-posterior.

Prints one JSON object per figure (the last line: all of them).

    taskset -c 1 env NUMBA_NUM_THREADS=1 python scripts/compare_mm.py \\
        --source /work/ext/cache/train-KEY --mm-dir ../ext/pachi/pattern/training/mm \\
        --work /tmp/mmcmp --sweeps 30
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from gomove.export.mm_format import log_gammas_of, read_gammas, write_gammas
from gomove.export.models import export_mm
from gomove.export.source import training_dataset
from gomove.models.mm import log_prior
from gomove.train.config import MMConfig
from gomove.train.flat import FlatData
from gomove.train.mm import train_mm
from gomove.train.mm_flat import NumbaMM

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "scripts" / "mm_driver.cpp"


def build_driver(mm_dir: Path, out: Path) -> Path:
    """g++ -O3 mm_driver.cpp with mm.cpp from mm_dir (skipped when up to date)."""
    exe = out / "mm_driver"
    src = mm_dir / "mm.cpp"
    if not src.is_file():
        sys.exit(f"error: {src} not found (Pachi's pattern/training/mm)")
    if not exe.exists() or exe.stat().st_mtime < max(src.stat().st_mtime, DRIVER.stat().st_mtime):
        cmd = ["g++", "-O3", "-o", str(exe), "-I", str(mm_dir), str(DRIVER)]
        subprocess.run(cmd, check=True)
    return exe


def timed(cmd: list[str], stdin: Path | None, stdout: Path) -> tuple[str, float, float]:
    """Run cmd under /usr/bin/time -v: (stderr, peak RSS MiB, wall seconds)."""
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    with open(stdout, "wb") as fout:
        t0 = time.perf_counter()
        p = subprocess.run(
            ["/usr/bin/time", "-v", *cmd], stdin=fin, stdout=fout, stderr=subprocess.PIPE
        )
        wall = time.perf_counter() - t0
    if stdin:
        fin.close()
    err = p.stderr.decode()
    if p.returncode:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{err[-2000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1)) / 1024
    return err, rss, wall


def fields(line: str) -> dict[str, float]:
    return {k: float(v) for k, v in re.findall(r"(\w+)=([-+0-9.eE]+)", line)}


def log_posterior_per_position(data: FlatData, log_gamma: np.ndarray) -> float:
    """gomove's log-posterior per position (likelihood + prior) of the gammas."""
    engine = NumbaMM(data)
    lg = torch.from_numpy(log_gamma)
    stats = engine.collect(lg, ())
    return (stats.log_likelihood + float(log_prior(lg))) / data.n_positions


def worker(args: argparse.Namespace) -> None:
    """The gomove side, in its own process (its peak memory alone): train from gamma = 1
    for --sweeps iterations of --schedule, write the gammas and the history (per
    iteration: wall seconds, log-posterior, updates; CPU seconds of the whole fit)."""
    ds = training_dataset(args.source)
    data = FlatData.from_dataset(ds)
    cfg = MMConfig(max_iters=args.sweeps, tol=float("-inf"), schedule=args.schedule)
    engine = NumbaMM(data)
    t0 = time.process_time()
    model, history = train_mm(
        engine, ds.registry.n_features, data.group_spans(), cfg, device="cpu", progress=False
    )
    cpu = time.process_time() - t0
    write_gammas(args.gammas, model.log_gamma.numpy())
    rows = [{k: r[k] for k in ("iter", "seconds", "log_posterior", "updates")} for r in history]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(args.history).write_text(json.dumps({"cpu_seconds": cpu, "rows": rows, "rss": peak}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source", required=True, help="a dataset folder or a run")
    p.add_argument("--mm-dir", type=Path, help="folder of mm.cpp (Pachi's pattern/training/mm)")
    p.add_argument("--work", type=Path, default=Path("mm-compare"))
    p.add_argument("--sweeps", type=int, default=30)
    p.add_argument("--schedule", default="cyclic", help=argparse.SUPPRESS)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--gammas", help=argparse.SUPPRESS)
    p.add_argument("--history", help=argparse.SUPPRESS)
    p.add_argument("--greedy-iters", type=int, default=40, help="greedy iterations (40)")
    args = p.parse_args()
    if args.worker:
        worker(args)
        return
    if args.mm_dir is None:
        p.error("--mm-dir is required")
    w = args.work
    w.mkdir(parents=True, exist_ok=True)
    exe = build_driver(args.mm_dir, w)
    dat = w / "input.dat"
    if not dat.exists():
        summary = export_mm(args.source, dat)
        print(json.dumps({"exported": str(dat), **summary}), flush=True)
    out: dict[str, object] = {}

    # 1. cyclic sweeps, both sides
    err, rss_mm, _ = timed([str(exe), "cyclic", str(args.sweeps)], dat, w / "mm_cyclic.txt")
    sweeps = [fields(x) for x in err.splitlines() if x.startswith("sweep=")]
    mm_sweep = float(np.mean([s["seconds"] for s in sweeps[1:]]))
    me = [sys.executable, __file__, "--worker", "--source", args.source]
    me += ["--sweeps", str(args.sweeps), "--gammas", str(w / "gomove_cyclic.txt")]
    me += ["--history", str(w / "gomove_cyclic.json")]
    _, rss_gm, _ = timed(me, None, w / "gomove_cyclic.log")
    hist = json.loads((w / "gomove_cyclic.json").read_text())
    n_updates = sum(len(r["updates"]) for r in hist["rows"])
    n_groups = len(hist["rows"][1]["updates"])
    gm_sweep = hist["cpu_seconds"] / n_updates * n_groups  # CPU, the first pass included
    a = read_gammas(w / "mm_cyclic.txt")
    b = read_gammas(w / "gomove_cyclic.txt")
    rel = float(np.max(np.abs(a - b) / np.maximum(np.abs(a), np.abs(b))))
    out["cyclic"] = {
        "sweeps": args.sweeps,
        "mm_seconds_per_sweep": mm_sweep,
        "gomove_seconds_per_sweep": gm_sweep,
        "speedup": mm_sweep / gm_sweep,
        "max_rel_gamma_diff": rel,
        "mm_peak_mib": rss_mm,
        "gomove_peak_mib": rss_gm,
        "mm_log_likelihood": sweeps[-1]["log_likelihood"],
        "gomove_log_posterior": hist["rows"][-1]["log_posterior"],
    }
    print(json.dumps(out["cyclic"]), flush=True)

    # 2. mm's own schedule, then gomove's greedy schedule to the same log-posterior
    err, _, _ = timed([str(exe), "coulom"], dat, w / "mm_coulom.txt")
    own = fields([x for x in err.splitlines() if x.startswith("updates=")][0])
    ds = training_dataset(args.source)
    data = FlatData.from_dataset(ds)
    target = log_posterior_per_position(data, log_gammas_of(read_gammas(w / "mm_coulom.txt")))
    del data
    me = [sys.executable, __file__, "--worker", "--source", args.source, "--schedule", "greedy"]
    me += ["--sweeps", str(args.greedy_iters), "--gammas", str(w / "gomove_greedy.txt")]
    me += ["--history", str(w / "gomove_greedy.json")]
    timed(me, None, w / "gomove_greedy.log")
    hist = json.loads((w / "gomove_greedy.json").read_text())
    all_rows = hist["rows"]
    reached = [i for i, r in enumerate(all_rows) if r["log_posterior"] >= target]
    rows = all_rows[: reached[0] + 1] if reached else all_rows
    n_updates = sum(len(r["updates"]) for r in rows)
    all_updates = sum(len(r["updates"]) for r in all_rows)
    cpu_per_update = hist["cpu_seconds"] / all_updates
    secs = cpu_per_update * n_updates
    out["schedule"] = {
        "gomove_reached_target": bool(reached),
        "mm_updates": own["updates"],
        "mm_seconds": own["seconds"],
        "mm_seconds_per_update": own["seconds"] / own["updates"],
        "mm_log_posterior": target,
        "gomove_greedy_updates": n_updates,
        "gomove_greedy_seconds": secs,
        "gomove_seconds_per_update": cpu_per_update,
        "gomove_cyclic_seconds_per_update": gm_sweep / n_groups,
        "gomove_log_posterior": rows[-1]["log_posterior"],
        "speedup": own["seconds"] / secs,
    }
    print(json.dumps(out["schedule"]), flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
