"""Reproduce the model comparison table of docs/logs/models.md in one command.

    python scripts/results_table.py --games 1000 --jobs 2 --out runs/table
    python scripts/results_table.py --jobs 1 --repeat 2 --rows "FBT k=10" "FBT k=10, S=30"

Runs ``train.py`` once per row (gomove/configs/experiment/results_table.yaml,
launched and read by gomove.experiment.runs) on the standard split of ../shared/data
(``data=tygem``: the first N training games of 2006-01.., validation on 100
games of 2006-05, test on the first 500 games of 2006-06), the first row alone
so that it builds the shared dataset cache, the others ``--jobs`` at a time,
each with one torch thread. Prints the table as markdown and writes it to
``OUT/table.md``; each row's run directory keeps its metrics.json and plots.

Columns: training time is the whole ``spec.fit`` call (start pass and
validation after every epoch included); "epochs" sums the history's
per-epoch wall seconds (rows 1.., the start pass left out: gomove.experiment.runs,
``History``), the optimization alone, "epochs, CPU" their CPU
seconds (less sensitive to other jobs on a shared machine); load is the
range of the 1-minute load average at the rows' starts and ends. With
``--repeat R`` the rows run R rounds, one row after the other, and each
figure is the median (and range) over the rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gomove.experiment.runs import launch, load_experiment, read_history, row_folder

ROOT = Path(__file__).resolve().parents[1]  # the runs start here: ../shared/data is beside it


def rows() -> list[tuple[str, list[str]]]:
    """(name, train.py overrides) of every row, in the table's order."""
    cfg = load_experiment("results_table")
    return [(str(r.name), [str(o) for o in r.overrides]) for r in cfg.rows]


def run_row(name: str, overrides: list[str], args: argparse.Namespace, rnd: int = 0) -> dict:
    out = Path(args.out).resolve() / (row_folder(name) + (f"-r{rnd}" if rnd else ""))
    overrides = [
        *overrides,
        "data=tygem",
        f"data.max_games={args.games}",
        "progress=false",
        "threads=1",
        *args.extra,
    ]
    t = time.perf_counter()
    load = os.getloadavg()[0]
    metrics = launch(overrides, out, log_path=out.parent / f"{out.name}.log", cwd=ROOT)
    metrics["wall_seconds"] = time.perf_counter() - t
    metrics["load"] = (load, os.getloadavg()[0])
    history = read_history(out)
    cpu = history.cpu_seconds()
    metrics["epoch_seconds"] = sum(history.seconds())
    metrics["epoch_cpu_seconds"] = float("nan") if cpu is None else sum(cpu)
    return metrics


def _spread(values: list[float], fmt: str) -> str:
    """One value, or the median and the range of several (rounds)."""
    lo, mid, hi = (fmt.format(x) for x in (min(values), statistics.median(values), max(values)))
    return mid if lo == hi else f"{mid} ({lo} to {hi})"


def table(results: dict[str, list[dict]], games: int) -> str:
    lines = [
        f"| model ({games} training games) | top-1 | log-evidence | training time "
        "| epochs | epochs, CPU | load |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, ms in results.items():
        loads = [x for r in ms for x in r["load"]]
        lines.append(
            f"| {name} | {_spread([100 * r['top1'] for r in ms], '{:.2f}')}% "
            f"| {_spread([r['log_evidence'] for r in ms], '{:.3f}')} "
            f"| {_spread([r['train_seconds'] for r in ms], '{:.0f}')} s "
            f"| {_spread([r['epoch_seconds'] for r in ms], '{:.0f}')} s "
            f"| {_spread([r['epoch_cpu_seconds'] for r in ms], '{:.0f}')} s "
            f"| {min(loads):.1f}-{max(loads):.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--games", type=int, default=1000, help="training games (first N)")
    p.add_argument("--jobs", type=int, default=2, help="rows trained at once")
    p.add_argument("--out", default="runs/table", help="folder of the run directories")
    p.add_argument("--rows", nargs="*", help="only these rows (names as in the table)")
    p.add_argument(
        "--repeat", type=int, default=1, help="rounds of all rows (times: median and range)"
    )
    p.add_argument("extra", nargs="*", help="more train.py overrides for every row")
    args = p.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    every = rows()
    unknown = set(args.rows or []) - {r[0] for r in every}
    if unknown:
        p.error(f"unknown rows {sorted(unknown)}; choose from {[r[0] for r in every]}")
    todo_rows = [r for r in every if not args.rows or r[0] in args.rows]
    results: dict[str, list[dict]] = {r[0]: [] for r in todo_rows}
    for rnd in range(args.repeat):
        todo = todo_rows
        if rnd == 0:  # the first row alone: it builds the dataset cache
            results[todo_rows[0][0]].append(run_row(*todo_rows[0], args))
            todo = todo_rows[1:]
        with ThreadPoolExecutor(args.jobs) as pool:
            for name, m in pool.map(lambda r, rnd=rnd: (r[0], run_row(*r, args, rnd)), todo):
                results[name].append(m)
    text = table(results, args.games)
    (Path(args.out) / "table.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
