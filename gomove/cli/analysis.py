"""``gomove analysis``: KataGo's JSON analysis engine protocol, for programs written for it.

gomove analysis --model RUN/model.pt --policy RUN_LIGHT/policy.npz
echo '{"id":"a","moves":[["B","Q16"]],"boardXSize":19,"boardYSize":19,"maxVisits":200}' \
    | gomove analysis --model M --policy P

One JSON query per line in, its responses one JSON object per line out
(docs/engine.md): moveInfos, rootInfo, ownership and policy in KataGo's orders
and signs. The search is gomove gtp's (--set KEY=VALUE for any SearchConfig
field); maxVisits (default --visits) is its simulations, overrideSettings'
maxTime its seconds. Queries are answered in the order they arrive.
"""

from __future__ import annotations

import argparse
import logging
import sys

from gomove.play.analysis.engine import AnalysisEngine
from gomove.play.analysis.server import serve
from gomove.play.predict import Predictor
from gomove.play.search.config import SearchConfig
from gomove.play.search.search import Search
from gomove.playout.policy import PatternPolicy


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="gomove analysis",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--model", help="model.pt of any model kind (priors, policy, widening)")
    ap.add_argument("--policy", help="policy.npz of train.py features=light (pattern playouts)")
    ap.add_argument("--visits", type=int, default=100, help="maxVisits when a query has none")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="any SearchConfig field")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log", default="WARNING", help="log level (to stderr)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=args.log.upper(), stream=sys.stderr)
    base: dict = {"seed": args.seed, "resign": 0.0}
    if args.model is None:
        base["pw"] = False
    if args.policy is None:
        base["playouts"] = "uniform"
    try:
        cfg = SearchConfig.from_overrides(args.set, base)
        predictor = Predictor.from_checkpoint(args.model) if args.model else None
        policy = PatternPolicy.load(args.policy) if args.policy else None
        Search(cfg, policy, predictor)  # a wrong combination fails now, not at a query
    except (OSError, ValueError) as e:
        sys.exit(f"gomove analysis: {e}")
    engine = AnalysisEngine(lambda size: Search(cfg, policy, predictor), predictor, policy,
                            default_visits=args.visits, seed=args.seed)  # fmt: skip
    serve(engine)


if __name__ == "__main__":
    main()
