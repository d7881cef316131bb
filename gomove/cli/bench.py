"""``gomove bench`` (``python bench.py``): benchmarks, JSON lines out.

    gomove bench [BENCHMARK or SUITE ...]      # default: the default suite
    gomove bench mm fbt --mm-games 300 --data ../shared/data
    gomove bench engine --policy RUN_LIGHT/policy.npz --model RUN/model.pt
    gomove bench gpu --data DIR --out OUT/gpu.jsonl [--gpu-games N]

The benchmarks (gomove.bench.suite): replay, extract, mm, fbt, rankers, scale, playout,
mc-owner, territory, search, predict, analysis; the suites, their targets and the
search benchmark's rows are gomove/configs/experiment/bench.yaml. Reads real games,
tygem-9d-2006-01.zip, from --data DIR, else $GOMOVE_DATA, else the config's data folder
(../shared/data, from the current directory) when present, else the embedded sample.

``gpu`` (never in a suite: all training games) times a GPU machine's CUDA engines beside
numba on its cores over the standard split, the month archives in --data
(gomove.bench.gpu; scripts/device_check.sh runs it).
"""

from __future__ import annotations

import argparse

from gomove.bench.common import data_folder
from gomove.bench.gpu import bench_gpu
from gomove.bench.suite import BENCHMARKS, run, suites


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="gomove bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("which", nargs="*", help=f"any of {', '.join(BENCHMARKS)}, the suites "
                   f"{', '.join(suites())}, or gpu (default: the default suite)")  # fmt: skip
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
    unknown = set(a.which) - {*BENCHMARKS, *suites(), "gpu"}
    if unknown:
        p.error(f"unknown benchmarks {sorted(unknown)}; choose from {', '.join(BENCHMARKS)}, "
                f"the suites {', '.join(suites())}, or gpu")  # fmt: skip
    if a.profile_only:  # no speed rows, no accuracy row
        a.profile, a.fbt_epochs = True, 1
    elif a.accuracy_only and a.fbt_epochs < 2:
        p.error("--accuracy-only measures the model of --fbt-epochs N, N at least 2")
    if "gpu" in a.which:
        bench_gpu(data_folder(a.data), a.cache_dir, a.gpu_games, a.test_games, a.cpu_steps,
                  a.fbt_epochs, a.out, a.gpu_device, a.profile,
                  speed=not (a.accuracy_only or a.profile_only))  # fmt: skip
        a.which = [w for w in a.which if w != "gpu"]
        if not a.which:
            return
    run(
        a.which,
        a.data,
        a.games,
        harvest_games=a.harvest_games,
        mm_games=a.mm_games,
        mm_iters=a.mm_iters,
        cache_dir=a.cache_dir,
        owner_games=a.owner_games,
        policy_path=a.policy,
        model_path=a.model,
        fbt_batch=a.fbt_batch,
    )


if __name__ == "__main__":
    main()
