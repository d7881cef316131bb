"""Pattern-policy playouts (Coulom 2007, section 4.1): moves drawn in proportion to their gamma.

Terms:
- gamma of a point for the player to move: the product of the gammas of its
  light feature levels (gomove/features/light.py: 3x3 code, capture,
  extension, self-atari, contiguity), 0 for an illegal move or one that fills
  the mover's own eye (playout.is_eye). ``policy_gamma`` computes it from
  ``light_levels`` alone: the reference the fast path must equal.
- base gamma: what the 3x3 code alone says, for both colours: the gamma the
  point would have with no previous move, no ko and no self-atari test
  (``t.base`` of its pattern3x3 level). ``gam[x - 1, loc]`` holds it for
  colour x, ``rows[x - 1, r]`` its sum over board row r (a move is drawn in
  O(size) steps), ``lev[loc]`` the level BLACK sees at an empty point
  (WHITE's is ``swap[lev]``), and ``alist`` the empty points next to a string
  in atari (``atari[lev] != 0``, an indexed set), so no string is walked to
  find the captures of the hot points.
- incremental update: a point's code changes only when a point of its 3x3
  neighbourhood changes colour (the move, the captured stones) or an
  orthogonal string's atari status changes; a string's only empty
  neighbours in atari are its one liberty. So after a move only these points
  are recomputed: the 3x3 neighbourhoods of the move and of the captured
  stones, the liberty of each string the move put in atari (its own string
  or an opponent's next to it), and the liberties of our strings in atari
  that the capture freed. A point whose level did not change is left alone;
  a changed one moves its row sums by the difference.
- hot points: the points whose gamma depends on the previous move or the ko
  (the 8 around the previous move, the liberties of the mover's strings in a
  new atari and of the opponent strings in atari next to them, the capture
  points next to the previous move's string, the ko point). Before each draw
  their full gamma v, self-atari aside (``proposal_gamma``), is computed.
- draw: exact, by a mixture and rejection, so the rows never hold the hot
  overlay. A point is proposed with weight max(v, base): from the rows
  (weight base) or from the hot list (weight v - base where v > base), and
  accepted with probability v / max(v, base) times the self-atari factor
  s / max(1, g_sa), where s is the self-atari gamma g_sa if the move is a
  self-atari (tested only for the proposed point) and 1 if not. Accepted
  moves are thus drawn in proportion to policy_gamma. After
  ``MAX_TRIES`` rejections in a row the move is drawn by a full scan of
  ``policy_gamma`` (``draw_exact``), which is exact as well.
- check: ``pattern_playout(..., check=True)`` compares, before every draw,
  every point's proposal weight times its acceptance with ``policy_gamma``,
  both colours' base gammas with their codes, ``lev`` and ``alist`` with the
  board's codes, and the row sums (kept by differences) with fresh sums,
  counting mismatches in ``errors[0]`` (the tests' incremental == full).

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
    WHITE,
    Board,
    W,
    adjacent_heads,
    copy_board,
    is_legal,
    play_arrays,
)
from gomove.board.coords import NO_MOVE, PASS
from gomove.board.playout import area_score, is_eye, next_random, restore_board, seed_state
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

_UNIT = 1.0 / 9007199254740992.0  # 2**-53
MAX_TRIES = 64  # rejections in a row before a move is drawn by a full scan


class PolicyTables(NamedTuple):
    """A PatternPolicy as the kernels read it (built by gomove.play.policy).

    ``level`` maps a raw 3x3 code to its pattern3x3 level (light.pattern_levels;
    a 663 KB table, where per-code gammas would take 2.6 MB and miss the
    cache). Indexed by that level: ``play`` its gamma, 0 where the move is
    illegal up to ko or fills an own eye (``code_flags``); ``sa_sure`` the
    move is a self-atari whatever the board (no capture, one empty orthogonal
    point, no own string out of atari next to it), ``sa_maybe`` it may be one
    (no capture, at most one empty orthogonal point, an own string out of
    atari next to it: light.self_atari_at decides); ``base`` play times the
    capture:other gamma where the code shows a capture, times the self-atari
    gamma where sa_sure (the base gamma); ``swap`` the level the other
    colour sees; ``atari`` which orthogonal strings are in atari, as bits
    1 (WHITE's: BLACK captures) and 2 (BLACK's: WHITE captures), so ``atari[k]
    & color`` is a capture for color, and 0 neither (no capture, no extension).
    The gammas of the other groups by level, 0 (absent) = 1.
    """

    level: np.ndarray  # uint16[N_RAW]
    play: np.ndarray  # float64[K + 1]
    base: np.ndarray  # float64[K + 1]
    sa_sure: np.ndarray  # bool[K + 1]
    sa_maybe: np.ndarray  # bool[K + 1]
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
    lev: np.ndarray  # int32[L] the pattern3x3 level BLACK sees at an empty point, 0 elsewhere
    rowof: np.ndarray  # int64[L] the board row of a point (no divisions in the loop)
    alist: np.ndarray  # int64[L] the empty points next to a string in atari (atari[lev] != 0)
    apos: np.ndarray  # int64[L] a point's index in alist, -1 when not listed
    acount: np.ndarray  # int64[1] the length of alist
    pts: np.ndarray  # int64[L] the hot points
    hotval: np.ndarray  # float64[L] v of a hot point (by point)
    extra: np.ndarray  # float64[L] max(v - base, 0) of the i-th hot point
    mark: np.ndarray  # int64[L] generation marks of listed points
    hcap: np.ndarray  # int64[L] a hot point's capture level from the previous move (9: none)
    hext: np.ndarray  # int64[L] 1 when a hot point extends a string in a new atari
    heads: np.ndarray  # int64[L] strings a move captures, then our strings it frees
    gen: np.ndarray  # int64[1] the generation counter


@njit(cache=True)
def new_scratch(b: Board) -> Scratch:
    n = b.color.shape[0]
    size = b.info[SIZE]
    return Scratch(
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
        np.zeros(n, np.int64),
        np.zeros(n, np.int64),
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
    bc,
    head,
    nxt,
    libs,
    w,
    loc,
    color,
    last,
    ko,
    lvl,
    play_g,
    cap_g,
    ext_g,
    sa_g,
    cont_g,
    with_sa,
):
    """policy_gamma on unpacked arrays; without the self-atari factor unless with_sa."""
    if bc[loc] != EMPTY or loc == ko:
        return 0.0
    code, cap, ext, sa, cont = levels_at(bc, head, nxt, libs, w, loc, color, last, with_sa)
    g = play_g[lvl[code]]
    if g == 0.0:
        return 0.0
    return g * cap_g[cap] * ext_g[ext] * sa_g[sa] * cont_g[cont]


@njit(cache=True)
def policy_gamma(b: Board, loc: int, color: int, last: int, ko: int, t: PolicyTables) -> float:
    """The gamma of loc for color to move after last, ko the point color may not take."""
    return gamma_at(
        b.color, b.head, b.nxt, b.libs, b.info[W], loc, color, last, ko,
        t.level, t.play, t.capture, t.extension, t.self_atari, t.contiguity, True,
    )  # fmt: skip


@njit(cache=True)
def proposal_gamma(b: Board, loc: int, color: int, last: int, ko: int, t: PolicyTables) -> float:
    """policy_gamma without the self-atari factor where only the board can tell
    (sa_maybe): v of a hot point, and with last = NO_MOVE and ko = -1 the base gamma."""
    maybe = b.color[loc] == EMPTY and t.sa_maybe[t.level[light_code(b, loc, color)]]
    return gamma_at(
        b.color, b.head, b.nxt, b.libs, b.info[W], loc, color, last, ko,
        t.level, t.play, t.capture, t.extension, t.self_atari, t.contiguity, not maybe,
    )  # fmt: skip


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
def update_state(s: Scratch, t: PolicyTables):
    """What set_base reads and writes, in one tuple (see set_base)."""
    return (
        s.gam,
        s.rows,
        s.rowof,
        s.lev,
        s.alist,
        s.apos,
        s.acount,
        t.level,
        t.base,
        t.swap,
        t.atari,
    )


@njit(cache=True, inline="always")
def set_base(bc, head, libs, w, loc, state):
    """Recompute loc's level (BLACK's, 0 off empty points); when it changed, its base
    gammas, their row sums, and its place in alist.

    state: (gam, rows, rowof, lev, alist, apos, acount) of the scratch, then
    (level, base, swap, atari) of the tables (``update_state``).
    """
    gam, rows, rowof, lev, alist, apos, acount, lvl, base_g, swap, atari = state
    k = np.int64(lvl[code_black(bc, head, libs, w, loc)]) if bc[loc] == EMPTY else 0
    old = np.int64(lev[loc])
    if k == old:
        return
    lev[loc] = k
    g0 = base_g[k]
    g1 = base_g[swap[k]]
    r = rowof[loc]
    d0 = g0 - gam[0, loc]
    d1 = g1 - gam[1, loc]
    rows[0, r] += d0
    rows[1, r] += d1
    gam[0, loc] = g0
    gam[1, loc] = g1
    now = atari[k] != 0
    if now != (atari[old] != 0):
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
def _row_sum(g, r, size, w):
    """The sum of g over board row r."""
    start = (r + 1) * w + 1
    a = 0.0
    for p in range(start, start + size):
        a += g[p]
    return a


@njit(cache=True)
def init_gammas(b: Board, t: PolicyTables, s: Scratch) -> None:
    """Base gammas, levels, alist and row sums of every point, from scratch."""
    size = b.info[SIZE]
    w = b.info[W]
    s.gam[:] = 0.0
    s.rows[:] = 0.0
    s.lev[:] = 0
    s.apos[:] = -1
    s.acount[0] = 0
    state = update_state(s, t)
    for r in range(size):
        for c in range(size):
            set_base(b.color, b.head, b.libs, w, (r + 1) * w + c + 1, state)
    for r in range(size):
        for x in range(2):
            s.rows[x, r] = _row_sum(s.gam[x], r, size, w)


# ---- one move -------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _liberty(bc, nxt, w, h):
    """A liberty of string h (the first found; its only one when in atari)."""
    st = h
    while True:
        for nb in (st - w, st - 1, st + 1, st + w):
            if bc[nb] == EMPTY:
                return nb
        st = nxt[st]
        if st == h:
            return -1


@njit(cache=True, inline="always")
def play_and_update(
    bc, head, nxt, libs, nstones, bmark, info, zhash, hist, w, move, color, state, heads
):
    """Play move (a point, legal) for color and update the base gammas (module docstring)."""
    opp = 3 - color
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
    play_arrays(bc, head, nxt, libs, nstones, bmark, info, zhash, hist, move, color)
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
            set_base(bc, head, libs, w, p, state)
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
                    set_base(bc, head, libs, w, p, state)
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
                    set_base(bc, head, libs, w, p, state)
            st = nxt[st]
            if st == h:
                break
    # strings the move put in atari: its own, and the opponent's next to it
    mh = head[move]
    if libs[mh] == 1:
        x = _liberty(bc, nxt, w, mh)
        set_base(bc, head, libs, w, x, state)
    for h in adjacent_heads(bc, head, w, move, opp):
        if h != -1 and libs[h] == 1:
            x = _liberty(bc, nxt, w, h)
            set_base(bc, head, libs, w, x, state)


# ---- hot points and the draw ----------------------------------------------------------


@njit(cache=True, inline="always")
def _add(mark, pts, n, loc, gen, hcap, hext):
    """List loc once per generation, its flags cleared: no capture level (9), no extension."""
    if mark[loc] != gen:
        mark[loc] = gen
        pts[n] = loc
        n += 1
        hcap[loc] = 9
        hext[loc] = 0
    return n


@njit(cache=True, inline="always")
def collect_hot(
    bc, head, nxt, libs, w, color, last, ko, mark, pts, gen, lev, atari, alist, na, hcap, hext
):
    """List the hot points (module docstring) in pts, with what the previous move
    makes of them: hext[p] 1 for an extension, hcap[p] the capture level 1, 2
    or 3 (9: none of these); return (how many, how many of them, listed first,
    are contiguous to the previous move)."""
    n = 0
    if last >= 0:
        for d in (-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1):
            p = last + d
            if bc[p] == EMPTY:  # contiguity: 8 distinct points, listed first
                mark[p] = gen
                pts[n] = p
                n += 1
                hcap[p] = 9
                hext[p] = 0
    ncont = n
    if ko >= 0 and bc[ko] == EMPTY:
        n = _add(mark, pts, n, ko, gen, hcap, hext)
    if last < 0:
        return n, ncont
    opp = 3 - color
    for h in adjacent_heads(bc, head, w, last, color):
        if h == -1 or libs[h] != 1:
            continue  # not a string in a new atari
        st = h
        while True:
            for nb in (st - w, st - 1, st + 1, st + w):
                if bc[nb] == EMPTY:
                    n = _add(mark, pts, n, nb, gen, hcap, hext)
                    hext[nb] = 1  # extension
                elif bc[nb] == opp and libs[head[nb]] == 1:
                    x = _liberty(bc, nxt, w, head[nb])
                    n = _add(mark, pts, n, x, gen, hcap, hext)
                    hcap[x] = 1  # capture 1: the string next to ours in atari
            st = nxt[st]
            if st == h:
                break
    # capture 2 and 3: the points next to the previous move's string that capture
    # (2: the string itself, in atari; 3: another string)
    if bc[last] == opp:
        lh = head[last]
        level = 2 if libs[lh] == 1 else 3
        for i in range(na):
            x = alist[i]
            if (atari[lev[x]] & color) == 0:
                continue
            for nb in (x - w, x - 1, x + 1, x + w):
                if bc[nb] == opp and head[nb] == lh:
                    n = _add(mark, pts, n, x, gen, hcap, hext)
                    if level < hcap[x]:
                        hcap[x] = level
                    break
    return n, ncont


@njit(cache=True, inline="always")
def hot_gammas(
    color, ko, pts, nh, ncont, gam, lev, hotval, extra, hcap, hext,
    play_g, cap_g, ext_g, sa_g, cont_g, atari, swap, sa_sure,
):  # fmt: skip
    """v of each hot point into hotval, max(v - base, 0) into extra; return their sum.

    v multiplies the gammas of the levels in gamma_at's order, so it rounds as
    policy_gamma does.
    """
    ci = color - 1
    total = 0.0
    for i in range(nh):
        p = pts[i]
        g = gam[ci, p]
        cont = 1 if i < ncont else 0
        k = np.int64(lev[p])
        if p == ko:
            v = 0.0
        elif atari[k] == 0:
            # no string in atari next to p: only contiguity differs from the base
            v = g * cont_g[1] if cont else g
        else:
            cap = hcap[p]
            if cap == 9:
                cap = 4 if atari[k] & color else 0  # capture:other, or none
            if color == WHITE:
                k = np.int64(swap[k])
            sa = 1 if sa_sure[k] else 0
            v = play_g[k] * cap_g[cap] * ext_g[hext[p]] * sa_g[sa] * cont_g[cont]
        hotval[p] = v
        e = v - g if v > g else 0.0
        extra[i] = e
        total += e
    return total


@njit(cache=True, inline="always")
def _uniform(rng):
    return float(next_random(rng) >> np.uint64(11)) * _UNIT


@njit(cache=True, inline="always")
def propose(size, w, ci, gam, rows, pts, extra, nh, hot_total, base_total, rng):
    """A point drawn with weight base + extra (module docstring), or PASS when
    every weight is 0."""
    total = base_total + hot_total
    if not total > 0.0:
        return PASS
    x = _uniform(rng) * total
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
def acceptance(
    bc, head, nxt, libs, w, p, color, gen, mark, hotval, gam, lev, swap, sa_maybe, sa_yes, sa_no
):
    """The probability of accepting the proposed point p (module docstring)."""
    acc = 1.0
    g = gam[color - 1, p]
    if mark[p] == gen and hotval[p] < g:
        acc = hotval[p] / g
    k = np.int64(lev[p])
    if color == WHITE:
        k = np.int64(swap[k])
    if sa_maybe[k] and self_atari_at(bc, head, nxt, libs, w, p, color):
        return acc * sa_yes
    return acc * sa_no


@njit(cache=True)
def draw_exact(b: Board, color: int, last: int, ko: int, t: PolicyTables, rng: np.ndarray) -> int:
    """A point drawn in proportion to policy_gamma by a full scan, or PASS."""
    size = b.info[SIZE]
    w = b.info[W]
    total = 0.0
    for r in range(size):
        for c in range(size):
            total += policy_gamma(b, (r + 1) * w + c + 1, color, last, ko, t)
    if not total > 0.0:
        return PASS
    x = _uniform(rng) * total
    fallback = PASS
    for r in range(size):
        for c in range(size):
            p = (r + 1) * w + c + 1
            g = policy_gamma(b, p, color, last, ko, t)
            if g > 0.0:
                fallback = p
                x -= g
                if x < 0.0:
                    return p
    return fallback


@njit(cache=True)
def check_gammas(
    b: Board, color: int, last: int, ko: int, t: PolicyTables, s: Scratch, nh: int, hot_total: float
) -> int:
    """Mismatches of the incremental state against a full recomputation (before a draw;
    the hot points are those marked with the current generation s.gen[0])."""
    size = b.info[SIZE]
    w = b.info[W]
    gen = s.gen[0]
    ci = color - 1
    sa_max = max(1.0, t.self_atari[1])
    sa_yes = t.self_atari[1] / sa_max
    sa_no = 1.0 / sa_max
    bad = 0
    listed = 0
    for r in range(size):
        fresh0 = 0.0
        fresh1 = 0.0
        for c in range(size):
            p = (r + 1) * w + c + 1
            g = s.gam[ci, p]
            weight = max(s.hotval[p], g) if s.mark[p] == gen else g
            eff = 0.0
            if weight > 0.0:
                acc = acceptance(
                    b.color, b.head, b.nxt, b.libs, w, p, color, gen, s.mark, s.hotval, s.gam,
                    s.lev, t.swap, t.sa_maybe, sa_yes, sa_no,
                )  # fmt: skip
                eff = weight * sa_max * acc
            want = policy_gamma(b, p, color, last, ko, t)
            if abs(eff - want) > 1e-12 * want:
                bad += 1
            for x in range(2):
                if s.gam[x, p] != proposal_gamma(b, p, x + 1, NO_MOVE, -1, t):
                    bad += 1
            fresh0 += s.gam[0, p]
            fresh1 += s.gam[1, p]
            if b.color[p] == EMPTY and s.lev[p] != t.level[light_code(b, p, BLACK)]:
                bad += 1
            if (s.apos[p] >= 0) != (b.color[p] == EMPTY and t.atari[s.lev[p]] != 0):
                bad += 1
            elif s.apos[p] >= 0:
                listed += 1
                if s.alist[s.apos[p]] != p:
                    bad += 1
        for x, fresh in ((0, fresh0), (1, fresh1)):
            if abs(s.rows[x, r] - fresh) > 1e-9 * max(fresh, 1e-3):
                bad += 1
    if listed != s.acount[0]:
        bad += 1
    extra = 0.0
    for i in range(nh):
        p = s.pts[i]
        extra += max(s.hotval[p] - s.gam[ci, p], 0.0)
    if abs(extra - hot_total) > 1e-12 * max(extra, 1.0):
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
    bc, head, nxt, libs, nstones, bmark, info, zhash, hist = b
    gam, rows, lev, rowof, alist, apos, acount = s[:7]
    state = update_state(s, t)
    pts, hotval, extra, mark, hcap, hext, heads = s[7:14]
    lvl, play_g, base_g, sa_sure, sa_maybe, swap = t[:6]
    cap_g, ext_g, sa_g, cont_g, atari = t[6:]
    sa_max = max(1.0, sa_g[1])
    sa_yes = sa_g[1] / sa_max
    sa_no = 1.0 / sa_max
    gen = s.gen[0]
    passes = 0
    n_moves = 0
    while n_moves < max_moves and passes < 2:
        ci = color - 1
        last = info[LAST]
        ko = info[KO]
        gen += 1
        nh, ncont = collect_hot(
            bc, head, nxt, libs, w, color, last, ko, mark, pts, gen, lev, atari, alist,
            acount[0], hcap, hext,
        )  # fmt: skip
        hot_total = hot_gammas(
            color, ko, pts, nh, ncont, gam, lev, hotval, extra, hcap, hext,
            play_g, cap_g, ext_g, sa_g, cont_g, atari, swap, sa_sure,
        )  # fmt: skip
        if check:
            s.gen[0] = gen
            errors[0] += check_gammas(b, color, last, ko, t, s, nh, hot_total)
        base_total = 0.0
        for r in range(size):
            base_total += rows[ci, r]
        move = PASS
        drawn = False
        for _ in range(MAX_TRIES):
            move = propose(size, w, ci, gam, rows, pts, extra, nh, hot_total, base_total, rng)
            if move == PASS:
                drawn = True
                break
            acc = acceptance(
                bc, head, nxt, libs, w, move, color, gen, mark, hotval, gam, lev, swap,
                sa_maybe, sa_yes, sa_no,
            )  # fmt: skip
            if acc >= 1.0 or _uniform(rng) < acc:
                drawn = True
                break
        if not drawn:
            move = draw_exact(b, color, last, ko, t, rng)
        if move == PASS:
            passes += 1
            play_arrays(bc, head, nxt, libs, nstones, bmark, info, zhash, hist, PASS, color)
        else:
            passes = 0
            play_and_update(
                bc, head, nxt, libs, nstones, bmark, info, zhash, hist, w, move, color, state, heads
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
