"""MM passes that keep nothing per candidate: for training data larger than memory.

``StreamMM`` is the MM engine of ``data.chunk_positions`` (gomove.data.chunks): where
``NumbaMM`` (gomove.train.mm.compiled) keeps every candidate's team strength (4 bytes
a candidate: 31 GB for the large split's 7.9 billion candidates), a pass here computes
each strength from the gammas as it reads the candidate, chunk by chunk, the next
chunk's pages prefetched: the memory it needs is the model's and one chunk's, whatever
the number of games. A strength is the code's product of the narrow groups' gammas
(one float a combination of narrow levels, ``code_gamma``, made once a pass) times each
wide group's gamma: two or three lookups a candidate (gomove.train.mm.kernels.stream_pass).

Every pass reads all the candidates (no sparse shortcut, no fused change): a cyclic
sweep of G groups costs G passes. The numbers are MM's, in float64 throughout, so
the gammas agree with NumbaMM's to its float32 rounding (tests/test_mm_engines.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gomove.data.chunks import chunk_bounds, in_chunks
from gomove.data.flat import FlatData
from gomove.train.mm.kernels import stream_pass
from gomove.train.mm.loop import MMPasses, PassStats

# each chunk is summed in this many parts, in parallel, in a fixed order (each part's
# sums by level are kept: 16 x 8 bytes a level, 24 MB for the large split's shapes)
PARTS = 16


class StreamMM(MMPasses):
    """MM passes over FlatData read chunk by chunk, strengths computed (module docstring)."""

    def __init__(self, data: FlatData) -> None:
        self.data = data
        self.offsets, self.sizes = data.offsets, data.sizes
        self.n_positions = data.n_positions
        self.narrow, self.wide = data.narrow_wide()
        self.win_counts: list[np.ndarray] | None = None  # by the first pass
        self.n_passes = 0
        # each code's narrow levels, by narrow group: [G8, K]
        self.code_levels = np.array(
            [data.level_of_codes(g) for g in self.narrow], dtype=np.int64
        ).reshape(len(self.narrow), -1)

    def _code_gamma(self, gam: np.ndarray) -> np.ndarray:
        """float64[K]: each code's product of its narrow groups' gammas (gam: gamma by
        global feature, gam[0] = 1)."""
        out = np.ones(self.code_levels.shape[1])
        for i, g in enumerate(self.narrow):
            lv = self.code_levels[i]
            out *= np.where(lv > 0, gam[self.offsets[g] + lv - 1], 1.0)
        return out

    def _wide_gamma(self, gam: np.ndarray) -> np.ndarray:
        """float64[Gw, L]: each wide group's gamma by level (level 0 at 1)."""
        top = max([self.sizes[g] for g in self.wide], default=0)
        out = np.ones((len(self.wide), top + 1))
        for i, g in enumerate(self.wide):
            o, s = self.offsets[g], self.sizes[g]
            out[i, 1 : s + 1] = gam[o : o + s]
        return out

    def collect(self, log_gamma: np.ndarray, columns: Sequence[int]) -> PassStats:
        """MM statistics of the groups in columns (one pass each; one pass without any)
        and the log-likelihood, at log_gamma."""
        f = log_gamma.shape[0]
        gam = np.exp(log_gamma)
        gam[0] = 1.0
        tables = self._code_gamma(gam), self._wide_gamma(gam)
        wins, denom = np.zeros(f), np.zeros(f)
        log_lik = None
        for g in list(columns) or [0]:
            ll, part = self._pass(tables, g)
            log_lik = ll if log_lik is None else log_lik
            if g in columns:
                o, s = self.offsets[g], self.sizes[g]
                denom[o : o + s] = part[1:] * np.exp(-log_gamma[o : o + s])
                wins[o : o + s] = self.win_counts[g]
        return PassStats(wins, denom, float(log_lik), self.n_positions)

    def _pass(self, tables: tuple[np.ndarray, np.ndarray], g: int) -> tuple[float, np.ndarray]:
        """One pass over the chunks: the log-likelihood and, per level of group g, sum of
        P(candidate) over its candidates (the experts' levels counted in the first).

        Passes alternate in direction, front to back and back to front: the chunks a
        pass read last are the likeliest still in the page cache, so the next pass
        starts with them (where the data is larger than memory, about the cache's
        size less read from the disk a pass). The chunks' sums are added in chunk
        order, so the numbers do not depend on the direction."""
        d = self.data
        code_gamma, wide_gamma = tables
        n_levels = self.sizes[g] + 1
        _, field = d.field(g)
        counts = None if self.win_counts is not None else [
            np.zeros(s + 1, dtype=np.int64) for s in self.sizes
        ]  # fmt: skip
        bounds = chunk_bounds(d.n_positions, d.chunk_positions)
        n_chunks = len(bounds) - 1
        order = range(n_chunks) if self.n_passes % 2 == 0 else range(n_chunks - 1, -1, -1)
        self.n_passes += 1
        sums: list[tuple[float, np.ndarray] | None] = [None] * n_chunks
        for k, (lo, hi) in zip(order, in_chunks(d, order), strict=True):
            chunk_pos = np.unique(np.linspace(lo, hi, PARTS + 1).astype(np.int64))
            sums[k] = stream_pass(
                d.records, d.pos_start, d.winner, chunk_pos, code_gamma, d.wide_read,
                wide_gamma, field, n_levels, d.max_cands,
            )  # fmt: skip
            if counts is not None:  # the experts' levels, while the chunk's pages are in
                experts = d.pos_start[lo:hi] + d.winner[lo:hi]
                for h, s in enumerate(self.sizes):
                    counts[h] += np.bincount(d.level(h, experts), minlength=s + 1)
        if counts is not None:
            self.win_counts = [c[1:] for c in counts]
        log_lik, part = 0.0, np.zeros(n_levels)
        for ll, p in sums:
            log_lik += ll
            part += p
        return log_lik, part

    def nbytes(self) -> int:
        """Memory of the engine's own arrays (the data's and a pass's tables apart)."""
        return self.code_levels.nbytes
