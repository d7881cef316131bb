"""The learning curve: test top-1, log-evidence, training time and memory of MM and FBT
at 5,000 to 147,329 training games of the large split, resumable over several sittings.

    nohup python scripts/learning_curve.py run --out runs/curve > runs/curve.log 2>&1 &
    python scripts/learning_curve.py table --out runs/curve            # markdown, so far
    python scripts/learning_curve.py plot --out runs/curve --png docs/img/learning_curve.png
    python scripts/learning_curve.py keep --out runs/curve     # into docs/logs/learning_curve.json

The rows and sizes are gomove/configs/experiment/learning_curve.yaml's. ``run`` trains
every row at every size, the sizes in increasing order, each run in
``OUT/N/<row>`` with the dataset cache of its features ``OUT/N/cache-<features>``
(removed once no later row of the size reads it, unless --keep-data: the large split's
dataset takes tens of GB, and two of them do not fit on this machine's disk). Killed, it
continues: a finished run (metrics.json and positions.npz) is skipped, an unfinished
one resumes from its train state (``resume=true``), and the datasets and the harvest
resume where their extraction stopped. Up to ``in_memory_games`` games the training
data are mapped whole; above, read in chunks with MM warm-started in memory
(``model.warm_positions``): the memory a run needs is then the model's and a chunk's.

``table`` and ``plot`` read what has finished: per row and size the test top-1 and
log-evidence, the training time (metrics.json's train_seconds: the trainer, validation
included, not the extraction; and of it the algorithm's own, algorithm_seconds, without
the validation after every iteration or epoch), the data time (harvest and extraction,
or opening the caches), the peak anonymous memory (the process's own, without the page cache of the
mapped files), the harvest's shape count, and the machine's 1-minute load average at
the run's start and end (2 on this 2-core machine is the run alone; more: shared).
They add the rows kept in the repository (``--kept``, docs/logs/learning_curve.json), the
runs of earlier sittings whose folders are gone (a sitting may start on a fresh
machine), at the results table's precision; a finished run replaces the kept row of its
model and size. ``keep`` writes them all back there.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

import matplotlib

from gomove.atomic import atomic_write_json
from gomove.experiment.runs import finished, launch, load_experiment, read_metrics, row_folder

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]  # the runs start here: ../shared/data is beside it
TRAIN_STATE = "train_state.pt"
KEPT = ROOT / "docs" / "logs" / "learning_curve.json"  # the rows of runs gone (module doc)
WALL = "wall.json"  # the last attempt's wall seconds and the 1-minute load at its start and end
# a run resumed over several attempts: its metrics.json holds the cost of all of them
# (attempts, first_data_seconds: gomove.train.resume's spent); a run trained before the
# train state carried that, the figures its wall.json may hold, summed or maxed over the
# attempts (with a "note" saying how they were read), in place of the last attempt's
RESUMED_FIGURES = ("train_s", "data_s", "peak_anon_mb")


def overrides_of(row_overrides: list[str], n: int, cfg, cache: Path, extra: list[str]) -> list[str]:
    """train.py overrides of one row at n games (all of the split: max_games null)."""
    out = [
        *row_overrides,
        "data=tygem_large",
        f"data.max_games={'null' if n >= max(cfg.sizes) else n}",
        f"data.cache_dir={cache}",
        "progress=false",
        "threads=2",
        "seed=0",
    ]
    if n <= int(cfg.in_memory_games):
        out.append("data.chunk_positions=null")
    elif any(o == "model=mm" for o in row_overrides):
        out.append(f"model.warm_positions={int(cfg.warm_positions)}")
    return [*out, *extra]


def features_of(row) -> str:
    """The row's feature overrides as a folder name: rows with the same features share
    a size's dataset cache (``OUT/N/cache-<features>``)."""
    feats = sorted(str(o) for o in row.overrides if str(o).startswith("features."))
    return "cache-" + (
        row_folder("-".join(o.removeprefix("features.") for o in feats)) or "default"
    )


def run(args: argparse.Namespace) -> None:
    cfg = load_experiment("learning_curve")
    out = Path(args.out).resolve()
    sizes = [int(s) for s in (args.sizes or cfg.sizes)]
    rows = [r for r in cfg.rows if not args.rows or r.name in args.rows]
    for n in sizes:
        for i, r in enumerate(rows):
            folder = out / str(n) / row_folder(str(r.name))
            cache = out / str(n) / features_of(r)
            if finished(folder):
                print(f"[{time.strftime('%F %T')}] {r.name} at {n:,} games: done", flush=True)
            else:
                train_row(r, n, cfg, folder, cache, args.extra)
            # a dataset goes once no later row of this size reads it (two of the large
            # split's would not fit on the disk together)
            later = {features_of(q) for q in rows[i + 1 :]}
            if not args.keep_data and features_of(r) not in later:
                shutil.rmtree(cache, ignore_errors=True)


def train_row(row, n: int, cfg, folder: Path, cache: Path, extra: list[str]) -> None:
    """One row at n games into folder, resumed from its train state when it has one."""
    ov = overrides_of([str(o) for o in row.overrides], n, cfg, cache, extra)
    if (folder / TRAIN_STATE).exists():
        ov.append("resume=true")
    attempt = len(list(folder.parent.glob(f"{folder.name}-*.log")))
    print(f"[{time.strftime('%F %T')}] {row.name} at {n:,} games: {' '.join(ov)}", flush=True)
    t, load = time.perf_counter(), os.getloadavg()[0]
    m = launch(ov, folder, log_path=folder.parent / f"{folder.name}-{attempt}.log", cwd=ROOT)
    wall = {"seconds": time.perf_counter() - t, "load": [load, os.getloadavg()[0]]}
    (folder / WALL).write_text(json.dumps(wall))
    print(
        f"[{time.strftime('%F %T')}]   top-1 {m['top1']:.2%}, log-evidence "
        f"{m['log_evidence']:.4f}, {time.perf_counter() - t:.0f} s",
        flush=True,
    )


def collect(out: Path) -> list[dict]:
    """Every finished run under out: its row, size and figures."""
    cfg = load_experiment("learning_curve")
    found = []
    for n in cfg.sizes:
        for r in cfg.rows:
            folder = out / str(n) / row_folder(str(r.name))
            if not finished(folder):
                continue
            m = read_metrics(folder)
            wall = json.loads((folder / WALL).read_text()) if (folder / WALL).exists() else {}
            found.append(
                {
                    "row": str(r.name),
                    "games": int(m["train_games"]),
                    "positions": int(m["train_positions"]),
                    "top1": float(m["top1"]),
                    "log_evidence": float(m["log_evidence"]),
                    "train_s": float(m["train_seconds"]),
                    "algorithm_s": float(m.get("algorithm_seconds", 0.0)),
                    "data_s": float(
                        m.get("first_data_seconds") or sum(m.get("rank_data_seconds", [0.0]))
                    ),
                    "peak_anon_mb": m.get("peak_anon_mb"),
                    "shapes": m.get("n_shapes"),
                    "iterations": m.get("iterations"),
                    "load": wall.get("load"),
                    "note": wall.get("note") or _attempts_note(m),
                }
            )
            # a run resumed before train states carried its cost: wall.json's figures of all
            # its attempts (RESUMED_FIGURES, from their logs) replace its last attempt's
            found[-1].update({k: wall[k] for k in RESUMED_FIGURES if k in wall})
    return found


def rows_of(out: Path, kept: Path) -> list[dict]:
    """The kept rows and out's finished runs, a run in place of the kept row of its model
    and size, in the experiment's order (sizes, then rows)."""
    cfg = load_experiment("learning_curve")
    found = (
        {(r["row"], r["games"]): r for r in json.loads(kept.read_text())} if kept.exists() else {}
    )
    found |= {(r["row"], r["games"]): r for r in collect(out)}
    order = {str(r.name): i for i, r in enumerate(cfg.rows)}
    return sorted(found.values(), key=lambda r: (r["games"], order.get(r["row"], len(order))))


def keep(args: argparse.Namespace) -> None:
    rows = rows_of(Path(args.out).resolve(), Path(args.kept))
    atomic_write_json(args.kept, rows)
    print(f"kept {len(rows)} rows in {args.kept}")


def _attempts_note(m: dict) -> str | None:
    """The note of a run that metrics.json says was resumed, else None."""
    n = int(m.get("attempts", 1))
    if n <= 1:
        return None
    if not m.get("spent_known", True):
        return f"resumed; {n} attempts, the figures of the attempts after the first only"
    return f"resumed; training and peak memory over its {n} attempts, data the first's"


def table(args: argparse.Namespace) -> None:
    rows = rows_of(Path(args.out).resolve(), Path(args.kept))
    print(
        "| model | games | positions | shapes | test top-1 | log-evidence | training "
        "| of it the algorithm | data | peak memory (anon) | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        mem = f"{r['peak_anon_mb'] / 1024:.1f} GB" if r["peak_anon_mb"] else "?"
        load = "-".join(f"{x:.1f}" for x in r["load"]) if r["load"] else "?"
        mark = " *" if r["note"] else ""  # resumed: the figures of all its attempts
        print(
            f"| {r['row']}{mark} | {r['games']:,} | {r['positions']:,} | {r['shapes'] or 0:,} | "
            f"{r['top1']:.2%} | {r['log_evidence']:.3f} | {r['train_s'] / 60:.1f} min | "
            f"{r['algorithm_s'] / 60:.1f} min | "
            f"{r['data_s'] / 60:.1f} min | {mem} | {load} |"
        )
    for r in rows:
        if r["note"]:
            print(f"\n\\* {r['row']} at {r['games']:,} games: {r['note']}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


def plot(args: argparse.Namespace) -> None:
    rows = rows_of(Path(args.out).resolve(), Path(args.kept))
    if not rows:
        sys.exit(f"no finished runs under {args.out} and none kept in {args.kept}")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for name in dict.fromkeys(r["row"] for r in rows):
        pts = sorted((r for r in rows if r["row"] == name), key=lambda r: r["games"])
        g = [p["games"] for p in pts]
        axes[0].plot(g, [100 * p["top1"] for p in pts], "o-", label=name)
        axes[1].plot(g, [p["log_evidence"] for p in pts], "o-", label=name)
        if name.startswith("MM"):  # the FBT rows harvest the same shapes
            shapes = "all sizes, min_count 3" if "all sizes" in name else "largest, min_count 10"
            axes[2].plot(g, [p["shapes"] or 0 for p in pts], "o-", label=shapes)
    titles = ("test top-1 (%)", "test log-evidence", "harvested shapes")
    for ax, title in zip(axes, titles, strict=True):
        ax.set_xscale("log")
        ax.set_xlabel("training games (large split, file order)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    axes[2].set_yscale("log")
    axes[0].legend()
    axes[2].legend()
    fig.suptitle("The learning curve: Tygem 9-dan, test on the first 1,000 games of 2006-06")
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print(f"wrote {args.png}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="train every row at every size (resumes)")
    r.add_argument("--out", default="runs/curve")
    r.add_argument("--sizes", nargs="*", type=int, help="a subset of the sizes")
    r.add_argument("--rows", nargs="*", help="a subset of the rows, by name")
    r.add_argument("--keep-data", action="store_true", help="keep each size's dataset cache")
    r.add_argument("extra", nargs="*", help="more train.py overrides for every run")
    t = sub.add_parser("table", help="the finished runs as a markdown table")
    t.add_argument("--out", default="runs/curve")
    t.add_argument("--json", help="also write the rows here")
    f = sub.add_parser("plot", help="the finished runs as a figure")
    f.add_argument("--out", default="runs/curve")
    f.add_argument("--png", default="docs/img/learning_curve.png")
    k = sub.add_parser("keep", help="the kept rows and the finished runs into --kept")
    k.add_argument("--out", default="runs/curve")
    for q in (t, f, k):
        q.add_argument("--kept", default=str(KEPT), help="rows of runs gone (JSON)")
    args = p.parse_args()
    {"run": run, "table": table, "plot": plot, "keep": keep}[args.cmd](args)


if __name__ == "__main__":
    main()
