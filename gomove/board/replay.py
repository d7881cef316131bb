"""Games as loc arrays, and boards set up to replay them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gomove.board.board import BLACK, TO_MOVE, WHITE, Board, new_board, play, setup_stone
from gomove.board.coords import move_to_loc, to_loc


@dataclass(frozen=True)
class GameArrays:
    size: int
    setup_locs: np.ndarray  # int64[S]
    setup_colors: np.ndarray  # int64[S]
    locs: np.ndarray  # int64[N], PASS = -1
    colors: np.ndarray  # int64[N]


def game_arrays(game) -> GameArrays:
    """gomove.reading.sgf.Game -> arrays the kernels take."""
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
    for loc, color in zip(ga.setup_locs, ga.setup_colors, strict=True):
        setup_stone(b, int(loc), int(color))
    if len(ga.colors):
        b.info[TO_MOVE] = ga.colors[0]
    return b


def board_at(game, move: int | None = None) -> tuple[Board, int]:
    """The board of a game (gomove.reading.sgf.Game) before its move ``move`` (1-based; None: end).

    Returns (board, colour to move).
    """
    ga = game_arrays(game)
    n_moves = len(ga.locs)
    stop = n_moves if move is None else move - 1
    if not 0 <= stop <= n_moves:
        raise ValueError(f"{game.source}: move must be in 1..{n_moves + 1}, not {move}")
    b = start_board(ga)
    for loc, color in zip(ga.locs[:stop], ga.colors[:stop], strict=True):
        play(b, int(loc), int(color))
    if stop < n_moves:
        to_move = int(ga.colors[stop])
    else:
        to_move = WHITE if n_moves and ga.colors[-1] == BLACK else BLACK
    return b, to_move
