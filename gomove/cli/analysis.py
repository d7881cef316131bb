"""``gomove analysis``: KataGo's JSON analysis engine protocol, for programs written for it.

gomove analysis                              # the shipped model and policy
gomove analysis --model RUN/model.pt --policy RUN_LIGHT/policy.npz
gomove analysis --ownership crf              # ownership maps by the territory CRF
echo '{"id":"a","moves":[["B","Q16"]],"boardXSize":19,"boardYSize":19,"maxVisits":200}' \
    | gomove analysis

One JSON query per line in, its responses one JSON object per line out
(docs/engine.md): moveInfos, rootInfo, ownership and policy in KataGo's orders
and signs. The search is gomove gtp's, with its defaults (--tree, --set KEY=VALUE
for any SearchConfig field); maxVisits (default --visits) is its simulations,
overrideSettings' maxTime its seconds. Turns are analysed in parallel, one
process a core (--workers), and answered as they finish, as KataGo's are.
--ownership crf (--territory PATH: another crf.pt) makes includeOwnership's and
includeMovesOwnership's maps with Stern's territory CRF instead of playouts.
"""

from __future__ import annotations

import logging
import os
import signal
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
from gomove.play.analysis.engine import AnalysisEngine
from gomove.play.analysis.server import serve
from gomove.play.search.presets import TREES, engine_settings
from gomove.play.search.search import Search
from gomove.play.warmup import start_warmup


def main(argv: list[str] | None = None) -> None:
    ap = doc_parser("gomove analysis", __doc__)
    add_model_args(ap)
    add_territory_args(ap)
    ap.add_argument("--visits", type=int, default=100, help="maxVisits when a query has none")
    ap.add_argument("--tree", choices=("auto", *TREES), default="auto",
                    help="how the model steers the tree (gomove gtp --help)")  # fmt: skip
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="any SearchConfig field")  # fmt: skip
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="turns analysed at once, one process each (default: one per core; "
                    "0: in turn, in this process)")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log", default="WARNING", help="log level (to stderr)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=args.log.upper(), stream=sys.stderr)
    try:
        predictor = load_model(args.model)
        policy = load_policy(args.policy)
        territory = territory_model(args.ownership, args.territory)  # before the workers fork
        base = {"seed": args.seed, "resign": 0.0}
        cfg, sized = engine_settings(args.set, args.tree, base, predictor, policy is not None)
        Search(cfg, policy, predictor)  # a wrong combination fails now, not at a query
    except (OSError, ValueError) as e:
        sys.exit(f"gomove analysis: {e}")
    announce("gomove analysis", predictor, args.policy, territory, args.territory)

    def new_search(size: int) -> Search:
        return Search(sized(size) if sized is not None else cfg, policy, predictor)

    engine = AnalysisEngine(new_search, predictor, policy, default_visits=args.visits,
                            seed=args.seed, territory=territory)  # fmt: skip
    # SIGTERM (a GUI closing its engine) exits through serve's cleanup: the workers end
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    warming = start_warmup("gomove analysis")
    serve(engine, workers=args.workers, ready=warming.join if warming else None)


if __name__ == "__main__":
    main()
