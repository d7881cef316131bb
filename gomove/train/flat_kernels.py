"""Numba kernels over the flat layout on the CPU: reading a group's levels, MM's passes.

A group is read as flat.FlatData.field gives it: an array [C, n] and int64
(column, shift, mask, bytes3), candidate c's level ``(array[c, column] >>
shift) & mask`` (``field_level``; with bytes3 the word is array[c, column:column
+ 3] as little-endian bytes): a bit field of the packed words or a column (or
three byte columns) of the wide levels, one code path for all. ``wide_level``
reads the i-th wide group straight from levw.

MM (see mm_flat.py): team strengths are kept as products of gammas
(``team[c]``, float32 or float64), not logs: an update of one group multiplies
each candidate by that group's gamma ratio, and a pass needs no exp at all.
Sums are float64. Positions are split into chunks handled in parallel, each
with its own partial sums, added up at the end in a fixed order.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange


@njit(cache=True, inline="always")
def field_level(arr: np.ndarray, field: np.ndarray, c: int) -> int:
    """Candidate c's level of the group read as (arr, field) (module docstring)."""
    col = field[0]
    word = np.int64(arr[c, col])
    if field[3]:
        word |= (np.int64(arr[c, col + 1]) << 8) | (np.int64(arr[c, col + 2]) << 16)
    return (word >> field[1]) & field[2]


@njit(cache=True, inline="always")
def wide_level(levw: np.ndarray, c: int, i: int) -> int:
    """Candidate c's level of the i-th wide group (flat.FlatData.levw: one column
    a group, or three little-endian byte columns when levw is uint8)."""
    if levw.itemsize == 1:
        b = 3 * i
        return (
            np.int64(levw[c, b])
            | (np.int64(levw[c, b + 1]) << 8)
            | (np.int64(levw[c, b + 2]) << 16)
        )
    return np.int64(levw[c, i])


@njit(cache=True, inline="always")
def packed_level(packed: np.ndarray, fields: np.ndarray, c: int, g: int) -> int:
    """Candidate c's level of the g-th packed group (fields: flat.FlatData.fields)."""
    return (np.int64(packed[c, fields[g, 0]]) >> fields[g, 1]) & fields[g, 2]


@njit(parallel=True, cache=True)
def field_max(arr: np.ndarray, field: np.ndarray) -> int:
    """The largest level of a group over all candidates (0 with none)."""
    top = 0
    for c in prange(arr.shape[0]):
        top = max(top, field_level(arr, field, c))
    return top


@njit(parallel=True, cache=True)
def scale_teams(team: np.ndarray, arr: np.ndarray, field: np.ndarray, factor: np.ndarray) -> None:
    """team[c] *= factor[level]: one group's gammas changed by factor (level 0: 1)."""
    for c in prange(team.shape[0]):
        team[c] *= factor[field_level(arr, field, c)]


@njit(parallel=True, cache=True)
def mm_pass(
    team: np.ndarray,
    pos_start: np.ndarray,
    win_flat: np.ndarray,
    chunk_pos: np.ndarray,
    arr: np.ndarray,
    field: np.ndarray,
    n_levels: int,
    scale_arr: np.ndarray,
    scale_field: np.ndarray,
    factor: np.ndarray,
    scale: bool,
) -> tuple[float, np.ndarray]:
    """Log-likelihood and, per level of one group, sum of P(candidate) over its candidates.

    The MM denominator of level l is that sum divided by gamma_l (Coulom 2007, 2.5.3):
    sum_j C_ij / E_j = sum over candidates c with level l of P(c) / gamma_l.
    The group is (arr, field); with ``scale``, first team[c] *= factor[level] of
    the group (scale_arr, scale_field) as scale_teams does (the last update's
    group, whose levels sit in the same rows): one pass over the candidates
    instead of two, the same numbers.
    """
    n_chunks = chunk_pos.shape[0] - 1
    part = np.zeros((n_chunks, n_levels))
    ll = np.zeros(n_chunks)
    for k in prange(n_chunks):
        acc = 0.0
        for p in range(chunk_pos[k], chunk_pos[k + 1]):
            lo = pos_start[p]
            hi = pos_start[p + 1]
            e = 0.0
            if scale:
                for c in range(lo, hi):
                    t = team[c] * factor[field_level(scale_arr, scale_field, c)]
                    team[c] = t
                    e += team[c]
            else:
                for c in range(lo, hi):
                    e += team[c]
            inv = 1.0 / e
            acc += math.log(team[win_flat[p]] * inv)
            for c in range(lo, hi):
                part[k, field_level(arr, field, c)] += team[c] * inv
        ll[k] = acc
    out = np.zeros(n_levels)
    for k in range(n_chunks):
        for i in range(n_levels):
            out[i] += part[k, i]
    return ll.sum(), out
