"""Reproduce the model comparison table of docs/results.md in one command.

    python scripts/results_table.py --games 1000 --jobs 2 --out runs/table

Runs ``train.py`` once per row on the standard split of ../shared/data
(``data=tygem``: the first N training games of 2006-01.., validation on 100
games of 2006-05, test on the first 500 games of 2006-06), the first row alone
so that it builds the shared dataset cache, the others ``--jobs`` at a time,
each with one torch thread. Prints the table as markdown and writes it to
``OUT/table.md``; each row's run directory keeps its metrics.json and plots.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ROWS = [
    ("MM", ["model=mm"]),
    ("FBT k=5", ["model=fbt", "k=5"]),
    ("FBT k=10", ["model=fbt", "k=10"]),
    ("LFR k=5", ["model=lfr", "k=5"]),
    ("LFR k=10", ["model=lfr", "k=10"]),
    ("FBT k=10, S=5", ["model=fbt", "k=10", "sample=5"]),
    ("FBT k=10, S=10", ["model=fbt", "k=10", "sample=10"]),
    ("FBT k=10, S=20", ["model=fbt", "k=10", "sample=20"]),
    ("FBT k=10, S=30", ["model=fbt", "k=10", "sample=30"]),
]


def slug(name: str) -> str:
    return name.lower().replace(" ", "").replace(",", "-").replace("=", "")


def run_row(name: str, overrides: list[str], args: argparse.Namespace) -> dict:
    out = Path(args.out).resolve() / slug(name)
    cmd = [
        sys.executable,
        "train.py",
        *overrides,
        "data=tygem",
        f"data.max_games={args.games}",
        f"hydra.run.dir={out}",
        "progress=false",
        "threads=1",
        *args.extra,
    ]
    t = time.perf_counter()
    with open(out.parent / f"{slug(name)}.log", "w") as log:
        subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True)
    metrics = json.loads((out / "metrics.json").read_text())
    metrics["wall_seconds"] = time.perf_counter() - t
    return metrics


def table(results: dict[str, dict], games: int) -> str:
    lines = [
        f"| model ({games} training games) | top-1 | log-evidence | training time |",
        "|---|---|---|---|",
    ]
    for name, m in results.items():
        lines.append(
            f"| {name} | {100 * m['top1']:.2f}% | {m['log_evidence']:.3f} "
            f"| {m['train_seconds']:.0f} s |"
        )
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--games", type=int, default=1000, help="training games (first N)")
    p.add_argument("--jobs", type=int, default=2, help="rows trained at once")
    p.add_argument("--out", default="runs/table", help="folder of the run directories")
    p.add_argument("--rows", nargs="*", help="only these rows (names as in the table)")
    p.add_argument("extra", nargs="*", help="more train.py overrides for every row")
    args = p.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    rows = [r for r in ROWS if not args.rows or r[0] in args.rows]
    results: dict[str, dict] = {}
    first, rest = rows[0], rows[1:]
    results[first[0]] = run_row(*first, args)  # builds the dataset cache alone
    with ThreadPoolExecutor(args.jobs) as pool:
        done = pool.map(lambda r: (r[0], run_row(*r, args)), rest)
        results.update(dict(done))
    text = table({r[0]: results[r[0]] for r in rows}, args.games)
    (Path(args.out) / "table.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
