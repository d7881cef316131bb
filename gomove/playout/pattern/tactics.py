"""Tactical answers to the last move: its strings with one or two liberties (Pachi's Moggy).

Coulom's light features see ataris but not fights of two liberties: a playout
in which a string with two liberties is about to be taken plays the atari,
the escape or neither by its 3x3 gammas alone, and the search's value of a
semeai or a net is then decided by chance. Pachi's playouts (Moggy) answer
the last move by local checks before their patterns; ``SearchConfig.tactics``
adds the ones below, in the same place as the last good replies.

Terms:
- the local strings: the strings with a stone on the last move or next to it.
- an escape, for one of our strings S with one or two liberties: a liberty
  of S after which S's string has at least three liberties
  (board.libs_after: out of reach of a ladder or a net).
- a capture: the liberty of an opponent's local string in atari.
- a decisive atari, by one player on the other's string S with two
  liberties A and B, none of the attacker's strings next to S in atari (S
  could capture it instead): the attacker's move at A captures nothing and
  leaves its string at least two liberties, the answer at B then captures
  nothing, and after it the defender's string (B, S and its other strings
  next to B) has at most one liberty.
- the moves considered: for each of our local strings in atari, the captures
  of the opponent's strings in atari next to it and its escapes; for each of
  our local strings with two liberties on which the opponent has a decisive
  atari, its escapes; for each opponent's local string in atari, its
  capture; for each with two liberties, our decisive ataris on it.
- tactical moves: the moves considered that are legal (board.is_legal_arrays, so
  simple ko included) and fill no own eye (board.scoring.eye_at), each once.
  With probability ``tactics`` a playout move that has no last good reply is
  one of them, drawn uniformly, when there are any; otherwise it is drawn
  from the patterns.
"""

from __future__ import annotations

from numba import njit

from gomove.board.board import (
    BLACK,
    EMPTY,
    MARKGEN,
    WHITE,
    Board,
    W,
    first_liberty,
    is_legal_arrays,
    liberty_walk,
    libs_after_arrays,
)
from gomove.board.scoring import eye_at


@njit(cache=True, inline="always")
def _add(out, n: int, m: int) -> int:
    """Append m to out[:n] unless it is there or out is full; the new length."""
    for i in range(n):
        if out[i] == m:
            return n
    if n < out.shape[0]:
        out[n] = m
        n += 1
    return n


@njit(cache=True, inline="always")
def _add_captures_next_to(b: Board, h: int, color: int, out, n: int) -> int:
    """Add the liberty of every string of color's opponent in atari next to string h."""
    bc, head, nxt, libs = b.color, b.head, b.nxt, b.libs
    w = b.info[W]
    opp = 3 - color
    s = h
    while True:
        for nb in (s - w, s - 1, s + 1, s + w):
            if bc[nb] == opp and libs[head[nb]] == 1:
                n = _add(out, n, first_liberty(bc, nxt, w, head[nb], -1))
        s = nxt[s]
        if s == h:
            return n


@njit(cache=True, inline="always")
def _touches_atari(bc, head, nxt, libs, w: int, h: int, color: int) -> bool:
    """Is a string of color in atari next to string h?"""
    s = h
    while True:
        for nb in (s - w, s - 1, s + 1, s + w):
            if bc[nb] == color and libs[head[nb]] == 1:
                return True
        s = nxt[s]
        if s == h:
            return False


@njit(cache=True, inline="always")
def _decisive(b: Board, color: int, x: int, y: int) -> bool:
    """Is color's move at x a decisive atari on the opponent's string with liberties x, y?"""
    bc, head, nxt, libs, mark, info = b.color, b.head, b.nxt, b.libs, b.mark, b.info
    w = info[W]
    opp = 3 - color
    for nb in (x - w, x - 1, x + 1, x + w):
        if bc[nb] == opp and libs[head[nb]] == 1:
            return False  # x captures
    if libs_after_arrays(bc, head, nxt, libs, mark, info, x, color) < 2:
        return False
    # after x, only our strings in atari before it can be in atari, and none touches x
    for nb in (y - w, y - 1, y + 1, y + w):
        if bc[nb] == color and libs[head[nb]] == 1:
            return False  # their y captures
    info[MARKGEN] += 1
    gen = info[MARKGEN]
    mark[x] = gen  # ours now
    mark[y] = gen  # theirs now
    n = 0
    for nb in (y - w, y - 1, y + 1, y + w):
        if bc[nb] == EMPTY and mark[nb] != gen:
            mark[nb] = gen
            n += 1
    for nb in (y - w, y - 1, y + 1, y + w):
        if bc[nb] == opp:
            n += liberty_walk(bc, nxt, mark, w, head[nb], gen, mark[:0])
    return n <= 1


@njit(cache=True, inline="always")
def _add_extensions(b: Board, color: int, h: int, out, n: int):
    """Add each liberty of color's string h (one or two) that leaves it three or more."""
    bc, head, nxt, libs, mark, info = b.color, b.head, b.nxt, b.libs, b.mark, b.info
    w = info[W]
    x = first_liberty(bc, nxt, w, h, -1)
    y = first_liberty(bc, nxt, w, h, x)
    for lib in (x, y):
        if lib >= 0 and libs_after_arrays(bc, head, nxt, libs, mark, info, lib, color) >= 3:
            n = _add(out, n, lib)
    return n


@njit(cache=True, inline="always")
def _in_danger(b: Board, color: int, h: int) -> bool:
    """Has the opponent a decisive atari on color's string h of two liberties?"""
    bc, head, nxt, libs = b.color, b.head, b.nxt, b.libs
    w = b.info[W]
    opp = 3 - color
    if _touches_atari(bc, head, nxt, libs, w, h, opp):
        return False  # we could capture instead
    x = first_liberty(bc, nxt, w, h, -1)
    y = first_liberty(bc, nxt, w, h, x)
    return _decisive(b, opp, x, y) or _decisive(b, opp, y, x)


@njit(cache=True, _nrt=False)
def tactical_moves(b: Board, color: int, last: int, out) -> int:
    """Write color's tactical moves after the opponent's move last (module docstring)
    into out (each once, up to len(out)); return how many there are. Compiled without
    reference counting (it allocates nothing), as local.local_move."""
    bc, head, nxt, libs, info = b.color, b.head, b.nxt, b.libs, b.info
    w = info[W]
    if last < 0 or bc[last] != 3 - color:
        return 0
    n = 0
    pts = (last, last - w, last - 1, last + 1, last + w)
    for i in range(5):
        p = pts[i]
        c = bc[p]
        if c != BLACK and c != WHITE:
            continue
        h = head[p]
        seen = False
        for j in range(i):
            if bc[pts[j]] == c and head[pts[j]] == h:
                seen = True
        if seen:
            continue
        k = libs[h]
        if c == color and k == 1:
            n = _add_captures_next_to(b, h, color, out, n)
            n = _add_extensions(b, color, h, out, n)
        elif c == color and k == 2 and _in_danger(b, color, h):
            n = _add_extensions(b, color, h, out, n)
        elif c != color and k == 1:
            n = _add(out, n, first_liberty(bc, nxt, w, h, -1))
        elif c != color and k == 2 and not _touches_atari(bc, head, nxt, libs, w, h, color):
            x = first_liberty(bc, nxt, w, h, -1)
            y = first_liberty(bc, nxt, w, h, x)
            if _decisive(b, color, x, y):
                n = _add(out, n, x)
            if _decisive(b, color, y, x):
                n = _add(out, n, y)
    m = 0
    for i in range(n):
        x = out[i]
        if is_legal_arrays(bc, head, libs, info, x, color) and not eye_at(bc, w, x, color):
            out[m] = x
            m += 1
    return m
