"""The numba Go board: state arrays and the rule kernels over them.

Terms:
- Board: a NamedTuple of numpy arrays over padded locs (see coords.py), so that
  every kernel here is a plain ``@njit(cache=True)`` function and a Board can be
  passed between Python and compiled code for free.
- string: a maximal connected set of stones of one colour; ``head[loc]`` names
  its representative loc, ``nxt`` links its stones in a circular list, and
  ``libs[head]``/``nstones[head]`` hold its liberty and stone counts, kept
  exact incrementally (a merge recounts the merged string's liberties).
- simple ko: ``info[KO]`` is the point the side to move may not play.
- positional superko: ``hist[:info[NHIST]]`` are the Zobrist hashes of every
  position so far; a move whose result repeats one of them is a superko move.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from gomove.board.coords import NO_MOVE, PASS
from gomove.board.zobrist import POSITION_KEYS

EMPTY = 0
BLACK = 1
WHITE = 2
WALL = 3

# info[] slots
SIZE = 0
W = 1
KO = 2
TO_MOVE = 3
NMOVES = 4
LAST = 5
LAST2 = 6
MARKGEN = 7
KO_CAPTURED = 8  # 1 when the last move was a simple-ko capture
NHIST = 9
NINFO = 10

ZKEYS = POSITION_KEYS


class Board(NamedTuple):
    color: np.ndarray  # int8[L]: EMPTY, BLACK, WHITE or WALL
    head: np.ndarray  # int32[L]: string representative of a stone
    nxt: np.ndarray  # int32[L]: next stone of the same string (circular)
    libs: np.ndarray  # int32[L]: liberties, valid at heads
    nstones: np.ndarray  # int32[L]: stones, valid at heads
    mark: np.ndarray  # int64[L]: scratch for counting distinct points
    info: np.ndarray  # int64[NINFO]
    zhash: np.ndarray  # uint64[1]: hash of the current position
    hist: np.ndarray  # uint64[H]: hashes of past positions, for superko


def new_board(size: int, hist_len: int = 1024) -> Board:
    """An empty board, black to move."""
    if not 2 <= size <= 19:
        raise ValueError(f"board size {size} is not supported (2..19)")
    w = size + 2
    n = w * w
    color = np.full(n, WALL, dtype=np.int8)
    color.reshape(w, w)[1:-1, 1:-1] = EMPTY
    info = np.zeros(NINFO, dtype=np.int64)
    info[SIZE] = size
    info[W] = w
    info[KO] = -1
    info[TO_MOVE] = BLACK
    info[LAST] = NO_MOVE
    info[LAST2] = NO_MOVE
    hist = np.zeros(max(hist_len, 1), dtype=np.uint64)
    info[NHIST] = 1  # hist[0] = hash of the empty board (0)
    return Board(
        color,
        np.zeros(n, np.int32),
        np.zeros(n, np.int32),
        np.zeros(n, np.int32),
        np.zeros(n, np.int32),
        np.zeros(n, np.int64),
        info,
        np.zeros(1, np.uint64),
        hist,
    )


def signed_points(b: Board) -> np.ndarray:
    """int8[size * size]: +1 black, -1 white, 0 empty, by flat point row * size + col
    (sgfmill rows): the board as ownership and territory code reads it."""
    size = int(b.info[SIZE])
    grid = b.color.reshape(size + 2, size + 2)[1:-1, 1:-1].reshape(-1)
    return np.where(grid == BLACK, 1, np.where(grid == WHITE, -1, 0)).astype(np.int8)


def board_from_points(points: np.ndarray, size: int, to_move: int) -> Board:
    """A board holding the stones of signed_points' form (int8[size * size]), to_move
    (BLACK or WHITE) to play: a position known only by its stones (no ko, no history)."""
    flat = np.ascontiguousarray(points, dtype=np.int8).reshape(-1)
    if flat.shape[0] != size * size:
        raise ValueError(f"points: want {size * size} for size {size}, not {flat.shape[0]}")
    b = new_board(size)
    place_points(b, flat)
    b.info[TO_MOVE] = to_move
    return b


@njit(cache=True)
def place_points(b: Board, points: np.ndarray) -> None:
    """board_from_points' stones, compiled: the territory model builds a board a query."""
    size = b.info[SIZE]
    for p in range(size * size):
        if points[p] != 0:
            loc = (p // size + 1) * (size + 2) + p % size + 1
            place_stone(b, loc, BLACK if points[p] > 0 else WHITE)


@njit(cache=True)
def copy_board(b: Board) -> Board:
    return Board(
        b.color.copy(),
        b.head.copy(),
        b.nxt.copy(),
        b.libs.copy(),
        b.nstones.copy(),
        b.mark.copy(),
        b.info.copy(),
        b.zhash.copy(),
        b.hist.copy(),
    )


@njit(cache=True)
def neighbours(b: Board, loc: int) -> tuple[int, int, int, int]:
    w = b.info[W]
    return loc - w, loc - 1, loc + 1, loc + w


@njit(cache=True)
def _next_gen(b: Board) -> int:
    b.info[MARKGEN] += 1
    return b.info[MARKGEN]


@njit(cache=True, inline="always")
def adjacent_heads(bc, head, w: int, loc: int, color: int) -> tuple[int, int, int, int]:
    """adjacent_strings on the board's arrays (bc = b.color), for the kernels that unpack them."""
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


@njit(cache=True)
def adjacent_strings(b: Board, loc: int, color: int) -> tuple[int, int, int, int]:
    """Heads of the distinct strings of color touching loc, -1 for the unused slots."""
    return adjacent_heads(b.color, b.head, b.info[W], loc, color)


@njit(cache=True, inline="always")
def liberty_walk(bc, nxt, mark, w: int, h: int, gen: int, out) -> int:
    """The walk over a string's distinct liberties (bc = b.color): every count calls it.

    Marks each liberty of string h with gen (a point already marked with gen
    counts as seen, so several walks with one gen count a union), writes the
    first len(out) of them to out (``mark[:0]`` to write none) and returns how
    many there were. first_liberty is the other walk: any one liberty, no marks.
    """
    n = 0
    s = h
    while True:
        for nb in (s - w, s - 1, s + 1, s + w):
            if bc[nb] == EMPTY and mark[nb] != gen:
                mark[nb] = gen
                if n < out.shape[0]:
                    out[n] = nb
                n += 1
        s = nxt[s]
        if s == h:
            break
    return n


@njit(cache=True, inline="always")
def first_liberty(bc, nxt, w: int, h: int, skip: int) -> int:
    """A liberty of string h other than skip, or -1 (a string in atari: its only one).

    Stops at the first one found, so it needs no marks (liberty_walk counts them all).
    """
    s = h
    while True:
        for nb in (s - w, s - 1, s + 1, s + w):
            if bc[nb] == EMPTY and nb != skip:
                return nb
        s = nxt[s]
        if s == h:
            return -1


@njit(cache=True, inline="always")
def _mark_libs_arrays(bc, nxt, mark, w: int, h: int, gen: int) -> int:
    """_mark_libs on the board's arrays (bc = b.color)."""
    return liberty_walk(bc, nxt, mark, w, h, gen, mark[:0])


@njit(cache=True)
def _mark_libs(b: Board, h: int, gen: int) -> int:
    """Mark the liberties of string h not yet marked with gen; return how many were new."""
    return _mark_libs_arrays(b.color, b.nxt, b.mark, b.info[W], h, gen)


@njit(cache=True)
def count_libs(b: Board, h: int) -> int:
    """Distinct liberties of the string with head h, by walking it."""
    return _mark_libs(b, h, _next_gen(b))


@njit(cache=True)
def string_libs(b: Board, h: int, out: np.ndarray) -> int:
    """Write up to len(out) distinct liberties of string h into out; return how many."""
    n = liberty_walk(b.color, b.nxt, b.mark, b.info[W], h, _next_gen(b), out)
    return min(n, out.shape[0])


# ---- moves ------------------------------------------------------------------------
# The move kernels take the Board and unpack its arrays once, at their top: the
# playouts call them in their move loops, where numba's reference counting of
# every Board field read cost more than the move itself (those loops are compiled
# without it). The Board forms below call them.


@njit(cache=True, inline="always")
def _merge_arrays(head, nxt, nstones, a: int, c: int) -> int:
    """Merge the strings with heads a and c, relabelling the smaller; return the surviving head."""
    if nstones[a] < nstones[c]:
        a, c = c, a
    s = c
    while True:
        head[s] = a
        s = nxt[s]
        if s == c:
            break
    na = nxt[a]
    nxt[a] = nxt[c]
    nxt[c] = na
    nstones[a] += nstones[c]
    return a


@njit(cache=True, inline="always")
def place_stone_arrays(b: Board, loc: int, color: int) -> tuple[int, int]:
    """place_stone on the board's arrays, unpacked once (bc = b.color)."""
    bc, head, nxt, libs, nstones, mark, info, zhash, _ = b
    w = info[W]
    opp = 3 - color
    bc[loc] = color
    head[loc] = loc
    nxt[loc] = loc
    nstones[loc] = 1
    zhash[0] ^= ZKEYS[color, loc]
    n_empty = 0
    for nb in (loc - w, loc - 1, loc + 1, loc + w):
        if bc[nb] == EMPTY:
            n_empty += 1
    # loc was one liberty of every distinct string touching it
    for hh in adjacent_heads(bc, head, w, loc, opp):
        if hh != -1:
            libs[hh] -= 1
    o0, o1, o2, o3 = adjacent_heads(bc, head, w, loc, color)
    for hh in (o0, o1, o2, o3):
        if hh != -1:
            libs[hh] -= 1
    libs[loc] = n_empty
    if o0 != -1 and o1 == -1:
        # joining one string: it gains the empty neighbours of loc it did not touch
        n = libs[o0]
        for e in (loc - w, loc - 1, loc + 1, loc + w):
            if bc[e] == EMPTY:
                touches = False
                for q in (e - w, e - 1, e + 1, e + w):
                    if q != loc and bc[q] == color and head[q] == o0:
                        touches = True
                if not touches:
                    n += 1
        libs[_merge_arrays(head, nxt, nstones, loc, o0)] = n
    elif o0 != -1:
        # joining several: merge them all, then count the liberties afresh
        h = np.int64(loc)
        for hh in (o0, o1, o2, o3):
            if hh != -1:
                h = _merge_arrays(head, nxt, nstones, h, hh)
        info[MARKGEN] += 1
        libs[h] = _mark_libs_arrays(bc, nxt, mark, w, h, info[MARKGEN])
    captured = 0
    cap_loc = -1
    for nb in (loc - w, loc - 1, loc + 1, loc + w):
        if bc[nb] == opp and libs[head[nb]] == 0:
            # take the string off, giving its points back as liberties; its
            # head and nxt stay, so a caller can still walk the captured stones
            h = head[nb]
            s = h
            while True:
                bc[s] = EMPTY
                zhash[0] ^= ZKEYS[opp, s]
                captured += 1
                # one liberty per distinct adjacent string of ours
                for hh in adjacent_heads(bc, head, w, s, color):
                    if hh != -1:
                        libs[hh] += 1
                s = nxt[s]
                if s == h:
                    break
            cap_loc = nb
    return captured, cap_loc


@njit(cache=True)
def place_stone(b: Board, loc: int, color: int) -> tuple[int, int]:
    """Put a stone down and take captures; no legality check, no turn change.

    Returns (stones captured, loc of one captured stone or -1).
    """
    return place_stone_arrays(b, loc, color)


@njit(cache=True, inline="always")
def is_legal_arrays(bc, head, libs, info, loc: int, color: int) -> bool:
    """is_legal on the board's arrays (bc = b.color)."""
    if loc == PASS:
        return True
    if loc < 0 or loc >= bc.shape[0] or bc[loc] != EMPTY:
        return False
    if loc == info[KO] and color == info[TO_MOVE]:
        return False
    w = info[W]
    opp = 3 - color
    for nb in (loc - w, loc - 1, loc + 1, loc + w):
        c = bc[nb]
        if c == EMPTY:
            return True
        if c == color and libs[head[nb]] > 1:
            return True
        if c == opp and libs[head[nb]] == 1:
            return True
    return False


@njit(cache=True)
def is_legal(b: Board, loc: int, color: int) -> bool:
    """Empty point, not the simple-ko point, not suicide (superko: see is_superko)."""
    return is_legal_arrays(b.color, b.head, b.libs, b.info, loc, color)


@njit(cache=True, inline="always")
def hash_after_arrays(bc, head, nxt, libs, w: int, h: np.uint64, loc: int, color: int) -> np.uint64:
    """hash_after on the board's arrays (bc = b.color), h the board's hash (b.zhash[0])."""
    if loc == PASS:
        return h
    h ^= ZKEYS[color, loc]
    opp = 3 - color
    for hh in adjacent_heads(bc, head, w, loc, opp):
        if hh != -1 and libs[hh] == 1:
            s = hh
            while True:
                h ^= ZKEYS[opp, s]
                s = nxt[s]
                if s == hh:
                    break
    return h


@njit(cache=True)
def hash_after(b: Board, loc: int, color: int) -> np.uint64:
    """Zobrist hash of the position after a (legal) move, without playing it."""
    return hash_after_arrays(b.color, b.head, b.nxt, b.libs, b.info[W], b.zhash[0], loc, color)


@njit(cache=True)
def is_superko(b: Board, loc: int, color: int) -> bool:
    """Would this move repeat an earlier position (positional superko)?"""
    if loc == PASS:
        return False
    h = hash_after(b, loc, color)
    n = min(b.info[NHIST], b.hist.shape[0])
    for i in range(n):
        if b.hist[i] == h:
            return True
    return False


@njit(cache=True, inline="always")
def play_arrays(b: Board, loc: int, color: int) -> int:
    """play on the board's arrays, unpacked once."""
    head, libs, nstones, info, zhash, hist = b.head, b.libs, b.nstones, b.info, b.zhash, b.hist
    captured = 0
    info[KO] = -1
    info[KO_CAPTURED] = 0
    if loc != PASS:
        captured, cap_loc = place_stone_arrays(b, loc, color)
        h = head[loc]
        if captured == 1 and nstones[h] == 1 and libs[h] == 1:
            info[KO] = cap_loc
            info[KO_CAPTURED] = 1
    info[TO_MOVE] = 3 - color
    info[NMOVES] += 1
    info[LAST2] = info[LAST]
    info[LAST] = loc
    k = info[NHIST]
    if k < hist.shape[0]:
        hist[k] = zhash[0]
    info[NHIST] = k + 1
    return captured


@njit(cache=True)
def play(b: Board, loc: int, color: int) -> int:
    """Play a move (assumed legal) for color and hand the turn over.

    Returns the number of stones captured.
    """
    return play_arrays(b, loc, color)


@njit(cache=True)
def setup_stone(b: Board, loc: int, color: int) -> None:
    """A handicap or setup stone: placed without a turn, recorded for superko."""
    place_stone(b, loc, color)
    k = b.info[NHIST] - 1
    if k < b.hist.shape[0]:
        b.hist[k] = b.zhash[0]


@njit(cache=True)
def history_set(hist: np.ndarray, n: int) -> np.ndarray:
    """The hashes hist[:n] as an open-addressing set (uint64[2^k], 0 = an empty slot;
    slot 0's last word holds 1 when hash 0, the empty board's, is among them): is_superko's
    linear scan as one probe a move, for legal_moves."""
    cap = 4
    while cap < 2 * n + 2:
        cap *= 2
    table = np.zeros(cap + 1, np.uint64)
    mask = np.uint64(cap - 1)
    for i in range(n):
        h = hist[i]
        if h == 0:
            table[cap] = 1
            continue
        j = h & mask
        while table[j] != 0 and table[j] != h:
            j = (j + np.uint64(1)) & mask
        table[j] = h
    return table


@njit(cache=True, inline="always")
def in_history_set(table: np.ndarray, h: np.uint64) -> bool:
    """Is h one of the hashes history_set(hist, n) holds?"""
    cap = table.shape[0] - 1
    if h == 0:
        return table[cap] == 1
    mask = np.uint64(cap - 1)
    j = h & mask
    while table[j] != 0:
        if table[j] == h:
            return True
        j = (j + np.uint64(1)) & mask
    return False


@njit(cache=True)
def legal_moves(b: Board, color: int, superko: bool, out: np.ndarray) -> int:
    """Write every legal on-board move of color into out; return the count (pass excluded).

    With superko, the moves is_superko refuses are left out (their hash_after looked up
    in a set of the history, built once a call).
    """
    n_hist = min(b.info[NHIST], b.hist.shape[0]) if superko else 0
    return legal_into(b, color, superko, history_set(b.hist, n_hist), out)


@njit(cache=True, _nrt=False)
def legal_into(b: Board, color: int, superko: bool, seen: np.ndarray, out: np.ndarray) -> int:
    """legal_moves' loop, seen its history_set; compiled without numba's reference
    counting (it allocates nothing), which cost more than the rules' checks."""
    bc, head, nxt, libs, _, _, info, zhash, _ = b
    size = info[SIZE]
    w = info[W]
    h = zhash[0]
    n = 0
    for r in range(size):
        for c in range(size):
            loc = (r + 1) * w + c + 1
            if not is_legal_arrays(bc, head, libs, info, loc, color):
                continue
            if superko and in_history_set(
                seen, hash_after_arrays(bc, head, nxt, libs, w, h, loc, color)
            ):
                continue
            out[n] = loc
            n += 1
    return n


@njit(cache=True, inline="always")
def libs_after_arrays(bc, head, nxt, libs, mark, info, loc: int, color: int) -> int:
    """libs_after on the board's arrays (bc = b.color), for the playout kernels."""
    w = info[W]
    opp = 3 - color
    info[MARKGEN] += 1
    gen = info[MARKGEN]
    # the own strings the stone joins
    o0, o1, o2, o3 = adjacent_heads(bc, head, w, loc, color)
    mark[loc] = gen
    n = 0
    for nb in (loc - w, loc - 1, loc + 1, loc + w):
        if bc[nb] == EMPTY and mark[nb] != gen:
            mark[nb] = gen
            n += 1
    for hh in (o0, o1, o2, o3):
        if hh != -1:
            n += _mark_libs_arrays(bc, nxt, mark, w, hh, gen)
    # stones of captured strings that touch the new string become liberties
    for nb in (loc - w, loc - 1, loc + 1, loc + w):
        if bc[nb] == opp and libs[head[nb]] == 1:
            hh = head[nb]
            s = hh
            while True:
                if mark[s] != gen:
                    touches = False
                    for nb2 in (s - w, s - 1, s + 1, s + w):
                        if nb2 == loc:
                            touches = True
                        elif bc[nb2] == color:
                            h2 = head[nb2]
                            if h2 == o0 or h2 == o1 or h2 == o2 or h2 == o3:
                                touches = True
                    if touches:
                        mark[s] = gen
                        n += 1
                s = nxt[s]
                if s == hh:
                    break
    return n


@njit(cache=True)
def libs_after(b: Board, loc: int, color: int) -> int:
    """Liberties of the string a move at loc would make, captures included."""
    return libs_after_arrays(b.color, b.head, b.nxt, b.libs, b.mark, b.info, loc, color)


@njit(cache=True)
def captures_of(b: Board, loc: int, color: int) -> int:
    """Stones a move at loc would capture."""
    n = 0
    for hh in adjacent_strings(b, loc, 3 - color):
        if hh != -1 and b.libs[hh] == 1:
            n += b.nstones[hh]
    return n


# ---- self-ataris ----------------------------------------------------------------------


@njit(cache=True, inline="always")
def self_atari_at(bc, head, nxt, libs, w: int, loc: int, color: int) -> bool:
    """Would the move at loc, capturing nothing (the caller knows), leave its string one liberty?

    Its liberties are its empty neighbours and, from each of our strings it
    joins, their liberties but loc: none from a string in atari, two at least
    from one with three (board.libs_after counts the same, captures included).
    """
    lib = -1
    for nb in (loc - w, loc - 1, loc + 1, loc + w):
        c = bc[nb]
        if c == EMPTY:
            if lib != -1 and nb != lib:
                return False
            lib = nb
        elif c == color:
            n = libs[head[nb]]
            if n >= 3:
                return False
            if n == 2:
                x = first_liberty(bc, nxt, w, nb, loc)  # the string's other liberty
                if lib == -1:
                    lib = x
                elif x != lib:
                    return False
    return lib != -1


@njit(cache=True)
def is_self_atari(b: Board, loc: int, color: int) -> bool:
    """The move captures nothing and its string is left with one liberty (the self-atari
    level of gomove.features.tactical)."""
    if captures_of(b, loc, color) > 0:
        return False
    return self_atari_at(b.color, b.head, b.nxt, b.libs, b.info[W], loc, color)


@njit(cache=True, inline="always")
def big_self_atari(b: Board, loc: int, color: int, limit: int) -> bool:
    """Would color's move at loc capture nothing and leave a string of more than limit
    stones (the move's own included) with one liberty? (limit 0: never.) The pattern
    playouts and the territory labels' settle playouts both refuse such moves."""
    if limit <= 0:
        return False
    n = 1
    for h in adjacent_strings(b, loc, color):
        if h != -1:
            n += b.nstones[h]
    return n > limit and is_self_atari(b, loc, color)


@njit(cache=True)
def restore_position(dst: Board, src: Board) -> None:
    """restore_board without the superko history: playouts never read it (and only write
    past src's, so dst's stays src's), and at 8 KB it costs more than the rest."""
    dst.color[:] = src.color
    dst.head[:] = src.head
    dst.nxt[:] = src.nxt
    dst.libs[:] = src.libs
    dst.nstones[:] = src.nstones
    dst.mark[:] = src.mark
    dst.info[:] = src.info
    dst.zhash[:] = src.zhash


@njit(cache=True)
def restore_board(dst: Board, src: Board) -> None:
    """Copy src's whole state into dst (same shapes) without allocating."""
    restore_position(dst, src)
    dst.hist[:] = src.hist
