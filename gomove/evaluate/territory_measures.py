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

Terms:
- predictor: (expected owner float[N] in absolute colours, predicted score B - W -
  komi) of a position given as (signed points int8[N], to_move +1/-1, size, komi): the
  territory CRF's (``crf_predictor``), or playouts' (gomove.experiment.territory_compare).
- counter: the score a referee counts for a position with a predictor's map as judge
  (``counted_score``; ``crf_counter`` with the CRF's string judge).
- ``measure``: every measure of a predictor on a labelled set, with its CPU time a
  position, written up by ``format_results`` and plotted by ``plot_by_move`` and
  ``plot_owner_calibration``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from tqdm.auto import tqdm

from gomove.board.board import BLACK, WHITE, board_from_points
from gomove.data.territory_labels import TerritorySet
from gomove.evaluate.report import plot_calibration
from gomove.models.territory.crf import TerritoryCRF
from gomove.models.territory.judge import judged_score

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


# (expected owner float[N] in absolute colours, predicted score B - W - komi) of a
# position given as (signed points int8[N], to_move +1/-1, size, komi)
Predictor = Callable[[np.ndarray, int, int, float], tuple[np.ndarray, float]]
# the B - W - komi score a referee counts for a position (signed points, to_move, size,
# komi) given a predictor's expected owner float[N]
Counter = Callable[[np.ndarray, int, int, float, np.ndarray], float]


def crf_predictor(crf: TerritoryCRF, sweeps: int, seed: int = 0) -> Predictor:
    """The territory CRF's expected owner and mean score (sweeps Swendsen-Wang sweeps)."""

    def predict(points: np.ndarray, to_move: int, size: int, komi: float):
        est = crf.estimate(points, to_move, size, komi, sweeps=sweeps, seed=seed)
        return est.expected_owner.reshape(-1), est.mean_score

    return predict


def counted_score(
    points: np.ndarray,
    to_move: int,
    size: int,
    komi: float,
    expected: np.ndarray,
    territory: TerritoryCRF | None = None,
) -> float:
    """The B - W - komi score a referee counts with expected (P(black) - P(white),
    float[N]) as the map: judged_score, as ``final_score`` counts (the territory CRF's
    string judge decides the dead strings when given one that has it)."""
    colour = BLACK if to_move > 0 else WHITE
    board = board_from_points(points, size, colour)
    own = np.asarray(expected).reshape(size, size)
    return judged_score(board, colour, komi, own, territory.judge if territory else None)


def crf_counter(crf: TerritoryCRF) -> Counter:
    """counted_score with crf's string judge (the dead strings by the mean map without one)."""

    def count(points: np.ndarray, to_move: int, size: int, komi: float, expected: np.ndarray):
        return counted_score(points, to_move, size, komi, expected, crf)

    return count


def measure(
    predictor: Predictor,
    data: TerritorySet,
    moves: Sequence[int | str] = MOVES,
    limit: int | None = None,
    progress: bool = False,
    desc: str = "",
    count: Counter = counted_score,
) -> dict[str, Any]:
    """The measures of this module at each move number and over all of them,
    with the CPU time a position (process time: the predictor's own work, after one
    untimed call that compiles it) and, apart, the time of count's judging.

    The predictions of a move number run back to back and the counts after them, so that
    one predictor's judge (the CRF's string judge runs playouts of its own) does not
    evict the predictor's working memory between its calls: every row is timed as it
    would run alone."""
    by_move: dict[str, Any] = {}
    total = OwnerScores()
    cal = Calibration.empty()
    if len(data):  # compile first: the first call's JIT is no position's time
        komi = float(data.komi[data.game[0]])
        e, _ = predictor(data.colour[0], int(data.to_move[0]), data.size, komi)
        count(data.colour[0], int(data.to_move[0]), data.size, komi, e)
    for at in moves:
        idx = data.at_move(at)[:limit]
        scores = OwnerScores()
        predicted = []
        for p in tqdm(idx, desc=f"{desc} move {at}", disable=not progress, leave=False):
            komi = float(data.komi[data.game[p]])
            t0 = time.process_time()
            expected, score = predictor(data.colour[p], int(data.to_move[p]), data.size, komi)
            scores.seconds += time.process_time() - t0
            predicted.append((expected, score))
        for p, (expected, score) in zip(idx, predicted, strict=True):
            g = int(data.game[p])
            komi = float(data.komi[g])
            t0 = time.process_time()
            counted = count(data.colour[p], int(data.to_move[p]), data.size, komi, expected)
            scores.count_seconds += time.process_time() - t0
            scores.add(expected, data.owner[g], score, komi, counted)
            cal.add(expected, data.owner[g])
        by_move[str(at)] = scores.summary()
        total.merge(scores)
    return {"by_move": by_move, "all": total.summary(), "calibration": cal.table()}


def plot_owner_calibration(results: dict[str, dict[str, Any]], path: Path) -> Path:
    """Observed share of black owners against the predicted P(black), one line a method."""
    fig = Figure(figsize=(5.5, 5))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    for name, res in results.items():
        plot_calibration(ax, res["calibration"], name)
    ax.set_xlabel("predicted P(black owns the point)")
    ax.set_ylabel("observed share owned by black")
    ax.set_title("Calibration of the owner probability (10 bins)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def plot_by_move(results: dict[str, dict[str, Any]], path: Path) -> Path:
    """Owner accuracy and score error at each move number, one line a method."""
    fig = Figure(figsize=(10, 4))
    ax1, ax2 = fig.subplots(1, 2)
    for name, res in results.items():
        keys = list(res["by_move"])
        ax1.plot(keys, [100 * res["by_move"][k]["accuracy"] for k in keys], marker="o", label=name)
        ax2.plot(keys, [res["by_move"][k]["score_abs_err"] for k in keys], marker="o", label=name)
    ax1.set_xlabel("move")
    ax1.set_ylabel("points whose owner is predicted (%)")
    ax2.set_xlabel("move")
    ax2.set_ylabel("|expected score - final score| (points)")
    ax1.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def format_results(results: dict[str, dict[str, Any]]) -> str:
    """A markdown table: accuracy / mse / score error / share within 2 points / ms a
    position, per method and move."""
    moves = list(next(iter(results.values()))["by_move"])
    head = "| method | measure | " + " | ".join(f"move {m}" for m in moves) + " | all |"
    lines = [head, "|" + "---|" * (len(moves) + 3)]
    for name, res in results.items():
        for key, fmt in (
            ("accuracy", "{:.1%}"),
            ("mse", "{:.3f}"),
            ("score_abs_err", "{:.1f}"),
            ("score_within_2", "{:.1%}"),
            ("counted_abs_err", "{:.1f}"),
            ("counted_within_2", "{:.1%}"),
            ("ms_per_position", "{:.1f}"),
            ("ms_per_count", "{:.1f}"),
        ):
            cells = [fmt.format(res["by_move"][m][key]) for m in moves] + [
                fmt.format(res["all"][key])
            ]
            lines.append(f"| {name} | {key} | " + " | ".join(cells) + " |")
    n = {name: res["all"]["positions"] for name, res in results.items()}
    lines.append("")
    lines.append("positions: " + ", ".join(f"{k} {v}" for k, v in n.items()))
    return "\n".join(lines)
