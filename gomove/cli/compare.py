"""``gomove compare``: the comparison paper's experiment (Wistuba et al. 2012) in one command.

    gomove compare --quick                                   # embedded sample, minutes
    gomove compare --sizes 1000 5000 10000 --out runs/compare --set data.cache_dir=cache

Trains every system (mm lbr bar pr fbt lfr, and NAME+small with Stern's small
features) at every training size on the standard split of ../shared/data,
one train.py process per run, and writes OUT/comparison.md (Table I,
log-evidence, time and memory per system and size) with the figures
(Fig. 5, 6, 7, 8 per size, Fig. 10). Finished runs are reused unless their
model settings differ from today's defaults and overrides. See
docs/compare.md.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from gomove.experiment.compare import Plan, compare, systems

QUICK_SIZES = [30, 60]
FULL_SIZES = [1000, 5000, 10000]


def main(argv: list[str] | None = None) -> None:
    names = list(systems())
    p = argparse.ArgumentParser(
        prog="gomove compare",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"the embedded sample (data=sample), sizes {QUICK_SIZES}",
    )
    p.add_argument("--sizes", type=int, nargs="+", help=f"training games (default {FULL_SIZES})")
    p.add_argument(
        "--systems",
        nargs="+",
        default=names,
        help=f"any of {names}, or NAME+small (default: all six)",
    )
    p.add_argument("--data", help="data config group (default: tygem; sample with --quick)")
    p.add_argument("--out", type=Path, help="output folder (default runs/compare[-quick])")
    p.add_argument(
        "--set",
        dest="extra",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="train.py overrides for every run, e.g. data.cache_dir=cache",
    )
    p.add_argument("--threads", type=int, default=1, help="torch and numba threads per run")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap draws of Fig. 6")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    p.add_argument("--no-resume", action="store_true", help="retrain runs already finished")
    p.add_argument(
        "--report-only",
        action="store_true",
        help="train nothing: the tables and figures of the runs finished so far",
    )
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    plan = Plan(
        out=a.out or Path("runs/compare-quick" if a.quick else "runs/compare"),
        systems=a.systems,
        sizes=a.sizes or (QUICK_SIZES if a.quick else FULL_SIZES),
        data=a.data or ("sample" if a.quick else "tygem"),
        extra=a.extra,
        threads=a.threads,
        bootstrap=a.bootstrap,
        seed=a.seed,
        resume=not a.no_resume,
        report_only=a.report_only,
    )
    compare(plan)
    print(f"{plan.out / 'comparison.md'}")


if __name__ == "__main__":
    main()
