"""How well an ownership predictor knows the final territory: the measures of the
territory comparison (issue 37, after Stern's talk).

Every measure compares a predicted expected owner e_i = P(black) - P(white) in
[-1, 1] with the final owner y_i (+1 black, -1 white, 0 neither: dame) of every
point of a labelled position:
- accuracy: the share of points with an owner (y != 0) where sign(e) = y (e = 0
  counts as wrong);
- mse: the mean of (e - y)^2 over all points (dame included: their target is 0);
- score error: |predicted score - final area score|, the area score being
  sum_i y_i - komi (black minus white, as the labels count); within 2: the share
  of positions whose score error is at most 2 points (issue 37's score target);
- counted score error and within 2: the same for the score a referee counts with the
  predictor as judge: the strings it gives to the other colour removed, then area
  counting (empty regions bordered by one colour only are that colour's, the rest
  dame), as ``final_score`` does; at the last position of a game this is the score
  the game was counted to when the predictor judges every string right; the
  judging's CPU time is kept apart from the prediction's (ms_per_count: the CRF's
  string judge runs playouts of its own);
- calibration: the points with an owner binned by predicted P(black) = (1 + e) / 2
  in 10 equal bins; per bin, the mean prediction and the observed share of black.

The positions compared are those at given move numbers (``MOVES``: before move
50, 100, 150, 200, and the last position of the game).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

MOVES: tuple[int | str, ...] = (50, 100, 150, 200, "last")
BINS = 10


@dataclass
class OwnerScores:
    """Sums over positions, so that parts add up; ``summary`` gives the means."""

    positions: int = 0
    owned_points: int = 0
    correct: int = 0
    points: int = 0
    sq_err: float = 0.0
    score_abs_err: float = 0.0
    score_within_2: int = 0
    counted_abs_err: float = 0.0
    counted_within_2: int = 0
    seconds: float = 0.0
    count_seconds: float = 0.0

    def add(
        self, expected: np.ndarray, owner: np.ndarray, score: float, komi: float, counted: float
    ) -> None:
        """One position: expected float[N], owner int8[N], the predicted B - W - komi score
        and the counted one (module docstring)."""
        e = np.asarray(expected, dtype=np.float64).reshape(-1)
        y = np.asarray(owner, dtype=np.float64).reshape(-1)
        owned = y != 0
        self.positions += 1
        self.owned_points += int(owned.sum())
        self.correct += int((np.sign(e)[owned] == y[owned]).sum())
        self.points += len(y)
        self.sq_err += float(((e - y) ** 2).sum())
        err = abs(score - (y.sum() - komi))
        self.score_abs_err += err
        self.score_within_2 += int(err <= 2.0)
        err = abs(counted - (y.sum() - komi))
        self.counted_abs_err += err
        self.counted_within_2 += int(err <= 2.0)

    def merge(self, other: OwnerScores) -> None:
        """Add other's sums to these."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def summary(self) -> dict[str, float]:
        n = max(self.positions, 1)
        return {
            "positions": self.positions,
            "accuracy": self.correct / max(self.owned_points, 1),
            "mse": self.sq_err / max(self.points, 1),
            "score_abs_err": self.score_abs_err / n,
            "score_within_2": self.score_within_2 / n,
            "counted_abs_err": self.counted_abs_err / n,
            "counted_within_2": self.counted_within_2 / n,
            "ms_per_position": 1000.0 * self.seconds / n,
            "ms_per_count": 1000.0 * self.count_seconds / n,
        }


@dataclass
class Calibration:
    """Counts per bin of predicted P(black): n, sum of predictions, black owners."""

    n: np.ndarray
    pred: np.ndarray
    black: np.ndarray

    @classmethod
    def empty(cls, bins: int = BINS) -> Calibration:
        return cls(np.zeros(bins, np.int64), np.zeros(bins), np.zeros(bins, np.int64))

    def add(self, expected: np.ndarray, owner: np.ndarray) -> None:
        y = np.asarray(owner).reshape(-1)
        p = (1.0 + np.asarray(expected, dtype=np.float64).reshape(-1)) / 2.0
        owned = y != 0
        p, y = p[owned], y[owned]
        b = np.minimum((p * len(self.n)).astype(np.int64), len(self.n) - 1)
        np.add.at(self.n, b, 1)
        np.add.at(self.pred, b, p)
        np.add.at(self.black, b, (y > 0).astype(np.int64))

    def table(self) -> list[dict[str, float | None]]:
        """Per bin: lo, hi, n, mean predicted P(black), observed share of black (None for
        an empty bin: JSON has no NaN)."""
        k = len(self.n)
        return [
            {
                "lo": i / k,
                "hi": (i + 1) / k,
                "n": int(self.n[i]),
                "predicted": float(self.pred[i] / self.n[i]) if self.n[i] else None,
                "observed": float(self.black[i] / self.n[i]) if self.n[i] else None,
            }
            for i in range(k)
        ]
