"""Numba kernels for MM passes over the flat layout on the CPU (see mm_flat.py, flat.py).

Team strengths are kept as products of gammas (``team[c]``), not logs: an
update of one group multiplies each candidate by that group's gamma ratio,
and a pass needs no exp at all. Positions are split into chunks handled in
parallel, each with its own partial sums, added up at the end (float64).
Level arrays may be strided (a column of flat.FlatData's [C, G] arrays).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def scale_teams(team: np.ndarray, lev: np.ndarray, factor: np.ndarray) -> None:
    """team[c] *= factor[lev[c]]: one group's gammas changed by factor (level 0: 1)."""
    for c in prange(team.shape[0]):
        team[c] *= factor[lev[c]]


@njit(parallel=True, cache=True)
def mm_pass(
    team: np.ndarray,
    pos_start: np.ndarray,
    win_flat: np.ndarray,
    chunk_pos: np.ndarray,
    lev: np.ndarray,
    n_levels: int,
    scale_lev: np.ndarray,
    factor: np.ndarray,
    scale: bool,
) -> tuple[float, np.ndarray]:
    """Log-likelihood and, per level of one group, sum of P(candidate) over its candidates.

    The MM denominator of level l is that sum divided by gamma_l (Coulom 2007, 2.5.3):
    sum_j C_ij / E_j = sum over candidates c with level l of P(c) / gamma_l.
    With ``scale``, first team[c] *= factor[scale_lev[c]] as scale_teams does (the
    last update's group, whose levels sit in the same rows as lev's): one pass
    over the candidates instead of two, the same numbers.
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
                    t = team[c] * factor[scale_lev[c]]
                    team[c] = t
                    e += t
            else:
                for c in range(lo, hi):
                    e += team[c]
            inv = 1.0 / e
            acc += math.log(team[win_flat[p]] * inv)
            for c in range(lo, hi):
                part[k, lev[c]] += team[c] * inv
        ll[k] = acc
    out = np.zeros(n_levels)
    for k in range(n_chunks):
        for i in range(n_levels):
            out[i] += part[k, i]
    return ll.sum(), out
