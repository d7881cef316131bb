"""MM on several processes (gomove.train.world): every rank's pass statistics all-reduced.

MM's update is a function of sums over positions (wins, denominators,
log-likelihood), so the ranks summing them in float64 make the same update and
fit the gammas one process fits on all positions, up to the order of summation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from gomove.train.mm.loop import MMPasses, PassStats
from gomove.train.world import World


class DistributedMM(MMPasses):
    """An MM engine over this rank's positions whose passes return the statistics of
    all ranks' positions: wins, denominators and log-likelihood summed in float64 (the
    MM update is a function of these sums, so every rank makes the same update and
    the gammas are those of one process up to the order of summation)."""

    def __init__(self, local: MMPasses, world: World) -> None:
        self.local, self.world = local, world
        self.n_positions = 0  # all ranks' (known after the first pass)

    def collect(self, log_gamma: np.ndarray, columns: Sequence[int]) -> PassStats:
        s = self.local.collect(log_gamma, columns)
        f = s.wins.shape[0]
        sums = np.concatenate([s.wins, s.denom, [s.log_likelihood, s.n_positions]])
        flat = torch.from_numpy(sums.astype(np.float64))
        self.world.all_reduce(flat)
        self.n_positions = int(flat[-1])
        out = flat.numpy()
        return PassStats(out[:f], out[f : 2 * f], float(out[-2]), self.n_positions)

    @property
    def caches(self) -> bool:
        return self.local.caches

    def advance(self, log_gamma: np.ndarray) -> None:
        self.local.advance(log_gamma)


def distributed_mm(engine: MMPasses, world: World) -> MMPasses:
    """engine itself on one process, else its all-reducing wrapper."""
    return DistributedMM(engine, world) if world.distributed else engine
