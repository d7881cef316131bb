"""How many codes a dataset's dictionary needs: the distinct combinations of the
narrow (tactical) groups' levels against the games, over every STEP-th game of the
large split's training months (docs/logs/scale.md, "Records and data larger than memory").

    python scripts/dictionary_growth.py --step 18 --games 8000
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from gomove.data.extractor import FeatureExtractor
from gomove.data.flat import Layout
from gomove.features.config import FeatureConfig
from gomove.reading.games import ReadConfig, ReadStats, iter_games

MONTHS = [f"2006-{m:02d}" for m in (1, 2, 3, 4, *range(7, 13))] + [
    f"2007-{m:02d}" for m in range(1, 13)
]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--data", default="../shared/data")
    p.add_argument("--step", type=int, default=18, help="every STEP-th game")
    p.add_argument("--games", type=int, default=8000, help="games extracted")
    args = p.parse_args()
    ex = FeatureExtractor(FeatureConfig(shapes=False))  # the narrow groups need no shapes
    reg = ex.registry
    layout = Layout.of(reg.sizes)
    narrow = [reg.group_names[g] for g in layout.narrow]
    paths = [Path(args.data) / f"tygem-9d-{m}.zip" for m in MONTHS]
    print(f"narrow groups: {', '.join(narrow)}; a dictionary holds {2**layout.code_bits:,} codes")
    print("| games | candidates | distinct combinations |\n|---|---|---|")
    seen: set[bytes] = set()
    n = cands = 0
    marks = {250 * 2**i for i in range(12)} | {args.games}
    t = time.perf_counter()
    for i, game in enumerate(iter_games(paths, ReadConfig(superko=False), ReadStats())):
        if i % args.step:
            continue
        part = ex.game(game)
        rows = np.stack([part["columns"][name] for name in narrow], axis=1).astype(np.uint8)
        seen.update(np.unique(rows.view(np.dtype((np.void, rows.shape[1]))).ravel()).tolist())
        n, cands = n + 1, cands + len(rows)
        if n in marks:
            print(f"| {n:,} | {cands / 1e6:.1f} M | {len(seen):,} |", flush=True)
        if n >= args.games:
            break
    print(f"({time.perf_counter() - t:.0f} s)")


if __name__ == "__main__":
    main()
