"""``gomove export {mm,gammas,pachi,packed}``: gomove's data and models as other programs' files.

- ``gomove export mm DATASET_OR_RUN OUT.dat``: the competition file Coulom's
  ``mm`` reads (a dataset folder, or a run's training dataset);
- ``gomove export gammas RUN OUT.txt``: a run's gammas as ``mm`` prints them;
- ``gomove export pachi RUN OUTDIR [--base PACHI/patterns_mm.gamma]``:
  Pachi's ``patterns_mm.spat`` and ``patterns_mm.gamma``;
- ``gomove export packed RUN OUT.npz [--min-count N] [--float16]``: a run's model
  packed for shipping (what scoring needs, compressed; every command that takes
  ``--model`` reads it), smaller with rare shapes pruned or half-size parameters.

Examples:

    gomove export mm cache/train-KEY input.dat
    gomove export pachi RUN/ OUTDIR/ --base PACHI/patterns_mm.gamma

Exit status 0, or 2 with one ``error:`` line for bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from gomove.export.models import export_gammas, export_mm, export_pachi, export_packed


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="gomove export",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="what", required=True)
    mm = sub.add_parser("mm", help="a dataset as mm's competition file")
    mm.add_argument("source", metavar="DATASET_OR_RUN")
    mm.add_argument("out", metavar="OUT.dat")
    mm.add_argument("--progress", action="store_true")
    g = sub.add_parser("gammas", help="a run's gammas in mm's output format")
    g.add_argument("run", metavar="RUN")
    g.add_argument("out", metavar="OUT.txt")
    pa = sub.add_parser("pachi", help="a run's model as Pachi's pattern files")
    pa.add_argument("run", metavar="RUN")
    pa.add_argument("out", metavar="OUTDIR")
    pa.add_argument(
        "--base",
        metavar="GAMMA",
        help="Pachi's stock patterns_mm.gamma: its values for the features gomove lacks "
        "(without it those get 1)",
    )
    pa.add_argument(
        "--spatial-only",
        action="store_true",
        help="gomove's spatial patterns only: every tactical gamma from --base (Pachi's)",
    )
    pk = sub.add_parser("packed", help="a run's model packed for shipping (.npz)")
    pk.add_argument("run", metavar="RUN")
    pk.add_argument("out", metavar="OUT.npz")
    pk.add_argument("--note", default="", help="one line on the model's data, shown by users")
    pk.add_argument(
        "--min-count",
        type=int,
        metavar="N",
        help="keep only the shape patterns seen at least N times in the training games "
        "(the rest fall back to the next smaller pattern kept): a smaller file",
    )
    pk.add_argument(
        "--float16",
        action="store_true",
        help="the parameters in float16: half their bytes, a log-gamma to 5e-4 relative",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.what == "mm":
            summary: dict = export_mm(args.source, args.out, progress=args.progress)
        elif args.what == "gammas":
            export_gammas(args.run, args.out)
            summary = {"gammas": args.out}
        elif args.what == "packed":
            summary = export_packed(
                args.run,
                args.out,
                args.note,
                min_count=args.min_count,
                param_dtype="float16" if args.float16 else "float32",
            )
        else:
            summary = export_pachi(args.run, args.out, args.base, args.spatial_only)
            summary["sources"] = sorted(set(summary["sources"].values()))
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
