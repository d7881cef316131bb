"""``gomove bench`` (``python bench.py``): benchmarks, JSON lines out.

    gomove bench [replay] [extract] [mm] [fbt] [rankers] [scale] [playout] [mc-owner]
                 [territory]
                 [search] [predict] [analysis]
    gomove bench mm fbt --mm-games 300 --data ../shared/data
    gomove bench search --policy RUN_LIGHT/policy.npz --model RUN/model.pt
    gomove bench gpu --data DIR --out OUT/gpu.jsonl [--gpu-games N]

Reads real games, tygem-9d-2006-01.zip, from --data DIR, else $GOMOVE_DATA, else
../shared/data (from the current directory) when present, else the embedded sample.

``gpu`` (never in the default set: all training games) times a GPU machine's CUDA
engines beside numba on its cores over the standard split, the month archives in
--data (gomove.experiment.bench_gpu; scripts/device_check.sh runs it).
"""

from __future__ import annotations

import argparse
import os

from gomove.experiment import bench as benchmarks
from gomove.experiment.bench_gpu import bench_gpu

ALL = (
    "replay",
    "extract",
    "mm",
    "fbt",
    "rankers",
    "scale",
    "playout",
    "mc-owner",
    "territory",
    "search",
    "predict",
    "analysis",
)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="gomove bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("which", nargs="*", help=f"any of {ALL}, or gpu (default: all but gpu)")
    p.add_argument(
        "--data",
        help="games to read: an archive, SGF file or folder, or a folder holding "
        "tygem-9d-2006-01.zip (default: $GOMOVE_DATA, else ../shared/data; the embedded "
        "sample when it lacks the archive)",
    )
    p.add_argument("--games", type=int, default=200, help="games timed")
    p.add_argument("--harvest-games", type=int, default=1000, help="games harvested for shapes")
    p.add_argument(
        "--mm-games",
        type=int,
        default=1000,
        help="training games for `mm`, `fbt`, `rankers` and `scale`",
    )
    p.add_argument("--mm-iters", type=int, default=2, help="MM iterations timed")
    p.add_argument(
        "--fbt-batch", type=int, help="positions per step of `fbt` (default: the auto batch)"
    )
    p.add_argument(
        "--owner-games", type=int, default=5, help="games timed by `mc-owner` and `territory`"
    )
    p.add_argument("--cache-dir", default="cache", help="where `mm` and `fbt` keep their dataset")
    p.add_argument(
        "--policy",
        help="policy.npz of `train.py features=light` for `playout`, `search` (default: gammas 1)",
    )
    p.add_argument("--model", help="model.pt for `search` (progressive widening) and `predict`")
    g = p.add_argument_group("gpu")
    g.add_argument("--gpu-games", type=int, help="training games (default: all 27,613)")
    g.add_argument("--test-games", type=int, default=1000, help="test games of 2006-06")
    g.add_argument("--cpu-steps", type=int, default=100, help="numba FBT steps timed")
    g.add_argument("--fbt-epochs", type=int, default=1, help="FBT epochs on CUDA")
    g.add_argument("--out", help="the JSON-lines file of the rows, written as they come")
    g.add_argument("--gpu-device", help="where the torch rows run (default: cuda when present)")
    g.add_argument("--profile", action="store_true", help="profile.txt beside --out")
    g.add_argument(
        "--accuracy-only", action="store_true", help="only the data and fbt_accuracy rows"
    )
    g.add_argument("--profile-only", action="store_true", help="only the data rows and --profile")
    a = p.parse_args(argv)
    unknown = set(a.which) - {*ALL, "gpu"}
    if unknown:
        p.error(f"unknown benchmarks {sorted(unknown)}; choose from {ALL} or gpu")
    if a.profile_only:  # no speed rows, no accuracy row
        a.profile, a.fbt_epochs = True, 1
    elif a.accuracy_only and a.fbt_epochs < 2:
        p.error("--accuracy-only measures the model of --fbt-epochs N, N at least 2")
    if "gpu" in a.which:
        data = a.data or os.environ.get(benchmarks.DATA_ENV) or benchmarks.DEFAULT_DATA
        bench_gpu(data, a.cache_dir, a.gpu_games, a.test_games, a.cpu_steps, a.fbt_epochs,
                  a.out, a.gpu_device, a.profile,
                  speed=not (a.accuracy_only or a.profile_only))  # fmt: skip
        a.which = [w for w in a.which if w != "gpu"]
        if not a.which:
            return
    benchmarks.run(
        a.which or list(ALL),
        a.data,
        a.games,
        a.harvest_games,
        a.mm_games,
        a.mm_iters,
        a.cache_dir,
        owner_games=a.owner_games,
        policy_path=a.policy,
        model_path=a.model,
        fbt_batch=a.fbt_batch,
    )


if __name__ == "__main__":
    main()
