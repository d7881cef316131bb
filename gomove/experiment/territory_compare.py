"""``gomove territory compare``: the territory CRF measured beside the playout ownership maps.

``compare_methods`` runs the measures of gomove.evaluate.territory_measures for several
predictors (the CRF, the Monte-Carlo ownership at n uniform playouts, the pattern
policy's playouts, ``playout_predictor``) on the same labelled positions, with the CPU
time each takes a position, and writes results.json, results.md and plots. The CRF
itself is trained by ``gomove train model=territory`` (gomove.train.territory.run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gomove.atomic import atomic_write_json
from gomove.board.board import BLACK, WHITE, board_from_points
from gomove.data.territory_labels import TerritorySet
from gomove.evaluate.territory_measures import (
    Counter,
    Predictor,
    counted_score,
    format_results,
    measure,
    plot_by_move,
    plot_owner_calibration,
)
from gomove.play.ownership import ownership
from gomove.playout.policy import PatternPolicy


def playout_predictor(n: int, policy: PatternPolicy | None = None, seed: int = 0) -> Predictor:
    """The ownership map of n playouts (the policy's, else uniform) as a predictor."""

    def predict(points: np.ndarray, to_move: int, size: int, komi: float):
        colour = BLACK if to_move > 0 else WHITE
        board = board_from_points(points, size, colour)
        own = ownership(board, colour, n, komi, seed, policy=policy)
        return (own.black - own.white).reshape(-1), own.mean_score

    return predict


def compare_methods(
    predictors: dict[str, Predictor],
    data: TerritorySet,
    out_dir: str | Path,
    limit: int | None = None,
    progress: bool = True,
    counters: dict[str, Counter] | None = None,
) -> dict[str, Any]:
    """Measure each predictor on the same positions, each counted by its counter (default
    counted_score); write results.json, results.md and plots."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = {
        name: measure(
            fn,
            data,
            limit=limit,
            progress=progress,
            desc=name,
            count=(counters or {}).get(name, counted_score),
        )  # fmt: skip
        for name, fn in predictors.items()
    }
    atomic_write_json(
        out / "results.json", {"stats": data.stats, "limit": limit, "results": results}
    )
    table = format_results(results)
    (out / "results.md").write_text(table + "\n")
    plot_owner_calibration(results, out / "calibration.png")
    plot_by_move(results, out / "by_move.png")
    return results
