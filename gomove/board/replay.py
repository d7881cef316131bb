"""Replaying games: games as loc arrays, boards set up for them, and the one replay driver.

Terms:
- GameArrays: a game's setup stones and moves as the kernels take them (locs,
  colours); ``game_arrays(game)`` builds them from any object with ``size``,
  ``setup`` and ``moves`` as gomove.reading.sgf.Game has them.
- replay driver: ``replay(b, locs, colors, visitor)``, the one compiled loop
  that walks a game's positions. Before each move i it calls the hook
  ``visit(visitor, b, i, loc, color)`` on the position with move i to play,
  then plays the move, unless the hook returned True (stop: ``replay``
  returns i). A visitor is a NamedTuple whose type picks the hook's
  implementation: ``Rules`` (here) checks legality; layers above register
  their own types with ``numba.extending.overload(visit)`` (gomove.features
  fills every feature group of every position in the same pass), so the board
  layer never imports them and each visitor compiles (and caches) once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from gomove.board.board import (
    BLACK,
    SIZE,
    TO_MOVE,
    WHITE,
    Board,
    is_legal,
    is_superko,
    new_board,
    play,
    setup_stone,
)
from gomove.board.coords import PASS, loc_to_gtp, move_to_loc, to_loc


@dataclass(frozen=True)
class GameArrays:
    size: int
    setup_locs: np.ndarray  # int64[S]
    setup_colors: np.ndarray  # int64[S]
    locs: np.ndarray  # int64[N], PASS = -1
    colors: np.ndarray  # int64[N]


def game_arrays(game) -> GameArrays:
    """A game (gomove.reading.sgf.Game, or anything with size, setup, moves) -> arrays."""
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


# ---- the replay driver ------------------------------------------------------------------


def visit(visitor, b, i, loc, color):
    """The replay driver's hook: work on the position before move i; True stops the replay.

    Implemented per visitor type with ``numba.extending.overload(visit)``;
    never called from Python.
    """
    raise NotImplementedError("visit is a numba hook: overload it for the visitor's type")


class Rules(NamedTuple):
    """The visitor that checks the rules: with ``check``, stop at the first move that is
    occupied, the simple-ko point, suicide, or (with ``superko``) a positional-superko repeat."""

    check: bool
    superko: bool


def is_visitor(visitor, cls: type) -> bool:
    """For overloads of visit: is this numba type the NamedTuple class cls?"""
    return isinstance(visitor, types.BaseNamedTuple) and visitor.instance_class is cls


@overload(visit, jit_options={"cache": True})
def _visit_rules(visitor, b, i, loc, color):
    if is_visitor(visitor, Rules):

        def impl(visitor, b, i, loc, color):
            if not visitor.check or loc == PASS:
                return False
            if not is_legal(b, loc, color):
                return True
            return visitor.superko and is_superko(b, loc, color)

        return impl
    return None


@njit(cache=True)
def replay(b: Board, locs: np.ndarray, colors: np.ndarray, visitor) -> int:
    """Play a move list on b, visiting every position first (module docstring).

    Returns the number of moves played: len(locs), or the index of the move at
    which the visitor stopped.
    """
    for i in range(locs.shape[0]):
        loc = locs[i]
        color = colors[i]
        if visit(visitor, b, i, loc, color):
            return i
        play(b, loc, color)
    return locs.shape[0]


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
    replay(b, ga.locs[:stop], ga.colors[:stop], Rules(False, False))
    if stop < n_moves:
        to_move = int(ga.colors[stop])
    else:
        to_move = WHITE if n_moves and ga.colors[-1] == BLACK else BLACK
    return b, to_move


def move_error(b: Board, loc: int, color: int, superko: bool = True) -> str | None:
    """Why color may not play loc on b now (None: legal; pass always is): the one
    legality check of the tools that take moves from people (play_moves, GameState)."""
    if loc == PASS:
        return None
    if not is_legal(b, loc, color):
        return "illegal move"
    if superko and is_superko(b, loc, color):
        return "illegal move (superko)"
    return None


def play_moves(b: Board, moves: list[tuple[int, int]], superko: bool = True) -> int:
    """Play (color, loc) moves on b in order, each checked (ValueError naming the first
    illegal one, b then holding the moves before it); returns the colour to move next."""
    to_move = int(b.info[TO_MOVE])
    size = int(b.info[SIZE])
    for i, (color, loc) in enumerate(moves, 1):
        if color not in (BLACK, WHITE):
            raise ValueError(f"move {i}: colour must be BLACK or WHITE, not {color}")
        why = move_error(b, loc, color, superko)
        if why is not None:
            name = "black" if color == BLACK else "white"
            raise ValueError(f"move {i}: {why}: {name} {loc_to_gtp(loc, size)}")
        play(b, loc, color)
        to_move = WHITE if color == BLACK else BLACK
    return to_move
