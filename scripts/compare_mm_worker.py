"""gomove's side of scripts/compare_mm.py, in a process of its own that never imports torch.

MM on the CPU needs numpy and numba only (gomove.train.mm.loop,
gomove.train.mm.compiled), so its peak memory is the data, the engine and those
two runtimes; torch alone would add about 185 MiB. compare_mm.py runs this
under ``/usr/bin/time -v``:

    python scripts/compare_mm_worker.py --dataset DATASET_FOLDER --gammas OUT.txt \\
        --history OUT.json [--sweeps N --schedule cyclic|greedy --order size|file | --default]

trains from gamma = 1 (N iterations, or MMConfig's defaults with --default,
stopping rule included), writes the gammas in mm's format and the history
(per iteration: log-posterior, updates, passes; the CPU seconds of every pass;
this process's peak RSS in MiB).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gomove.data.dataset import Dataset
from gomove.data.flat import FlatData
from gomove.export.mm_format import write_gammas
from gomove.train.mm.compiled import NumbaMM
from gomove.train.mm.loop import MMPasses, PassStats, fit_gammas
from gomove.train.schemas import MMConfig


class TimedPasses(MMPasses):
    """An engine whose passes are timed in CPU seconds, one entry per pass."""

    def __init__(self, inner: MMPasses) -> None:
        self.inner, self.n_positions, self.cpu = inner, inner.n_positions, []

    def collect(self, log_gamma: np.ndarray, columns: Sequence[int]) -> PassStats:
        t = time.process_time()
        stats = self.inner.collect(log_gamma, columns)
        self.cpu.append(time.process_time() - t)
        return stats


def warm_up(data: FlatData) -> None:
    """Compile (or load) the numba kernels before anything is timed: every group's
    change applied before every group's gather, as cyclic and greedy runs make them."""
    engine = NumbaMM(data)
    lg = np.zeros(data.min_features)
    n = len(data.sizes)
    engine.collect(lg, (0,))
    for g in range(n):
        for h in range(n):
            lg = lg.copy()
            lg[data.offsets[g]] += 0.1
            engine.collect(lg, (h,))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dataset", required=True, help="a dataset folder (dataset.json)")
    p.add_argument("--gammas", required=True)
    p.add_argument("--history", required=True)
    p.add_argument("--sweeps", type=int, default=30)
    p.add_argument("--schedule", default="cyclic")
    p.add_argument("--order", default=MMConfig.order)
    p.add_argument("--default", action="store_true", help="MMConfig's defaults")
    args = p.parse_args()
    ds = Dataset.open(args.dataset)
    data = ds.flat()
    warm_up(data)
    if args.default:
        cfg = MMConfig()
    else:
        cfg = MMConfig(
            max_iters=args.sweeps, tol=float("-inf"), schedule=args.schedule, order=args.order
        )
    engine = TimedPasses(NumbaMM(data))
    log_gamma, history = fit_gammas(
        engine, ds.registry.n_features, data.group_spans(), cfg, progress=False
    )
    write_gammas(args.gammas, log_gamma)
    keys = ("iter", "log_posterior", "updates", "passes")
    rows = [{k: r[k] for k in keys if k in r} for r in history]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"pass_cpu": engine.cpu, "rows": rows, "rss": peak, "torch": "torch" in sys.modules}
    Path(args.history).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
