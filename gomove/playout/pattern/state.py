"""PatternState: the base gammas of every point, kept up to date move by move (see __init__).

Terms (the package docstring has the full story):
- base gamma: ``s.gam[x - 1, loc]`` for colour x, ``s.rows`` their row sums,
  ``s.lev`` BLACK's pattern3x3 level at each empty point, ``s.alist`` /
  ``s.apos`` / ``s.acount`` the indexed set of empty points next to a string
  in atari.
- the kernels here and in draw.py read the state and the tables by field
  name; the move loop (playout.play_moves) is compiled without reference
  counting, so a field read costs nothing there.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from gomove.board.board import EMPTY, SIZE, Board, W, adjacent_heads, first_liberty, play_arrays
from gomove.features.light import DIAG_BASE
from gomove.playout.pattern.tables import PolicyTables


class PatternState(NamedTuple):
    """The playout kernels' working arrays (package docstring)."""

    gam: np.ndarray  # float64[2, L] base gammas by colour - 1
    rows: np.ndarray  # float64[2, size] their row sums
    lev: np.ndarray  # int32[L] the pattern3x3 level BLACK sees at an empty point, 0 elsewhere
    rowof: np.ndarray  # int64[L] the board row of a point (no divisions in the loop)
    alist: np.ndarray  # int64[L] the empty points next to a string in atari (atari[lev] != 0)
    apos: np.ndarray  # int64[L] a point's index in alist, -1 when not listed
    acount: np.ndarray  # int64[1] the length of alist
    pts: np.ndarray  # int64[L] the hot points (draw.collect_hot)
    hotval: np.ndarray  # float64[L] v of a hot point (by point)
    extra: np.ndarray  # float64[L] max(v - base, 0) of the i-th hot point
    mark: np.ndarray  # int64[L] generation marks of listed hot points
    heads: np.ndarray  # int64[L] strings a move captures, then our strings it frees
    gen: np.ndarray  # int64[1] the generation counter of mark
    tact: np.ndarray  # int64[L] the tactical moves of the position (pattern.tactics), then
    # the eye space of the last move (pattern.nakade)


@njit(cache=True)
def new_state(b: Board) -> PatternState:
    """Zeroed working arrays for playouts on b's board size (init_gammas fills them)."""
    n = b.color.shape[0]
    size = b.info[SIZE]
    return PatternState(
        np.zeros((2, n), np.float64),
        np.zeros((2, size), np.float64),
        np.zeros(n, np.int32),
        np.arange(n, dtype=np.int64) // b.info[W] - 1,
        np.zeros(n, np.int64),
        np.full(n, -1, np.int64),
        np.zeros(1, np.int64),
        np.zeros(n, np.int64),
        np.zeros(n, np.float64),
        np.zeros(n, np.float64),
        np.zeros(n, np.int64),
        np.zeros(n, np.int64),
        np.zeros(1, np.int64),
        np.zeros(n, np.int64),
    )


@njit(cache=True)
def copy_state(dst: PatternState, src: PatternState) -> None:
    """dst's base gammas, levels, rows and atari list := src's (the driver's reset)."""
    dst.gam[:] = src.gam
    dst.rows[:] = src.rows
    dst.lev[:] = src.lev
    dst.alist[:] = src.alist
    dst.apos[:] = src.apos
    dst.acount[0] = src.acount[0]


@njit(cache=True, inline="always")
def _atari_bit(bc, head, libs, nb):
    """1 when nb holds a stone (BLACK 1 or WHITE 2, not EMPTY 0 or WALL 3) in atari."""
    c = np.int64(bc[nb])
    return ((c ^ (c >> 1)) & 1) & np.int64(libs[head[nb]] == 1)


@njit(cache=True, inline="always")
def code_black(bc, head, libs, w, loc):
    """light.code_at(bc, head, libs, w, loc, BLACK) without branches.

    For BLACK a point's state is its colour (EMPTY 0 = S_EMPTY, BLACK 1 = S_OWN,
    WHITE 2 = S_OPP, WALL 3 = S_OFF), plus 3 for an orthogonal string in atari
    (S_OWN_ATARI = S_OWN + 3, S_OPP_ATARI = S_OPP + 3). head and libs of an
    empty or wall point are stale but in range, and masked by its colour.
    """
    n0 = loc - w
    n1 = loc - 1
    n2 = loc + 1
    n3 = loc + w
    orth = (
        np.int64(bc[n0])
        + 3 * _atari_bit(bc, head, libs, n0)
        + 6 * (np.int64(bc[n1]) + 3 * _atari_bit(bc, head, libs, n1))
        + 36 * (np.int64(bc[n2]) + 3 * _atari_bit(bc, head, libs, n2))
        + 216 * (np.int64(bc[n3]) + 3 * _atari_bit(bc, head, libs, n3))
    )
    diag = (
        np.int64(bc[n0 - 1])
        + 4 * np.int64(bc[n0 + 1])
        + 16 * np.int64(bc[n3 - 1])
        + 64 * np.int64(bc[n3 + 1])
    )
    return orth + DIAG_BASE * diag


@njit(cache=True, inline="always")
def set_base(bc, head, libs, w, loc, s: PatternState, t: PolicyTables):
    """Recompute loc's level (BLACK's, 0 off empty points); when it changed, its base
    gammas, their row sums, and its place in alist."""
    lev = s.lev
    k = np.int64(t.level[code_black(bc, head, libs, w, loc)]) if bc[loc] == EMPTY else 0
    old = np.int64(lev[loc])
    if k == old:
        return
    gam = s.gam
    rows = s.rows
    lev[loc] = k
    g0 = t.base[k]
    g1 = t.base[t.swap[k]]
    r = s.rowof[loc]
    rows[0, r] += g0 - gam[0, loc]
    rows[1, r] += g1 - gam[1, loc]
    gam[0, loc] = g0
    gam[1, loc] = g1
    now = t.atari[k] != 0
    if now != (t.atari[old] != 0):
        alist = s.alist
        apos = s.apos
        acount = s.acount
        if now:
            apos[loc] = acount[0]
            alist[acount[0]] = loc
            acount[0] += 1
        else:
            i = apos[loc]
            acount[0] -= 1
            moved = alist[acount[0]]
            alist[i] = moved
            apos[moved] = i
            apos[loc] = -1


@njit(cache=True, inline="always")
def row_sum(g, r, size, w):
    """The sum of g over board row r."""
    start = (r + 1) * w + 1
    a = 0.0
    for p in range(start, start + size):
        a += g[p]
    return a


@njit(cache=True)
def init_gammas(b: Board, t: PolicyTables, s: PatternState) -> None:
    """Base gammas, levels, alist and row sums of every point, from scratch."""
    size = b.info[SIZE]
    w = b.info[W]
    s.gam[:] = 0.0
    s.rows[:] = 0.0
    s.lev[:] = 0
    s.apos[:] = -1
    s.acount[0] = 0
    for r in range(size):
        for c in range(size):
            set_base(b.color, b.head, b.libs, w, (r + 1) * w + c + 1, s, t)
    for r in range(size):
        for x in range(2):
            s.rows[x, r] = row_sum(s.gam[x], r, size, w)


@njit(cache=True, inline="always")
def play_and_update(b: Board, move: int, color: int, s: PatternState, t: PolicyTables):
    """Play move (a point, legal) for color and update the base gammas (package docstring)."""
    bc, head, nxt, libs, _, _, info, _, _ = b
    w = info[W]
    opp = 3 - color
    heads = s.heads
    # heads[:ncap]: the strings the move captures; heads[ncap:nfree]: our strings
    # in atari next to them, which the capture frees
    ncap = 0
    for h in adjacent_heads(bc, head, w, move, opp):
        if h != -1 and libs[h] == 1:
            heads[ncap] = h
            ncap += 1
    nfree = ncap
    for i in range(ncap):
        st = heads[i]
        while True:
            for nb in (st - w, st - 1, st + 1, st + w):
                if bc[nb] == color and libs[head[nb]] == 1:
                    hh = head[nb]
                    seen = False
                    for j in range(ncap, nfree):
                        if heads[j] == hh:
                            seen = True
                    if not seen:
                        heads[nfree] = hh
                        nfree += 1
            st = nxt[st]
            if st == heads[i]:
                break
    play_arrays(b, move, color)
    for p in (
        move - w - 1,
        move - w,
        move - w + 1,
        move - 1,
        move,
        move + 1,
        move + w - 1,
        move + w,
        move + w + 1,
    ):
        if bc[p] == EMPTY or p == move:
            set_base(bc, head, libs, w, p, s, t)
    for i in range(ncap):
        # captured stones keep head and nxt: walk them and their neighbourhoods
        st = heads[i]
        while True:
            for p in (
                st - w - 1,
                st - w,
                st - w + 1,
                st - 1,
                st,
                st + 1,
                st + w - 1,
                st + w,
                st + w + 1,
            ):
                if bc[p] == EMPTY:
                    set_base(bc, head, libs, w, p, s, t)
            st = nxt[st]
            if st == heads[i]:
                break
    for i in range(ncap, nfree):
        # a freed string's old liberty; its new ones are captured points
        h = head[heads[i]]
        st = h
        while True:
            for p in (st - w, st - 1, st + 1, st + w):
                if bc[p] == EMPTY:
                    set_base(bc, head, libs, w, p, s, t)
            st = nxt[st]
            if st == h:
                break
    # strings the move put in atari: its own, and the opponent's next to it
    mh = head[move]
    if libs[mh] == 1:
        set_base(bc, head, libs, w, first_liberty(bc, nxt, w, mh, -1), s, t)
    for h in adjacent_heads(bc, head, w, move, opp):
        if h != -1 and libs[h] == 1:
            set_base(bc, head, libs, w, first_liberty(bc, nxt, w, h, -1), s, t)
