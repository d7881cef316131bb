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
  float64 strengths to about 1e-5 relative (tests/test_mm_engines.py). Sparse
  groups (pass, capture, extension, self-atari, atari: at level 0 for 97% or
  more of the candidates) are updated and gathered over their listed
  candidates alone, from each position's kept sum of strengths: a cyclic sweep
  of the 9 groups costs about 4 dense passes instead of 9.
- ``TorchMM`` (gomove.train.mm.tensor; any device, CUDA in practice) shares the
  cache's bookkeeping, gomove.train.mm.cached.CachedMM.

With gomove.train.mm.loop, a whole MM run on the CPU needs numpy and numba
only (scripts/compare_mm_worker.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gomove.data.flat import FlatData
from gomove.train.mm.cached import CachedMM
from gomove.train.mm.kernels import (
    PART_BYTES,
    Change,
    Entries,
    Group,
    Positions,
    Strengths,
    count_entries,
    dense_scale,
    fill_entries,
    mm_pass,
    parts_wave,
    sparse_pass,
    sparse_scale,
)
from gomove.train.mm.loop import PassStats


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
        part_bytes: int = PART_BYTES,
    ) -> None:
        super().__init__(data)
        self.part_bytes = part_bytes  # the chunks' partial sums held at once (parts_wave)
        p = data.n_positions
        # positions split into chunks summed in parallel, each in a fixed order; each
        # chunk holds partial sums for every level of a group (mm_pass), so their number
        # is capped: 2,895 chunks of the 187,815 shapes of all training games took 4.3 GB
        chunk = max(chunk_positions, -(-p // max_chunks))
        self.chunk_pos = np.unique(np.r_[np.arange(0, p, chunk), p]).astype(np.int64)
        self.team = np.ones(data.n_candidates, dtype=np.dtype(team_dtype))
        self.e = np.zeros(p)
        self.e_valid = False
        self.sparse: dict[int, Entries] = {}  # group -> its entries (kernels.Entries)
        for g in range(len(self.sizes)):
            counts = np.zeros(p + 1, dtype=np.int64)
            count_entries(*data.field(g), data.pos_start, self.chunk_pos, counts)
            np.cumsum(counts, out=counts)
            if counts[-1] <= sparse_density * data.n_candidates:
                self.sparse[g] = self._entries(g, counts)

    def _entries(self, g: int, ent_start: np.ndarray) -> Entries:
        d = self.data
        if ent_start[-1] < 2**32:
            ent_start = ent_start.astype(np.uint32)
        width = int(np.diff(d.pos_start).max(initial=0))
        ent_off = np.empty(int(ent_start[-1]), dtype=np.uint16 if width <= 2**16 else np.int64)
        fill_entries(*d.field(g), d.pos_start, self.chunk_pos, ent_start, ent_off)
        return Entries(ent_start, ent_off)

    def _strengths(self) -> Strengths:
        return Strengths(self.team, self.e)

    def _positions(self) -> Positions:
        return Positions(self.data.pos_start, self.win_flat, self.chunk_pos)

    def _wave(self, n_levels: int) -> int:
        return parts_wave(len(self.chunk_pos) - 1, n_levels, self.part_bytes)

    def _group(self, g: int) -> Group:
        return Group(*self.data.field(g))

    def nbytes(self) -> int:
        """Memory of the engine's own arrays (the data's apart)."""
        sparse = sum(a.nbytes for entries in self.sparse.values() for a in entries)
        return self.team.nbytes + self.win_flat.nbytes + self.e.nbytes + sparse

    def _apply(self, g: int, delta: np.ndarray) -> None:
        """Multiply group g's change into the strengths and the sums e."""
        s, pos, factor = self._strengths(), self._positions(), np.exp(delta)
        if g in self.sparse and self.e_valid:
            sparse_scale(s, pos, self.sparse[g], self._group(g), factor)
        else:
            dense_scale(s, pos, self._group(g), factor)
            self.e_valid = True

    def advance(self, log_gamma: np.ndarray) -> None:
        """The cache brought to log_gamma: each change multiplied in as a pass would."""
        for g, delta in self._changes(log_gamma):
            self._apply(g, delta)

    def collect(self, log_gamma: np.ndarray, columns: Sequence[int]) -> PassStats:
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
        strengths, pos = self._strengths(), self._positions()
        for g in columns or [0]:
            o, s = self.offsets[g], self.sizes[g]
            if g in self.sparse and self.e_valid:
                ll, part = sparse_pass(
                    strengths, pos, self.sparse[g], self._group(g), s + 1, self._wave(s + 1)
                )  # fmt: skip
            else:
                # without a change to apply, the change only needs the right types
                change = Change(self._group(g), np.ones(1), False)
                if fused is not None:
                    change = Change(self._group(fused[0]), np.exp(fused[1]), True)
                ll, part = mm_pass(strengths, pos, self._group(g), s + 1, change, self._wave(s + 1))
                self.e_valid |= fused is not None
                fused = None
            log_lik = ll if log_lik is None else log_lik
            if g in columns:
                denom[o : o + s] = part[1:] * np.exp(-log_gamma[o : o + s])
                self._wins(wins, g)
        return PassStats(wins, denom, float(log_lik), self.n_positions)
