"""The pattern hierarchy over global feature indices: what ``features.shapes=all`` trains.

Stern's talk (seeds 003, "Hierarchical Gaussian Model of Move Values") uses every
pattern that matches at a point, not only the largest. The patterns at one point
are nested, so the largest harvested match determines the others: its chain of
parents (harvest.PatternTable.parents, the next smaller harvested radius inside
it). Lifted to global feature indices (``up``), the chain makes "every pattern of
the chain is a member of the team" a change of parameters, which every trainer
uses the same way:

- raw parameters theta (one per feature; what a trainer fits, regularizes and
  puts its prior on): a pattern's own contribution on top of its parent's;
- effective parameters phi = ``sum_down(theta)``: phi_p = theta_p + phi_up(p), the
  sum over p's chain. A candidate whose largest match is p scores phi_p, exactly
  what a team holding every pattern of the chain scores, since teams add their
  members in log-strength (MM's log-gammas, FBT's table rows, the rankers' means).
  So the trained model keeps phi: a largest-only model, which evaluation, play and
  the exports read unchanged, and costs no byte per candidate;
- ``sum_up``, the transpose: the gradient (or MM statistic) of a raw parameter sums
  those of the patterns whose chain holds it.

The table sorts patterns by radius, so a parent's index is below its child's and
both sums are one serial pass. ``groups`` splits the shape group by radius (each
contiguous): a team holds at most one pattern of a radius, so MM updating one radius
at a time keeps Coulom's exact minorization.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from gomove.features.pattern_table import PatternTable
from gomove.features.registry import SHAPE_GROUP, GroupSpan, Registry


@njit(cache=True)
def _sum_down(x: np.ndarray, up: np.ndarray, lo: int, hi: int) -> None:
    """x[f] += x[up[f]] for f in lo..hi-1, in order (parents first): chain sums in place."""
    for f in range(lo, hi):
        p = up[f]
        if p != 0:
            for q in range(x.shape[1]):
                x[f, q] += x[p, q]


@njit(cache=True)
def _sum_up(g: np.ndarray, up: np.ndarray, lo: int, hi: int) -> None:
    """g[up[f]] += g[f] for f from hi-1 down to lo (children first): _sum_down's transpose."""
    for f in range(hi - 1, lo - 1, -1):
        p = up[f]
        if p != 0:
            for q in range(g.shape[1]):
                g[p, q] += g[f, q]


@njit(cache=True)
def _sum_up_marked(g: np.ndarray, up: np.ndarray, lo: int, hi: int, mark: np.ndarray) -> None:
    """_sum_up over the marked features alone (and the parents it reaches, marked as it
    goes); the marks cleared. The other rows of g must be zero: _sum_up would add
    nothing from them (a sum that starts at +0.0 is never -0.0), so the same bits."""
    for f in range(hi - 1, lo - 1, -1):  # children first
        if mark[f]:
            mark[f] = 0
            p = up[f]
            if p != 0:
                mark[p] = 1
                for q in range(g.shape[1]):
                    g[p, q] += g[f, q]
    mark[:lo] = 0
    mark[hi:] = 0


@njit(cache=True)
def chain_sum_row(
    x: np.ndarray, out: np.ndarray, up: np.ndarray, fresh: np.ndarray, version: int,
    chain: np.ndarray, f: int,
) -> None:  # fmt: skip
    """out[f] = sum_down(x)[f] computed lazily: the rows of f's chain whose fresh[g] is
    not version are summed, parents first (out[g] = x[g] + out[up[g]], as _sum_down
    adds: the same bits), and marked fresh; a fresh ancestor ends the walk. chain: a
    scratch int64 array of at least ``longest`` entries."""
    n = 0
    g = f
    while g != 0 and fresh[g] != version:
        chain[n] = g
        n += 1
        g = up[g]
    for i in range(n - 1, -1, -1):
        g = chain[i]
        p = up[g]
        if p != 0:
            for q in range(x.shape[1]):
                out[g, q] = x[g, q] + out[p, q]
        else:
            for q in range(x.shape[1]):
                out[g, q] = x[g, q]
        fresh[g] = version


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """The chain of every feature (module docstring).

    up: int64[F], each feature's parent (0: none; only shapes have one); column:
    the registry column of the shape group; lo, hi: its global indices; groups: the
    registry's groups with the shape group split by radius (``shape:rN``), and
    group_column: each one's registry column; by_depth: the features with a parent,
    by their depth in the chain (1: the parent is a root), for batched sums.
    """

    up: np.ndarray
    column: int
    lo: int
    hi: int
    groups: tuple[GroupSpan, ...]
    group_column: tuple[int, ...]
    by_depth: tuple[np.ndarray, ...]

    @classmethod
    def of(cls, registry: Registry, table: PatternTable) -> Hierarchy:
        """The hierarchy of the shape group of registry, whose levels are table's patterns."""
        if SHAPE_GROUP not in registry.group_names:
            raise ValueError("features.shapes=all needs the shape patterns (features.shapes)")
        col = registry.group_index(SHAPE_GROUP)
        lo, n = int(registry.offsets[col]), int(registry.sizes[col])
        if n != len(table):
            raise ValueError(f"the shape group has {n} levels, the pattern table {len(table)}")
        parents = table.parents.astype(np.int64)
        if np.any(np.diff(table.radius) < 0):
            raise ValueError("the pattern table is not sorted by radius")
        up = np.zeros(registry.n_features, dtype=np.int64)
        has = parents > 0
        up[lo : lo + n][has] = lo + parents[has] - 1
        depth = np.zeros(registry.n_features, dtype=np.int64)
        for f in np.flatnonzero(up):  # parents first: their depth is known
            depth[f] = depth[up[f]] + 1
        groups: list[GroupSpan] = []
        group_column: list[int] = []
        for g, span in enumerate(registry.group_spans()):
            if g != col:
                groups.append(span)
                group_column.append(g)
                continue
            for r in np.unique(table.radius):
                rows = np.flatnonzero(table.radius == r)
                groups.append(GroupSpan(f"{SHAPE_GROUP}:r{r}", lo + int(rows[0]), len(rows)))
                group_column.append(g)
        deepest = int(depth.max(initial=0))
        by_depth = tuple(np.flatnonzero(depth == d) for d in range(1, deepest + 1))
        return cls(up, col, lo, lo + n, tuple(groups), tuple(group_column), by_depth)

    @property
    def n_features(self) -> int:
        return len(self.up)

    @property
    def longest(self) -> int:
        """The most patterns in one chain."""
        return len(self.by_depth) + 1

    def chain(self, f: int) -> list[int]:
        """Feature f and its ancestors, f first."""
        out = []
        while f != 0:
            out.append(int(f))
            f = int(self.up[f])
        return out

    def sum_down(self, theta: np.ndarray) -> np.ndarray:
        """The effective parameters phi of raw theta ([F] or [F, k], any float type):
        each feature's sum over its chain (module docstring); a new float64 array."""
        x = np.array(theta, dtype=np.float64).reshape(self.n_features, -1)
        _sum_down(x, self.up, self.lo, self.hi)
        return x.reshape(np.shape(theta))

    def sum_up(self, grad: np.ndarray) -> np.ndarray:
        """sum_down's transpose: each feature's sum of grad over the features whose chain
        holds it; a new float64 array shaped as grad."""
        g = np.array(grad, dtype=np.float64).reshape(self.n_features, -1)
        _sum_up(g, self.up, self.lo, self.hi)
        return g.reshape(np.shape(grad))

    def sum_up_marked(self, grad: np.ndarray, mark: np.ndarray) -> None:
        """grad = sum_up(grad) in place (float64 [F, k]) where grad is zero outside the
        rows marked 1 in mark (uint8[F]), visiting those and their chains alone (a
        batch's gradient touches a small share of millions of shapes); mark cleared."""
        _sum_up_marked(grad, self.up, self.lo, self.hi, mark)
