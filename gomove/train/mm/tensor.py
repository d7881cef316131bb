"""MM passes over the flat layout on any device by torch ops, and the engine for a device.

``TorchMM`` holds the data on the device as stored (gomove.data.device_flat.DeviceFlat:
the records, about 4.3 bytes a candidate) and one float64 log-strength a candidate,
12.5 bytes in all: every training game fits an H100. It
runs chunked torch ops, each chunk decoding the levels it reads: each position's
sum by segments, and a group's statistics as the bincount of P(candidate) by
level, times 1 / gamma(level) once at the end. Where most candidates lack the
group's feature (the tactical groups), level 0 is dropped before the bincount:
its atomic adds on one bin were what made the pass slow on an H200
(docs/logs/gpu.md). It shares the cache's bookkeeping with
gomove.train.mm.compiled's ``NumbaMM`` (the CPU engine, torch-free), and both return
what gomove.train.mm.padded.collect_stats returns over the same positions.
``flat_mm(data, device, engine=...)`` picks the engine.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from gomove.data.device_flat import DeviceFlat
from gomove.data.flat import FlatData
from gomove.train.mm.cached import CachedMM
from gomove.train.mm.compiled import NumbaMM
from gomove.train.mm.loop import PassStats
from gomove.train.mm.stream import StreamMM
from gomove.train.schemas import compiled_engine

CPU_CHUNK, CUDA_CHUNK = 65536, 262144  # positions a chunk


class TorchMM(CachedMM):
    """MM passes by torch ops on ``device``, in chunks of ``chunk_positions`` positions."""

    def __init__(
        self, data: FlatData, device: torch.device | str = "cpu", chunk_positions: int = CPU_CHUNK
    ) -> None:
        super().__init__(data)
        self.device = torch.device(device)
        self.flat = DeviceFlat(data, self.device)
        self.win_flat_t = torch.from_numpy(self.win_flat).to(self.device)
        starts, p = data.pos_start, data.n_positions
        # (first candidate, end candidate, first position, end position) of each chunk
        self.chunks = [
            (
                int(starts[lo]),
                int(starts[min(lo + chunk_positions, p)]),
                lo,
                min(lo + chunk_positions, p),
            )
            for lo in range(0, p, chunk_positions)
        ]
        # each chunk's candidates a position
        self.counts = [
            self.flat.pos_start[plo + 1 : phi + 1] - self.flat.pos_start[plo:phi]
            for _, _, plo, phi in self.chunks
        ]
        # groups whose level is mostly 0 (absent) in the first chunk: their sums leave
        # level 0 out first (ten times faster on an H200 than the bincount's atomic adds
        # on bin 0, docs/logs/gpu.md)
        lo, hi = self.chunks[0][:2] if self.chunks else (0, 0)
        self.sparse = [
            bool((self.flat.group_levels(g, slice(lo, hi)) == 0).float().mean() > 0.5)
            for g in range(len(self.sizes))
        ]
        self.log_team = torch.zeros(data.n_candidates, dtype=torch.float64, device=self.device)

    def nbytes(self) -> int:
        """Memory of the engine's tensors on the device (the data included)."""
        own = [self.win_flat_t, self.log_team, *self.counts]
        return self.flat.nbytes() + sum(t.numel() * t.element_size() for t in own)

    def advance(self, log_gamma: np.ndarray) -> None:
        """The cache brought to log_gamma, each change added chunk by chunk."""
        for g, delta in self._changes(log_gamma):
            d = torch.from_numpy(delta).to(self.device)
            for lo, hi, _, _ in self.chunks:
                self.log_team[lo:hi] += d[self.flat.group_levels(g, slice(lo, hi))]

    def collect(self, log_gamma: np.ndarray, columns: Sequence[int]) -> PassStats:
        self.advance(log_gamma)
        f = log_gamma.shape[0]
        tables = {g: torch.from_numpy(self._table(log_gamma, g)).to(self.device) for g in columns}
        part = {
            g: torch.zeros(self.sizes[g] + 1, dtype=torch.float64, device=self.device)
            for g in columns
        }
        log_lik = torch.zeros((), dtype=torch.float64, device=self.device)
        with torch.no_grad():
            for (lo, hi, plo, phi), counts in zip(self.chunks, self.counts, strict=True):
                lt = self.log_team[lo:hi]
                shift = lt.max()
                # each position's sum by segments (no atomics on one address per position)
                e = torch.segment_reduce(torch.exp(lt - shift), "sum", lengths=counts)
                log_e = torch.log(e) + shift
                log_lik += (self.log_team[self.win_flat_t[plo:phi]] - log_e).sum()
                p = torch.exp(lt - torch.repeat_interleave(log_e, counts, output_size=hi - lo))
                for g in columns:  # P(candidate) by level; 1 / gamma(level) applied after
                    lev, w = self.flat.group_levels(g, slice(lo, hi)), p
                    if self.sparse[g]:
                        keep = torch.nonzero(lev).squeeze(1)
                        lev, w = lev[keep], p[keep]
                    part[g] += torch.bincount(lev, w, minlength=self.sizes[g] + 1)
        for g in columns:
            part[g] *= torch.exp(-tables[g])
        wins, denom = np.zeros(f), np.zeros(f)
        for g in columns:
            o, s = self.offsets[g], self.sizes[g]
            denom[o : o + s] = part[g][1:].cpu().numpy()
            self._wins(wins, g)
        return PassStats(wins, denom, float(log_lik), self.n_positions)


def flat_mm(
    data: FlatData,
    device: torch.device | str = "cpu",
    team_dtype: str = "float32",
    engine: str = "auto",
) -> NumbaMM | TorchMM | StreamMM:
    """The MM engine over data for a device: compiled loops (team strengths of
    team_dtype) or torch, as engine says (config.compiled_engine); data read in chunks
    (``data.chunk_positions``) by the streaming engine (gomove.train.mm.stream), which
    keeps no strength, on the CPU."""
    device = torch.device(device)
    compiled = compiled_engine(engine, device, "model.engine")
    if data.chunk_positions is not None:
        if not compiled:
            raise ValueError("data read in chunks (data.chunk_positions) trains MM on the CPU")
        return StreamMM(data)
    if compiled:
        return NumbaMM(data, team_dtype=team_dtype)
    # a GPU takes larger chunks: fewer kernel launches, temporaries of ~0.5 GB each
    return TorchMM(data, device, CUDA_CHUNK if device.type == "cuda" else CPU_CHUNK)
