"""One position -> its candidates and their feature levels, in one compiled call.

Candidates are every legal move of the player to move (superko optional), in
loc order, then pass last. ``tac[i, :]`` holds candidate i's tactical levels
(columns of tactical.py) and ``shape[i]`` its shape level (0 = no harvested
pattern matched).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import Board, legal_moves
from gomove.board.coords import PASS
from gomove.features.patterns import match_largest, pattern_hashes
from gomove.features.tactical import tactical_levels


@njit(cache=True, inline="always")
def candidate_index(cands: np.ndarray, n: int, loc: int) -> int:
    """The index of the played move loc among cands[:n], -1 when it is not a candidate."""
    for j in range(n):
        if cands[j] == loc:
            return j
    return -1


@njit(cache=True)
def extract_position(
    b: Board,
    color: int,
    superko: bool,
    dx: np.ndarray,
    dy: np.ndarray,
    ends: np.ndarray,
    perm: np.ndarray,
    keys: np.ndarray,
    tkeys: np.ndarray,
    tvals: np.ndarray,
    use_shapes: bool,
    cands: np.ndarray,
    tac: np.ndarray,
    shape: np.ndarray,
    ladder_memo: np.ndarray,
) -> int:
    """Fill cands[:n], tac[:n] and shape[:n]; return n (pass included)."""
    n = legal_moves(b, color, superko, cands)
    cands[n] = PASS
    n += 1
    ladder_memo[:] = -1
    tactical_levels(b, color, cands, n, ladder_memo, tac)
    hashes = np.empty(ends.shape[0], dtype=np.uint64)
    for i in range(n):
        shape[i] = 0
        if use_shapes and cands[i] != PASS:
            pattern_hashes(b, cands[i], color, dx, dy, ends, perm, keys, hashes)
            shape[i] = match_largest(hashes, tkeys, tvals)
    return n
