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
in atari. Ko is ignored and reading depth is bounded (LADDER_DEPTH).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import (
    KO,
    LAST,
    LAST2,
    SIZE,
    Board,
    W,
    captures_of,
    copy_board,
    is_legal,
    libs_after,
    neighbours,
    place_stone,
    string_libs,
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


@njit(cache=True)
def _reading_copy(b: Board) -> Board:
    c = copy_board(b)
    c.info[KO] = -1
    return c


@njit(cache=True)
def _can_capture_attacker(b: Board, h: int) -> bool:
    """Does an opponent string touching string h have a single liberty?"""
    defender = b.color[h]
    attacker = 3 - defender
    s = h
    while True:
        for nb in neighbours(b, s):
            if b.color[nb] == attacker and b.libs[b.head[nb]] == 1:
                return True
        s = b.nxt[s]
        if s == h:
            break
    return False


@njit(cache=True)
def _defender_step(b: Board, stone: int) -> tuple[int, Board, int, int]:
    """The defender of the string at stone (in atari) moves.

    Returns (0 escaped | 1 captured | 2 two liberties, board after extending,
    its two liberties).
    """
    h = b.head[stone]
    if b.libs[h] != 1:
        return (1 if b.libs[h] == 0 else 0), b, -1, -1
    defender = b.color[h]
    if _can_capture_attacker(b, h):
        return 0, b, -1, -1
    lib = np.empty(2, dtype=np.int64)
    string_libs(b, h, lib)
    if not is_legal(b, lib[0], defender):
        return 1, b, -1, -1
    c = _reading_copy(b)
    place_stone(c, lib[0], defender)
    h2 = c.head[stone]
    n = c.libs[h2]
    if n >= 3:
        return 0, c, -1, -1
    if n <= 1:
        return 1, c, -1, -1
    string_libs(c, h2, lib)
    return 2, c, lib[0], lib[1]


@njit(cache=True)
def ladder_captured(b: Board, stone: int) -> bool:
    """Is the string at stone, in atari with its owner to move, caught in a ladder?

    Depth-first over the attacker's two choices at each step, with an explicit
    stack (numba cannot cache recursive functions reliably).
    """
    status, c, a0, a1 = _defender_step(b, stone)
    if status != 2:
        return status == 1
    attacker = 3 - b.color[stone]
    boards = [c]
    opts = [(a0, a1)]
    choice = [0]
    while len(boards) > 0:
        top = len(boards) - 1
        k = choice[top]
        if k >= 2:
            boards.pop()
            opts.pop()
            choice.pop()
            continue
        choice[top] = k + 1
        a = opts[top][k]
        cb = boards[top]
        if not is_legal(cb, a, attacker):
            continue
        d = _reading_copy(cb)
        place_stone(d, a, attacker)
        if d.libs[d.head[stone]] != 1:
            continue
        status, c2, x0, x1 = _defender_step(d, stone)
        if status == 1:
            return True
        if status == 2 and len(boards) < LADDER_DEPTH:
            boards.append(c2)
            opts.append((x0, x1))
            choice.append(0)
    return False


@njit(cache=True)
def atari_is_ladder(b: Board, loc: int, color: int, target: int) -> bool:
    """Would the atari at loc by color catch the string at target in a ladder?"""
    c = _reading_copy(b)
    place_stone(c, loc, color)
    if c.color[target] != 3 - color:
        return False
    return ladder_captured(c, target)


@njit(cache=True)
def coulom_distance(a: int, b_: int, w: int) -> int:
    """Coulom's distance (patterns.distance) between the locs a and b_ of a board of width w."""
    return distance(a % w - b_ % w, a // w - b_ // w)


@njit(cache=True)
def _distance_level(loc: int, prev: int, w: int) -> int:
    if prev < 0:
        return 0
    d = coulom_distance(loc, prev, w)
    if d >= 17:
        return 16
    return max(d, 2) - 1


@njit(cache=True)
def tactical_levels(
    b: Board, color: int, cands: np.ndarray, n: int, ladder_memo: np.ndarray, out: np.ndarray
) -> None:
    """Levels of the tactical groups for candidates cands[:n] (PASS allowed) into out[n, 8].

    ladder_memo[loc]: -1 unknown, else 0/1 "caught in a ladder" for the string
    headed at loc in this position; the caller resets it per position.
    """
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
        for g in range(8):
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
        for nb in neighbours(b, loc):
            c = bc[nb]
            if c == opp:
                hh = head[nb]
                nl = libs[hh]
                if nl == 1:
                    # capture of string hh: the shared levels 1..4, 4 split by the ladder
                    lvl = capture_level(bc, head, nxt, w, loc, color, hh, lm)
                    if lvl == CAPTURE_OTHER:
                        if ladder_memo[hh] < 0:
                            ladder_memo[hh] = 1 if ladder_captured(b, hh) else 0
                        lvl = 5 if ladder_memo[hh] == 1 else 4
                    if cap == 0 or lvl < cap:
                        cap = lvl
                elif nl == 2:
                    if atari_is_ladder(b, loc, color, hh):
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
                        ladder_memo[hh] = 1 if ladder_captured(b, hh) else 0
                    lvl = 2 if ladder_memo[hh] == 1 else 1
                    if ext == 0 or lvl < ext:
                        ext = lvl
        out[i, CAPTURE_COL] = cap
        out[i, EXTENSION_COL] = ext
        out[i, ATARI_COL] = atari
        if captures_of(b, loc, color) == 0 and libs_after(b, loc, color) == 1:
            out[i, SELF_ATARI_COL] = 1
