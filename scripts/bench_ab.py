"""Interleaved A/B of the compiled kernels' speed between checkouts of gomove.

    python scripts/bench_ab.py --trees ../base,. --policy RUN_LIGHT/policy.npz \
        --model RUN/model.pt [--rounds 4] [--only playout,fbt,mm,search,extract]
    python scripts/bench_ab.py --trees ../base,. --only extract   # no policy, no model

``gomove bench`` runs each benchmark once for ~seconds; on a shared machine
whose speed drifts by tens of percent over minutes, two such runs back to back
compare the drift as much as the code. Here one worker process per checkout
(its own PYTHONPATH, one thread) holds the same warm inputs, and every job is
run on each checkout in turn, the order alternating by round; each side keeps
its fastest time (process time). Jobs:

- playout: pattern playouts from the empty 9x9 and 19x19 boards with each
  playout step (plain, tactics, nakade, selfatari_max=2, local), and uniform and
  rule playouts;
- fbt: one compiled SGD epoch (batch 128) of FBT (full, S=10, S=30) and LFR
  on the first 300 games of --data's 2006-01 month, cached in --cache-dir;
- mm: three iterations of MM's compiled engine (cyclic and greedy) on the same games;
- search: fixed-simulation searches of the bench's rows on the empty 9x9
  board and the 19x19 mid-game position;
- extract: the first --extract-games games of the 2006-01 month read
  (iter_games: unzip, sgfmill, the rules' replay), and extracted
  (FeatureExtractor.game) with the default full features, with the tactical
  groups alone and with the shapes alone (the pattern table harvested by the
  checkout from the first 1,000 games, min_count 10).

Prints one line per job: each checkout's best seconds and the first one's
time over it (above 1: faster than the first); the extract jobs add each
checkout's positions a second. Works on checkouts from before
the package's layout changes (gomove.benchmarks, then gomove.experiment.bench) as
after them.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import time
from pathlib import Path

import torch

from gomove.board.board import BLACK, SIZE, new_board
from gomove.data.flat import FlatData
from gomove.play.predict import Predictor
from gomove.play.search.search import Search
from gomove.reading.games import ReadConfig, iter_games

# each worker imports the checkout on its PYTHONPATH, laid out as today or as before the
# house issues' layout changes (gomove.experiment.bench, then gomove.benchmarks)
try:
    from gomove.bench.common import playout_positions
    from gomove.bench.engine_speed import search_row
    from gomove.bench.extraction import bench_dataset
    from gomove.play.search.settings import SearchConfig
    from gomove.playout.driver import run_playouts
    from gomove.playout.policy import PatternPolicy
    from gomove.playout.rule import RULES
    from gomove.playout.uniform import UNIFORM
    from gomove.train.context import TrainContext
    from gomove.train.mm.fit import train_mm
    from gomove.train.schemas import MMConfig, SGDConfig
    from gomove.train.sgd.loop import train_sgd

    def sgd_epoch(flat, registry, cfg):
        return train_sgd(cfg, flat, TrainContext.of(registry, "cpu", progress=False))

    def mm_run(flat, registry, cfg):
        return train_mm(cfg, flat, TrainContext.of(registry, "cpu", progress=False))

except ImportError:  # the layouts before: the trainers took their context unpacked
    from gomove.play.search.config import SearchConfig  # noqa: I001
    from gomove.train.config import MMConfig, SGDConfig

    try:
        from gomove.experiment.bench import SEARCH_ROWS as ROWS
        from gomove.experiment.bench import bench_dataset, playout_positions
        from gomove.playout.rules import RULES

        from gomove.playout.driver import UNIFORM, run_playouts
        from gomove.playout.policy import PatternPolicy
        from gomove.train.sgd.loop import train_sgd
    except ImportError:
        from gomove.benchmarks import SEARCH_ROWS as ROWS
        from gomove.benchmarks import bench_dataset, playout_positions
        from gomove.board.playout import UNIFORM, run_playouts
        from gomove.play.policy import PatternPolicy

        RULES = None  # no rule playouts then

        from gomove.train.sgd import train_sgd

    def search_row(name, size):
        kw = ROWS[name]
        return kw(size) if callable(kw) else kw

    def sgd_epoch(flat, registry, cfg):
        return train_sgd(flat, registry.n_features, cfg, device="cpu", progress=False)

    def mm_run(flat, registry, cfg):
        from gomove.train.mm.compiled import NumbaMM  # noqa: PLC0415 (the old layouts only)
        from gomove.train.mm.fit import train_mm  # noqa: PLC0415

        groups = registry.group_spans()
        return train_mm(NumbaMM(flat), registry.n_features, groups, cfg, "cpu", progress=False)


try:  # the extractor and the harvest moved from gomove.features to gomove.data
    from gomove.data.extractor import FeatureExtractor
    from gomove.data.harvest import harvest
except ImportError:
    from gomove.features.extractor import FeatureExtractor
    from gomove.features.harvest import harvest
from gomove.features.config import FeatureConfig

EXTRACT_ROWS = {
    "full": {},
    "tactical": {"shapes": False},
    "shapes": {"tactical": []},
}


PLAYOUT_ROWS = {
    "plain": {},
    "tactics": {"tactics": 1.0},
    "nakade": {"nakade": 1.0},
    "selfatari2": {"selfatari_max": 2},
    "local4": {"local": 1.0, "local_min": 4.0},
}
SEARCH_ROWS = ("pattern", "pattern+pw", "pattern+pw+lgr", "pattern+pw+tactics",
               "pattern+pw+selfatari2", "pattern+pw+local4", "pattern+priors",
               "pattern+pachiprior")  # fmt: skip
SEARCH_POSITIONS = (("9x9 empty", 6000), ("19x19 mid-game (move 120)", 1500))


def jobs(only: set[str]) -> list[str]:
    """The job lines the workers read (fields separated by '|')."""
    out = []
    if "playout" in only:
        out += [
            f"playout|{size}|{row}|{n}"
            for size, n in ((9, 1500), (19, 300))
            for row in PLAYOUT_ROWS
        ]
        out += [f"playout|{size}|uniform|{n}" for size, n in ((9, 8000), (19, 1500))]
        out += [f"playout|{size}|rules|{n}" for size, n in ((9, 6000), (19, 1000))]
    if "fbt" in only:
        out += [f"fbt|{m}|{s}" for m, s in (("fbt", 0), ("fbt", 10), ("fbt", 30), ("lfr", 0))]
    if "mm" in only:
        out += [f"mm|{s}" for s in ("cyclic", "greedy")]
    if "search" in only:
        out += [f"search|{r}|{p}|{n}" for p, n in SEARCH_POSITIONS for r in SEARCH_ROWS]
    if "extract" in only:
        out += ["extract|read"] + [f"extract|{row}" for row in EXTRACT_ROWS]
    return out


def worker(args: argparse.Namespace) -> None:
    """One checkout's side: warm every job once, say ready, then time the jobs read."""
    torch.set_num_threads(1)
    only = set(args.only.split(","))
    month = str(Path(args.data) / "tygem-9d-2006-01.zip")
    if only & {"playout", "search"}:
        policy = PatternPolicy.load(args.policy)
        players = {k: policy.player(**kw) for k, kw in PLAYOUT_ROWS.items()}
        players |= {"uniform": UNIFORM, "rules": RULES}
    if only & {"fbt", "mm"}:
        ds = bench_dataset(month, 300, args.cache_dir, 10)
        # datasets before format 2 built their flat layout on demand
        flat = ds.flat() if hasattr(ds, "flat") else FlatData.from_dataset(ds)
    if "search" in only:
        predictor = Predictor.from_checkpoint(args.model)
        games = list(iter_games(month, ReadConfig(max_games=5, superko=False)))
        positions = {name: (b, c) for name, b, c in playout_positions(games)}
    if "extract" in only:
        read = ReadConfig(max_games=args.extract_games, superko=True)
        ex_games = list(iter_games(month, read))
        table_games = list(iter_games(month, ReadConfig(max_games=1000, superko=True)))
        table = harvest(table_games, FeatureConfig(min_count=10), workers=1, progress=False)
        extractors = {
            row: FeatureExtractor(FeatureConfig(min_count=10, **kw), table)
            for row, kw in EXTRACT_ROWS.items()
        }

    def run(line: str) -> tuple[float, int]:
        """(process seconds, positions: the extract jobs' count, else 0) of one job."""
        kind, *f = line.split("|")
        c = time.process_time()
        if kind == "extract":
            if f[0] == "read":
                n = sum(len(g.moves) for g in iter_games(month, read))
            else:
                n = sum(len(extractors[f[0]].game(g)["winner"]) for g in ex_games)
            return time.process_time() - c, n
        if kind == "playout":
            run_playouts(new_board(int(f[0])), BLACK, 7.5, int(f[2]), 0, None, policy=players[f[1]])
        elif kind == "fbt":
            cfg = SGDConfig(name=f[0], k=10, sample=int(f[1]), epochs=1, batch_size=128)
            _, hist = sgd_epoch(flat, ds.registry, cfg)
            return float(hist[1]["cpu_seconds"]), 0
        elif kind == "mm":  # three iterations from gamma = 1: their passes, not the setup
            cfg = MMConfig(max_iters=3, tol=0.0, schedule=f[0])
            _, hist = mm_run(flat, ds.registry, cfg)
            return sum(float(r["cpu_seconds"]) for r in hist[1:]), 0
        else:
            board, to_move = positions[f[1]]
            kw = search_row(f[0], int(board.info[SIZE]))
            Search(SearchConfig(sims=int(f[2]), resign=0, **kw), policy, predictor).run(
                board, to_move, 7.5
            )
        return time.process_time() - c, 0

    for line in jobs(only):  # compile and warm
        if line.startswith(("fbt", "mm", "extract")):
            run(line)
        elif line.startswith("playout"):
            run(line.rsplit("|", 1)[0] + "|20")
        else:
            run(line.rsplit("|", 1)[0] + "|100")
    print("ready", flush=True)
    for line in sys.stdin:
        print(*run(line.strip()), flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--trees", required=True, help="checkouts, comma-separated; the first is A")
    p.add_argument("--policy", help="policy.npz of train.py features=light (playout, search)")
    p.add_argument("--model", help="model.pt for the search's priors (search)")
    p.add_argument("--data", default="../shared/data", help="folder of tygem-9d-2006-01.zip")
    p.add_argument("--cache-dir", default="cache", help="the fbt and mm jobs' dataset")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--only", default="playout,fbt,mm,search")
    p.add_argument("--extract-games", type=int, default=100, help="games of the extract jobs")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    only = set(args.only.split(","))
    if only & {"playout", "search"} and not (args.policy and args.model):
        p.error("the playout and search jobs need --policy and --model")
    for name in ("policy", "model", "data", "cache_dir"):
        if getattr(args, name) is not None:
            setattr(args, name, str(Path(getattr(args, name)).resolve()))
    if args.worker:
        worker(args)
        return
    trees = [str(Path(t).resolve()) for t in args.trees.split(",")]
    argv = ["--data", args.data, "--cache-dir", args.cache_dir, "--only", args.only,
            "--extract-games", str(args.extract_games)]  # fmt: skip
    argv += ["--policy", args.policy] if args.policy else []
    argv += ["--model", args.model] if args.model else []
    env = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    procs = {}
    for t in trees:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--trees", t, *argv]
        procs[t] = subprocess.Popen(
            cmd, cwd=t, env=os.environ | env | {"PYTHONPATH": t}, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
    for t, proc in procs.items():
        if proc.stdout.readline().strip() != "ready":
            sys.exit(f"the worker of {t} failed to start")
    best: dict[tuple[str, str], float] = collections.defaultdict(lambda: float("inf"))
    units: dict[tuple[str, str], int] = {}
    for rnd in range(args.rounds):
        for line in jobs(only):
            for t in trees if rnd % 2 == 0 else trees[::-1]:
                procs[t].stdin.write(line + "\n")
                procs[t].stdin.flush()
                seconds, n = procs[t].stdout.readline().split()
                best[t, line] = min(best[t, line], float(seconds))
                units[t, line] = int(n)
    for line in jobs(only):
        a = best[trees[0], line]
        cells = " ".join(f"{best[t, line]:.3f}s ({a / best[t, line]:.3f})" for t in trees)
        if units[trees[0], line]:
            cells += " " + " ".join(f"{units[t, line] / best[t, line]:,.0f}/s" for t in trees)
        print(f"{line.replace('|', ' '):58s} {cells}", flush=True)


if __name__ == "__main__":
    main()
