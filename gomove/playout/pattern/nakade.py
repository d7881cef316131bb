"""Nakade in the playouts: the killing point of a small eye space (Pachi's Moggy).

A playout decides life and death by chance when a group's only eye space is
a dead shape: Coulom's 3x3 gammas do not see a bent three or a bulky five, so
the attacker's vital point is one move among many and the playouts count the
group alive about as often as dead. Pachi's playouts (Moggy, tactics/nakade.c)
answer the opponent's move next to such a space by its vital point;
``SearchConfig.nakade`` adds the same check after the tactical answers.

Terms:
- the eye space: the empty points connected to an empty neighbour of the
  opponent's last move through empty points; considered only when every empty
  neighbour of the last move lies in it, it has at most six points and none of
  them touches a stone of the player to move (all its stones are the
  opponent's).
- its vital point, by the number of neighbours each point has inside the space
  (Pachi's rule, which names exactly these shapes): three points (straight or
  bent three): the middle one; four: the point with three (pyramid four; the
  square, the straight and the bent four have none); five: the point with
  three when one point has three and one has one (bulky five), the point with
  four when one has four (cross five); six: the point with four when one has
  four and three have two (rabbity six). No other space has one.
- with probability ``nakade`` a playout move that has neither a last good
  reply nor a tactical answer is the vital point, when there is one and it is
  legal.
"""

from __future__ import annotations

from numba import njit

from gomove.board.board import EMPTY, is_legal_arrays

MAX_SPACE = 6


@njit(cache=True, inline="always")
def _in(area, n: int, p: int) -> bool:
    for i in range(n):
        if area[i] == p:
            return True
    return False


@njit(cache=True)
def eye_space(bc, w: int, color: int, last: int, area) -> int:
    """Write the opponent's eye space next to its move last (module docstring) into
    area (at least MAX_SPACE long); return its size, or 0 when there is none."""
    if last < 0 or bc[last] != 3 - color:
        return 0
    n = 0
    for nb in (last - w, last - 1, last + 1, last + w):
        if bc[nb] == EMPTY:
            area[0] = nb
            n = 1
            break
    if n == 0:
        return 0
    i = 0
    while i < n:
        p = area[i]
        for nb in (p - w, p - 1, p + 1, p + w):
            c = bc[nb]
            if c == color:
                return 0
            if c == EMPTY and not _in(area, n, nb):
                if n == MAX_SPACE:
                    return 0
                area[n] = nb
                n += 1
        i += 1
    for nb in (last - w, last - 1, last + 1, last + w):
        if bc[nb] == EMPTY and not _in(area, n, nb):
            return 0
    return n


@njit(cache=True)
def vital_point(area, n: int, w: int) -> int:
    """The vital point of the eye space area[:n] (module docstring), or -1."""
    # how many points have one, two, three and four neighbours inside the space, and
    # one point of each (scalars: the playout loop allocates nothing)
    c1 = c2 = c3 = c4 = 0
    p2 = p3 = p4 = -1
    for i in range(n):
        d = 0
        for j in range(n):
            diff = abs(area[i] - area[j])
            if diff == 1 or diff == w:
                d += 1
        if d == 1:
            c1 += 1
        elif d == 2:
            c2 += 1
            p2 = area[i]
        elif d == 3:
            c3 += 1
            p3 = area[i]
        elif d == 4:
            c4 += 1
            p4 = area[i]
    if n == 3:
        return p2
    if n == 4 and c3 == 1:
        return p3
    if n == 5 and c3 == 1 and c1 == 1:
        return p3
    if n == 5 and c4 == 1:
        return p4
    if n == 6 and c4 == 1 and c2 == 3:
        return p4
    return -1


@njit(cache=True)
def nakade_move(bc, head, libs, info, w: int, color: int, last: int, area) -> int:
    """color's killing move in the eye space next to the opponent's move last, or -1
    (module docstring); area: scratch of at least MAX_SPACE."""
    n = eye_space(bc, w, color, last, area)
    if n < 3:
        return -1
    v = vital_point(area, n, w)
    if v < 0 or not is_legal_arrays(bc, head, libs, info, v, color):
        return -1
    return v
