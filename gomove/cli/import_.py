"""``gomove import mm GAMMAS.txt --registry DATASET_OR_RUN --out model.pt``: mm's gammas as a model.

The registry source gives the features the gammas belong to (the dataset the
competition file was exported from, or a run trained on it); the checkpoint
then evaluates like any model: ``gomove evaluate checkpoint=model.pt``.
Exit status 0, or 2 with one ``error:`` line for bad input.

Example:

    gomove import mm gammas.txt --registry cache/train-KEY --out mm.pt
"""

from __future__ import annotations

import argparse
import sys

from gomove.export.models import import_mm


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="gomove import",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="what", required=True)
    mm = sub.add_parser("mm", help="the gammas Coulom's mm wrote")
    mm.add_argument("gammas", metavar="GAMMAS.txt")
    mm.add_argument("--registry", required=True, metavar="DATASET_OR_RUN")
    mm.add_argument("--out", required=True, metavar="OUT.pt")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        n = import_mm(args.gammas, args.registry, args.out)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{args.out}: {n} gammas")
    return 0


if __name__ == "__main__":
    sys.exit(main())
