"""MM with every pattern of the chain in the team (``features.shapes=all``), on any engine.

The engines compute MM's statistics of a largest-only model (one member per group).
With the hierarchy's raw log-gammas theta (gomove.features.hierarchy: a pattern's
own log-gamma, its team holding every pattern of its chain), the engine is asked at
the effective log-gammas phi = sum_down(theta), which score every candidate exactly
as the chain's team does, and its statistics are carried over to theta:

- wins: W_q = sum of W_p over the patterns p whose chain holds q (sum_up);
- denominators: the engine's d_p = sum_j C_pj / E_j at phi, with C_pj = E_j(cand) /
  gamma_p; for the chain's team C_qj = E_j(cand) / gamma_q(raw), so
  d_q(raw) = sum_up(d * exp(phi))_q * exp(-theta_q).

Its group spans are the hierarchy's (the shape group split by radius): the loop
updates one radius at a time, each team holding at most one pattern of it, so
every update is Coulom's exact MM on the chain's teams and the log-posterior
(likelihood plus each raw gamma's prior) never falls. The prior on a raw gamma
pulls a pattern towards its parent (its own factor towards 1), the hierarchy's
shrinkage.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gomove.features.hierarchy import Hierarchy
from gomove.train.mm.loop import MMPasses, PassStats


class ChainPasses(MMPasses):
    """An engine's passes (inner, over the registry's groups) as passes over the
    hierarchy's groups and raw log-gammas (module docstring)."""

    def __init__(self, inner: MMPasses, hierarchy: Hierarchy) -> None:
        self.inner, self.hierarchy = inner, hierarchy

    @property
    def n_positions(self) -> int:  # type: ignore[override]
        return self.inner.n_positions

    def collect(self, log_gamma: np.ndarray, columns: Sequence[int]) -> PassStats:
        h = self.hierarchy
        phi = h.sum_down(log_gamma)
        inner_cols = sorted({h.group_column[g] for g in columns})
        st = self.inner.collect(phi, inner_cols)
        wins = h.sum_up(st.wins)
        denom = h.sum_up(st.denom * np.exp(phi)) * np.exp(-log_gamma)
        return PassStats(wins, denom, st.log_likelihood, st.n_positions)

    @property
    def caches(self) -> bool:
        return self.inner.caches

    def advance(self, log_gamma: np.ndarray) -> None:
        self.inner.advance(self.hierarchy.sum_down(log_gamma))
