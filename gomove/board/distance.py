"""Common-fate-graph distance: how local a point is to a move when a string is one point.

On the common fate graph (Graepel et al. 2001) the stones of a string are one
vertex, so a liberty of a long string is as near a move on the string as the
move's own neighbours. Pachi's tree prior gives moves near the last move in
this sense a bonus (its ``cfgd`` prior); the search uses it the same way
(``SearchConfig.prior_local``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import EMPTY, WALL, Board, neighbours


@njit(cache=True, inline="always")
def _reach(b: Board, q: int, d: int, out: np.ndarray, queue: np.ndarray, n: int) -> int:
    """Put point q at distance d, with every stone of its string when it holds one, at
    the end of the queue (n entries so far); returns the new length."""
    s = q
    while True:
        out[s] = d
        queue[n] = s
        n += 1
        if b.color[q] == EMPTY:
            return n
        s = b.nxt[s]
        if s == q:
            return n


@njit(cache=True)
def cfg_distances(b: Board, loc: int, max_d: int, out: np.ndarray) -> None:
    """out[p] = the CFG distance from loc to point p when it is at most max_d, else -1.

    loc is at distance 0, and so is every stone of its string; a step to a
    neighbouring empty point costs 1, a step onto a string costs 1 for all of its
    stones at once. out: int64[len(b.color)].
    """
    out[:] = -1
    queue = np.empty(b.color.shape[0], np.int64)
    n = _reach(b, loc, 0, out, queue, 0)
    i = 0
    while i < n:
        p = queue[i]
        i += 1
        d = out[p]
        if d >= max_d:
            continue
        for q in neighbours(b, p):
            if b.color[q] != WALL and out[q] < 0:
                n = _reach(b, q, d + 1, out, queue, n)
