"""Choose the playouts of the territory CRF's string judge on held-out labelled games.

    python scripts/territory_judge_select.py RUN/crf.pt --data GAMES [--max-games 1000]
        [--train-max-games 5000] [--playouts 16 32 64 128 256] [--cache-dir cache]

For each playout count, fits the judge (gomove.train.territory.judge) on the last
positions of the labelled training games (the first --train-max-games of the Tygem
months 2006-01..04, as ``gomove train model=territory data=tygem``), then counts the last
position of every labelled game of --data with it: the share within 2 points of the
labelled result, and the CPU time a count. The first row judges by the CRF's mean map.
Run on the validation month to choose ``model.judge_playouts`` (docs/territory.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from gomove.data.territory_labels import TerritorySet, territory_dataset
from gomove.evaluate.territory_measures import (
    Counter,
    counted_score,
    crf_counter,
    crf_predictor,
    measure,
)
from gomove.models.territory.crf import SWEEPS, TerritoryCRF
from gomove.train.territory.judge import fit_judge

TRAIN = [f"../shared/data/tygem-9d-2006-0{m}.zip" for m in (1, 2, 3, 4)]


def within_2(crf: TerritoryCRF, data: TerritorySet, count: Counter) -> tuple[float, float]:
    """(share of last positions counted within 2 points, ms a count): the comparison's
    measures (gomove.evaluate.territory_measures.measure) at the last position."""
    last = measure(crf_predictor(crf, SWEEPS), data, moves=("last",), count=count)
    return last["all"]["counted_within_2"], last["all"]["ms_per_count"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("crf", type=Path)
    ap.add_argument("--data", required=True)
    ap.add_argument("--max-games", type=int, default=1000)
    ap.add_argument("--train-max-games", type=int, default=5000)
    ap.add_argument("--playouts", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    ap.add_argument("--cache-dir", default="cache")
    args = ap.parse_args()
    crf = TerritoryCRF.load(args.crf)
    train = territory_dataset(TRAIN, args.cache_dir, max_games=args.train_max_games)
    held = territory_dataset(args.data, args.cache_dir, max_games=args.max_games)
    crf.judge = None
    rows = [("none (the CRF's mean)", *within_2(crf, held, counted_score))]
    for n in args.playouts:
        crf.judge = fit_judge(crf, train, n)
        rows.append((f"{n} playouts", *within_2(crf, held, crf_counter(crf))))
        print(f"{n} playouts: weights {np.round(crf.judge.weights, 2).tolist()}", flush=True)
    print(f"\n{held.n_games} labelled games of {args.data}, last positions")
    print("| judge | within 2 points | ms a count |\n|---|---|---|")
    for name, share, ms in rows:
        print(f"| {name} | {share:.1%} | {ms:.1f} |")


if __name__ == "__main__":
    main()
