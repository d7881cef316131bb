"""How a game ends and is counted: eyes, area scoring, dead stones by a map, the move limit.

Every playout policy (gomove.playout) and the search ask the board these questions,
so they are defined once here, below all of them.

Terms:
- eye (of color): an empty point whose 4 neighbours are all color or WALL, and
  whose diagonal points hold at most 1 opponent stone in the middle of the
  board and none when a diagonal is WALL (edge or corner): the classic
  playout eye (Bruegmann 1993; Gelly et al. 2006, "MoGo"). A playout never
  fills one of its own.
- area score: stones plus empty regions that touch stones of one colour only
  (Chinese / Tromp-Taylor: nothing is removed as dead), black minus white minus
  komi. owner per flat point: 1 black, 2 white, 0 neither (dame).
- judged dead: the strings that an ownership map gives to the other colour on
  average over their stones, removed before a referee's count (``area_score_judged``).
- move limit: a game played out without a limit of its own stops after
  ``default_max_moves(size)`` moves.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import (
    BLACK,
    EMPTY,
    SIZE,
    WALL,
    WHITE,
    Board,
    W,
    copy_board,
    neighbours,
)
from gomove.board.coords import to_loc


@njit(cache=True, inline="always")
def eye_at(bc, w: int, loc: int, color: int) -> bool:
    """is_eye on the board's colours (bc = b.color)."""
    if bc[loc] != EMPTY:
        return False
    for nb in (loc - w, loc - 1, loc + 1, loc + w):
        c = bc[nb]
        if c != color and c != WALL:
            return False
    opp = 3 - color
    n_opp = 0
    n_wall = 0
    for d in (loc - w - 1, loc - w + 1, loc + w - 1, loc + w + 1):
        c = bc[d]
        if c == opp:
            n_opp += 1
        elif c == WALL:
            n_wall += 1
    if n_wall > 0:
        return n_opp == 0
    return n_opp <= 1


@njit(cache=True)
def is_eye(b: Board, loc: int, color: int) -> bool:
    """Is the empty point loc an eye of color (see the module docstring)?"""
    return eye_at(b.color, b.info[W], loc, color)


@njit(cache=True)
def area_score(b: Board, komi: float, owner_out: np.ndarray) -> float:
    """Area score, black minus white minus komi; owner_out: int8[size*size] by flat point."""
    size = b.info[SIZE]
    seen = np.zeros(b.color.shape[0], np.bool_)
    region = np.empty(size * size, np.int64)
    return area_score_into(b, komi, owner_out, seen, region)


@njit(cache=True)
def area_score_into(
    b: Board, komi: float, owner_out: np.ndarray, seen: np.ndarray, region: np.ndarray
) -> float:
    """area_score with its scratch given: seen bool[L], region int64[size*size] (the driver
    allocates them once per call, not once per game)."""
    size = b.info[SIZE]
    w = b.info[W]
    seen[:] = False
    black = 0
    white = 0
    for r in range(size):
        for c in range(size):
            loc = (r + 1) * w + c + 1
            col = b.color[loc]
            if col == BLACK:
                owner_out[r * size + c] = BLACK
                black += 1
            elif col == WHITE:
                owner_out[r * size + c] = WHITE
                white += 1
            elif not seen[loc]:
                # flood fill the empty region through loc, noting the colours it touches
                seen[loc] = True
                region[0] = loc
                n = 1
                i = 0
                touches_black = False
                touches_white = False
                while i < n:
                    p = region[i]
                    i += 1
                    for nb in neighbours(b, p):
                        cn = b.color[nb]
                        if cn == EMPTY:
                            if not seen[nb]:
                                seen[nb] = True
                                region[n] = nb
                                n += 1
                        elif cn == BLACK:
                            touches_black = True
                        elif cn == WHITE:
                            touches_white = True
                owner = EMPTY
                if touches_black and not touches_white:
                    owner = BLACK
                    black += n
                elif touches_white and not touches_black:
                    owner = WHITE
                    white += n
                for j in range(n):
                    p = region[j]
                    owner_out[(p // w - 1) * size + p % w - 1] = owner
    return black - white - komi


def judged_dead(b: Board, own: np.ndarray) -> np.ndarray:
    """bool[size * size] ([row, col] order): the stones of every string that own
    (P(black) - P(white) owning each point, float[size, size] in [row, col] order)
    gives to the other colour on average over the string's stones. A string lives or
    dies whole, so a map that is unsure at some of its stones still judges it once."""
    size = int(b.info[SIZE])
    locs = to_loc(*np.divmod(np.arange(size * size), size), size)
    colour = b.color[locs]
    sign = np.where(colour == BLACK, 1.0, np.where(colour == WHITE, -1.0, 0.0))
    stone = sign != 0
    heads = b.head[locs]
    kept = sign * np.asarray(own, np.float64).reshape(-1)
    sums = np.bincount(heads[stone], weights=kept[stone], minlength=b.color.shape[0])
    return stone & (sums[heads] < 0)


def area_score_judged(b: Board, komi: float, own: np.ndarray) -> float:
    """area_score after removing the strings that own (judged_dead) gives to the other
    colour: the dead stones a referee removes before counting."""
    return area_score_without(b, komi, judged_dead(b, own))


def area_score_without(b: Board, komi: float, dead: np.ndarray) -> float:
    """area_score after removing the stones dead (bool[size * size], [row, col] order)."""
    size = int(b.info[SIZE])
    locs = to_loc(*np.divmod(np.arange(size * size), size), size)
    judged = copy_board(b)
    judged.color[locs[np.asarray(dead, bool).reshape(-1)]] = EMPTY
    return float(area_score(judged, komi, np.zeros(size * size, np.int8)))


@njit(cache=True)
def default_max_moves(size: int) -> int:
    """A game's move limit when the caller gives none (compiled: numba callers use it too)."""
    return 3 * size * size
