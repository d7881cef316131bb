"""The cache both flat-layout MM engines keep (``CachedMM``): the wins, fixed, and
which groups changed since the team strengths were last brought up to date.

An MM update changes one group, so the next pass only applies that group's
change (one gather per candidate) instead of re-summing all G groups. The
compiled engine (gomove.train.mm.compiled) and the tensor engine
(gomove.train.mm.tensor) hold the strengths each in its own form.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gomove.data.flat import FlatData
from gomove.train.mm.loop import MMPasses


class CachedMM(MMPasses):
    """What both engines share: the wins (fixed) and bringing the cache up to date."""

    def __init__(self, data: FlatData) -> None:
        self.data = data
        self.offsets, self.sizes = data.offsets, data.sizes
        self.n_positions = data.n_positions
        self.win_flat = data.expert_candidates()
        # wins never change: the expert moves' count by level of each group
        self.win_counts = [
            np.bincount(data.level(g, self.win_flat), minlength=s + 1)[1:]
            for g, s in enumerate(self.sizes)
        ]
        self._seen: np.ndarray | None = None  # log_gamma the cached strengths reflect

    @property
    def caches(self) -> bool:
        return True

    def _table(self, log_gamma: np.ndarray, g: int) -> np.ndarray:
        """log-gamma by level of group g, level 0 (absent) -> 0."""
        o, s = self.offsets[g], self.sizes[g]
        return np.concatenate([np.zeros(1), log_gamma[o : o + s]])

    def _wins(self, wins: np.ndarray, g: int) -> None:
        o, s = self.offsets[g], self.sizes[g]
        wins[o : o + s] = self.win_counts[g]

    def _changes(self, log_gamma: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """(g, delta) of every group g whose log-gammas changed since the strengths were
        cached (all groups the first time), delta its change by level ([size + 1],
        level 0: 0); log_gamma becomes the cached one."""
        n_groups = len(self.sizes)
        if self._seen is None:
            changed: Sequence[int] = range(n_groups)
            old = np.zeros_like(log_gamma)
        else:
            old = self._seen
            diff = log_gamma != old
            changed = [
                g
                for g in range(n_groups)
                if bool(diff[self.offsets[g] : self.offsets[g] + self.sizes[g]].any())
            ]
        self._seen = log_gamma.copy()
        return [(g, self._table(log_gamma, g) - self._table(old, g)) for g in changed]
