"""Numba kernel for the backward pass of the FBT team strengths on the CPU (see fbt.py).

Kept apart from fbt.py so that editing the model does not change the numba
cache key (gomove/__init__.py hashes every module that holds kernels).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def scatter_team_grad(out: np.ndarray, bags: np.ndarray, s: np.ndarray, grad: np.ndarray) -> None:
    """Gradient of sum_n grad[n] E_n w.r.t. the table, E_n = s[n, 0] + 1/2 sum_q s[n, q]^2.

    out[r] += grad[n] * (1, s[n, 1], ..., s[n, k]) for every member r = bags[n, j]
    of every team n; index 0 (none) and teams with zero gradient (padding)
    skipped. out: [F, 1 + k], bags: int64[N, G], s: [N, 1 + k], grad: [N].
    Serial, so the sums are added in a fixed order (reproducible); ~5x faster
    than torch's index_add_ of the repeated rows on one CPU thread.
    """
    n_teams, n_members = bags.shape
    d = s.shape[1]
    for n in range(n_teams):
        g = grad[n]
        if g == 0.0:
            continue
        for j in range(n_members):
            r = bags[n, j]
            if r != 0:
                out[r, 0] += g
                for c in range(1, d):
                    out[r, c] += g * s[n, c]
