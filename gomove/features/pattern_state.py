"""Every point's shape pattern hashes, kept up to date along a replay.

patterns.pattern_hashes hashes one candidate's templates from scratch: the 72
points of the radius-10 template under 8 symmetries, for each of the ~300
candidates of a position. Between two positions of a game only a stone or a
few change, and a pattern hash is an XOR of keys, so ``PatternState`` keeps
the hashes of every point instead: a stone placed or taken XORs its point's
old and new keys into the hashes of the (at most 72) points whose templates
hold it, for both colours to move (the states are relative to the player to
move) and every symmetry. A point's hashes are then read, not computed, and
its shape level (patterns.match_largest, the largest harvested match) is kept
until a stone inside its largest template changes.

Terms:
- ring k of the templates: the template points i with ends[k - 1] <= i <
  ends[k] (Templates.ends; the first ring starts at 0), the points the
  template of radius radii[k] adds to the one before. ``rings[c, pt, k, s]``
  is the XOR of the keys of ring k around point pt under symmetry s, with
  colour c + 1 to move; the template of radius radii[k] hashes to the XOR of
  rings 0..k, and its canonical hash is the least over s, as pattern_hashes
  computes it (the same 64 bits: tests/test_pattern_state.py checks every
  point of every position of random and real games).
- seen: the board colours the rings hold. ``sync_pattern_state`` compares a
  board with them and moves the rings to it, whatever happened in between (a
  move, its captures, setup stones, an unrelated position), so its cost is
  the points that changed.
- sym_keys[i, st, s]: the key of template point i in state st under symmetry
  s (Templates.keys[perm[s, i], st]), what a point of ring_of[i] XORs in.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np
from numba import njit

from gomove.board.board import EMPTY, WALL
from gomove.features.patterns import (
    S_EMPTY,
    S_OFF,
    Templates,
    make_templates,
    match_largest,
    point_state,
)

N_SYM = 8


class PatternState(NamedTuple):
    """The rings of every point of a size x size board (module docstring) and each
    point's cached shape level, for one pattern table (the one it is asked with)."""

    rings: np.ndarray  # uint64[2, N, R, 8]: [colour to move - 1, point, ring, symmetry]
    seen: np.ndarray  # int8[L]: the board colours the rings hold, by loc
    level: np.ndarray  # int32[2, N]: the shape level of a point, while fresh
    fresh: np.ndarray  # bool[2, N]: level is up to date
    sym_keys: np.ndarray  # uint64[P, 4, 8]: keys[perm[s, i], st]
    ring_of: np.ndarray  # int64[P]: the ring of template point i
    dx: np.ndarray  # int64[P]: Templates.dx
    dy: np.ndarray  # int64[P]: Templates.dy
    hashes: np.ndarray  # uint64[R]: scratch, a point's canonical hash per radius
    acc: np.ndarray  # uint64[8]: scratch, the XOR of its rings per symmetry


def sym_keys(t: Templates) -> np.ndarray:
    """uint64[P, 4, 8]: keys[perm[s, i], st] by template point i, state st, symmetry s."""
    return np.ascontiguousarray(t.keys[t.perm.T].transpose(0, 2, 1))


def ring_of(t: Templates) -> np.ndarray:
    """int64[P]: the ring (index into t.radii) of every template point."""
    return np.searchsorted(t.ends, np.arange(int(t.ends[-1])), side="right").astype(np.int64)


@njit(cache=True)
def _empty_rings(size: int, dx, dy, ring, keys, out) -> None:
    """out[0, pt, k, s]: the rings of every point of the empty size x size board."""
    for r in range(size):
        for c in range(size):
            pt = r * size + c
            for i in range(dx.shape[0]):
                rr = r + dy[i]
                cc = c + dx[i]
                off = rr < 0 or cc < 0 or rr >= size or cc >= size
                st = S_OFF if off else S_EMPTY
                for s in range(N_SYM):
                    out[0, pt, ring[i], s] ^= keys[i, st, s]


@cache
def empty_rings(size: int, radii: tuple[int, ...]) -> np.ndarray:
    """uint64[2, N, R, 8]: the rings of the empty board (read-only; both colours alike),
    computed once per size and templates (their radii fix them: make_templates)."""
    t = make_templates(radii[0], radii[-1])
    out = np.zeros((2, size * size, len(radii), N_SYM), np.uint64)
    _empty_rings(size, t.dx, t.dy, ring_of(t), sym_keys(t), out)
    out[1] = out[0]
    out.flags.writeable = False
    return out


def new_pattern_state(size: int, t: Templates) -> PatternState:
    """The state of the empty size x size board, no level known yet (size 0: a state of
    no point, for a visitor without shapes)."""
    n = size * size
    seen = np.full((size + 2, size + 2), WALL, np.int8)
    seen[1:-1, 1:-1] = EMPTY
    return PatternState(
        empty_rings(size, t.radii).copy(),
        seen.reshape(-1),
        np.zeros((2, n), np.int32),
        np.zeros((2, n), np.bool_),
        sym_keys(t),
        ring_of(t),
        t.dx,
        t.dy,
        np.zeros(len(t.radii), np.uint64),
        np.zeros(N_SYM, np.uint64),
    )


@njit(cache=True, _nrt=False)
def sync_pattern_state(ps: PatternState, color: np.ndarray, size: int) -> int:
    """Move the rings to the board colours color (Board.color of a size x size board);
    returns how many points changed. Compiled without numba's reference counting (it
    allocates nothing), as the board's move loops are."""
    w = size + 2
    seen = ps.seen
    changed = 0
    for r in range(size):
        for c in range(size):
            loc = (r + 1) * w + c + 1
            new = color[loc]
            old = seen[loc]
            if new != old:
                _change(ps, size, r, c, old, new)
                seen[loc] = new
                changed += 1
    return changed


@njit(cache=True, inline="always")
def _change(ps: PatternState, size: int, r: int, c: int, old: int, new: int) -> None:
    """XOR point (r, c)'s change of colour old -> new into the rings of the points whose
    templates hold it."""
    rings, fresh, keys, ring, dx, dy = ps.rings, ps.fresh, ps.sym_keys, ps.ring_of, ps.dx, ps.dy
    for i in range(dx.shape[0]):
        pr = r - dy[i]
        pc = c - dx[i]
        if pr < 0 or pc < 0 or pr >= size or pc >= size:
            continue
        pt = pr * size + pc
        k = ring[i]
        for ci in range(2):
            so = point_state(old, ci + 1)
            sn = point_state(new, ci + 1)
            for s in range(N_SYM):
                rings[ci, pt, k, s] ^= keys[i, so, s] ^ keys[i, sn, s]
            fresh[ci, pt] = False


@njit(cache=True, _nrt=False)
def point_hashes(ps: PatternState, color: int, pt: int, out: np.ndarray) -> None:
    """out[R]: the canonical hash of every template radius around point pt (flat, row *
    size + col) with color to move, from the rings (pattern_hashes' values)."""
    ci = color - 1
    acc = ps.acc
    for s in range(N_SYM):
        acc[s] = 0
    for k in range(out.shape[0]):
        m = np.uint64(0)
        for s in range(N_SYM):
            acc[s] ^= ps.rings[ci, pt, k, s]
            if s == 0 or acc[s] < m:
                m = acc[s]
        out[k] = m


@njit(cache=True, _nrt=False)
def shape_level(ps: PatternState, color: int, pt: int, tkeys, tvals) -> int:
    """The shape level of point pt with color to move (patterns.match_largest of its
    hashes in the table tkeys, tvals), cached until a stone of its templates changes."""
    ci = color - 1
    if ps.fresh[ci, pt]:
        return ps.level[ci, pt]
    point_hashes(ps, color, pt, ps.hashes)
    lvl = match_largest(ps.hashes, tkeys, tvals)
    ps.level[ci, pt] = lvl
    ps.fresh[ci, pt] = True
    return lvl
