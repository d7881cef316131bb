"""The move levels the full and the light features share: new atari, capture, extension,
and the columns of the groups both level arrays begin with (``PASS_COL`` ...).

Coulom 2007, Table 1, defined once here and used by tactical.py (which refines
the capture and extension levels with its ladder reader), light.py and the
pattern playouts (gomove.playout.pattern), so the three cannot drift apart. The
kernels take the board's arrays (bc = b.color, head, nxt, libs) and its width
w, as the playouts' move loops need.

Terms:
- new atari: one of the mover's strings with one liberty that touches the
  previous move (``last``; a pass or no move: none). At most 4 strings touch a
  point, so the heads come as 4 values, -1 for none.
- capture level of taking the opponent string hh (in atari) with a move at
  loc, the lowest that applies: CAPTURE_ATARI_DEFENCE (1) hh touches one of
  our strings in a new atari; CAPTURE_RECAPTURE (2) hh holds the previous
  move; CAPTURE_PREVENT_CONNECTION (3) loc touches the previous move's string;
  CAPTURE_OTHER (4) any other capture. tactical.py splits 4 by the ladder.
- extension: a move at the liberty of one of our strings in a new atari.
"""

from __future__ import annotations

from typing import NamedTuple

from numba import njit

from gomove.board.board import adjacent_heads

# The columns both level arrays begin with, in this order: the groups pass, capture,
# extension and self_atari of tactical.py's (Coulom's full features) and of light.py's.
PASS_COL, CAPTURE_COL, EXTENSION_COL, SELF_ATARI_COL = range(4)

CAPTURE_ATARI_DEFENCE = 1
CAPTURE_RECAPTURE = 2
CAPTURE_PREVENT_CONNECTION = 3
CAPTURE_OTHER = 4


class LastMove(NamedTuple):
    """The previous move as the capture and extension levels see it, found once per move."""

    na: tuple[int, int, int, int]  # new_atari_heads for the mover, -1 for none
    last_head: int  # last_string: the previous move's string when it is the opponent's, else -1


@njit(cache=True, inline="always")
def new_atari_heads(bc, head, libs, w: int, color: int, last: int) -> tuple[int, int, int, int]:
    """Heads of color's strings in a new atari (module docstring), -1 for none."""
    if last < 0:
        return -1, -1, -1, -1
    a0, a1, a2, a3 = adjacent_heads(bc, head, w, last, color)
    if a0 != -1 and libs[a0] != 1:
        a0 = -1
    if a1 != -1 and libs[a1] != 1:
        a1 = -1
    if a2 != -1 and libs[a2] != 1:
        a2 = -1
    if a3 != -1 and libs[a3] != 1:
        a3 = -1
    return a0, a1, a2, a3


@njit(cache=True, inline="always")
def in_heads(h: int, a0: int, a1: int, a2: int, a3: int) -> bool:
    """Is h one of the heads a0..a3 (new_atari_heads' -1 never matches a string)?"""
    return h == a0 or h == a1 or h == a2 or h == a3


@njit(cache=True, inline="always")
def capture_level(bc, head, nxt, w: int, loc: int, color: int, hh: int, lm: LastMove) -> int:
    """The capture level (1..4, module docstring) of taking string hh with a move at loc.

    lm: the previous move for color (lm.na: new_atari_heads, lm.last_head: the
    head of the previous move's string when it is an opponent stone, else -1).
    """
    na0, na1, na2, na3 = lm.na
    last_head = lm.last_head
    lvl = CAPTURE_OTHER
    if na0 != -1 or na1 != -1 or na2 != -1 or na3 != -1:
        s = hh
        while lvl != CAPTURE_ATARI_DEFENCE:
            for nb in (s - w, s - 1, s + 1, s + w):
                if bc[nb] == color and in_heads(head[nb], na0, na1, na2, na3):
                    lvl = CAPTURE_ATARI_DEFENCE
            s = nxt[s]
            if s == hh:
                break
    if lvl > CAPTURE_RECAPTURE and hh == last_head:
        lvl = CAPTURE_RECAPTURE
    if lvl > CAPTURE_PREVENT_CONNECTION and last_head >= 0:
        opp = 3 - color
        for nb in (loc - w, loc - 1, loc + 1, loc + w):
            if bc[nb] == opp and head[nb] == last_head:
                lvl = CAPTURE_PREVENT_CONNECTION
    return lvl


@njit(cache=True, inline="always")
def capture_and_extension(
    bc, head, nxt, libs, w: int, loc: int, color: int, lm: LastMove
) -> tuple[int, int]:
    """(capture level 0..4, extension 0/1) of a move at loc (module docstring).

    The capture level is the lowest capture_level of the opponent strings in
    atari next to loc (0: it captures nothing); lm as capture_level takes it.
    """
    na0, na1, na2, na3 = lm.na
    opp = 3 - color
    cap = 0
    ext = 0
    for nb in (loc - w, loc - 1, loc + 1, loc + w):
        c = bc[nb]
        if c == color:
            if libs[head[nb]] == 1 and in_heads(head[nb], na0, na1, na2, na3):
                ext = 1
        elif c == opp and libs[head[nb]] == 1:
            lvl = capture_level(bc, head, nxt, w, loc, color, head[nb], lm)
            if cap == 0 or lvl < cap:
                cap = lvl
    return cap, ext


@njit(cache=True, inline="always")
def last_string(bc, head, color: int, last: int) -> int:
    """The head of the previous move's string when it is an opponent stone still on the
    board (last < 0, a pass or no move: -1)."""
    if last >= 0 and bc[last] == 3 - color:
        return head[last]
    return -1


@njit(cache=True, inline="always")
def last_move(bc, head, libs, w: int, color: int, last: int) -> LastMove:
    """The previous move last as color's capture and extension levels see it."""
    na = new_atari_heads(bc, head, libs, w, color, last)
    return LastMove(na, last_string(bc, head, color, last))
