"""Temper a trained model on the validation set after the fact: what model.calibrate=true
does at the end of a run, for a run that trained without it.

    python scripts/calibrate_checkpoint.py RUN/model.pt OUT/model.pt [--val GAMES] [--val-games N]
        [--by likelihood|bins]

The validation games are the run's own (its config's data.val and data.max_val_games)
unless --val and --val-games say otherwise; the temperature (and with --by bins the
probability floor: gomove.train.calibrate) is folded into the parameters and
OUT/model.pt is the same kind of model, to evaluate with
``gomove evaluate checkpoint=OUT/model.pt``.
"""

from __future__ import annotations

import argparse
import logging

from omegaconf import OmegaConf

from gomove.data.dataset import build_dataset
from gomove.data.loader import scoring_batches
from gomove.data.sources import paths, read_config
from gomove.models.checkpoint import load_checkpoint, save_checkpoint
from gomove.train.calibrate import calibrate
from gomove.train.schemas import CALIBRATE_BY

log = logging.getLogger("calibrate_checkpoint")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("out")
    ap.add_argument("--val", default=None, help="validation games (default: the run's)")
    ap.add_argument("--val-games", type=int, default=None)
    ap.add_argument("--by", choices=CALIBRATE_BY, default="likelihood")
    ap.add_argument("--cache-dir", default=None, help="default: the run's data.cache_dir")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    state = load_checkpoint(args.checkpoint)
    cfg = OmegaConf.create(state["config"])
    d = cfg.data
    if args.val:
        d.val = args.val
    if not d.val:
        raise SystemExit(f"{args.checkpoint}: its run has no validation games (data.val)")
    ex = state["extractor"]
    ds = build_dataset(
        paths(d.val),
        read_config(d, args.val_games or d.max_val_games),
        ex,
        args.cache_dir or d.cache_dir,
        kind="val",
        workers=d.workers,
        progress=False,
    )
    model, tau, floor = calibrate(
        state["module"], scoring_batches(ds, d.batch_size, "cpu"), args.by
    )
    row = {
        "temperature": tau,
        "floor": floor,
        "calibrated_by": args.by,
        "calibrated_on": ds.n_games,
    }
    history = list(state["history"]) + [row]
    save_checkpoint(args.out, model, ex, cfg, history)
    log.info(
        "temperature %.4f, floor %.3f on %d validation games: %s", tau, floor, ds.n_games, args.out
    )


if __name__ == "__main__":
    main()
