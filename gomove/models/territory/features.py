"""What the territory model sees of a position: the index of each point's field parameters
and of each neighbour pair's coupling parameter.

The model (gomove.models.territory.crf) gives point i the local field
h_i = sum_k field[field_idx[i, k]] and the pair (i, j) the coupling
w_ij = sum_k coupling[edge_idx[e, k]]. Everything here is in the frame of the
side to move ("friend" stones are the mover's, s = +1 means the mover owns the
point), so both colours share every parameter; and every feature is invariant
under the 8 symmetries of the board, so those share them too.

Feature sets (``FEATURE_SETS``):
- ``stern``: the talk's energies. E_(i,j) = h(c_i) s_i + h(c_j) s_j + w(c_i, c_j) s_i s_j
  summed over neighbour pairs gives point i the field deg(i) h(c_i); here the field
  is a parameter per (c_i, deg(i)) (9, which holds the talk's 3 as a special case)
  and the coupling one per unordered colour pair (6).
- ``rich``: fields by (colour and liberties of the point's string, distance to the
  edge), by (string size, liberties), by the counts of friendly and enemy
  neighbours, and for empty points by the distances to the nearest friendly and
  nearest enemy stone; couplings by the unordered pair of (colour, liberties)
  classes, whether the two stones are one string, and whether both points lie on
  the first line.
- ``wide``: ``rich`` plus the point's surroundings out to RADIUS steps: one field
  parameter per (the point's colour, the distance d <= RADIUS, the class of the
  point at that distance: empty, a friendly or enemy string by liberties, or off
  the board), summed over every point within the radius, an influence function
  learned rather than hand-set; and the regions: an empty point's by (which colours
  border its empty region, the region's size), a stone's by (its colour, its
  string's liberties, how many empty regions bordered by its colour alone touch
  the string: 0, 1, 2 or more, eyes as a first guess); couplings as ``rich`` plus
  one by the region: for two empty points, which colours border their region; for a
  stone and an empty point, the stone's side and the empty region's border.
- ``mc8``, ``mc16``, ``mc32``: ``wide`` plus what 8, 16 or 32 uniform playouts (the
  playout driver of gomove.playout) from the position say, seeded by the
  position's stones so that a position always gets the same counts. Fields: one
  parameter per (the point's class, empty or a string by colour and liberties;
  how many playouts the mover owned it in; how many the opponent did), one per
  (the point's colour, the mean over its neighbours of the mover's count minus
  the opponent's, in 9 levels), and the same over the points within 3 steps;
  couplings: one by how far the two ends' counts differ. A handful of playouts
  sees captures and dead groups that a static reading of the stones misses; the
  learned parameters smooth their noise and correct their bias (uniform
  playouts kill groups that live). The labels' settle playouts in their place
  measured no better (docs/territory.md) at twice the time.
- ``pmc4``, ``pmc6``, ``pmc8``, ``pmc12``: the same from 4, 6, 8 or 12 playouts of a
  light pattern policy (gomove.playout.pattern; the model carries the policy's
  gammas, gomove.models.territory.crf). A policy playout costs about 2.5 uniform ones
  (plus setting up the policy's state once a position), and its games end more as
  experts' do: 4 of them measured as well as 16 uniform ones, 12 as well as 500
  (docs/territory.md).
- ``rmc8``, ``rmc12``, ``rmc16``: the same from 8, 12 or 16 playouts of the rule
  policy (gomove.playout.rule: answer ataris, play next to the last move, never a
  big self-atari), which needs no policy file and costs half a pattern playout.

Points are flat, index r * size + c in sgfmill's (row, col) order; the static
reading of the stones (strings, regions, distances) and the board size's geometry are
gomove.models.territory.reading's, the playouts' counts
gomove.models.territory.playout_counts'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from gomove.models.territory.playout_counts import playout_counts
from gomove.models.territory.reading import (
    CAP,
    N_OFFSETS,
    OFFSETS,
    RADIUS,
    components,
    distance_to,
    geometry,
    relative,
    string_view,
)
from gomove.playout.rule import RULES
from gomove.playout.uniform import UNIFORM

N_CLASS = 1 + 2 * CAP  # empty, friend with 1..CAP liberties, enemy with 1..CAP
N_RICH_FIELD = 45 + 33 + 45 + 17
N_RICH_COUPLING = N_CLASS * (N_CLASS + 1) // 2 * 4
N_REGION_FIELD = 4 * 5 + 2 * CAP * 3 + 1  # the last: a shared constant slot
N_WIDE_FIELD = N_RICH_FIELD + 3 * RADIUS * (N_CLASS + 1) + N_REGION_FIELD
N_WIDE_COUPLING = N_RICH_COUPLING + 4 + 8 + 1
N_MC_COUPLING = 6  # by how far two neighbours' playout counts differ, in eighths of n


@njit(cache=True)
def n_counts(playouts: int) -> int:
    """The (mine, theirs) pairs with mine + theirs <= playouts."""
    return (playouts + 1) * (playouts + 2) // 2


@dataclass(frozen=True)
class FeatureSet:
    """A feature set's sizes: field parameters, coupling parameters, index columns."""

    name: str
    n_field: int
    n_coupling: int
    field_cols: int
    edge_cols: int
    playouts: int = 0  # playouts a position (the mc, pmc and rmc sets)
    playout: str = "uniform"  # whose: "uniform" (mc), "pattern" (pmc) or "rules" (rmc)

    @property
    def policy(self) -> bool:
        """Do the playouts need a pattern policy's player (the pmc sets)?"""
        return self.playout == "pattern"


FEATURE_SETS = {
    "stern": FeatureSet("stern", 9, 6, 1, 1),
    "rich": FeatureSet("rich", N_RICH_FIELD, N_RICH_COUPLING, 4, 1),
    "wide": FeatureSet("wide", N_WIDE_FIELD, N_WIDE_COUPLING, 4 + N_OFFSETS + 2, 2),
}
PLAYOUT_PREFIX = {"mc": "uniform", "pmc": "pattern", "rmc": "rules"}
for _prefix, _counts in (("mc", (8, 16, 32)), ("pmc", (4, 6, 8, 12)), ("rmc", (8, 12, 16))):
    for _n in _counts:
        FEATURE_SETS[f"{_prefix}{_n}"] = FeatureSet(
            f"{_prefix}{_n}",
            N_WIDE_FIELD + N_CLASS * n_counts(_n) + 2 * 3 * 9,
            N_WIDE_COUPLING + N_MC_COUPLING,
            4 + N_OFFSETS + 5,
            3,
            _n,
            PLAYOUT_PREFIX[_prefix],
        )


def feature_set(name: str) -> FeatureSet:
    try:
        return FEATURE_SETS[name]
    except KeyError:
        raise ValueError(f"unknown territory features {name!r}: {sorted(FEATURE_SETS)}") from None


@njit(cache=True)
def _pair(a: int, b: int) -> int:
    """Index of the unordered pair {a, b} of classes 0..N_CLASS-1."""
    lo = min(a, b)
    hi = max(a, b)
    return hi * (hi + 1) // 2 + lo


@njit(cache=True)
def point_class(rel: int, libs: int) -> int:
    """0 empty, 1..CAP friend with that many liberties (capped), CAP+1..2 CAP enemy."""
    if rel == 0:
        return 0
    base = 0 if rel > 0 else CAP
    return base + min(libs, CAP)


@njit(cache=True)
def _rich(rel, nbr, sid, libs, stones, edges, edge_line, field_idx, edge_idx) -> None:
    n = rel.shape[0]
    d_friend = distance_to(rel, nbr, 1, CAP)
    d_enemy = distance_to(rel, nbr, -1, CAP)
    for i in range(n):
        cls = point_class(rel[i], libs[i])
        deg = 0
        n_friend = 0
        n_enemy = 0
        for k in range(4):
            q = nbr[i, k]
            if q >= 0:
                deg += 1
                if rel[q] > 0:
                    n_friend += 1
                elif rel[q] < 0:
                    n_enemy += 1
        line = edge_line[i]
        field_idx[i, 0] = cls * 5 + line  # 45
        if rel[i] == 0:
            field_idx[i, 1] = 45  # one slot for every empty point
        else:
            size_bucket = min(stones[i], 6)  # 1..6
            side = 0 if rel[i] > 0 else 1
            field_idx[i, 1] = (
                45 + 1 + (side * CAP + min(libs[i], CAP) - 1) * 4 + min(size_bucket - 1, 3)
            )  # 45 + 1 + 32
        colour3 = 0 if rel[i] == 0 else (1 if rel[i] > 0 else 2)
        # (friends, enemies) with friends + enemies <= 4: 15 pairs, by colour: 45
        pair = (n_friend + n_enemy) * (n_friend + n_enemy + 1) // 2 + n_enemy
        field_idx[i, 2] = 78 + colour3 * 15 + pair
        if rel[i] == 0:
            field_idx[i, 3] = 123 + 1 + (d_friend[i] - 1) * CAP + (d_enemy[i] - 1)  # 16
        else:
            field_idx[i, 3] = 123
    for e in range(edges.shape[0]):
        a = edges[e, 0]
        b = edges[e, 1]
        p = _pair(point_class(rel[a], libs[a]), point_class(rel[b], libs[b]))
        same = 1 if rel[a] != 0 and sid[a] == sid[b] else 0
        both_line = 1 if edge_line[a] == 0 and edge_line[b] == 0 else 0
        edge_idx[e, 0] = p * 4 + same * 2 + both_line


@njit(cache=True)
def _size_bucket(m: int) -> int:
    if m <= 2:
        return m - 1
    if m <= 5:
        return 2
    return 3 if m <= 15 else 4


@njit(cache=True)
def _wide(rel, nbr, sid, libs, cid, csize, border, offs, around, edges, field_idx, edge_idx):
    """The surroundings and region columns 4.. of field_idx (after _rich filled 0..3);
    an empty point's region is its component (cid, csize, border: components'), the
    points around a point around[i] (Geometry.around, in the order of offs)."""
    n = rel.shape[0]
    rid, rsize = cid, csize
    eyes = np.zeros(n, np.int32)  # at each string id
    seen = np.full(n, -1, np.int32)  # at each region id: the last string that counted it
    order = np.argsort(sid, kind="mergesort")  # each string's stones one after another
    for t in range(n):
        i = order[t]
        if rel[i] == 0:
            continue
        own = 1 if rel[i] > 0 else 2
        for k in range(4):
            q = nbr[i, k]
            if q >= 0 and rel[q] == 0:
                r = rid[q]
                if border[r] == own and seen[r] != sid[i]:
                    seen[r] = sid[i]
                    eyes[sid[i]] += 1
    for e in range(edges.shape[0]):
        a = edges[e, 0]
        b = edges[e, 1]
        if rel[a] == 0 and rel[b] == 0:
            edge_idx[e, 1] = N_RICH_COUPLING + border[rid[a]]
        elif rel[a] == 0 or rel[b] == 0:
            empty = a if rel[a] == 0 else b
            stone = b if rel[a] == 0 else a
            side = 0 if rel[stone] > 0 else 1
            edge_idx[e, 1] = N_RICH_COUPLING + 4 + side * 4 + border[rid[empty]]
        else:
            edge_idx[e, 1] = N_RICH_COUPLING + 12
    col = 4 + offs.shape[0]
    region_base = N_RICH_FIELD + 3 * RADIUS * (N_CLASS + 1)
    for i in range(n):
        if rel[i] == 0:
            r = rid[i]
            field_idx[i, col] = region_base + border[r] * 5 + _size_bucket(rsize[r])
            field_idx[i, col + 1] = region_base + 20 + 2 * CAP * 3  # unused by empty points
        else:
            side = 0 if rel[i] > 0 else 1
            e = min(eyes[sid[i]], 2)
            field_idx[i, col] = region_base + 20 + (side * CAP + min(libs[i], CAP) - 1) * 3 + e
            field_idx[i, col + 1] = region_base + 20 + 2 * CAP * 3
    classes = np.empty(n, np.int32)  # each point's class, looked up 40 times below
    for i in range(n):
        classes[i] = point_class(rel[i], libs[i])
    for i in range(n):
        colour3 = 0 if rel[i] == 0 else (1 if rel[i] > 0 else 2)
        row = N_RICH_FIELD + (colour3 * RADIUS - 1) * (N_CLASS + 1)
        for k in range(offs.shape[0]):
            j = around[i, k]
            cls = classes[j] if j >= 0 else N_CLASS  # N_CLASS: off the board
            field_idx[i, 4 + k] = row + offs[k, 2] * (N_CLASS + 1) + cls


@njit(cache=True)
def _count_pair(mine: int, theirs: int) -> int:
    """Index of (mine, theirs) among the pairs of n_counts."""
    t = mine + theirs
    return t * (t + 1) // 2 + theirs


@njit(cache=True)
def _mc(rel, libs, mine, theirs, playouts, offs, around, edges, field_idx, edge_idx) -> None:
    """The playout columns (the last three of each point, the last of each pair) of an
    mc set, after _rich and _wide."""
    col = field_idx.shape[1] - 3
    pairs = n_counts(playouts)
    base = N_WIDE_FIELD + N_CLASS * pairs
    for i in range(rel.shape[0]):
        cls = point_class(rel[i], libs[i])
        field_idx[i, col] = N_WIDE_FIELD + cls * pairs + _count_pair(mine[i], theirs[i])
        colour3 = 0 if rel[i] == 0 else (1 if rel[i] > 0 else 2)
        # the neighbours' and the points within 3 steps' mean of mine - theirs, in 9
        # levels of -n..n: one walk over the points around, summing both
        near = far = 0
        n_near = n_far = 0
        for k in range(offs.shape[0]):
            q = around[i, k]
            if q >= 0 and offs[k, 2] <= 3:
                far += mine[q] - theirs[q]
                n_far += 1
                if offs[k, 2] <= 1:
                    near += mine[q] - theirs[q]
                    n_near += 1
        for w, balance, count in ((0, near, n_near), (1, far, n_far)):
            scale = count * playouts
            level = (4 * balance + 4 * scale + scale // 2) // scale  # round(4 mean / n) + 4
            field_idx[i, col + 1 + w] = base + (w * 3 + colour3) * 9 + level
    for e in range(edges.shape[0]):
        a = edges[e, 0]
        b = edges[e, 1]
        d = abs(mine[a] - mine[b]) + abs(theirs[a] - theirs[b])
        slot = min(N_MC_COUPLING - 1, (d * 8 + playouts - 1) // playouts)
        edge_idx[e, edge_idx.shape[1] - 1] = N_WIDE_COUPLING + slot


@njit(cache=True)
def _features_into(
    rel, nbr, edges, edge_line, offs, around, sym, sym_keys, empty_board, wide, playouts,
    player, field_idx, edge_idx,
) -> None:  # fmt: skip
    """features' columns for every set but stern, in one compiled call (the static
    reading once for every part); edges may be empty, for the fields alone."""
    cid, csize, clibs, border = components(rel, nbr)
    sid, libs, stones = string_view(rel, cid, csize, clibs)
    _rich(rel, nbr, sid, libs, stones, edges, edge_line, field_idx, edge_idx)
    if wide:
        _wide(rel, nbr, sid, libs, cid, csize, border, offs, around, edges, field_idx, edge_idx)
    if playouts > 0:
        mine, theirs = playout_counts(rel, playouts, player, sym, sym_keys, empty_board)
        _mc(rel, libs, mine, theirs, playouts, offs, around, edges, field_idx, edge_idx)


@njit(cache=True)
def _stern(rel, nbr, edges, field_idx, edge_idx) -> None:
    for i in range(rel.shape[0]):
        deg = 0
        for k in range(4):
            if nbr[i, k] >= 0:
                deg += 1
        colour3 = 0 if rel[i] == 0 else (1 if rel[i] > 0 else 2)
        field_idx[i, 0] = colour3 * 3 + deg - 2
    for e in range(edges.shape[0]):
        a = rel[edges[e, 0]]
        b = rel[edges[e, 1]]
        ca = 0 if a == 0 else (1 if a > 0 else 2)
        cb = 0 if b == 0 else (1 if b > 0 else 2)
        lo = min(ca, cb)
        hi = max(ca, cb)
        edge_idx[e, 0] = hi * (hi + 1) // 2 + lo


def playout_player(fs: FeatureSet, player: Any = None) -> Any:
    """The playout driver's policy of fs's playouts: player for the pmc sets (a pattern
    policy's PatternPlayer), the rule policy for the rmc sets, uniform for the rest."""
    if fs.policy:
        return player
    return RULES if fs.playout == "rules" else UNIFORM


def features(
    fs: FeatureSet,
    colour: np.ndarray,
    to_move: int,
    size: int,
    player: Any = None,
    couplings: bool = True,
):
    """(field_idx int32[N, field_cols], edge_idx int32[E, edge_cols]) of one position.

    colour: int8[size * size], +1 black, -1 white, 0 empty; to_move: +1 black, -1 white;
    player: the pattern policy's PatternPlayer, which the pmc sets need (and no other);
    couplings=False leaves the pairs out (edge_idx has no rows): a model with no
    couplings needs the fields alone.
    """
    if fs.policy and player is None:
        raise ValueError(f"territory features {fs.name!r} need a pattern policy's player")
    geo = geometry(size)
    rel = relative(colour, to_move)
    if rel.shape != (size * size,):
        raise ValueError(f"colour: want {size * size} points, not {rel.shape}")
    edges = geo.edges if couplings else geo.edges[:0]  # [:0]: no pair to index
    field_idx = np.empty((size * size, fs.field_cols), np.int32)
    edge_idx = np.empty((edges.shape[0], fs.edge_cols), np.int32)
    if fs.name == "stern":
        _stern(rel, geo.nbr, edges, field_idx, edge_idx)
    else:
        _features_into(rel, geo.nbr, edges, geo.edge_line, OFFSETS, geo.around, geo.sym,
                       geo.sym_keys, geo.empty_board, fs.name != "rich", fs.playouts,
                       playout_player(fs, player), field_idx, edge_idx)  # fmt: skip
    return field_idx, edge_idx


def batch_features(
    fs: FeatureSet, colour: np.ndarray, to_move: np.ndarray, size: int, player: Any = None
):
    """features of P positions: int16[P, N, field_cols], int16[P, E, edge_cols]."""
    geo = geometry(size)
    p = colour.shape[0]
    fi = np.empty((p, size * size, fs.field_cols), np.int16)
    ei = np.empty((p, geo.edges.shape[0], fs.edge_cols), np.int16)
    for k in range(p):
        f, e = features(fs, colour[k], int(to_move[k]), size, player)
        fi[k] = f
        ei[k] = e
    return fi, ei
