"""Pattern-policy playouts (Coulom 2007, section 4.1): moves drawn in proportion to their gamma.

Terms:
- gamma of a point for the player to move: the product of the gammas of its
  light feature levels (gomove/features/light.py: 3x3 code, capture,
  extension, self-atari, contiguity), 0 for an illegal move or one that fills
  the mover's own eye (playout.is_eye). ``policy_gamma`` computes it from
  ``light_levels`` alone: the reference the fast path must equal.
- base gamma: the gamma the point would have if there were no previous move
  and no ko (``base_gamma``, from the 3x3 code and the self-atari test only).
  ``gam[x - 1, loc]`` holds it for both colours x, and ``rows[x - 1, r]`` its
  sum over board row r, for drawing a move in O(size) steps.
- hot points: the points whose gamma depends on the previous move or the ko:
  the 8 points around the previous move (contiguity), the liberties of the
  mover's strings in a new atari and of the opponent strings in atari next to
  them (extension, capture 1), the points next to the previous move's string
  that capture (capture 2 and 3; found among the points of ``alist``), and
  the ko point. Before each draw their gammas are computed in full
  (``policy_gamma``; for a point with no string in atari next to it, the base
  gamma times contiguity) and overlaid on the base ones (``rowdelta``
  corrects the row sums); after it the overlay is dropped.
- ``lev[loc]``: the pattern3x3 level BLACK sees at an empty point (WHITE's is
  ``swap[lev]``), kept with its base gammas; ``alist``: the empty points
  next to a string in atari (``atari[lev] != 0``), an indexed set kept with
  them, so no string is walked to find the capture 2 and 3 points.
- incremental update: after a move only these base gammas are recomputed,
  for both colours: the 3x3 neighbourhoods of the move and of every captured
  stone (colours, eyes), and the liberties of the strings whose liberty count
  changed while at most 2 (atari status, legality and self-atari depend on
  them): the move's string (when it or a string it joined had <= 2), the
  opponent strings next to the move left with <= 2, and, after a capture, our
  strings next to the captured stones. These are the only points whose 3x3
  code can change, so ``lev`` and ``alist`` stay exact too. Row sums of the
  touched rows are then summed again from scratch, so they never drift.
- check: ``pattern_playout(..., check=True)`` compares, before every draw,
  every point's overlaid gamma with ``policy_gamma``, both colours' base
  gammas with a recomputation, ``lev`` and ``alist`` with the board's codes
  and the row sums with fresh sums, counting mismatches in ``errors[0]`` (the
  tests' incremental == full).

Games are seeded and end as uniform playouts do (playout.py: two passes in a
row or max_moves; a side with no move of positive gamma passes; superko is not
checked), scored by playout.area_score.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from gomove.board.board import (
    BLACK,
    EMPTY,
    KO,
    LAST,
    SIZE,
    WALL,
    WHITE,
    Board,
    W,
    copy_board,
    is_legal,
    play,
)
from gomove.board.coords import NO_MOVE, PASS
from gomove.features.light import (
    DIAG_BASE,
    S_EMPTY,
    S_OFF,
    S_OPP_ATARI,
    S_OWN,
    S_OWN_ATARI,
    levels_at,
    light_code,
    self_atari_at,
)
from gomove.play.playout import area_score, is_eye, next_random, restore_board, seed_state

_UNIT = 1.0 / 9007199254740992.0  # 2**-53


class PolicyTables(NamedTuple):
    """A PatternPolicy as the kernels read it (built by gomove.play.policy).

    ``level`` maps a raw 3x3 code to its pattern3x3 level (light.pattern_levels;
    a 663 KB table, where per-code gammas would take 2.6 MB and miss the
    cache). Indexed by that level: ``play`` its gamma, 0 where the move is
    illegal up to ko or fills an own eye (``code_flags``); ``base`` play
    times the capture:other gamma where the code shows a capture;
    ``sa_check`` the code may be a self-atari; ``swap`` the level the other
    colour sees; ``atari`` which orthogonal strings are in atari, as bits
    1 (WHITE's: BLACK captures) and 2 (BLACK's: WHITE captures), so ``atari[k]
    & color`` is a capture for color, and 0 neither (no capture, no extension).
    The gammas of the other groups by level, 0 (absent) = 1.
    """

    level: np.ndarray  # uint16[N_RAW]
    play: np.ndarray  # float64[K + 1]
    base: np.ndarray  # float64[K + 1]
    sa_check: np.ndarray  # bool[K + 1]
    swap: np.ndarray  # int32[K + 1]
    capture: np.ndarray  # float64[5]
    extension: np.ndarray  # float64[2]
    self_atari: np.ndarray  # float64[2]
    contiguity: np.ndarray  # float64[2]
    atari: np.ndarray  # uint8[K + 1]


class Scratch(NamedTuple):
    """Per-call working arrays of the playout kernels (see the module docstring)."""

    gam: np.ndarray  # float64[2, L] base gammas by colour - 1
    rows: np.ndarray  # float64[2, size] their row sums
    rowdelta: np.ndarray  # float64[size] hot overlay minus base, per row
    hotval: np.ndarray  # float64[L] the full gamma of a hot point
    mark: np.ndarray  # int64[L] generation marks of listed points
    smark: np.ndarray  # int64[L] generation marks of visited strings (by head)
    rowmark: np.ndarray  # int64[size] generation marks of dirty rows
    pts: np.ndarray  # int64[L] the listed points
    rowlist: np.ndarray  # int64[size] the dirty rows
    caps: np.ndarray  # int64[L] stones captured by the move
    gen: np.ndarray  # int64[1] the generation counter
    lev: np.ndarray  # int32[L] the pattern3x3 level BLACK sees at an empty point, 0 elsewhere
    rowof: np.ndarray  # int64[L] the board row of a point (no divisions in the loop)
    alist: np.ndarray  # int64[L] the empty points next to a string in atari (atari[lev] != 0)
    apos: np.ndarray  # int64[L] a point's index in alist, -1 when not listed
    acount: np.ndarray  # int64[1] the length of alist


@njit(cache=True)
def new_scratch(b: Board) -> Scratch:
    n = b.color.shape[0]
    size = b.info[SIZE]
    return Scratch(
        np.zeros((2, n), np.float64),
        np.zeros((2, size), np.float64),
        np.zeros(size, np.float64),
        np.zeros(n, np.float64),
        np.zeros(n, np.int64),
        np.zeros(n, np.int64),
        np.zeros(size, np.int64),
        np.zeros(n, np.int64),
        np.zeros(size, np.int64),
        np.zeros(n, np.int64),
        np.zeros(1, np.int64),
        np.zeros(n, np.int32),
        np.arange(n, dtype=np.int64) // b.info[W] - 1,
        np.zeros(n, np.int64),
        np.full(n, -1, np.int64),
        np.zeros(1, np.int64),
    )


@njit(cache=True)
def code_flags(b: Board, digits: np.ndarray, legal_out: np.ndarray, eye_out: np.ndarray) -> None:
    """board.is_legal (up to ko) and playout.is_eye of a move for BLACK, per 3x3 code.

    b: an empty 3x3 board; digits: int64[N, 8] (light.code_digits) of codes a
    board can show. Each code's neighbourhood is set on b around the point
    whose off-board neighbours it has (a corner, an edge or the centre), each
    stone a string of its own with one liberty (in atari) or two, and the two
    board rules are asked.
    """
    w = b.info[W]
    # light.py's digit order: orthogonal as board.neighbours, then diagonal
    offsets = np.array([-w, -1, 1, w, -w - 1, -w + 1, w - 1, w + 1])
    for i in range(digits.shape[0]):
        d = digits[i]
        row = 0 if d[0] == S_OFF else (2 if d[3] == S_OFF else 1)
        col = 0 if d[1] == S_OFF else (2 if d[2] == S_OFF else 1)
        loc = (row + 1) * w + col + 1
        for r in range(3):
            for c in range(3):
                b.color[(r + 1) * w + c + 1] = EMPTY
        for k in range(8):
            st = d[k]
            p = loc + offsets[k]
            if st == S_OFF:
                continue
            if st == S_EMPTY:
                b.color[p] = EMPTY
                continue
            b.color[p] = BLACK if st == S_OWN or st == S_OWN_ATARI else WHITE
            b.head[p] = p
            b.nxt[p] = p
            b.nstones[p] = 1
            b.libs[p] = 1 if st == S_OWN_ATARI or st == S_OPP_ATARI else 2
        b.info[KO] = -1
        legal_out[i] = is_legal(b, loc, BLACK)
        eye_out[i] = is_eye(b, loc, BLACK)


# ---- gammas -------------------------------------------------------------------------
# As in features/light.py, the kernels the move loop calls take arrays, not the
# Board / PolicyTables / Scratch tuples: numba counts a reference at every
# read of a tuple's field, which cost ten times the work itself.


@njit(cache=True, inline="always")
def gamma_at(
    b, bc, head, nxt, libs, w, loc, color, last, ko, lvl, play_g, cap_g, ext_g, sa_g, cont_g
):
    """policy_gamma on unpacked arrays."""
    if bc[loc] != EMPTY or loc == ko:
        return 0.0
    code, cap, ext, sa, cont = levels_at(b, bc, head, nxt, libs, w, loc, color, last)
    g = play_g[lvl[code]]
    if g == 0.0:
        return 0.0
    return g * cap_g[cap] * ext_g[ext] * sa_g[sa] * cont_g[cont]


@njit(cache=True)
def policy_gamma(b: Board, loc: int, color: int, last: int, ko: int, t: PolicyTables) -> float:
    """The gamma of loc for color to move after last, ko the point color may not take."""
    return gamma_at(
        b, b.color, b.head, b.nxt, b.libs, b.info[W], loc, color, last, ko,
        t.level, t.play, t.capture, t.extension, t.self_atari, t.contiguity,
    )  # fmt: skip


@njit(cache=True, inline="always")
def base_at(bc, head, nxt, libs, w, loc, color, k, base_g, sa_check, sa_g):
    """policy_gamma(b, loc, color, NO_MOVE, -1, t) of an empty point with pattern level k."""
    g = base_g[k]
    if g != 0.0 and sa_check[k] and self_atari_at(bc, head, nxt, libs, w, loc, color):
        return g * sa_g[1]
    return g


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
        np.int64(bc[n0]) + 3 * _atari_bit(bc, head, libs, n0)
        + 6 * (np.int64(bc[n1]) + 3 * _atari_bit(bc, head, libs, n1))
        + 36 * (np.int64(bc[n2]) + 3 * _atari_bit(bc, head, libs, n2))
        + 216 * (np.int64(bc[n3]) + 3 * _atari_bit(bc, head, libs, n3))
    )  # fmt: skip
    diag = (
        np.int64(bc[n0 - 1]) + 4 * np.int64(bc[n0 + 1])
        + 16 * np.int64(bc[n3 - 1]) + 64 * np.int64(bc[n3 + 1])
    )  # fmt: skip
    return orth + DIAG_BASE * diag


@njit(cache=True, inline="always")
def set_base_at(
    bc, head, nxt, libs, w, loc, gam, lev, lvl, base_g, sa_check, swap, sa_g,
    atari, alist, apos, acount,
):  # fmt: skip
    """Both colours' base gammas of loc into gam[:, loc], BLACK's level into lev[loc],
    and loc into or out of alist."""
    was = atari[lev[loc]] != 0
    if bc[loc] == EMPTY:
        k = np.int64(lvl[code_black(bc, head, libs, w, loc)])
        lev[loc] = k
        gam[0, loc] = base_at(bc, head, nxt, libs, w, loc, BLACK, k, base_g, sa_check, sa_g)
        gam[1, loc] = base_at(bc, head, nxt, libs, w, loc, WHITE, swap[k], base_g, sa_check, sa_g)
    else:
        k = 0
        lev[loc] = 0
        gam[0, loc] = 0.0
        gam[1, loc] = 0.0
    now = atari[k] != 0
    if now != was:
        if now:
            apos[loc] = acount[0]
            alist[acount[0]] = loc
            acount[0] += 1
        else:
            i = apos[loc]
            acount[0] -= 1
            last = alist[acount[0]]
            alist[i] = last
            apos[last] = i
            apos[loc] = -1


@njit(cache=True, inline="always")
def _row_sum(g, r, size, w):
    """The sum of g over board row r, in 4 interleaved partial sums (the check's sums too)."""
    start = (r + 1) * w + 1
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    end4 = start + (size & ~3)
    for p in range(start, end4, 4):
        a0 += g[p]
        a1 += g[p + 1]
        a2 += g[p + 2]
        a3 += g[p + 3]
    for p in range(end4, start + size):
        a0 += g[p]
    return (a0 + a1) + (a2 + a3)


@njit(cache=True)
def init_gammas(b: Board, t: PolicyTables, s: Scratch) -> None:
    """Base gammas and row sums of every point, from scratch."""
    size = b.info[SIZE]
    w = b.info[W]
    bc, head, nxt, libs, gam, lev = b.color, b.head, b.nxt, b.libs, s.gam, s.lev
    lvl, base_g, sa_check, swap, sa_g = t.level, t.base, t.sa_check, t.swap, t.self_atari
    atari, alist, apos, acount = t.atari, s.alist, s.apos, s.acount
    gam[:] = 0.0
    lev[:] = 0
    apos[:] = -1
    acount[0] = 0
    for r in range(size):
        for c in range(size):
            loc = (r + 1) * w + c + 1
            set_base_at(
                bc, head, nxt, libs, w, loc, gam, lev, lvl, base_g, sa_check, swap, sa_g,
                atari, alist, apos, acount,
            )  # fmt: skip
    for r in range(size):
        s.rows[0, r] = _row_sum(gam[0], r, size, w)
        s.rows[1, r] = _row_sum(gam[1], r, size, w)
        s.rowdelta[r] = 0.0


# ---- point lists ----------------------------------------------------------------------


@njit(cache=True, inline="always")
def _adjacent(bc, head, w, loc, color):
    """board.adjacent_strings on unpacked arrays."""
    h0 = -1
    h1 = -1
    h2 = -1
    h3 = -1
    for nb in (loc - w, loc - 1, loc + 1, loc + w):
        if bc[nb] == color:
            hh = np.int64(head[nb])
            if hh == h0 or hh == h1 or hh == h2:
                continue
            if h0 == -1:
                h0 = hh
            elif h1 == -1:
                h1 = hh
            elif h2 == -1:
                h2 = hh
            else:
                h3 = hh
    return h0, h1, h2, h3


@njit(cache=True, inline="always")
def _add(mark, pts, n, loc, gen):
    if mark[loc] != gen:
        mark[loc] = gen
        pts[n] = loc
        n += 1
    return n


@njit(cache=True, inline="always")
def _add_libs(bc, nxt, w, mark, smark, pts, n, h, gen):
    """Add the liberties of string h (once per generation)."""
    if smark[h] == gen:
        return n
    smark[h] = gen
    st = h
    while True:
        for nb in (st - w, st - 1, st + 1, st + w):
            if bc[nb] == EMPTY:
                n = _add(mark, pts, n, nb, gen)
        st = nxt[st]
        if st == h:
            break
    return n


@njit(cache=True, inline="always")
def collect_hot(
    bc, head, nxt, libs, w, color, last, ko, mark, smark, pts, gen, lev, atari, alist, na
):  # fmt: skip
    """List the hot points (module docstring) in pts; return (how many, how many of
    them, listed first, are contiguous to the previous move)."""
    n = 0
    if last >= 0:
        for d in (-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1):
            if bc[last + d] == EMPTY:
                n = _add(mark, pts, n, last + d, gen)  # contiguity
    ncont = n
    if ko >= 0 and bc[ko] == EMPTY:
        n = _add(mark, pts, n, ko, gen)
    if last < 0:
        return n, ncont
    opp = 3 - color
    for h in _adjacent(bc, head, w, last, color):
        if h == -1 or libs[h] != 1:
            continue  # not a string in a new atari
        st = h
        while True:
            for nb in (st - w, st - 1, st + 1, st + w):
                if bc[nb] == EMPTY:
                    n = _add(mark, pts, n, nb, gen)  # extension
                elif bc[nb] == opp and libs[head[nb]] == 1:
                    n = _add_libs(bc, nxt, w, mark, smark, pts, n, head[nb], gen)  # capture 1
            st = nxt[st]
            if st == h:
                break
    # capture 2 and 3: the points next to the previous move's string that capture
    # (an opponent string in atari next to them, the string itself when in atari)
    if bc[last] == opp:
        lh = head[last]
        for i in range(na):
            x = alist[i]
            if mark[x] == gen or (atari[lev[x]] & color) == 0:
                continue
            for nb in (x - w, x - 1, x + 1, x + w):
                if bc[nb] == opp and head[nb] == lh:
                    n = _add(mark, pts, n, x, gen)
                    break
    return n, ncont


# ---- one move -------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _uniform(rng):
    return float(next_random(rng) >> np.uint64(11)) * _UNIT


@njit(cache=True, inline="always")
def draw(size, w, ci, gam, rows, rowdelta, hotval, mark, gen, rng):
    """A point drawn in proportion to its overlaid gamma (hot points: mark == gen), or PASS."""
    t0 = 0.0
    t1 = 0.0
    for r in range(0, size - 1, 2):
        t0 += rows[ci, r] + rowdelta[r]
        t1 += rows[ci, r + 1] + rowdelta[r + 1]
    if size & 1:
        t0 += rows[ci, size - 1] + rowdelta[size - 1]
    total = t0 + t1
    if not total > 0.0:
        return PASS
    x = _uniform(rng) * total
    fallback = PASS
    for r in range(size):
        rs = rows[ci, r] + rowdelta[r]
        if x >= rs:
            x -= rs
            continue
        start = (r + 1) * w + 1
        for p in range(start, start + size):
            g = hotval[p] if mark[p] == gen else gam[ci, p]
            if g > 0.0:
                fallback = p
                x -= g
                if x < 0.0:
                    return p
        x = 0.0  # rounding left x past the row's end: take the next positive point
    if fallback == PASS:  # rounding again: any point with a positive gamma
        for r in range(size):
            start = (r + 1) * w + 1
            for p in range(start, start + size):
                if (hotval[p] if mark[p] == gen else gam[ci, p]) > 0.0:
                    fallback = p
    return fallback


@njit(cache=True, inline="always")
def play_and_update(
    b, bc, head, nxt, libs, w, size, move, color, s_gam, s_rows, mark, smark, pts,
    rowmark, rowlist, caps, lev, rowof, lvl, base_g, sa_check, swap, sa_g, gen,
    atari, alist, apos, acount,
):  # fmt: skip
    """Play move (a point, legal) for color and update the base gammas and row sums."""
    opp = 3 - color
    joined_short = False
    for h in _adjacent(bc, head, w, move, color):
        if h != -1 and libs[h] <= 2:
            joined_short = True
    ncap = 0
    for h in _adjacent(bc, head, w, move, opp):
        if h != -1 and libs[h] == 1:
            st = h
            while True:
                caps[ncap] = st
                ncap += 1
                st = nxt[st]
                if st == h:
                    break
    play(b, move, color)
    n = 0
    for k in range(-1, ncap):
        c = move if k < 0 else caps[k]
        for p in (c - w - 1, c - w, c - w + 1, c - 1, c, c + 1, c + w - 1, c + w, c + w + 1):
            if bc[p] != WALL:
                n = _add(mark, pts, n, p, gen)
    mh = head[move]
    if joined_short or libs[mh] <= 2:
        n = _add_libs(bc, nxt, w, mark, smark, pts, n, mh, gen)
    for h in _adjacent(bc, head, w, move, opp):
        if h != -1 and libs[h] <= 2:
            n = _add_libs(bc, nxt, w, mark, smark, pts, n, h, gen)
    for k in range(ncap):
        for h in _adjacent(bc, head, w, caps[k], color):
            if h != -1:
                n = _add_libs(bc, nxt, w, mark, smark, pts, n, h, gen)
    nrows = 0
    for i in range(n):
        p = pts[i]
        set_base_at(
            bc, head, nxt, libs, w, p, s_gam, lev, lvl, base_g, sa_check, swap, sa_g,
            atari, alist, apos, acount,
        )  # fmt: skip
        r = rowof[p]
        if rowmark[r] != gen:
            rowmark[r] = gen
            rowlist[nrows] = r
            nrows += 1
    for i in range(nrows):
        r = rowlist[i]
        s_rows[0, r] = _row_sum(s_gam[0], r, size, w)
        s_rows[1, r] = _row_sum(s_gam[1], r, size, w)


@njit(cache=True)
def check_gammas(b: Board, color: int, last: int, ko: int, t: PolicyTables, s: Scratch) -> int:
    """Mismatches of the incremental state against a full recomputation (before a draw;
    the hot points are those marked with the current generation s.gen[0])."""
    size = b.info[SIZE]
    w = b.info[W]
    gen = s.gen[0]
    ci = color - 1
    bad = 0
    listed = 0
    for r in range(size):
        for c in range(size):
            p = (r + 1) * w + c + 1
            g = s.hotval[p] if s.mark[p] == gen else s.gam[ci, p]
            if g != policy_gamma(b, p, color, last, ko, t):
                bad += 1
            for x in range(2):
                if s.gam[x, p] != policy_gamma(b, p, x + 1, NO_MOVE, -1, t):
                    bad += 1
            if b.color[p] == EMPTY and s.lev[p] != t.level[light_code(b, p, BLACK)]:
                bad += 1
            if (s.apos[p] >= 0) != (b.color[p] == EMPTY and t.atari[s.lev[p]] != 0):
                bad += 1
            elif s.apos[p] >= 0:
                listed += 1
                if s.alist[s.apos[p]] != p:
                    bad += 1
        for x in range(2):
            if s.rows[x, r] != _row_sum(s.gam[x], r, size, w):
                bad += 1
    if listed != s.acount[0]:
        bad += 1
    return bad


# ---- whole playouts -------------------------------------------------------------------


@njit(cache=True, _nrt=False)
def play_moves(
    b: Board,
    color: int,
    rng: np.ndarray,
    max_moves: int,
    t: PolicyTables,
    s: Scratch,
    moves_out: np.ndarray,
    check: bool,
    errors: np.ndarray,
) -> int:
    """The move loop of pattern_playout; returns the number of moves played.

    Compiled without numba's reference counting (it allocates nothing, and
    its caller holds every array): counting references at every read of a
    Board or table field cost five times the rest of the work.
    """
    size = b.info[SIZE]
    w = b.info[W]
    bc, head, nxt, libs = b.color, b.head, b.nxt, b.libs
    gam, rows, rowdelta, hotval = s.gam, s.rows, s.rowdelta, s.hotval
    mark, smark, rowmark, pts, rowlist, caps = s.mark, s.smark, s.rowmark, s.pts, s.rowlist, s.caps
    lev, rowof = s.lev, s.rowof
    lvl, play_g, base_g, sa_check, swap = t.level, t.play, t.base, t.sa_check, t.swap
    cap_g, ext_g, sa_g, cont_g, atari = t.capture, t.extension, t.self_atari, t.contiguity, t.atari
    alist, apos, acount = s.alist, s.apos, s.acount
    gen = s.gen[0]
    passes = 0
    n_moves = 0
    while n_moves < max_moves and passes < 2:
        # overlay the hot points' full gammas, draw, drop the overlay
        ci = color - 1
        last = b.info[LAST]
        ko = b.info[KO]
        gen += 1
        nh, ncont = collect_hot(
            bc, head, nxt, libs, w, color, last, ko, mark, smark, pts, gen,
            lev, atari, alist, acount[0],
        )  # fmt: skip
        for i in range(nh):
            p = pts[i]
            if p != ko and atari[lev[p]] == 0:
                # no string in atari next to p: only contiguity differs from the
                # base gamma, and
                # multiplying it last rounds as gamma_at does
                v = gam[ci, p]
                if i < ncont:
                    v *= cont_g[1]
            else:
                v = gamma_at(
                    b, bc, head, nxt, libs, w, p, color, last, ko,
                    lvl, play_g, cap_g, ext_g, sa_g, cont_g,
                )  # fmt: skip
            hotval[p] = v
            rowdelta[rowof[p]] += v - gam[ci, p]
        if check:
            s.gen[0] = gen
            errors[0] += check_gammas(b, color, last, ko, t, s)
        move = draw(size, w, ci, gam, rows, rowdelta, hotval, mark, gen, rng)
        for i in range(nh):
            rowdelta[rowof[pts[i]]] = 0.0
        if move == PASS:
            passes += 1
            play(b, PASS, color)
        else:
            passes = 0
            gen += 1
            play_and_update(
                b, bc, head, nxt, libs, w, size, move, color, gam, rows, mark, smark, pts,
                rowmark, rowlist, caps, lev, rowof, lvl, base_g, sa_check, swap, sa_g, gen,
                atari, alist, apos, acount,
            )  # fmt: skip
        if n_moves < moves_out.shape[0]:
            moves_out[n_moves] = move
        n_moves += 1
        color = 3 - color
    s.gen[0] = gen
    return n_moves


@njit(cache=True)
def pattern_playout(
    b: Board,
    color: int,
    komi: float,
    rng: np.ndarray,
    max_moves: int,
    t: PolicyTables,
    s: Scratch,
    owner_out: np.ndarray,
    moves_out: np.ndarray,
    check: bool,
    errors: np.ndarray,
    ready: bool,
) -> float:
    """Play a pattern-policy game on b (modified) to the end; return its area score.

    As playout.playout, plus: t the policy, s scratch (new_scratch(b)), ready
    when s already holds b's base gammas (else they are computed), check and
    errors (int64[1]) for the full-recomputation test of the module docstring.
    """
    if not ready:
        init_gammas(b, t, s)
    play_moves(b, color, rng, max_moves, t, s, moves_out, check, errors)
    return area_score(b, komi, owner_out)


@njit(cache=True)
def pattern_playouts(
    b: Board,
    color: int,
    komi: float,
    n: int,
    seed: np.uint64,
    max_moves: int,
    t: PolicyTables,
    owner_counts_out: np.ndarray,
) -> np.ndarray:
    """n pattern-policy playouts from b (left unchanged); as playout.playouts."""
    size = b.info[SIZE]
    scratch = copy_board(b)
    s = new_scratch(b)
    init_gammas(b, t, s)
    gam0 = s.gam.copy()
    rows0 = s.rows.copy()
    lev0 = s.lev.copy()
    alist0 = s.alist.copy()
    apos0 = s.apos.copy()
    acount0 = s.acount[0]
    owner = np.zeros(size * size, np.int8)
    rng = np.zeros(1, np.uint64)
    no_moves = np.zeros(0, np.int32)
    errors = np.zeros(1, np.int64)
    scores = np.empty(n, np.float64)
    for g in range(n):
        restore_board(scratch, b)
        s.gam[:] = gam0
        s.rows[:] = rows0
        s.lev[:] = lev0
        s.alist[:] = alist0
        s.apos[:] = apos0
        s.acount[0] = acount0
        rng[0] = seed_state(seed, g)
        scores[g] = pattern_playout(
            scratch, color, komi, rng, max_moves, t, s, owner, no_moves, False, errors, True
        )
        for pt in range(size * size):
            owner_counts_out[owner[pt], pt] += 1
    return scores
