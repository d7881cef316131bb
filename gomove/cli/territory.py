"""``gomove territory compare``: Stern's territory CRF measured beside playout ownership maps.

gomove territory compare --crf runs/territory/crf.pt --data ../shared/data/tygem-9d-2006-06.zip \\
    --max-games 1000 --playouts 63 500 --out docs/territory

``compare`` measures the CRF beside the playout ownership maps (uniform playouts at
each --playouts, and the shipped pattern policy's) on the labelled games of --data at
moves 50, 100, 150, 200 and the last, and writes results.md, results.json,
calibration.png and by_move.png into --out.

The CRF is trained by ``gomove train model=territory`` (the embedded sample by default,
``data=tygem`` for the real games; ``model.*``: features, method, epochs, ...), which
writes crf.pt, metrics.json, plots and TensorBoard curves into the run directory.
``gomove territory train`` is an alias of it: its ``territory.KEY=VALUE`` overrides
are ``model.KEY=VALUE``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gomove.cli import doc_parser
from gomove.cli import train as train_cli
from gomove.data.territory_labels import territory_dataset
from gomove.evaluate.territory_measures import crf_counter, crf_predictor, format_results
from gomove.experiment.territory_compare import compare_methods, playout_predictor
from gomove.models.territory.crf import SWEEPS, TerritoryCRF
from gomove.playout.policy import PatternPolicy


def train(args: list[str]) -> None:
    """``gomove territory train ARGS``: ``gomove train model=territory ARGS``, said on stderr."""
    overrides = ["model." + a[len("territory.") :] if a.startswith("territory.") else a
                 for a in args]  # fmt: skip
    print(
        "gomove territory train is an alias: running gomove train model=territory "
        + " ".join(overrides),
        file=sys.stderr,
    )
    sys.argv = ["gomove train", "model=territory", *overrides]
    train_cli.main()


def compare(argv: list[str]) -> None:
    ap = doc_parser("gomove territory compare", __doc__)
    ap.add_argument("--crf", default=None, help="a crf.pt (default: the shipped model)")
    ap.add_argument("--data", required=True, help="games (SGF, folder, zip, tar)")
    ap.add_argument("--max-games", type=int, default=1000, help="read the first N games")
    ap.add_argument("--cache-dir", default="cache")
    ap.add_argument("--limit", type=int, default=None, help="at most N positions a move number")
    ap.add_argument("--sweeps", type=int, default=SWEEPS, help="the CRF's Swendsen-Wang sweeps")
    ap.add_argument("--playouts", type=int, nargs="*", default=[63, 500],
                    help="uniform playouts of each Monte-Carlo row")  # fmt: skip
    ap.add_argument("--policy-playouts", type=int, default=63,
                    help="playouts of the pattern-policy row (0: no such row)")  # fmt: skip
    ap.add_argument("--out", default="territory-compare")
    args = ap.parse_args(argv)
    try:
        crf = TerritoryCRF.default() if args.crf is None else TerritoryCRF.load(args.crf)
        data = territory_dataset(args.data, args.cache_dir, max_games=args.max_games)
    except (OSError, ValueError) as e:
        raise SystemExit(f"gomove territory compare: {e}") from None
    name = "CRF (exact)" if crf.independent else f"CRF ({args.sweeps} sweeps)"
    predictors = {name: crf_predictor(crf, args.sweeps)}
    counters = {name: crf_counter(crf)}
    for n in args.playouts:
        predictors[f"{n} uniform playouts"] = playout_predictor(n)
    if args.policy_playouts > 0:
        policy = PatternPolicy.default()
        predictors[f"{args.policy_playouts} policy playouts"] = playout_predictor(
            args.policy_playouts, policy
        )
    results = compare_methods(predictors, data, args.out, limit=args.limit, counters=counters)
    print(format_results(results))
    print(f"written to {Path(args.out)}/")


def main(argv: list[str] | None = None) -> int | None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(f"usage: gomove territory compare [OPTIONS] | train [KEY=VALUE ...]\n\n{__doc__}")
        return 0
    if args[0] == "train":
        train(args[1:])
        return 0
    if args[0] == "compare":
        compare(args[1:])
        return 0
    print(f"gomove territory: unknown step {args[0]!r} (train or compare)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
