"""Drawing a playout move: the gamma of a point, the hot points, the exact draw (see __init__).

Terms:
- ``policy_gamma``: a point's gamma from light.levels_at alone, the reference.
- big self-atari (``big_self_atari``, ``PatternPlayer.selfatari_max``): a
  self-atari that leaves more than a limit of stones in atari. A playout with a
  limit redraws such a move and ``draw_exact`` gives it no weight, so its moves
  are drawn in proportion to policy_gamma over the other moves (Pachi's and
  Fuego's playouts refuse these moves too: they throw away a group the playout
  would otherwise live or make seki with).
- hot point, proposal, acceptance, ``draw_exact``: as the package docstring
  says; ``collect_hot`` lists the hot points in ``s.pts`` (marked with the
  generation ``gen`` in ``s.mark``), ``hot_gammas`` fills ``s.hotval`` (v by
  point) and ``s.extra`` (max(v - base, 0) by list index).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import (
    EMPTY,
    SIZE,
    WHITE,
    Board,
    W,
    big_self_atari,
    first_liberty,
    self_atari_at,
)
from gomove.board.coords import PASS
from gomove.features.levels import LastMove, capture_and_extension
from gomove.features.light import levels_at, light_code
from gomove.playout.pattern.state import PatternState
from gomove.playout.pattern.tables import PolicyTables
from gomove.playout.rng import uniform01

MAX_TRIES = 64  # rejections in a row before a move is drawn by a full scan


@njit(cache=True, inline="always")
def gamma_at(b: Board, loc, color, last, ko, t: PolicyTables, with_sa):
    """policy_gamma on the board's arrays, unpacked once; without the self-atari factor
    unless with_sa."""
    bc, head, nxt, libs = b.color, b.head, b.nxt, b.libs
    w = b.info[W]
    if bc[loc] != EMPTY or loc == ko:
        return 0.0
    code, cap, ext, sa, cont = levels_at(bc, head, nxt, libs, w, loc, color, last, with_sa)
    g = t.play[t.level[code]]
    if g == 0.0:
        return 0.0
    return g * t.capture[cap] * t.extension[ext] * t.self_atari[sa] * t.contiguity[cont]


@njit(cache=True)
def policy_gamma(b: Board, loc: int, color: int, last: int, ko: int, t: PolicyTables) -> float:
    """The gamma of loc for color to move after last, ko the point color may not take."""
    return gamma_at(b, loc, color, last, ko, t, True)


@njit(cache=True)
def proposal_gamma(b: Board, loc: int, color: int, last: int, ko: int, t: PolicyTables) -> float:
    """policy_gamma without the self-atari factor where only the board can tell
    (sa_maybe): v of a hot point, and with last = NO_MOVE and ko = -1 the base gamma."""
    maybe = b.color[loc] == EMPTY and t.sa_maybe[t.level[light_code(b, loc, color)]]
    return gamma_at(b, loc, color, last, ko, t, not maybe)


@njit(cache=True, inline="always")
def _add(mark, pts, n, loc, gen):
    """List loc once per generation; returns the new length of the list."""
    if mark[loc] != gen:
        mark[loc] = gen
        pts[n] = loc
        n += 1
    return n


@njit(cache=True, inline="always")
def collect_hot(b: Board, color: int, last: int, ko: int, gen: int, na, s: PatternState, t):
    """List the hot points (package docstring) in s.pts; return (how many, how many
    of them, listed first, are contiguous to the previous move).

    na: levels.new_atari_heads of color after last (computed once per move).
    """
    bc, head, nxt, libs = b.color, b.head, b.nxt, b.libs
    w = b.info[W]
    mark = s.mark
    pts = s.pts
    n = 0
    if last >= 0:
        for d in (-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1):
            p = last + d
            if bc[p] == EMPTY:  # contiguity: 8 distinct points, listed first
                mark[p] = gen
                pts[n] = p
                n += 1
    ncont = n
    if ko >= 0 and bc[ko] == EMPTY:
        n = _add(mark, pts, n, ko, gen)
    if last < 0:
        return n, ncont
    opp = 3 - color
    for h in na:
        if h == -1:
            continue
        st = h
        while True:
            for nb in (st - w, st - 1, st + 1, st + w):
                if bc[nb] == EMPTY:  # the extension
                    n = _add(mark, pts, n, nb, gen)
                elif bc[nb] == opp and libs[head[nb]] == 1:  # capturing a string next to ours
                    n = _add(mark, pts, n, first_liberty(bc, nxt, w, head[nb], -1), gen)
            st = nxt[st]
            if st == h:
                break
    # the points next to the previous move's string that capture (it, or another string)
    if bc[last] == opp:
        lh = head[last]
        alist = s.alist
        for i in range(s.acount[0]):
            x = alist[i]
            if (t.atari[s.lev[x]] & color) == 0:
                continue
            for nb in (x - w, x - 1, x + 1, x + w):
                if bc[nb] == opp and head[nb] == lh:
                    n = _add(mark, pts, n, x, gen)
                    break
    return n, ncont


@njit(cache=True, inline="always")
def hot_gammas(
    b: Board, color: int, ko: int, nh: int, ncont: int, lm: LastMove, s: PatternState, t
) -> float:
    """v of each hot point into s.hotval, max(v - base, 0) into s.extra; return their sum.

    v multiplies the gammas of the levels in gamma_at's order, so it rounds as
    policy_gamma does; the capture and extension levels are those of
    features/levels.py, as light.levels_at has them (lm: the previous move,
    levels.last_move).
    """
    bc, head, nxt, libs = b.color, b.head, b.nxt, b.libs
    w = b.info[W]
    gam = s.gam
    ci = color - 1
    total = 0.0
    for i in range(nh):
        p = s.pts[i]
        g = gam[ci, p]
        cont = 1 if i < ncont else 0
        k = np.int64(s.lev[p])
        if p == ko:
            v = 0.0
        elif t.atari[k] == 0:
            # no string in atari next to p: only contiguity differs from the base
            v = g * t.contiguity[1] if cont else g
        else:
            cap, ext = capture_and_extension(bc, head, nxt, libs, w, p, color, lm)
            if color == WHITE:
                k = np.int64(t.swap[k])
            sa = 1 if t.sa_sure[k] else 0
            v = t.play[k] * t.capture[cap] * t.extension[ext] * t.self_atari[sa]
            v *= t.contiguity[cont]
        s.hotval[p] = v
        e = v - g if v > g else 0.0
        s.extra[i] = e
        total += e
    return total


@njit(cache=True, inline="always")
def propose(size, w, ci, s: PatternState, nh, hot_total, base_total, rng):
    """A point drawn with weight base + extra (package docstring), or PASS when
    every weight is 0."""
    gam = s.gam
    rows = s.rows
    pts = s.pts
    extra = s.extra
    total = base_total + hot_total
    if not total > 0.0:
        return PASS
    x = uniform01(rng) * total
    if x < hot_total:
        last_pos = PASS
        for i in range(nh):
            if extra[i] > 0.0:
                last_pos = pts[i]
                x -= extra[i]
                if x < 0.0:
                    return pts[i]
        if last_pos != PASS:  # rounding
            return last_pos
        x = 0.0
    else:
        x -= hot_total
    fallback = PASS
    for r in range(size):
        rs = rows[ci, r]
        if x >= rs:
            x -= rs
            continue
        start = (r + 1) * w + 1
        for p in range(start, start + size):
            g = gam[ci, p]
            if g > 0.0:
                fallback = p
                x -= g
                if x < 0.0:
                    return p
        x = 0.0  # rounding left x past the row's end: take the next positive point
    if fallback == PASS:  # rounding again: the last point with a positive gamma
        for r in range(size):
            start = (r + 1) * w + 1
            for p in range(start, start + size):
                if gam[ci, p] > 0.0:
                    fallback = p
    return fallback


@njit(cache=True, inline="always")
def acceptance(b: Board, p, color, gen, s: PatternState, t: PolicyTables, sa_yes, sa_no):
    """The probability of accepting the proposed point p (package docstring)."""
    acc = 1.0
    g = s.gam[color - 1, p]
    if s.mark[p] == gen and s.hotval[p] < g:
        acc = s.hotval[p] / g
    k = np.int64(s.lev[p])
    if color == WHITE:
        k = np.int64(t.swap[k])
    if t.sa_maybe[k] and self_atari_at(b.color, b.head, b.nxt, b.libs, b.info[W], p, color):
        return acc * sa_yes
    return acc * sa_no


@njit(cache=True, inline="always")
def exact_gamma(b: Board, loc: int, color: int, last: int, ko: int, t: PolicyTables, sa_limit: int):
    """policy_gamma, 0 for a big self-atari when sa_limit > 0."""
    g = policy_gamma(b, loc, color, last, ko, t)
    return 0.0 if g > 0.0 and big_self_atari(b, loc, color, sa_limit) else g


@njit(cache=True)
def draw_exact(
    b: Board, color: int, last: int, ko: int, t: PolicyTables, rng: np.ndarray, sa_limit: int = 0
) -> int:
    """A point drawn in proportion to policy_gamma by a full scan, or PASS; with
    sa_limit, big self-ataris (big_self_atari) weigh nothing."""
    size = b.info[SIZE]
    w = b.info[W]
    total = 0.0
    for r in range(size):
        for c in range(size):
            total += exact_gamma(b, (r + 1) * w + c + 1, color, last, ko, t, sa_limit)
    if not total > 0.0:
        return PASS
    x = uniform01(rng) * total
    fallback = PASS
    for r in range(size):
        for c in range(size):
            p = (r + 1) * w + c + 1
            g = exact_gamma(b, p, color, last, ko, t, sa_limit)
            if g > 0.0:
                fallback = p
                x -= g
                if x < 0.0:
                    return p
    return fallback


# the self-atari factor's scale: acceptances stay <= 1 whatever the self-atari gamma
@njit(cache=True, inline="always")
def self_atari_scale(t: PolicyTables) -> tuple[float, float, float]:
    """(sa_max, sa_yes, sa_no): max(1, g_sa), and the acceptance factors of a
    self-atari and of any other move (package docstring)."""
    sa_max = max(1.0, t.self_atari[1])
    return sa_max, t.self_atari[1] / sa_max, 1.0 / sa_max
