"""Local shape answers in the playouts: Pachi's Moggy pattern step over the learned gammas.

Moggy answers the opponent's move, when no tactical rule fires, by a move
next to it (or next to its own previous move) that matches one of its good
3x3 shapes, and only when none matches does it play elsewhere. Pachi loses 9
points against GNU Go without that step, and 28 without it, its tactics and its
self-atari refusal together (docs/logs/engine-matches.md). gomove's playouts
hold the same knowledge as gammas, but a shape next to the last move competes
there with every move of the board; ``SearchConfig.local`` gives it Moggy's
priority instead. Measured against GNU Go, that priority costs strength (59
and 50 of 100 against the defaults' 70, docs/logs/engine-matches.md), so it is off by
default.

Terms:
- the local points: the empty points 8-adjacent to the last move and those
  8-adjacent to the move before it that are not 8-adjacent to the last move
  (Moggy's ``pattern2``), the ko point excluded; none after a pass.
- a good shape: a local point whose 3x3 gamma for the player to move (the
  pattern3x3 level's gamma, 0 where the code is illegal or fills an own eye)
  is at least ``min_gamma``; ``PatternPolicy.player`` sets min_gamma to
  ``local_min`` times the gamma of the open point (all 8 neighbours empty),
  so the threshold does not depend on the scale MM happens to give the
  gammas.
- the answer: a good-shape point drawn in proportion to its full playout
  gamma (draw.exact_gamma: contiguity, captures, self-atari, a big self-atari
  0), or none when there is no good shape or they all weigh 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import EMPTY, WHITE, Board, W
from gomove.features.light import contiguous
from gomove.playout.pattern.draw import exact_gamma
from gomove.playout.pattern.state import PatternState
from gomove.playout.pattern.tables import PolicyTables
from gomove.playout.rng import uniform01

OPEN_CODE = 0  # the light code of a point whose 8 neighbours are empty (S_EMPTY is 0)


def open_gamma(t: PolicyTables) -> float:
    """The 3x3 gamma of the open point, the unit of local_min."""
    return float(t.play[t.level[OPEN_CODE]])


@njit(cache=True, inline="always")
def _good_shapes(b: Board, color, centre, skip, ko, t, s, n, min_gamma) -> int:
    """Append to s.tact the good-shape points 8-adjacent to centre and not to skip
    (skip -1: none); return the new length."""
    w = b.info[W]
    bc = b.color
    for d in (-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1):
        p = centre + d
        if bc[p] != EMPTY or p == ko or contiguous(p, skip, w):
            continue
        k = np.int64(s.lev[p])
        if color == WHITE:
            k = np.int64(t.swap[k])
        g = t.play[k]
        if g > 0.0 and g >= min_gamma:
            s.tact[n] = p
            n += 1
    return n


@njit(cache=True, inline="always")
def local_candidates(
    b: Board, color: int, last: int, last2: int, ko: int, t: PolicyTables, s: PatternState,
    min_gamma: float,
) -> int:  # fmt: skip
    """The good-shape local points (module docstring) into s.tact; returns how many."""
    if last < 0:
        return 0
    n = _good_shapes(b, color, last, -1, ko, t, s, 0, min_gamma)
    if last2 >= 0:
        n = _good_shapes(b, color, last2, last, ko, t, s, n, min_gamma)
    return n


@njit(cache=True, _nrt=False)
def local_move(
    b: Board, color: int, last: int, last2: int, ko: int, player, s: PatternState,
    rng: np.ndarray,
) -> int:  # fmt: skip
    """Moggy's answer by shape (module docstring), or -1 when there is none.

    player: the playout's playout.PatternPlayer (not imported: playout.py imports
    this module); a good shape's 3x3 gamma is at least player.local_gamma, and a
    big self-atari of more than player.selfatari_max stones weighs nothing
    (draw.exact_gamma).

    The weights go to s.extra, which the draw rewrites before it reads it. Compiled
    without reference counting (it allocates nothing), as play_moves, which calls it:
    its Board and table field reads would otherwise cost two atomic counts each.
    """
    t = player.tables
    min_gamma = player.local_gamma
    sa_limit = np.int64(player.selfatari_max)
    n = local_candidates(b, color, last, last2, ko, t, s, min_gamma)
    total = 0.0
    for i in range(n):
        g = exact_gamma(b, s.tact[i], color, last, ko, t, sa_limit)
        s.extra[i] = g
        total += g
    if not total > 0.0:
        return -1
    x = uniform01(rng) * total
    move = -1
    for i in range(n):
        if s.extra[i] > 0.0:
            move = s.tact[i]
            x -= s.extra[i]
            if x < 0.0:
                return move
    return move  # rounding: the last point of positive weight
