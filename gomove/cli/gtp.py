"""``gomove gtp``: gomove as a GTP engine, for Go GUIs (Lizzie, Sabaki, GoGui) and matches.

gomove gtp --model RUN/model.pt --policy RUN_LIGHT/policy.npz
gomove gtp --model RUN/model.pt --mode policy --temperature 0.5
gomove gtp --policy RUN_LIGHT/policy.npz --no-pw --sims 3000
gomove gtp --model M --policy P --set rave=false --set c_uct=0.5
gomove gtp --model M --policy P --pachi-prior

Progressive widening needs the full model (--model), pattern playouts the
light policy (--policy, the policy.npz of ``train.py model=mm features=light``).
Every SearchConfig field can be set with --set key=value. --pachi-prior
uses the full model in the tree as Pachi uses its patterns (pachi_prior: the
values for each board size, every move of a ranked node open, the model's
prior ordering them; the strongest 9x9 settings measured, docs/results.md);
--set overrides them (--set pw_base=40 --set promote_at=none: Coulom's
widening schedule with the same prior).
"""

from __future__ import annotations

import argparse
import logging
import sys
from functools import partial

from gomove.play.gtp.engine import GtpEngine
from gomove.play.gtp.server import serve
from gomove.play.predict import Predictor
from gomove.play.search.config import SearchConfig, pachi_prior
from gomove.playout.policy import PatternPolicy


def search_config(sets: list[str], base: dict | None = None) -> SearchConfig:
    """SearchConfig from --set key=value strings over base (SearchConfig.from_overrides)."""
    return SearchConfig.from_overrides(sets, base)


def pachi_config(sets: list[str], base: dict, size: int) -> SearchConfig:
    """--pachi-prior's settings for a board size: pachi_prior(size) over base, sets over both."""
    return search_config(sets, {**base, **pachi_prior(size)})


def add_engine_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--model", help="model.pt of any model kind (policy mode, progressive widening)"
    )
    ap.add_argument("--policy", help="policy.npz of train.py features=light (pattern playouts)")
    ap.add_argument("--mode", choices=("search", "policy"), default="search")
    ap.add_argument("--temperature", type=float, default=0.0, help="policy mode: 0 = argmax")
    ap.add_argument("--sims", type=int, help="simulations per move (default 5000)")
    ap.add_argument("--seconds", type=float, help="seconds per move (instead of or with --sims)")
    ap.add_argument("--no-pw", action="store_true", help="plain UCT, no progressive widening")
    ap.add_argument("--uniform", action="store_true", help="uniform playouts")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="any SearchConfig field")  # fmt: skip
    ap.add_argument("--pachi-prior", action="store_true",
                    help="Pachi's tree settings for each board size (pachi_prior)")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gtp-version", help="what `version` answers (Lizzie wants Leela Zero's "
                    ">= 0.15 before it sends lz-analyze: --gtp-version 0.17)")  # fmt: skip


def build_engine(args: argparse.Namespace) -> GtpEngine:
    base: dict = {"seed": args.seed}
    if args.sims is not None or args.seconds is not None:
        base["sims"], base["seconds"] = args.sims, args.seconds
    if args.no_pw or args.model is None:
        base["pw"] = False
    if args.uniform or args.policy is None:
        base["playouts"] = "uniform"
    cfg = search_config(args.set, base)
    sized = partial(pachi_config, args.set, base) if args.pachi_prior else None
    if sized is not None:
        if not cfg.pw:
            raise ValueError("--pachi-prior needs the full model in the tree (--model, no --no-pw)")
        sized(9), sized(19)  # an error in --set shows now, not at boardsize
    predictor = Predictor.from_checkpoint(args.model) if args.model else None
    policy = PatternPolicy.load(args.policy) if args.policy else None
    engine = GtpEngine(predictor, policy, cfg, mode=args.mode, temperature=args.temperature,
                       seed=args.seed, sized=sized)  # fmt: skip
    if args.gtp_version:
        engine.commands["version"] = lambda a: args.gtp_version
    return engine


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="gomove gtp",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_engine_args(ap)
    ap.add_argument("--log", default="WARNING", help="log level (to stderr)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=args.log.upper(), stream=sys.stderr)
    try:
        engine = build_engine(args)
    except (OSError, ValueError) as e:
        sys.exit(f"gomove gtp: {e}")
    serve(engine)


if __name__ == "__main__":
    main()
