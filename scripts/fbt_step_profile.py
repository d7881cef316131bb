"""Where an FBT step's time goes on a real dataset, and whether two checkouts train alike.

    python scripts/fbt_step_profile.py --steps 40 [--save A.npy] [--compare B.npy] -- \\
        model=fbt k=10 model.batch_size=1024 features.shapes=all features.min_count=3 \\
        data=tygem_large data.max_games=27613 data.cache_dir=RUNS/27613/cache-...

The overrides are a training run's (``train.py``'s); its cached dataset is opened (or
built). Then the compiled engine (gomove.train.sgd.compiled) takes ``--steps`` Adam
steps from a model seeded with ``--seed``, and prints one JSON line: the model's rows,
milliseconds a step (``step_ms``), of it the dense update of every parameter
(``update_ms``: kernels.update_rows) and the rest (``rest_ms``: the batch's loss and
gradient and, with all pattern sizes, the chain sums the batch reads and the gradient's
sum up the chains); the first ``--untimed`` steps (3) not timed: on data larger than
the page cache give it enough steps to bring the chunk's pages in, or the figures are
the disk's. ``--save`` writes the
parameters after the steps; ``--compare`` says whether they equal another checkout's
file bit for bit (run this script under each checkout's PYTHONPATH).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import torch

from gomove.models.fbt import FactorizationBT
from gomove.train.move_models import prepare_data, training_hierarchy
from gomove.train.sgd import kernels
from gomove.train.sgd.compiled import CompiledSGD
from gomove.train.trainers import compose_config, model_config


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument(
        "--untimed",
        type=int,
        default=3,
        help="steps not timed first (kernels loaded, the data's pages brought in)",
    )
    p.add_argument("--seed", type=int, default=0, help="the model's initial parameters")
    p.add_argument("--save", help="write the parameters after the steps (.npy)")
    p.add_argument("--compare", help="a --save file of another checkout: equal bit for bit?")
    p.add_argument("overrides", nargs="*", help="train.py overrides (model=fbt ...)")
    args = p.parse_args()
    if args.steps <= args.untimed:
        sys.exit(f"--steps must be above --untimed ({args.untimed})")
    cfg = compose_config(["progress=false", *args.overrides])
    mcfg = model_config(cfg)
    if cfg.model.name not in ("fbt", "lfr") or not mcfg.flat:
        sys.exit("fbt_step_profile: model=fbt or model=lfr, flat (the compiled engine)")
    data = prepare_data(cfg)
    reg = data.extractor.registry
    torch.manual_seed(args.seed)
    model = FactorizationBT(reg.n_features, k=mcfg.k)
    steps = CompiledSGD(model, data.train.flat(), mcfg, training_hierarchy(data.extractor, False))
    spent = {"update": 0.0}
    update_rows = kernels.update_rows

    def timed_update(*a):  # the dense step, timed inside the step
        t = time.perf_counter()
        out = update_rows(*a)
        spent["update"] += time.perf_counter() - t
        return out

    kernels.update_rows = timed_update
    step_s = update_s = 0.0
    batches = iter(steps)
    for i in range(args.steps):
        pos = next(batches)
        spent["update"] = 0.0
        t0 = time.perf_counter()
        steps.step(pos, mcfg.lr)
        if i >= args.untimed:
            step_s += time.perf_counter() - t0
            update_s += spent["update"]
    kernels.update_rows = update_rows
    n = args.steps - args.untimed
    params = np.concatenate([steps.w.ravel(), steps.v.ravel()])
    out = {
        "rows": reg.n_features,
        "k": mcfg.k,
        "batch_size": steps.cfg.batch_size,
        "steps_timed": n,
        "step_ms": round(step_s / n * 1e3, 2),
        "update_ms": round(update_s / n * 1e3, 2),
        "rest_ms": round((step_s - update_s) / n * 1e3, 2),
    }
    if args.save:
        np.save(args.save, params)
    if args.compare:
        out["equal_to_compare"] = bool(np.array_equal(params, np.load(args.compare)))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
