"""Ownership maps: each point's probability of ending as black's, estimated by playouts.

Stern et al.'s territory prediction, done by Monte Carlo: from a position, n
playouts (gomove.playout.driver) are run to the end and scored by area; a
point's black ownership is the fraction of them in which it ends black (a
black stone, or an empty point only black stones touch). 1 - P(black) -
P(white) is the share of games where it was dame.

    gomove ownership GAME.sgf --move 120 --playouts 1000 --out own.png
    gomove ownership ARCHIVE.zip --game 3 --move 150

Terms:
- policy: uniform playouts by default, or a trained light pattern policy
  (``--policy policy.npz``, gomove.playout.policy).
- ``OwnershipMap``: black[size, size], white[size, size] (probabilities, sgfmill
  (row, col) order with row 0 at the bottom), the playouts' mean score and its
  standard error (black minus white minus komi), n, the colour to move.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gomove.board.board import BLACK, WHITE, Board
from gomove.play.boardplot import draw_board, new_figure, save_figure
from gomove.playout.driver import run_playouts
from gomove.playout.policy import PatternPolicy


@dataclass(frozen=True)
class OwnershipMap:
    black: np.ndarray  # float64[size, size]
    white: np.ndarray  # float64[size, size]
    mean_score: float
    score_stderr: float
    score_stdev: float  # the spread of the final scores (population standard deviation)
    n: int
    to_move: int

    @property
    def size(self) -> int:
        return self.black.shape[0]

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
    play_n = run_playouts if policy is None else policy.run_playouts
    scores, counts = play_n(board, to_move, komi, n, seed, max_moves)
    return OwnershipMap(
        black=counts[BLACK] / n,
        white=counts[WHITE] / n,
        mean_score=float(scores.mean()),
        score_stderr=float(scores.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"),
        score_stdev=float(scores.std()),
        n=n,
        to_move=to_move,
    )


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
        + f"{own.n} playouts, {side} to move: score {own.mean_score:+.1f} "
        f"(+-{own.score_stderr:.1f}), expected area B-W {own.expected_territory():+.1f}",
        fontsize=9,
    )
    fig.colorbar(im, ax=ax, fraction=0.046, label="P(black owns) - P(white owns)")
    return save_figure(fig, path)
