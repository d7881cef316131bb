"""Fitting the dead strings' judge (gomove.models.territory.judge) to the labels.

The examples are the strings of the last position of every labelled training game,
each labelled dead when its game's final owner gives most of its stones to the other
colour (gomove.data.territory_labels decides the dead stones). The judge is a logistic
regression on the strings' features, fitted by Newton's method with a small L2 term
(a convex problem: a handful of weights, tens of thousands of strings, exact in a
few steps).
"""

from __future__ import annotations

import logging

import numpy as np
from tqdm.auto import tqdm

from gomove.data.territory_labels import TerritorySet
from gomove.models.territory.crf import TerritoryCRF
from gomove.models.territory.judge import StringJudge, string_features

log = logging.getLogger(__name__)


def judge_examples(
    crf: TerritoryCRF, data: TerritorySet, playouts: int, progress: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(features float64[S, F], dead bool[S]) of the strings of every game's last position."""
    xs, ys = [], []
    for p in tqdm(data.at_move("last"), desc="judge", disable=not progress, leave=False):
        g = int(data.game[p])
        colour, to_move, size = data.colour[p], int(data.to_move[p]), data.size
        est = crf.estimate(colour, to_move, size, float(data.komi[g]))
        index, x = string_features(colour, to_move, size, est.expected_owner.reshape(-1), playouts)
        stone = index >= 0
        other = data.owner[g][stone].astype(np.int64) == -colour[stone].astype(np.int64)
        share = np.bincount(index[stone], other, len(x)) / np.bincount(index[stone], None, len(x))
        xs.append(x)
        ys.append(share > 0.5)
    if not xs:
        raise ValueError("no labelled games to fit the string judge on")
    return np.concatenate(xs), np.concatenate(ys)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 50) -> np.ndarray:
    """Weights maximising sum log P(y | x) - l2 |w|^2 / 2 (Newton's method)."""
    w = np.zeros(x.shape[1])
    target = y.astype(np.float64)
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - target) + l2 * w
        hess = (x * (p * (1.0 - p))[:, None]).T @ x + l2 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return w


def fit_judge(
    crf: TerritoryCRF, data: TerritorySet, playouts: int, progress: bool = False
) -> StringJudge:
    """The judge of crf's strings, fitted on data's last positions (module docstring)."""
    x, y = judge_examples(crf, data, playouts, progress)
    judge = StringJudge(fit_logistic(x, y), playouts)
    accuracy = float(((judge.p_dead(x) > 0.5) == y).mean())
    log.info("string judge: %d strings, %.1f%% dead, %.2f%% right in training",
             len(y), 100 * y.mean(), 100 * accuracy)  # fmt: skip
    return judge
