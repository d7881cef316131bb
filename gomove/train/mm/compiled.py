"""MM passes over the flat layout by compiled loops on the CPU, without torch.

The engines over gomove.data.flat.FlatData keep every candidate's team
strength for the log-gammas last seen (the cache): an MM update changes one
group, so the next pass only applies that group's change (one gather per
candidate) instead of re-summing all G groups. ``collect(log_gamma, columns)``
returns exactly what gomove.train.mm.padded.collect_stats returns over padded
batches of the same positions, far cheaper (the tests check them against
each other).

- ``NumbaMM`` (here): strengths as products of gammas, float32[C] (4 bytes per
  candidate; float64 on request), compiled passes over chunks of positions in
  parallel (gomove.train.mm.kernels); the change of an update rides on the
  next pass (one read of the candidates per update). Every sum is float64;
  a float32 strength is rounded once per update of its groups (relative
  1e-7 a time), so after a run's few hundred updates the gammas agree with
  float64 strengths to about 1e-5 relative (tests/test_mm_flat.py). Sparse
  groups (pass, capture, extension, self-atari, atari: at level 0 for 97% or
  more of the candidates) are updated and gathered over their listed
  candidates alone, from each position's kept sum of strengths: a cyclic sweep
  of the 9 groups costs about 4 dense passes instead of 9.
- ``TorchMM`` (gomove.train.mm.tensor; any device, CUDA in practice) shares the
  cache's bookkeeping, ``CachedMM``.

With gomove.train.mm.loop, a whole MM run on the CPU needs numpy and numba
only (scripts/compare_mm_worker.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gomove.data.flat import FlatData
from gomove.train.mm.kernels import (
    count_entries,
    dense_scale,
    fill_entries,
    mm_pass,
    sparse_pass,
    sparse_scale,
)
from gomove.train.mm.loop import MMPasses, PassStats


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


class NumbaMM(CachedMM):
    """MM passes by compiled loops on the CPU; ``team[c]`` is candidate c's gamma product.

    Sparse groups (at most ``sparse_density`` of the candidates at a level > 0) keep
    their entries (gomove.train.mm.kernels), and ``e[p]``, position p's sum of strengths, is
    kept too: updating or gathering a sparse group then costs its entries, not a
    pass over every candidate. ``e`` changes only when strengths do (a dense
    group's change sums it anew, a sparse group's moves it), never in a gather,
    so it is a function of the updates made: a resumed run that replays them
    (``advance``) holds the same bits.
    """

    def __init__(
        self,
        data: FlatData,
        chunk_positions: int = 2048,
        team_dtype: str = "float32",
        max_chunks: int = 32,
        sparse_density: float = 0.05,
    ) -> None:
        super().__init__(data)
        p = data.n_positions
        # positions split into chunks summed in parallel, each in a fixed order; each
        # chunk holds partial sums for every level of a group (mm_pass), so their number
        # is capped: 2,895 chunks of the 187,815 shapes of all training games took 4.3 GB
        chunk = max(chunk_positions, -(-p // max_chunks))
        self.chunk_pos = np.unique(np.r_[np.arange(0, p, chunk), p]).astype(np.int64)
        self.team = np.ones(data.n_candidates, dtype=np.dtype(team_dtype))
        self.e = np.zeros(p)
        self.e_valid = False
        self.sparse = {}  # group -> (ent_start, ent_off): kernels' entries
        for g in range(len(self.sizes)):
            counts = np.zeros(p + 1, dtype=np.int64)
            count_entries(*data.field(g), data.pos_start, self.chunk_pos, counts)
            np.cumsum(counts, out=counts)
            if counts[-1] <= sparse_density * data.n_candidates:
                self.sparse[g] = self._entries(g, counts)

    def _entries(self, g: int, ent_start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = self.data
        if ent_start[-1] < 2**32:
            ent_start = ent_start.astype(np.uint32)
        width = int(np.diff(d.pos_start).max(initial=0))
        ent_off = np.empty(int(ent_start[-1]), dtype=np.uint16 if width <= 2**16 else np.int64)
        fill_entries(*d.field(g), d.pos_start, self.chunk_pos, ent_start, ent_off)
        return ent_start, ent_off

    def nbytes(self) -> int:
        """Memory of the engine's own arrays (the data's apart)."""
        sparse = sum(a.nbytes for entries in self.sparse.values() for a in entries)
        return self.team.nbytes + self.win_flat.nbytes + self.e.nbytes + sparse

    def _apply(self, g: int, delta: np.ndarray) -> None:
        """Multiply group g's change into the strengths and the sums e."""
        d, factor = self.data, np.exp(delta)
        if g in self.sparse and self.e_valid:
            sparse_scale(
                self.team, self.e, d.pos_start, self.chunk_pos, *self.sparse[g], *d.field(g), factor
            )
        else:
            dense_scale(self.team, self.e, d.pos_start, self.chunk_pos, *d.field(g), factor)
            self.e_valid = True

    def advance(self, log_gamma: np.ndarray) -> None:
        """The cache brought to log_gamma: each change multiplied in as a pass would."""
        for g, delta in self._changes(log_gamma):
            self._apply(g, delta)

    def collect(self, log_gamma: np.ndarray, columns: Sequence[int]) -> PassStats:
        d = self.data
        columns = list(columns)
        first = (columns or [0])[0]
        changes = self._changes(log_gamma)
        # one dense change (an MM update) before a dense gather rides on its pass
        fused = None
        if len(changes) == 1 and first not in self.sparse:
            if changes[0][0] not in self.sparse or not self.e_valid:
                fused = changes.pop()
        for g, delta in changes:
            self._apply(g, delta)
        f = log_gamma.shape[0]
        wins, denom = np.zeros(f), np.zeros(f)
        log_lik = None
        for g in columns or [0]:
            o, s = self.offsets[g], self.sizes[g]
            if g in self.sparse and self.e_valid:
                ll, part = sparse_pass(
                    self.team,
                    self.e,
                    d.pos_start,
                    self.win_flat,
                    self.chunk_pos,
                    *self.sparse[g],
                    *d.field(g),
                    s + 1,
                )
            else:
                # without a change to apply, the arguments only need the right types
                scale, factor = d.field(g), np.ones(1)
                if fused is not None:
                    scale, factor = d.field(fused[0]), np.exp(fused[1])
                ll, part = mm_pass(
                    self.team,
                    d.pos_start,
                    self.win_flat,
                    self.chunk_pos,
                    *d.field(g),
                    s + 1,
                    *scale,
                    factor,
                    fused is not None,
                    self.e,
                )
                self.e_valid |= fused is not None
                fused = None
            log_lik = ll if log_lik is None else log_lik
            if g in columns:
                denom[o : o + s] = part[1:] * np.exp(-log_gamma[o : o + s])
                self._wins(wins, g)
        return PassStats(wins, denom, float(log_lik), self.n_positions)
