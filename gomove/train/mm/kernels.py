"""Numba kernels of MM's compiled engine over the flat layout (gomove.data.flat).

Team strengths are kept as products of gammas (``team[c]``, float32 or float64),
not logs: an update of one group multiplies each candidate by that group's gamma
ratio, and a pass needs no exp at all. Sums are float64. Positions are split into
chunks handled in parallel, each with its own partial sums, added up at the end in
a fixed order. A group's levels are read by gomove.data.fields.field_level.

Sparse groups (most candidates at level 0, like atari or capture): their
candidates of level > 0 are listed once as entries (each position's from
``ent_start[p]`` on, the candidate's offset in its position in ``ent_off``), and
with every position's sum of strengths kept (``e``), updating or gathering such
a group visits only its entries, not every candidate.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from gomove.data.fields import field_level

# A sum of strengths or a level's sum in a pass is a chain of float adds, each
# waiting for the last (4 cycles and more): kept in 4 running sums (candidate c
# adds to sum c % 4) the adds overlap; the sums are added in a fixed order, so a
# pass gives the same bits every time.
GATHER_LANES = 4
LANE_LEVELS = 256  # more levels rarely repeat in a row, and 4 sums each would crowd the cache


class Strengths(NamedTuple):
    """What the kernels keep and update of the candidates (gomove.train.mm.compiled.NumbaMM)."""

    team: np.ndarray  # float32 or float64[C] each candidate's team strength
    e: np.ndarray  # float64[P] each position's sum of team strengths


class Positions(NamedTuple):
    """The positions as the passes walk them."""

    pos_start: np.ndarray  # int64[P + 1] position p's candidates: pos_start[p]:pos_start[p + 1]
    win_flat: np.ndarray  # int64[P] the expert move's candidate (flat index) of each position
    chunk_pos: np.ndarray  # int64[K + 1] chunk k (summed in parallel): its positions from here


class Group(NamedTuple):
    """A group's levels as fields.field_level reads them (flat.FlatData.field)."""

    arr: np.ndarray  # [C, n] the packed words or the wide levels
    field: np.ndarray  # int64[4] (column, shift, mask, bytes3)


class Entries(NamedTuple):
    """A sparse group's candidates of level > 0 (module docstring)."""

    start: np.ndarray  # uint32 or int64[P + 1] position p's entries: start[p]:start[p + 1]
    off: np.ndarray  # uint16 or int64[E] each entry's candidate, by its offset in its position


class Change(NamedTuple):
    """A group's change that mm_pass multiplies in first (when ``apply``), as dense_scale does."""

    group: Group  # the changed group's levels
    factor: np.ndarray  # float64[levels + 1] each level's strength factor (level 0: 1)
    apply: bool  # False: nothing to multiply in (the other fields only need the right types)


@njit(cache=True, inline="always")
def strength_sum(team: np.ndarray, lo: int, hi: int) -> float:
    """team[lo:hi] summed in float64, in 4 running sums."""
    s0 = s1 = s2 = s3 = 0.0
    c = lo
    while c + 3 < hi:
        s0 += team[c]
        s1 += team[c + 1]
        s2 += team[c + 2]
        s3 += team[c + 3]
        c += 4
    while c < hi:
        s0 += team[c]
        c += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True, inline="always")
def scale_sum(
    team: np.ndarray, lo: int, hi: int, arr: np.ndarray, field: np.ndarray, factor: np.ndarray
) -> float:
    """team[c] *= factor[level] for c in lo..hi-1, and their new sum as strength_sum
    sums it (the same lanes, the same bits). Scaling and summing in one loop rather
    than scaling and calling strength_sum: the two loops made the passes that fold
    in a change about 4% slower."""
    s0 = s1 = s2 = s3 = 0.0
    c = lo
    while c + 3 < hi:
        team[c] = team[c] * factor[field_level(arr, field, c)]
        team[c + 1] = team[c + 1] * factor[field_level(arr, field, c + 1)]
        team[c + 2] = team[c + 2] * factor[field_level(arr, field, c + 2)]
        team[c + 3] = team[c + 3] * factor[field_level(arr, field, c + 3)]
        s0 += team[c]
        s1 += team[c + 1]
        s2 += team[c + 2]
        s3 += team[c + 3]
        c += 4
    while c < hi:
        team[c] = team[c] * factor[field_level(arr, field, c)]
        s0 += team[c]
        c += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True)
def sum_parts(part: np.ndarray) -> np.ndarray:
    """part[chunk, lane, level] summed over chunks and lanes, in that fixed order."""
    out = np.zeros(part.shape[2])
    for k in range(part.shape[0]):
        for j in range(part.shape[1]):
            for i in range(part.shape[2]):
                out[i] += part[k, j, i]
    return out


@njit(parallel=True, cache=True)
def mm_pass(
    s: Strengths, pos: Positions, group: Group, n_levels: int, change: Change
) -> tuple[float, np.ndarray]:
    """Log-likelihood and, per level of one group, sum of P(candidate) over its candidates.

    The MM denominator of level l is that sum divided by gamma_l (Coulom 2007, 2.5.3):
    sum_j C_ij / E_j = sum over candidates c with level l of P(c) / gamma_l.
    With ``change.apply``, first team[c] *= factor[level] of the changed group as
    dense_scale does (the last update's group, whose levels sit in the same rows):
    one pass over the candidates instead of two, the same numbers, and then e[p]
    the sum of position p's new strengths (as dense_scale leaves it).
    """
    team = s.team
    e_out = s.e
    pos_start, win_flat, chunk_pos = pos
    arr, field = group
    scale_arr, scale_field = change.group
    factor = change.factor
    scale = change.apply
    n_chunks = chunk_pos.shape[0] - 1
    mask = GATHER_LANES - 1 if n_levels <= LANE_LEVELS else 0
    part = np.zeros((n_chunks, mask + 1, n_levels))
    ll = np.zeros(n_chunks)
    for k in prange(n_chunks):
        acc = 0.0
        for p in range(chunk_pos[k], chunk_pos[k + 1]):
            lo = pos_start[p]
            hi = pos_start[p + 1]
            if scale:
                e = scale_sum(team, lo, hi, scale_arr, scale_field, factor)
                e_out[p] = e
            else:
                e = strength_sum(team, lo, hi)
            inv = 1.0 / e
            acc += math.log(team[win_flat[p]] * inv)
            for c in range(lo, hi):
                part[k, c & mask, field_level(arr, field, c)] += team[c] * inv
        ll[k] = acc
    return ll.sum(), sum_parts(part)


@njit(parallel=True, cache=True)
def dense_scale(s: Strengths, pos: Positions, group: Group, factor: np.ndarray) -> None:
    """team[c] *= factor[level] (factor[0] is 1 for a change), and e[p] each position's
    new sum of strengths, summed as mm_pass sums it (scale_sum)."""
    team = s.team
    e = s.e
    pos_start = pos.pos_start
    chunk_pos = pos.chunk_pos
    arr, field = group
    for k in prange(chunk_pos.shape[0] - 1):
        for p in range(chunk_pos[k], chunk_pos[k + 1]):
            e[p] = scale_sum(team, pos_start[p], pos_start[p + 1], arr, field, factor)


@njit(parallel=True, cache=True)
def count_entries(
    arr: np.ndarray,
    field: np.ndarray,
    pos_start: np.ndarray,
    chunk_pos: np.ndarray,
    counts: np.ndarray,
) -> None:
    """counts[p + 1]: how many candidates of position p have a level > 0 in (arr, field)."""
    for k in prange(chunk_pos.shape[0] - 1):
        for p in range(chunk_pos[k], chunk_pos[k + 1]):
            n = 0
            for c in range(pos_start[p], pos_start[p + 1]):
                if field_level(arr, field, c) > 0:
                    n += 1
            counts[p + 1] = n


@njit(parallel=True, cache=True)
def fill_entries(
    arr: np.ndarray,
    field: np.ndarray,
    pos_start: np.ndarray,
    chunk_pos: np.ndarray,
    ent_start: np.ndarray,
    ent_off: np.ndarray,
) -> None:
    """The offsets in their position of the group's candidates of level > 0, position
    p's from ent_start[p] on (the prefix sums of count_entries)."""
    for k in prange(chunk_pos.shape[0] - 1):
        for p in range(chunk_pos[k], chunk_pos[k + 1]):
            lo = pos_start[p]
            i = ent_start[p]
            for c in range(lo, pos_start[p + 1]):
                if field_level(arr, field, c) > 0:
                    ent_off[i] = c - lo
                    i += 1


@njit(parallel=True, cache=True)
def sparse_scale(
    s: Strengths, pos: Positions, ent: Entries, group: Group, factor: np.ndarray
) -> None:
    """team[c] *= factor[level] over a sparse group's entries only (level 0 keeps its
    strength), each position's sum e[p] moved by its candidates' change."""
    team = s.team
    e = s.e
    pos_start = pos.pos_start
    chunk_pos = pos.chunk_pos
    ent_start, ent_off = ent
    arr, field = group
    for k in prange(chunk_pos.shape[0] - 1):
        for p in range(chunk_pos[k], chunk_pos[k + 1]):
            lo = pos_start[p]
            for i in range(ent_start[p], ent_start[p + 1]):
                c = lo + ent_off[i]
                old = np.float64(team[c])
                team[c] = team[c] * factor[field_level(arr, field, c)]
                e[p] += np.float64(team[c]) - old


@njit(parallel=True, cache=True)
def sparse_pass(
    s: Strengths, pos: Positions, ent: Entries, group: Group, n_levels: int
) -> tuple[float, np.ndarray]:
    """mm_pass for a sparse group, from the kept sums e: the log-likelihood over the
    positions, and per level the sum of P(candidate) over the group's entries
    (level 0, never visited, stays 0: its gamma is fixed)."""
    team = s.team
    e = s.e
    pos_start, win_flat, chunk_pos = pos
    ent_start, ent_off = ent
    arr, field = group
    n_chunks = chunk_pos.shape[0] - 1
    part = np.zeros((n_chunks, 1, n_levels))
    ll = np.zeros(n_chunks)
    for k in prange(n_chunks):
        acc = 0.0
        for p in range(chunk_pos[k], chunk_pos[k + 1]):
            ep = e[p]
            acc += math.log(team[win_flat[p]] / ep)
            lo = pos_start[p]
            for i in range(ent_start[p], ent_start[p + 1]):
                c = lo + ent_off[i]
                part[k, 0, field_level(arr, field, c)] += team[c] / ep
        ll[k] = acc
    return ll.sum(), sum_parts(part)
