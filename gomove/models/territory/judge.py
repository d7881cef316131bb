"""Which strings a referee removes as dead before counting: a judge learned from the
labels' dead strings, on top of the territory CRF.

Counting a finished game (``judged_score``: GTP's ``final_score``, the counted score of
the territory comparison) removes the dead strings, then gives each empty region to the colour that
alone borders it. Judged by the CRF's mean expected owner over a string's stones, a
dead string deep in the other side's area is often kept alive: the CRF is trained on
every position of a game, and at the end its playout counts (16) are too few for the
strings whose capture takes many moves. The judge decides each string by logistic
regression on what tells a dead string from a live one (``JUDGE_FEATURES``, each in
the string's own frame: +1 the string's colour owns its points):

- ``crf``: the mean over its stones of the CRF's expected owner;
- ``playouts``: the mean over its stones of the owner balance in ``playouts``
  uniform playouts from the position (gomove.models.territory.features.mc_counts:
  canonical form, seeded by the position, so a position always gets the same
  verdict, under every symmetry and for both colours);
- ``log_stones``, ``liberties`` (capped at 6, over 6), ``atari``, ``two_liberties``.

A string is dead when P(dead) > 0.5. Fitted by gomove.train.territory.judge on the
last positions of the labelled training games; stored in ``crf.pt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gomove.board.board import BLACK, SIZE, Board, signed_points
from gomove.board.scoring import area_score_judged, area_score_without
from gomove.models.territory.playout_counts import mc_counts
from gomove.models.territory.reading import components, geometry, string_view

JUDGE_FEATURES = ("bias", "crf", "playouts", "log_stones", "liberties", "atari", "two_liberties")
MAX_LIBERTIES = 6


def string_features(
    colour: np.ndarray, to_move: int, size: int, expected: np.ndarray, playouts: int
) -> tuple[np.ndarray, np.ndarray]:
    """(each point's string, 0..S-1, -1 on empty points: int64[N]; the strings'
    features float64[S, len(JUDGE_FEATURES)]) of a position: colour int8[N] (+1 black,
    -1 white), to_move +1/-1, expected float[N] the CRF's P(black) - P(white)."""
    geo = geometry(size)
    points = np.asarray(colour, dtype=np.int8).reshape(-1)
    cid, csize, clibs, _ = components(points, geo.nbr)
    sid, libs, stones = string_view(points, cid, csize, clibs)
    stone = sid >= 0
    heads, string = np.unique(sid[stone], return_inverse=True)
    index = np.full(points.shape[0], -1, np.int64)
    index[stone] = string
    n = len(heads)
    sign = points[stone].astype(np.float64)  # the string's colour, the frame of its features
    mover = 1 if to_move > 0 else -1
    mine, theirs = mc_counts(points * np.int8(mover), size, playouts)
    balance = mover * (mine - theirs).astype(np.float64) / playouts  # absolute: black +
    first = np.zeros(n, np.int64)
    first[string[::-1]] = np.flatnonzero(stone)[::-1]  # a stone of each string
    per = stones[first].astype(np.float64)  # the string's stones
    lib = libs[first].astype(np.float64)
    x = np.empty((n, len(JUDGE_FEATURES)), np.float64)
    x[:, 0] = 1.0
    x[:, 1] = np.bincount(string, sign * np.asarray(expected, np.float64).reshape(-1)[stone], n)
    x[:, 2] = np.bincount(string, sign * balance[stone], n)
    x[:, 1:3] /= per[:, None]
    x[:, 3] = np.log(per)
    x[:, 4] = np.minimum(lib, MAX_LIBERTIES) / MAX_LIBERTIES
    x[:, 5] = lib <= 1
    x[:, 6] = lib == 2
    return index, x


@dataclass(frozen=True)
class StringJudge:
    """weights float64[len(JUDGE_FEATURES)] of the logistic regression; playouts: the
    uniform playouts behind the ``playouts`` feature."""

    weights: np.ndarray
    playouts: int

    def __post_init__(self) -> None:
        if self.weights.shape != (len(JUDGE_FEATURES),) or self.playouts < 1:
            raise ValueError(
                f"a string judge needs {len(JUDGE_FEATURES)} weights and playouts >= 1"
            )

    def p_dead(self, x: np.ndarray) -> np.ndarray:
        """P(dead) of strings with features x float64[S, len(JUDGE_FEATURES)]."""
        return 1.0 / (1.0 + np.exp(-(x @ self.weights)))

    def dead(self, colour: np.ndarray, to_move: int, size: int, expected: np.ndarray) -> np.ndarray:
        """bool[N]: the stones of the strings judged dead (module docstring)."""
        index, x = string_features(colour, to_move, size, expected, self.playouts)
        verdict = np.append(self.p_dead(x) > 0.5, False)  # [-1]: an empty point
        return verdict[index]

    def state(self) -> dict[str, Any]:
        return {"features": list(JUDGE_FEATURES), "weights": self.weights.tolist(),
                "playouts": int(self.playouts)}  # fmt: skip

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> StringJudge:
        if list(state.get("features", [])) != list(JUDGE_FEATURES):
            got = state.get("features")
            raise ValueError(f"string judge features {got}, want {JUDGE_FEATURES}")
        return cls(np.asarray(state["weights"], np.float64), int(state["playouts"]))


def judged_score(
    board: Board, to_move: int, komi: float, own: np.ndarray, judge: StringJudge | None = None
) -> float:
    """The B - W - komi score a referee counts with own (P(black) - P(white), [row, col])
    as the map: the dead strings removed, then area counting. Dead: as the string judge
    decides when given one (a territory CRF's ``judge``), else the strings own gives to
    the other colour on average (gomove.board.scoring.area_score_judged)."""
    if judge is None:
        return area_score_judged(board, komi, own)
    size = int(board.info[SIZE])
    mover = 1 if to_move == BLACK else -1
    dead = judge.dead(signed_points(board), mover, size, np.asarray(own).reshape(-1))
    return area_score_without(board, komi, dead)
