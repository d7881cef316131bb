"""Coulom's tactical features (Table 1) and the ladder reader they need.

Each feature group gives a candidate one level (0 = absent). Where the paper
is terse, the levels are defined here; the lowest-numbered level that applies
wins when several do (a move capturing two strings takes the best level).

- pass: 1 previous move is not a pass (or there is none); 2 previous move is a pass.
- capture (the move captures a string S of the opponent):
  1 S touches one of our strings that the previous move put in atari
    (a "new atari": our string has one liberty and touches the previous move);
  2 S contains the previous move (re-capture);
  3 the move touches the string of the previous move, so capturing S keeps
    that string from connecting through this point (prevent connection);
  4 S could escape a ladder if its owner extended; 5 S would be caught in a ladder.
- extension (the move is the liberty of one of our strings in a new atari):
  1 extending escapes (no working ladder); 2 the string is still caught in a ladder.
- self_atari: 1 the move captures nothing and leaves its own string one liberty.
- atari (the move takes an opponent string from two liberties to one):
  1 the atari is a working ladder; 2 a ko is on the board (the previous move
  took a ko, so this atari may be a ko threat); 3 any other atari.
- border: distance to the edge, 1 (first line) .. 4; absent from the 5th line on.
- dist_prev, dist_prev2: d(dx, dy) = dx + dy + max(dx, dy) to the previous move
  and to the move before it: level d - 1 for d = 2..16, 16 for d >= 17; absent
  when that move was a pass or there was none. d = 0 happens (a stone of the
  move before the previous one was captured and the point is played again) and
  shares level 1 ("<=2") with adjacent moves.

Ladder reader: the defender, to move, extends its string's single liberty;
three liberties or more escape, one is caught, two let the attacker try each
liberty in turn. The defender also escapes by capturing an attacking string
in atari. Ko is ignored and reading depth is bounded (LADDER_DEPTH). It reads
on the scratch boards of a ``Reader``, allocated once (a visitor holds one for
a game), so that a read allocates nothing and ``tactical_into`` runs without
numba's reference counting: both cost more than the reading itself.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from gomove.board.board import (
    KO,
    LAST,
    LAST2,
    MARKGEN,
    NINFO,
    SIZE,
    Board,
    W,
    adjacent_heads,
    is_legal_arrays,
    liberty_walk,
    libs_after_arrays,
    place_stone_arrays,
    self_atari_at,
)
from gomove.board.coords import PASS
from gomove.features.levels import (
    CAPTURE_COL,
    CAPTURE_OTHER,
    EXTENSION_COL,
    PASS_COL,
    SELF_ATARI_COL,
    capture_level,
    in_heads,
    last_move,
)
from gomove.features.patterns import distance

LADDER_DEPTH = 80

# columns of the tactical level array: levels.py's shared four (PASS_COL, CAPTURE_COL,
# EXTENSION_COL, SELF_ATARI_COL), then these
ATARI_COL = 4
BORDER_COL = 5
DIST_PREV_COL = 6
DIST_PREV2_COL = 7
N_TACTICAL = 8

TACTICAL_LEVELS = {
    "pass": ("not_after_pass", "after_pass"),
    "capture": ("atari_defence", "recapture", "prevent_connection", "no_ladder", "ladder"),
    "extension": ("new_atari", "new_atari_ladder"),
    "self_atari": ("self_atari",),
    "atari": ("ladder", "ko", "other"),
    "border": ("1", "2", "3", "4"),
    "dist_prev": ("<=2",) + tuple(str(d) for d in range(3, 17)) + (">=17",),
    "dist_prev2": ("<=2",) + tuple(str(d) for d in range(3, 17)) + (">=17",),
}
TACTICAL_GROUPS = tuple(TACTICAL_LEVELS)

# the Reader's slots: the board after an atari (ATARI_SLOT), the ladder's boards by depth
# (STACK_SLOT + depth, depth 0..LADDER_DEPTH) and the attacker's trial move (TRIAL_SLOT)
ATARI_SLOT = 0
STACK_SLOT = 1
TRIAL_SLOT = STACK_SLOT + LADDER_DEPTH + 1
N_SLOTS = TRIAL_SLOT + 1


class Reader(NamedTuple):
    """The ladder reader's scratch boards: slot d is the Board of the arrays' row d (hist
    a single word: reading never asks superko), with the attacker's two choices and the
    next one to try at each depth of the ladder."""

    color: np.ndarray  # int8[N_SLOTS, L]
    head: np.ndarray  # int32[N_SLOTS, L]
    nxt: np.ndarray  # int32[N_SLOTS, L]
    libs: np.ndarray  # int32[N_SLOTS, L]
    nstones: np.ndarray  # int32[N_SLOTS, L]
    mark: np.ndarray  # int64[N_SLOTS, L]
    info: np.ndarray  # int64[N_SLOTS, NINFO]
    zhash: np.ndarray  # uint64[N_SLOTS, 1]
    hist: np.ndarray  # uint64[N_SLOTS, 1]
    opts: np.ndarray  # int64[LADDER_DEPTH + 1, 2]: the attacker's choices at a depth
    choice: np.ndarray  # int64[LADDER_DEPTH + 1]: the next choice to try there
    lib: np.ndarray  # int64[2]: scratch for a string's liberties


@njit(cache=True)
def new_reader(n_locs: int) -> Reader:
    """A Reader for boards of n_locs padded locs ((size + 2) ** 2)."""
    d = N_SLOTS
    return Reader(
        np.zeros((d, n_locs), np.int8),
        np.zeros((d, n_locs), np.int32),
        np.zeros((d, n_locs), np.int32),
        np.zeros((d, n_locs), np.int32),
        np.zeros((d, n_locs), np.int32),
        np.zeros((d, n_locs), np.int64),
        np.zeros((d, NINFO), np.int64),
        np.zeros((d, 1), np.uint64),
        np.zeros((d, 1), np.uint64),
        np.zeros((LADDER_DEPTH + 1, 2), np.int64),
        np.zeros(LADDER_DEPTH + 1, np.int64),
        np.zeros(2, np.int64),
    )


@njit(cache=True, inline="always")
def _slot(r: Reader, d: int) -> Board:
    return Board(
        r.color[d], r.head[d], r.nxt[d], r.libs[d], r.nstones[d], r.mark[d], r.info[d],
        r.zhash[d], r.hist[d],
    )  # fmt: skip


@njit(cache=True, inline="always")
def _reading_copy(r: Reader, d: int, b: Board) -> Board:
    """Slot d set to b with no ko point (reading ignores ko).

    The marks are not copied: marks are scratch that no walk reads across calls, and the
    slot's mark generation continues above both its own and b's, so no stale mark of
    the slot equals a generation still to come.
    """
    c = _slot(r, d)
    gen = max(c.info[MARKGEN], b.info[MARKGEN])
    for i in range(b.color.shape[0]):
        c.color[i] = b.color[i]
        c.head[i] = b.head[i]
        c.nxt[i] = b.nxt[i]
        c.libs[i] = b.libs[i]
        c.nstones[i] = b.nstones[i]
    for i in range(NINFO):
        c.info[i] = b.info[i]
    c.info[MARKGEN] = gen
    c.info[KO] = -1
    c.zhash[0] = b.zhash[0]
    return c


@njit(cache=True, inline="always")
def _can_capture_attacker(b: Board, h: int) -> bool:
    """Does an opponent string touching string h have a single liberty?"""
    bc, head, nxt, libs = b.color, b.head, b.nxt, b.libs
    w = b.info[W]
    attacker = 3 - bc[h]
    s = h
    while True:
        for nb in (s - w, s - 1, s + 1, s + w):
            if bc[nb] == attacker and libs[head[nb]] == 1:
                return True
        s = nxt[s]
        if s == h:
            break
    return False


@njit(cache=True, inline="always")
def _string_libs(b: Board, h: int, out: np.ndarray) -> None:
    """board.string_libs: the first len(out) liberties of string h into out."""
    b.info[MARKGEN] += 1
    liberty_walk(b.color, b.nxt, b.mark, b.info[W], h, b.info[MARKGEN], out)


@njit(cache=True, inline="always")
def _defender_step(r: Reader, d: int, b: Board, stone: int) -> tuple[int, int, int]:
    """The defender of the string at stone (in atari) moves.

    Returns (0 escaped | 1 captured | 2 two liberties, and then its two liberties), the
    board after its extension in slot d when 2. The liberties of the extension are
    counted before it is played (libs_after), so only a ladder that goes on is copied.
    """
    h = b.head[stone]
    if b.libs[h] != 1:
        return (1 if b.libs[h] == 0 else 0), -1, -1
    defender = b.color[h]
    if _can_capture_attacker(b, h):
        return 0, -1, -1
    lib = r.lib
    _string_libs(b, h, lib)
    if not is_legal_arrays(b.color, b.head, b.libs, b.info, lib[0], defender):
        return 1, -1, -1
    n = libs_after_arrays(b.color, b.head, b.nxt, b.libs, b.mark, b.info, lib[0], defender)
    if n >= 3:
        return 0, -1, -1
    if n <= 1:
        return 1, -1, -1
    c = _reading_copy(r, d, b)
    place_stone_arrays(c, lib[0], defender)
    _string_libs(c, c.head[stone], lib)
    return 2, lib[0], lib[1]


@njit(cache=True, inline="always")
def _ladder_captured(r: Reader, b: Board, stone: int) -> bool:
    """ladder_captured on r's slots STACK_SLOT.. and TRIAL_SLOT: depth first over the
    attacker's two choices at each step, the boards of the ladder so far as a stack."""
    status, a0, a1 = _defender_step(r, STACK_SLOT, b, stone)
    if status != 2:
        return status == 1
    attacker = 3 - b.color[stone]
    r.opts[0, 0] = a0
    r.opts[0, 1] = a1
    r.choice[0] = 0
    n = 1  # boards on the stack
    while n > 0:
        top = n - 1
        k = r.choice[top]
        if k >= 2:
            n -= 1
            continue
        r.choice[top] = k + 1
        a = r.opts[top, k]
        cb = _slot(r, STACK_SLOT + top)
        if not is_legal_arrays(cb.color, cb.head, cb.libs, cb.info, a, attacker):
            continue
        d = _reading_copy(r, TRIAL_SLOT, cb)
        place_stone_arrays(d, a, attacker)
        if d.libs[d.head[stone]] != 1:
            continue
        status, x0, x1 = _defender_step(r, STACK_SLOT + n, d, stone)
        if status == 1:
            return True
        if status == 2 and n < LADDER_DEPTH:
            r.opts[n, 0] = x0
            r.opts[n, 1] = x1
            r.choice[n] = 0
            n += 1
    return False


@njit(cache=True, inline="always")
def _atari_is_ladder(r: Reader, b: Board, loc: int, color: int, target: int) -> bool:
    c = _reading_copy(r, ATARI_SLOT, b)
    place_stone_arrays(c, loc, color)
    if c.color[target] != 3 - color:
        return False
    return _ladder_captured(r, c, target)


@njit(cache=True)
def ladder_captured(b: Board, stone: int) -> bool:
    """Is the string at stone, in atari with its owner to move, caught in a ladder?"""
    return _ladder_captured(new_reader(b.color.shape[0]), b, stone)


@njit(cache=True)
def atari_is_ladder(b: Board, loc: int, color: int, target: int) -> bool:
    """Would the atari at loc by color catch the string at target in a ladder?"""
    return _atari_is_ladder(new_reader(b.color.shape[0]), b, loc, color, target)


@njit(cache=True)
def coulom_distance(a: int, b_: int, w: int) -> int:
    """Coulom's distance (patterns.distance) between the locs a and b_ of a board of width w."""
    return distance(a % w - b_ % w, a // w - b_ // w)


@njit(cache=True, inline="always")
def _distance_level(loc: int, prev: int, w: int) -> int:
    if prev < 0:
        return 0
    d = distance(loc % w - prev % w, loc // w - prev // w)
    if d >= 17:
        return 16
    return max(d, 2) - 1


@njit(cache=True)
def tactical_levels(
    b: Board, color: int, cands: np.ndarray, n: int, ladder_memo: np.ndarray, out: np.ndarray
) -> None:
    """Levels of the tactical groups for candidates cands[:n] (PASS allowed) into out[n, 8].

    ladder_memo[loc]: -1 unknown, else 0/1 "caught in a ladder" for the string
    headed at loc in this position; the caller resets it per position. Reads on a
    Reader of its own: tactical_into with the caller's is the same without allocating.
    """
    tactical_into(b, color, cands, n, ladder_memo, new_reader(b.color.shape[0]), out)


@njit(cache=True, _nrt=False)
def tactical_into(
    b: Board,
    color: int,
    cands: np.ndarray,
    n: int,
    ladder_memo: np.ndarray,
    reader: Reader,
    out: np.ndarray,
) -> None:
    """tactical_levels with the reader's scratch boards (for b's size). Compiled without
    numba's reference counting: it allocates nothing."""
    opp = 3 - color
    w = b.info[W]
    size = b.info[SIZE]
    last = b.info[LAST]
    last2 = b.info[LAST2]
    ko_on_board = b.info[KO] >= 0
    bc, head, nxt, libs = b.color, b.head, b.nxt, b.libs
    lm = last_move(bc, head, libs, w, color, last)
    na0, na1, na2, na3 = lm.na
    for i in range(n):
        loc = cands[i]
        for g in range(N_TACTICAL):
            out[i, g] = 0
        if loc == PASS:
            out[i, PASS_COL] = 2 if last == PASS else 1
            continue
        row = loc // w - 1
        col = loc % w - 1
        edge = min(min(row, col), min(size - 1 - row, size - 1 - col)) + 1
        if edge <= 4:
            out[i, BORDER_COL] = edge
        out[i, DIST_PREV_COL] = _distance_level(loc, last, w)
        out[i, DIST_PREV2_COL] = _distance_level(loc, last2, w)
        cap = 0
        ext = 0
        atari = 0
        for nb in (loc - w, loc - 1, loc + 1, loc + w):
            c = bc[nb]
            if c == opp:
                hh = head[nb]
                nl = libs[hh]
                if nl == 1:
                    # capture of string hh: the shared levels 1..4, 4 split by the ladder
                    lvl = capture_level(bc, head, nxt, w, loc, color, hh, lm)
                    if lvl == CAPTURE_OTHER:
                        if ladder_memo[hh] < 0:
                            ladder_memo[hh] = 1 if _ladder_captured(reader, b, hh) else 0
                        lvl = 5 if ladder_memo[hh] == 1 else 4
                    if cap == 0 or lvl < cap:
                        cap = lvl
                elif nl == 2:
                    if _atari_is_ladder(reader, b, loc, color, hh):
                        lvl = 1
                    elif ko_on_board:
                        lvl = 2
                    else:
                        lvl = 3
                    if atari == 0 or lvl < atari:
                        atari = lvl
            elif c == color:
                hh = head[nb]
                if libs[hh] == 1 and in_heads(hh, na0, na1, na2, na3):
                    # extension of a string in a new atari, split by the ladder
                    if ladder_memo[hh] < 0:
                        ladder_memo[hh] = 1 if _ladder_captured(reader, b, hh) else 0
                    lvl = 2 if ladder_memo[hh] == 1 else 1
                    if ext == 0 or lvl < ext:
                        ext = lvl
        out[i, CAPTURE_COL] = cap
        out[i, EXTENSION_COL] = ext
        out[i, ATARI_COL] = atari
        # board.is_self_atari: captures nothing and leaves one liberty
        if _captures_nothing(bc, head, libs, w, loc, opp) and self_atari_at(
            bc, head, nxt, libs, w, loc, color
        ):
            out[i, SELF_ATARI_COL] = 1


@njit(cache=True, inline="always")
def _captures_nothing(bc, head, libs, w: int, loc: int, opp: int) -> bool:
    """board.captures_of(b, loc, color) == 0: no string of opp next to loc is in atari."""
    for hh in adjacent_heads(bc, head, w, loc, opp):
        if hh != -1 and libs[hh] == 1:
            return False
    return True
