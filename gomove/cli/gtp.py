"""``gomove gtp``: gomove as a GTP engine, for Go GUIs (Lizzie, Sabaki, GoGui) and matches.

gomove gtp                                   # the shipped model, the strongest settings
gomove gtp --model RUN/model.pt --policy RUN_LIGHT/policy.npz
gomove gtp --mode policy --temperature 0.5   # the model's move probabilities, no search
gomove gtp --tree coulom --set pw_base=40    # Coulom's widening on every board size
gomove gtp --model none --policy none --sims 3000   # plain UCT, uniform playouts
gomove gtp --ownership crf                   # ownership maps by the territory CRF

The defaults are the strongest settings measured (docs/engine.md, docs/matches/):
the shipped full model (--model) ranks the moves of the tree and gives their
prior, the shipped light policy (--policy) plays the playouts, and the tree
follows --tree auto: on 9x9 and 13x13 Pachi's prior with every move open
(pachi_prior: 187/200 against GNU Go level 10 on 9x9), on 19x19 Pachi's prior with
Coulom's widening schedule (pachi_pw_prior: 62/100 at 10,000 simulations;
Coulom's own tree 7/20). Each part turns off on its own: --tree coulom,
--tree pachi or --tree pachi-pw on every size, --no-pw (plain UCT: the model only in
policy mode), --uniform or --policy none (uniform playouts), --model none (no model).
Every SearchConfig field can be set with --set key=value, over the tree's settings.
--ownership crf (--territory PATH: another crf.pt) makes the ownership maps
(gomove-ownership, kata-analyze's ownership, final_score's dead stones) with Stern's
territory CRF instead of playouts.
"""

from __future__ import annotations

import argparse
import logging
import sys

from gomove.cli import doc_parser
from gomove.cli.model_args import (
    add_model_args,
    add_territory_args,
    announce,
    load_model,
    load_policy,
    territory_model,
)
from gomove.play.gtp.engine import GtpEngine
from gomove.play.gtp.server import serve
from gomove.play.search.presets import TREES, engine_settings
from gomove.play.warmup import start_warmup


def add_engine_args(ap: argparse.ArgumentParser) -> None:
    add_model_args(ap)
    add_territory_args(ap)
    ap.add_argument("--mode", choices=("search", "policy"), default="search")
    ap.add_argument("--temperature", type=float, default=0.0, help="policy mode: 0 = argmax")
    ap.add_argument("--sims", type=int, help="simulations per move (default 5000)")
    ap.add_argument("--seconds", type=float, help="seconds per move (instead of or with --sims)")
    ap.add_argument("--no-pw", action="store_true", help="plain UCT, no progressive widening")
    ap.add_argument("--uniform", action="store_true", help="uniform playouts")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="any SearchConfig field")  # fmt: skip
    ap.add_argument("--tree", choices=("auto", *TREES), default="auto",
                    help="how the model steers the tree: auto (the strongest measured for the "
                    "board size), pachi (Pachi's prior, every move open), pachi-pw (Pachi's prior, "
                    "Coulom's widening schedule) or coulom (progressive widening, Coulom's "
                    "priors)")  # fmt: skip
    ap.add_argument("--pachi-prior", dest="tree", action="store_const", const="pachi",
                    help="the same as --tree pachi")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gtp-version", help="what `version` answers (Lizzie wants Leela Zero's "
                    ">= 0.15 before it sends lz-analyze: --gtp-version 0.17)")  # fmt: skip


def build_engine(args: argparse.Namespace) -> GtpEngine:
    """The engine of gtp's arguments; says on stderr which model and playouts it uses."""
    predictor = load_model(args.model)
    policy = None if args.uniform else load_policy(args.policy)
    base: dict = {"seed": args.seed}
    if args.sims is not None or args.seconds is not None:
        base["sims"], base["seconds"] = args.sims, args.seconds
    if args.no_pw:
        base["pw"] = False
    territory = territory_model(args.ownership, args.territory)
    cfg, sized = engine_settings(args.set, args.tree, base, predictor, policy is not None)
    announce("gomove gtp", predictor, "none" if policy is None else args.policy, territory,
             args.territory)  # fmt: skip
    engine = GtpEngine(predictor, policy, cfg, mode=args.mode, temperature=args.temperature,
                       seed=args.seed, sized=sized, territory=territory)  # fmt: skip
    if args.gtp_version:
        engine.commands["version"] = lambda a: args.gtp_version
    return engine


def main(argv: list[str] | None = None) -> None:
    ap = doc_parser("gomove gtp", __doc__)
    add_engine_args(ap)
    ap.add_argument("--log", default="WARNING", help="log level (to stderr)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=args.log.upper(), stream=sys.stderr)
    try:
        engine = build_engine(args)
    except (OSError, ValueError) as e:
        sys.exit(f"gomove gtp: {e}")
    start_warmup("gomove gtp")
    serve(engine)


if __name__ == "__main__":
    main()
