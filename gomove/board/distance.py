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

from gomove.board.board import BLACK, EMPTY, WALL, WHITE, Board, neighbours


@njit(cache=True)
def cfg_distances(b: Board, loc: int, max_d: int, out: np.ndarray) -> None:
    """out[p] = the CFG distance from loc to point p when it is at most max_d, else -1.

    loc is at distance 0, and so is every stone of its string; a step to a
    neighbouring empty point costs 1, a step onto a string costs 1 for all of its
    stones at once. out: int64[len(b.color)].
    """
    out[:] = -1
    queue = np.empty(b.color.shape[0], np.int64)
    n = 0
    if b.color[loc] == BLACK or b.color[loc] == WHITE:
        s = loc
        while True:
            out[s] = 0
            queue[n] = s
            n += 1
            s = b.nxt[s]
            if s == loc:
                break
    else:
        out[loc] = 0
        queue[n] = loc
        n += 1
    i = 0
    while i < n:
        p = queue[i]
        i += 1
        d = out[p]
        if d >= max_d:
            continue
        for q in neighbours(b, p):
            c = b.color[q]
            if c == WALL or out[q] >= 0:
                continue
            if c == EMPTY:
                out[q] = d + 1
                queue[n] = q
                n += 1
                continue
            s = q
            while True:
                out[s] = d + 1
                queue[n] = s
                n += 1
                s = b.nxt[s]
                if s == q:
                    break
