"""Ownership maps: each point's probability of ending as black's, by playouts or by the CRF.

Two methods (``METHODS``; ``DEFAULT_METHOD`` is what gomove ownership, gtp and
analysis use when not told):
- ``playouts``: Stern et al.'s territory prediction done by Monte Carlo: from a
  position, n playouts (gomove.playout.driver) are run to the end and scored by
  area; a point's black ownership is the fraction of them in which it ends black
  (a black stone, or an empty point only black stones touch). 1 - P(black) -
  P(white) is the share of games where it was dame.
- ``crf``: Stern's territory CRF (gomove.models.territory.crf), learned from
  finished games and sampled by Swendsen-Wang: far cheaper than playouts, and no
  dame (P(white) = 1 - P(black)).

    gomove ownership GAME.sgf --move 120 --playouts 1000 --out own.png
    gomove ownership GAME.sgf --move 120 --method crf --territory RUN/crf.pt

Terms:
- policy: uniform playouts by default, or a trained light pattern policy
  (``--policy policy.npz``, gomove.playout.policy).
- ``OwnershipMap``: black[size, size], white[size, size] (probabilities, sgfmill
  (row, col) order with row 0 at the bottom), the mean score and its standard
  error (black minus white minus komi), n (playouts or sweeps), the colour to
  move, the method that made it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gomove.board.board import BLACK, WHITE, Board
from gomove.models.territory.crf import SWEEPS, TerritoryCRF
from gomove.play.boardplot import draw_board, new_figure, save_figure
from gomove.playout.driver import run_playouts
from gomove.playout.policy import PatternPolicy
from gomove.playout.uniform import UNIFORM

PLAYOUTS = "playouts"
CRF = "crf"
METHODS = (PLAYOUTS, CRF)
DEFAULT_METHOD = PLAYOUTS  # of gomove ownership, gtp and analysis


@dataclass(frozen=True)
class OwnershipMap:
    black: np.ndarray  # float64[size, size]
    white: np.ndarray  # float64[size, size]
    mean_score: float
    score_stderr: float
    score_stdev: float  # the spread of the final scores (population standard deviation)
    n: int  # playouts, or the CRF's sweeps
    to_move: int
    method: str = PLAYOUTS

    @property
    def size(self) -> int:
        return self.black.shape[0]

    def describe(self) -> str:
        """What made the map, for titles and messages: "1000 playouts", "CRF, 100 sweeps"."""
        if self.method == CRF:
            return f"CRF, {self.n} sweeps" if self.n else "CRF, exact"
        return f"{self.n} playouts"

    def expected_territory(self) -> float:
        """Expected black minus white area (no komi): sum over points of P(black) - P(white)."""
        return float((self.black - self.white).sum())


def ownership(
    board: Board,
    to_move: int,
    n: int = 1000,
    komi: float = 7.5,
    seed: int = 0,
    max_moves: int | None = None,
    policy: PatternPolicy | None = None,
) -> OwnershipMap:
    """n playouts from board (unchanged) with to_move to play -> OwnershipMap.

    Uniform playouts, or the pattern policy's (gomove.playout.policy) when given.
    """
    if n < 1:
        raise ValueError(f"need at least one playout, not {n}")
    player = UNIFORM if policy is None else policy.player()
    scores, counts = run_playouts(board, to_move, komi, n, seed, max_moves, policy=player)
    return OwnershipMap(
        black=counts[BLACK] / n,
        white=counts[WHITE] / n,
        mean_score=float(scores.mean()),
        score_stderr=float(scores.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"),
        score_stdev=float(scores.std()),
        n=n,
        to_move=to_move,
    )


def crf_ownership(
    board: Board,
    to_move: int,
    komi: float,
    crf: TerritoryCRF,
    sweeps: int = SWEEPS,
    seed: int = 0,
) -> OwnershipMap:
    """The territory CRF's map of board with to_move to play, sweeps Swendsen-Wang sweeps.

    score_stderr is stdev / sqrt(sweeps), as if the sweeps were independent: the
    chain's samples are correlated, so it understates the error (0 for an exact
    answer, a model without couplings).
    """
    est = crf.predict(board, to_move, komi, sweeps=sweeps, seed=seed)
    return OwnershipMap(
        black=est.black,
        white=1.0 - est.black,
        mean_score=est.mean_score,
        score_stderr=est.score_stdev / float(np.sqrt(est.sweeps)) if est.sweeps else 0.0,
        score_stdev=est.score_stdev,
        n=est.sweeps,
        to_move=to_move,
        method=CRF,
    )


def estimate_ownership(
    board: Board,
    to_move: int,
    komi: float,
    territory: TerritoryCRF | None,
    n: int,
    seed: int = 0,
    policy: PatternPolicy | None = None,
) -> OwnershipMap:
    """The engines' map: the territory CRF's when one is given, else n playouts (the
    policy's, else uniform). n is the playouts' count only: the CRF runs its SWEEPS."""
    if territory is not None:
        return crf_ownership(board, to_move, komi, territory, seed=seed)
    return ownership(board, to_move, n, komi, seed, policy=policy)


def plot_ownership(board: Board, own: OwnershipMap, path: str | Path, title: str = "") -> Path:
    """A PNG of the board with each point shaded by P(black) - P(white) and the stones drawn."""
    size = own.size
    fig, ax = new_figure()
    # +1: black surely owns it (dark), -1: white surely does (light)
    im = ax.imshow(
        own.black - own.white,
        cmap="RdBu_r",
        vmin=-1,
        vmax=1,
        origin="lower",
        extent=(-0.5, size - 0.5, -0.5, size - 0.5),
        alpha=0.85,
    )
    draw_board(ax, board)
    side = "black" if own.to_move == BLACK else "white"
    ax.set_title(
        (title + "\n" if title else "")
        + f"{own.describe()}, {side} to move: score {own.mean_score:+.1f} "
        f"(+-{own.score_stderr:.1f}), expected area B-W {own.expected_territory():+.1f}",
        fontsize=9,
    )
    fig.colorbar(im, ax=ax, fraction=0.046, label="P(black owns) - P(white owns)")
    return save_figure(fig, path)
