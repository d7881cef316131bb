"""``gomove data PATH...``: read game records and report what a training run would get.

    gomove data ../shared/data/tygem-9d-2006-01.zip
    gomove data GAMES/ --sizes 9 13 --max-games 100 --strict
    gomove data ../shared/data/tygem-9d-200[67]-*.zip --pack tygem.gomove-games.npz

With --pack, the games read (those kept, in order) are also written to one game pack
(gomove.reading.pack): SGF parsed once, readable wherever SGF inputs are (data.train).

Prints the counts as text, then, as the last stdout line, the same summary as one
JSON object (for scripts). The progress bar goes to stderr.

Exit status: 0 after reading everything (bad records are counted skips), 1 when
--strict stops at a bad record, 2 for a missing input or an option value out of
range (``--sizes 25``, a negative count).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from tqdm import tqdm

from gomove.reading.games import ReadConfig, ReadStats, iter_games
from gomove.reading.pack import PACK_SUFFIX, write_pack
from gomove.reading.sgf import GameError


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="gomove data",
        description="Read SGF games (files, folders, zip/tar archives, globs), replay them, "
        "and count games, skips by reason, positions, sizes, handicaps and ranks.",
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="SGF file, folder, archive or glob")
    p.add_argument("--sizes", nargs="+", type=int, default=[19], help="board sizes kept (19)")
    p.add_argument("--no-handicap", action="store_true", help="skip handicap games")
    p.add_argument("--min-moves", type=int, default=0, help="skip games shorter than this")
    p.add_argument("--max-games", type=int, default=None, help="stop after this many games")
    p.add_argument("--strict", action="store_true", help="stop at the first bad game")
    p.add_argument("--no-superko", action="store_true", help="allow positional superko moves")
    p.add_argument("--pack", metavar="OUT", help=f"also write the games to a pack ({PACK_SUFFIX})")
    args = p.parse_args(argv)
    if args.pack and not args.pack.endswith(PACK_SUFFIX):
        p.error(f"--pack: the file name must end with {PACK_SUFFIX}, which marks a pack")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        cfg = ReadConfig(
            sizes=tuple(args.sizes),
            handicap=not args.no_handicap,
            min_moves=args.min_moves,
            max_games=args.max_games,
            strict=args.strict,
            superko=not args.no_superko,
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    stats = ReadStats()
    t0 = time.perf_counter()
    try:
        games = iter_games(args.paths, cfg, stats)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    unit = " files" if args.max_games is None else " games"
    with tqdm(desc="reading", unit=unit, file=sys.stderr, total=args.max_games) as bar:

        def counted():
            for game in games:
                yield game
                # files, not games, so that skipped records move the bar too
                bar.update(stats.files - bar.n if args.max_games is None else 1)

        try:
            if args.pack:
                write_pack(counted(), args.pack)
            else:
                for _ in counted():
                    pass
        except GameError as e:
            bar.close()
            print(f"error: {e}", file=sys.stderr)
            return 1
        if args.max_games is None:
            bar.update(stats.files - bar.n)
    print(stats.format())
    print(f"time         {time.perf_counter() - t0:.1f} s")
    if args.pack:
        print(f"pack         {args.pack} ({os.path.getsize(args.pack) / 2**20:.1f} MiB)")
    print(json.dumps(stats.summary()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
