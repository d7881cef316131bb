"""Games as loc arrays, and boards set up to replay them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gomove.board.board import Board, new_board, setup_stone
from gomove.board.coords import move_to_loc, to_loc


@dataclass(frozen=True)
class GameArrays:
    size: int
    setup_locs: np.ndarray  # int64[S]
    setup_colors: np.ndarray  # int64[S]
    locs: np.ndarray  # int64[N], PASS = -1
    colors: np.ndarray  # int64[N]


def game_arrays(game) -> GameArrays:
    """gomove.sgf.Game -> arrays the kernels take."""
    size = game.size
    setup = list(game.setup)
    return GameArrays(
        size,
        np.array([to_loc(r, c, size) for _, r, c in setup], dtype=np.int64),
        np.array([color for color, _, _ in setup], dtype=np.int64),
        np.array([move_to_loc(m, size) for _, m in game.moves], dtype=np.int64),
        np.array([color for color, _ in game.moves], dtype=np.int64),
    )


def start_board(ga: GameArrays) -> Board:
    """A board with the game's setup stones, ready for its first move."""
    b = new_board(ga.size, hist_len=len(ga.locs) + len(ga.setup_locs) + 8)
    for loc, color in zip(ga.setup_locs, ga.setup_colors):
        setup_stone(b, int(loc), int(color))
    if len(ga.colors):
        b.info[3] = ga.colors[0]
    return b
