"""Board figures: the grid, coordinates and stones every board PNG draws, in one place.

Axes coordinates: x = column (A.. left to right), y = row from the bottom
(sgfmill row 0 is the bottom line, GTP row 1), one unit per point.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gomove.board.board import BLACK, SIZE, WHITE, Board
from gomove.board.coords import GTP_COLUMNS, from_loc


def stones(board: Board) -> np.ndarray:
    """int8[size, size] of EMPTY/BLACK/WHITE in sgfmill (row, col) order."""
    size = int(board.info[SIZE])
    out = np.zeros((size, size), dtype=np.int8)
    for loc in np.nonzero((board.color == BLACK) | (board.color == WHITE))[0]:
        r, c = from_loc(int(loc), size)
        out[r, c] = board.color[loc]
    return out


def new_figure(figsize: tuple[float, float] = (7, 6.4)) -> tuple[Any, Any]:
    """A headless (Agg) matplotlib figure and axes; matplotlib loads only when a plot is made."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=figsize)


def draw_board(ax: Any, board: Board) -> None:
    """Grid lines, GTP coordinates and the stones of board on ax."""
    size = int(board.info[SIZE])
    for i in range(size):
        ax.plot([0, size - 1], [i, i], color="k", lw=0.5, zorder=1)
        ax.plot([i, i], [0, size - 1], color="k", lw=0.5, zorder=1)
    grid = stones(board)
    for color, face in ((BLACK, "black"), (WHITE, "white")):
        rows, cols = np.nonzero(grid == color)
        ax.scatter(cols, rows, s=(230 / size) ** 2, c=face, edgecolors="black", zorder=2)
    ax.set_xticks(range(size), list(GTP_COLUMNS[:size]))
    ax.set_yticks(range(size), [str(i + 1) for i in range(size)])
    ax.set_xlim(-0.7, size - 0.3)
    ax.set_ylim(-0.7, size - 0.3)
    ax.set_aspect("equal")


def save_figure(fig: Any, path: str | Path) -> Path:
    import matplotlib.pyplot as plt

    path = Path(path)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
