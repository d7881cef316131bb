"""Field readers of the flat layout (gomove.data.flat), shared by every compiled engine.

A group is read as flat.FlatData.field gives it: an array [C, n] and int64
(column, shift, mask, bytes3), candidate c's level ``(array[c, column] >>
shift) & mask`` (``field_level``; with bytes3 the word is array[c, column:column
+ 3] as little-endian bytes): a bit field of the packed words or a column (or
three byte columns) of the wide levels, one code path for all. ``wide_level``
reads the i-th wide group straight from levw, ``packed_level`` the g-th packed one.
"""

from __future__ import annotations

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
