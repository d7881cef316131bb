"""Shape patterns: nested templates, symmetry-invariant Zobrist hashes, lookup tables.

Terms (Stern et al. 2006; Coulom 2007, section 3.2):
- template of radius r: the points (dx, dy) around a candidate with
  d(dx, dy) = |dx| + |dy| + max(|dx|, |dy|) <= r (Coulom's distance, Table 1),
  the candidate itself left out (it is always empty). Templates of radius
  3..10 are nested: each contains the smaller ones.
- point state, relative to the player to move: S_EMPTY, S_OWN, S_OPP or S_OFF
  (off the board), ``point_state``; the one set of states of the package
  (light.py's 3x3 codes add "in atari" to own and opponent). Hashing
  own/opponent instead of black/white makes a pattern and its colour-swapped
  twin (with the other side to move) the same.
- pattern hash: XOR of one 64-bit key per (template point, state), taken for
  each of the 8 symmetries of the square; the minimum of the 8 is the
  canonical hash, identical for every rotation and reflection of the shape.
- pattern table: an open-addressing hash table (uint64 keys, int32 values)
  from canonical hash to shape level, built from the harvested patterns.
- hierarchy: the patterns at one point are nested, so the largest match fixes every
  smaller one; a harvested pattern's parent is the harvested pattern of the next
  smaller radius that matches inside it (``pattern_parents``), and the chain of a
  candidate's matches, largest first, is a walk up the parents (``match_chain``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from gomove.board.board import EMPTY, SIZE, WALL, Board, W
from gomove.board.zobrist import PATTERN_SEED

S_EMPTY = 0
S_OWN = 1
S_OPP = 2
S_OFF = 3

MAX_RADIUS = 10  # the largest template that fits Coulom's 10 nested circles


@njit(cache=True)
def distance(dx: int, dy: int) -> int:
    """Coulom's distance d(dx, dy) = |dx| + |dy| + max(|dx|, |dy|) (Table 1)."""
    dx, dy = abs(dx), abs(dy)
    return dx + dy + max(dx, dy)


@njit(cache=True, inline="always")
def point_state(c: int, color: int) -> int:
    """The state of a point of board colour c (EMPTY, BLACK, WHITE, WALL) for color to move."""
    if c == EMPTY:
        return S_EMPTY
    if c == WALL:
        return S_OFF
    return S_OWN if c == color else S_OPP


# The 8 symmetries of the square as maps (dx, dy) -> (dx', dy').
SYMMETRIES = (
    lambda x, y: (x, y),
    lambda x, y: (-y, x),
    lambda x, y: (-x, -y),
    lambda x, y: (y, -x),
    lambda x, y: (-x, y),
    lambda x, y: (x, -y),
    lambda x, y: (y, x),
    lambda x, y: (-y, -x),
)


@dataclass(frozen=True)
class Templates:
    """The nested templates of radius min_radius..max_radius, as arrays for the kernels.

    - dx, dy: int64[P] template offsets sorted by distance (candidate excluded);
    - ends: int64[R] number of offsets within each radius (radii[k] -> ends[k]);
    - perm: int64[8, P] index of the offset each symmetry maps an offset to;
    - keys: uint64[P, 4] Zobrist keys per offset and state.
    """

    radii: tuple[int, ...]
    dx: np.ndarray
    dy: np.ndarray
    ends: np.ndarray
    perm: np.ndarray
    keys: np.ndarray


def make_templates(min_radius: int = 3, max_radius: int = MAX_RADIUS) -> Templates:
    if not 2 <= min_radius <= max_radius <= MAX_RADIUS * 2:
        raise ValueError(f"bad pattern radii {min_radius}..{max_radius}")
    span = max_radius
    offs = [
        (distance(x, y), y, x)
        for y in range(-span, span + 1)
        for x in range(-span, span + 1)
        if 0 < distance(x, y) <= max_radius
    ]
    offs.sort()
    index = {(x, y): i for i, (_, y, x) in enumerate(offs)}
    dx = np.array([x for _, _, x in offs], dtype=np.int64)
    dy = np.array([y for _, y, _ in offs], dtype=np.int64)
    dist = np.array([d for d, _, _ in offs], dtype=np.int64)
    radii = tuple(range(min_radius, max_radius + 1))
    ends = np.array([int(np.sum(dist <= r)) for r in radii], dtype=np.int64)
    perm = np.array(
        [[index[sym(int(x), int(y))] for x, y in zip(dx, dy, strict=True)] for sym in SYMMETRIES],
        dtype=np.int64,
    )
    # keys depend on the offset itself, not on its order, so that templates
    # with other radii give the same hashes for the same shapes
    rng = np.random.Generator(np.random.PCG64(PATTERN_SEED))
    span_keys = 2 * MAX_RADIUS * 2 + 1
    all_keys = rng.integers(
        1, np.iinfo(np.uint64).max, size=(span_keys, span_keys, 4), dtype=np.uint64
    )
    keys = np.stack(
        [all_keys[y + 2 * MAX_RADIUS, x + 2 * MAX_RADIUS] for x, y in zip(dx, dy, strict=True)]
    )
    return Templates(radii, dx, dy, ends, perm, keys)


@njit(cache=True)
def pattern_hashes(
    b: Board,
    loc: int,
    color: int,
    dx: np.ndarray,
    dy: np.ndarray,
    ends: np.ndarray,
    perm: np.ndarray,
    keys: np.ndarray,
    out: np.ndarray,
) -> None:
    """Canonical hash of every nested template around loc into out[R]."""
    size = b.info[SIZE]
    w = b.info[W]
    row = loc // w - 1
    col = loc % w - 1
    h = np.zeros(8, dtype=np.uint64)
    k = 0
    n = dx.shape[0]
    last = ends[ends.shape[0] - 1]
    for i in range(min(n, last)):
        r = row + dy[i]
        c = col + dx[i]
        if r < 0 or c < 0 or r >= size or c >= size:
            st = S_OFF
        else:
            st = point_state(b.color[(r + 1) * w + c + 1], color)
        for s in range(8):
            h[s] ^= keys[perm[s, i], st]
        while k < ends.shape[0] and ends[k] == i + 1:
            m = h[0]
            for s in range(1, 8):
                if h[s] < m:
                    m = h[s]
            out[k] = m
            k += 1


@njit(cache=True)
def pattern_states(
    b: Board, loc: int, color: int, dx: np.ndarray, dy: np.ndarray, out: np.ndarray
) -> None:
    """The state of every template point around loc, out[:len(out)] in template order:
    the stone configuration behind pattern_hashes (kept so patterns can be drawn)."""
    size = b.info[SIZE]
    w = b.info[W]
    row = loc // w - 1
    col = loc % w - 1
    for i in range(out.shape[0]):
        r = row + dy[i]
        c = col + dx[i]
        if r < 0 or c < 0 or r >= size or c >= size:
            out[i] = S_OFF
        else:
            out[i] = point_state(b.color[(r + 1) * w + c + 1], color)


def states_hash(t: Templates, states: np.ndarray) -> int:
    """Canonical hash (pattern_hashes) of a stone configuration of len(states) template
    points, which must be a whole template (t.ends[k] points): the hash of a drawn pattern."""
    n = len(states)
    if n not in set(int(e) for e in t.ends):
        raise ValueError(f"{n} points is no template size of radii {t.radii}")
    idx = np.arange(n)
    h = np.bitwise_xor.reduce(t.keys[t.perm[:, idx], np.asarray(states, dtype=np.int64)], axis=1)
    return int(h.min())


# ---- the lookup table ---------------------------------------------------------------


@njit(cache=True)
def _slot(key: np.uint64, mask: int) -> int:
    return int((key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)) & mask


@njit(cache=True)
def table_insert(tkeys: np.ndarray, tvals: np.ndarray, key: np.uint64, val: int) -> None:
    mask = tkeys.shape[0] - 1
    i = _slot(key, mask)
    while tkeys[i] != 0 and tkeys[i] != key:
        i = (i + 1) & mask
    tkeys[i] = key
    tvals[i] = val


@njit(cache=True)
def table_get(tkeys: np.ndarray, tvals: np.ndarray, key: np.uint64) -> int:
    """Value stored for key, or -1."""
    mask = tkeys.shape[0] - 1
    i = _slot(key, mask)
    while tkeys[i] != 0:
        if tkeys[i] == key:
            return tvals[i]
        i = (i + 1) & mask
    return -1


@njit(cache=True)
def _fill_table(tkeys: np.ndarray, tvals: np.ndarray, hashes: np.ndarray) -> None:
    for i in range(hashes.shape[0]):
        table_insert(tkeys, tvals, hashes[i], i + 1)


def build_table(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Open-addressing table mapping hashes[i] -> i + 1 (a shape level), load <= 1/2.
    Filled in one compiled loop: a model's table is built at every load (849,928 shapes
    in milliseconds, not the second of a Python loop)."""
    hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
    if (hashes == 0).any():
        raise ValueError("pattern hash 0 is reserved for empty table slots")
    cap = 1 << max(4, int(2 * max(len(hashes), 1) - 1).bit_length())
    tkeys = np.zeros(cap, dtype=np.uint64)
    tvals = np.zeros(cap, dtype=np.int32)
    _fill_table(tkeys, tvals, hashes)
    return tkeys, tvals


@njit(cache=True)
def match_largest(hashes: np.ndarray, tkeys: np.ndarray, tvals: np.ndarray) -> int:
    """Shape level of the largest template whose pattern is in the table (0: none)."""
    for k in range(hashes.shape[0] - 1, -1, -1):
        v = table_get(tkeys, tvals, hashes[k])
        if v > 0:
            return v
    return 0


# ---- the hierarchy ------------------------------------------------------------------


@njit(cache=True)
def prefix_hashes(
    stones: np.ndarray, n_points: int, perm: np.ndarray, keys: np.ndarray
) -> np.ndarray:
    """uint64[P]: the canonical hash of the first n_points template points of every row
    of stones (uint8[P, N], point states in template order), as pattern_hashes hashes
    the template of that many points."""
    out = np.zeros(stones.shape[0], dtype=np.uint64)
    h = np.zeros(8, dtype=np.uint64)
    for p in range(stones.shape[0]):
        h[:] = 0
        for i in range(n_points):
            st = stones[p, i]
            for s in range(8):
                h[s] ^= keys[perm[s, i], st]
        m = h[0]
        for s in range(1, 8):
            if h[s] < m:
                m = h[s]
        out[p] = m
    return out


def pattern_parents(
    t: Templates, hashes: np.ndarray, radius: np.ndarray, stones: np.ndarray
) -> np.ndarray:
    """int32[P]: the parent level of every harvested pattern (level i + 1 is pattern i):
    the pattern of the largest smaller radius among t.radii whose sub-pattern (the first
    points of the stones, in template order) is harvested too; 0 for none."""
    tkeys, tvals = build_table(hashes)
    parents = np.zeros(len(hashes), dtype=np.int32)
    todo = np.ones(len(hashes), dtype=bool)
    stones = np.ascontiguousarray(stones, dtype=np.uint8)
    for k in range(len(t.radii) - 2, -1, -1):  # the next smaller radius first
        rows = np.flatnonzero(todo & (radius > t.radii[k]))
        if not len(rows):
            continue
        sub = prefix_hashes(stones[rows], int(t.ends[k]), t.perm, t.keys)
        levels = np.array([table_get(tkeys, tvals, h) for h in sub], dtype=np.int64)
        found = levels > 0
        parents[rows[found]] = levels[found]
        todo[rows[found]] = False
    return parents


@njit(cache=True)
def match_chain(level: int, parents: np.ndarray, out: np.ndarray) -> int:
    """The levels of a candidate's matches, largest first, into out from its largest
    match level (0: none), by walking parents; returns how many."""
    n = 0
    while level > 0 and n < out.shape[0]:
        out[n] = level
        n += 1
        level = parents[level - 1]
    return n
