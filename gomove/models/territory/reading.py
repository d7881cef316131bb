"""The board as the territory model reads it, made once a board size: neighbours, the
neighbour pairs, the symmetries, the points around each point, and each position's
strings and empty regions with their liberties and borders.

Terms:
- points are flat, index r * size + c in sgfmill's (row, col) order; ``grid_edges``
  lists each neighbour pair once.
- rel: a position's stones in the frame of the side to move (``relative``: +1 the
  mover's, -1 the opponent's, 0 empty).
- component: a maximal connected set of points of one colour, stones (a string) or
  empty points (an empty region); ``components`` gives each point's, its size, a
  string's liberties and which colours border an empty region.
- Geometry: what a board size's reading needs, made once (``geometry``): the neighbour
  table, the edges, the distance to the edge (capped at CAP), the points within
  RADIUS steps of each point, the 8 symmetries, the Zobrist keys of the canonical
  form and an empty board for the playouts.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import new_board
from gomove.features.patterns import SYMMETRIES

CAP = 4  # liberties, distances and edge distances are capped here


RADIUS = 4  # the wide features' reach (Manhattan distance)


N_OFFSETS = 2 * RADIUS * (RADIUS + 1)  # points within RADIUS steps, the centre apart


def offsets() -> np.ndarray:
    """int32[N_OFFSETS, 3]: (row step, column step, distance) of every point within RADIUS."""
    out = [
        (dr, dc, abs(dr) + abs(dc))
        for dr in range(-RADIUS, RADIUS + 1)
        for dc in range(-RADIUS, RADIUS + 1)
        if 0 < abs(dr) + abs(dc) <= RADIUS
    ]
    return np.array(out, np.int32)


OFFSETS = offsets()


def around_table(size: int, offs: np.ndarray) -> np.ndarray:
    """int32[N, len(offs)]: the point at each offset from each point, -1 off the board."""
    r, c = np.divmod(np.arange(size * size), size)
    rr = r[:, None] + offs[None, :, 0]
    cc = c[:, None] + offs[None, :, 1]
    inside = (rr >= 0) & (rr < size) & (cc >= 0) & (cc < size)
    return np.where(inside, rr * size + cc, -1).astype(np.int32)


def grid_edges(size: int) -> np.ndarray:
    """int32[E, 2]: every pair of orthogonal neighbours once, E = 2 size (size - 1)."""
    idx = np.arange(size * size).reshape(size, size)
    right = np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], axis=1)
    up = np.stack([idx[:-1, :].ravel(), idx[1:, :].ravel()], axis=1)
    return np.ascontiguousarray(np.concatenate([right, up]), dtype=np.int32)


def neighbour_table(size: int) -> np.ndarray:
    """int32[N, 4]: the orthogonal neighbours of each point, -1 off the board."""
    out = np.full((size * size, 4), -1, np.int32)
    for r in range(size):
        for c in range(size):
            i = r * size + c
            for k, (dr, dc) in enumerate(((-1, 0), (1, 0), (0, -1), (0, 1))):
                rr, cc = r + dr, c + dc
                if 0 <= rr < size and 0 <= cc < size:
                    out[i, k] = rr * size + cc
    return out


def board_symmetries(size: int) -> np.ndarray:
    """int64[8, N]: the point each of the 8 symmetries of the square
    (gomove.features.patterns.SYMMETRIES) sends each point to."""
    n = size - 1
    out = np.empty((len(SYMMETRIES), size * size), np.int64)
    for k, sym in enumerate(SYMMETRIES):
        for i in range(size * size):
            x, y = sym(2 * (i % size) - n, 2 * (i // size) - n)  # doubled, about the centre
            out[k, i] = (y + n) // 2 * size + (x + n) // 2
    return out


@njit(cache=True)
def components(
    rel: np.ndarray, nbr: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The connected components of equal value in rel (the strings of each colour, the
    empty regions), in one flood fill: (each point's component id, its first point; and
    at each id the component's size, its liberties (the distinct empty points next to
    it: a string's liberties, 0 for a region) and its border (bit 1: friendly stones
    next to it, bit 2: enemy stones))."""
    n = rel.shape[0]
    cid = np.full(n, -1, np.int32)
    csize = np.zeros(n, np.int32)
    clibs = np.zeros(n, np.int32)
    border = np.zeros(n, np.int32)
    stack = np.empty(n, np.int32)
    lib_mark = np.full(n, -1, np.int32)
    for start in range(n):
        if cid[start] >= 0:
            continue
        value = rel[start]
        cid[start] = start
        top = 1
        stack[0] = start
        m = 0
        n_libs = 0
        bits = 0
        while top:
            top -= 1
            p = stack[top]
            m += 1
            for k in range(4):
                q = nbr[p, k]
                if q < 0:
                    continue
                if rel[q] == value:
                    if cid[q] < 0:
                        cid[q] = start
                        stack[top] = q
                        top += 1
                elif rel[q] == 0:
                    if lib_mark[q] != start:
                        lib_mark[q] = start
                        n_libs += 1
                elif rel[q] > 0:
                    bits |= 1
                else:
                    bits |= 2
        csize[start] = m
        clibs[start] = n_libs
        border[start] = bits
    return cid, csize, clibs, border


@njit(cache=True)
def string_view(
    rel: np.ndarray, cid: np.ndarray, csize: np.ndarray, clibs: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(string id, liberties, stones) of each point's string from its components; -1,
    0, 0 for empty points."""
    n = rel.shape[0]
    sid = np.full(n, -1, np.int32)
    libs = np.zeros(n, np.int32)
    stones = np.zeros(n, np.int32)
    for i in range(n):
        if rel[i] != 0:
            sid[i] = cid[i]
            libs[i] = clibs[cid[i]]
            stones[i] = csize[cid[i]]
    return sid, libs, stones


@njit(cache=True)
def distance_to(rel: np.ndarray, nbr: np.ndarray, colour: int, cap: int) -> np.ndarray:
    """Steps from each point to the nearest stone of colour (rel frame), capped at cap."""
    n = rel.shape[0]
    dist = np.full(n, cap, np.int32)
    queue = np.empty(n, np.int32)
    head = 0
    tail = 0
    for i in range(n):
        if rel[i] == colour:
            dist[i] = 0
            queue[tail] = i
            tail += 1
    while head < tail:
        p = queue[head]
        head += 1
        if dist[p] + 1 >= cap:
            continue
        for k in range(4):
            q = nbr[p, k]
            if q >= 0 and dist[q] > dist[p] + 1:
                dist[q] = dist[p] + 1
                queue[tail] = q
                tail += 1
    return dist


class Geometry:
    """A board size's neighbour table, edge list and distance to the edge, made once."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.nbr = neighbour_table(size)
        self.edges = grid_edges(size)
        r, c = np.divmod(np.arange(size * size), size)
        line = np.minimum(np.minimum(r, c), np.minimum(size - 1 - r, size - 1 - c))
        self.edge_line = np.minimum(line, CAP).astype(np.int32)
        self.around = around_table(size, OFFSETS)
        self.sym = board_symmetries(size)
        self.sym_keys = np.random.default_rng(size).integers(
            0, 2**63, size=(size * size, 2), dtype=np.uint64
        )  # Zobrist keys of the mc set's canonical form
        self.empty_board = new_board(size)  # the playouts' boards start as copies of it


_GEOMETRY: dict[int, Geometry] = {}


def geometry(size: int) -> Geometry:
    if size not in _GEOMETRY:
        _GEOMETRY[size] = Geometry(size)
    return _GEOMETRY[size]


def relative(colour: np.ndarray, to_move: int) -> np.ndarray:
    """int8 colours (+1 black, -1 white, 0 empty) in the mover's frame (+1 the mover's)."""
    return (np.asarray(colour, dtype=np.int8) * np.int8(1 if to_move > 0 else -1)).astype(np.int8)
