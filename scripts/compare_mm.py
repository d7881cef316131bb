"""gomove's MM against Coulom's mm.cpp on identical input: gammas, time per update, memory.

Exports a dataset (or a run's training dataset) as mm's competition file,
builds ``scripts/mm_driver.cpp`` around Pachi's ``mm.cpp`` (g++ -O3), then
in one run, one process after the other (pin the whole script to one core,
``taskset -c 1``, and NUMBA_NUM_THREADS=1 for a single-threaded comparison):

1. cyclic: N sweeps of mm.cpp and N cyclic iterations of gomove's MM from
   gamma = 1; the CPU seconds of every sweep, peak memory (``/usr/bin/time``),
   and the largest relative difference of the gammas;
   (gomove sweeps in file order here, as mm.cpp does);
   gomove's runs are scripts/compare_mm_worker.py, a process without torch;
2. mm's own schedule (its main: greedy by last gain, until no gain reaches
   1e-4, twice): its updates, CPU time and final log-posterior (scored by
   gomove), then gomove's greedy schedule until it reaches that log-posterior;
3. gomove's default run (MMConfig's defaults: schedule, order, stopping rule):
   its iterations, CPU time and log-posterior against mm.cpp's.

Prints one JSON object per figure (the last line: all of them).

    taskset -c 1 env NUMBA_NUM_THREADS=1 python scripts/compare_mm.py \\
        --source /work/ext/cache/train-KEY --mm-dir ../ext/pachi/pattern/training/mm \\
        --work /tmp/mmcmp --sweeps 30
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from gomove.data.flat import FlatData
from gomove.export.mm_format import log_gammas_of, read_gammas
from gomove.export.models import export_mm
from gomove.export.source import training_dataset
from gomove.train.mm.compiled import NumbaMM
from gomove.train.mm.loop import log_prior
from gomove.train.schemas import MMConfig

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "scripts" / "mm_driver.cpp"
WORKER = ROOT / "scripts" / "compare_mm_worker.py"


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
    stats = NumbaMM(data).collect(log_gamma, ())
    return (stats.log_likelihood + log_prior(log_gamma)) / data.n_positions


def cumulative_cpu(hist: dict) -> list[float]:
    """CPU seconds of the passes up to the end of each history row."""
    cpu, out, k = hist["pass_cpu"], [], 0
    for r in hist["rows"]:
        k += r.get("passes", 1)
        out.append(float(sum(cpu[:k])))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source", required=True, help="a dataset folder or a run")
    p.add_argument("--mm-dir", type=Path, help="folder of mm.cpp (Pachi's pattern/training/mm)")
    p.add_argument("--work", type=Path, default=Path("mm-compare"))
    p.add_argument("--sweeps", type=int, default=30)
    p.add_argument("--greedy-iters", type=int, default=40, help="greedy iterations (40)")
    args = p.parse_args()
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
    folder = str(training_dataset(args.source).path)

    # 1. cyclic sweeps, both sides
    err, rss_mm, _ = timed([str(exe), "cyclic", str(args.sweeps)], dat, w / "mm_cyclic.txt")
    sweeps = [fields(x) for x in err.splitlines() if x.startswith("sweep=")]
    mm_sweep = float(np.mean([s["seconds"] for s in sweeps[1:]]))
    me = [sys.executable, str(WORKER), "--dataset", folder]
    me += ["--sweeps", str(args.sweeps), "--order", "file"]
    me += ["--gammas", str(w / "gomove_cyclic.txt")]
    me += ["--history", str(w / "gomove_cyclic.json")]
    _, rss_gm, _ = timed(me, None, w / "gomove_cyclic.log")
    hist = json.loads((w / "gomove_cyclic.json").read_text())
    n_groups = len(hist["rows"][1]["updates"])
    gm_update = float(np.mean(hist["pass_cpu"][1:]))  # the first pass measures gamma = 1
    gm_sweep = gm_update * n_groups
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
    c = out["cyclic"]
    c["targets"] = {
        "speedup >= 5": c["speedup"] >= 5,
        "max_rel_gamma_diff <= 1e-3": rel <= 1e-3,
        "gomove_peak_mib <= mm_peak_mib": rss_gm <= rss_mm,
    }
    print(json.dumps(out["cyclic"]), flush=True)

    # 2. mm's own schedule, then gomove's greedy schedule to the same log-posterior
    err, _, _ = timed([str(exe), "coulom"], dat, w / "mm_coulom.txt")
    own = fields([x for x in err.splitlines() if x.startswith("updates=")][0])
    data = training_dataset(args.source).flat()
    target = log_posterior_per_position(data, log_gammas_of(read_gammas(w / "mm_coulom.txt")))
    del data
    me = [sys.executable, str(WORKER), "--dataset", folder, "--schedule", "greedy"]
    me += ["--sweeps", str(args.greedy_iters), "--gammas", str(w / "gomove_greedy.txt")]
    me += ["--history", str(w / "gomove_greedy.json")]
    timed(me, None, w / "gomove_greedy.log")
    hist = json.loads((w / "gomove_greedy.json").read_text())
    rows = hist["rows"]
    cum = cumulative_cpu(hist)
    reached = [i for i, r in enumerate(rows) if r["log_posterior"] >= target]
    last = reached[0] if reached else len(rows) - 1
    n_updates = sum(len(r["updates"]) for r in rows[: last + 1])
    secs = cum[last]
    cpu_per_update = cum[-1] / sum(len(r["updates"]) for r in rows)
    extra = sum(r.get("passes", 0) - len(r["updates"]) for r in rows[1:])
    out["schedule"] = {
        "gomove_reached_target": bool(reached),
        "mm_updates": own["updates"],
        "mm_seconds": own["seconds"],
        "mm_seconds_per_update": own["seconds"] / own["updates"],
        "mm_log_posterior": target,
        "gomove_greedy_updates": n_updates,
        "gomove_greedy_seconds": secs,
        "gomove_seconds_per_update": cpu_per_update,
        "gomove_greedy_extra_passes": extra,
        "gomove_cyclic_seconds_per_update": gm_sweep / n_groups,
        "gomove_log_posterior": rows[last]["log_posterior"],
        "speedup": own["seconds"] / secs,
    }
    sc = out["schedule"]
    sc["targets"] = {
        "greedy per update <= cyclic per update": cpu_per_update <= gm_sweep / n_groups,
        "reaches mm's log-posterior 5x sooner": bool(reached) and sc["speedup"] >= 5,
    }
    print(json.dumps(out["schedule"]), flush=True)

    # 3. gomove's default run, as converged as mm.cpp's?
    me = [sys.executable, str(WORKER), "--dataset", folder, "--default"]
    me += ["--gammas", str(w / "gomove_default.txt"), "--history", str(w / "gomove_default.json")]
    timed(me, None, w / "gomove_default.log")
    hist = json.loads((w / "gomove_default.json").read_text())
    cfg = MMConfig()
    out["default"] = {
        "schedule": cfg.schedule,
        "order": cfg.order,
        "tol": cfg.tol,
        "iterations": hist["rows"][-1]["iter"],
        "seconds": cumulative_cpu(hist)[-1],
        "log_posterior": hist["rows"][-1]["log_posterior"],
        "mm_log_posterior": target,
    }
    d = out["default"]
    d["targets"] = {"as converged as mm.cpp": d["log_posterior"] >= target}
    print(json.dumps(d), flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
