"""MM passes over the flat layout on any device by torch ops, and the engine for a device.

``TorchMM`` holds the data on the device as stored (gomove.data.device.DeviceFlat:
packed words and wide levels, about 7 bytes a candidate) and one float64
log-strength a candidate, 15 bytes in all: every training game fits an H100. It
runs chunked torch ops, each chunk decoding the levels it reads; the statistics
of a group are weighted bincounts (histograms over the group's levels, which
CUDA keeps in shared memory for the small tactical groups instead of contending
for a few global addresses). It shares the cache's bookkeeping with
gomove.train.mm.compiled's ``NumbaMM`` (the CPU engine, torch-free), and both return
what gomove.train.mm.padded.collect_stats returns over the same positions.
``flat_mm(data, device, engine=...)`` picks the engine.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from gomove.data.device import DeviceFlat
from gomove.data.flat import FlatData
from gomove.train.config import compiled_engine
from gomove.train.mm.cached import CachedMM
from gomove.train.mm.compiled import NumbaMM
from gomove.train.mm.loop import PassStats

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
        self.log_team = torch.zeros(data.n_candidates, dtype=torch.float64, device=self.device)

    def nbytes(self) -> int:
        """Memory of the engine's tensors on the device (the data included)."""
        own = [self.win_flat_t, self.log_team]
        return self.flat.nbytes() + sum(t.numel() * t.element_size() for t in own)

    def _segments(self, lo: int, hi: int, plo: int, phi: int) -> torch.Tensor:
        """Each candidate of a chunk's position, counted from the chunk's first."""
        counts = self.flat.pos_start[plo + 1 : phi + 1] - self.flat.pos_start[plo:phi]
        return torch.repeat_interleave(torch.arange(phi - plo, device=self.device), counts)

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
            for lo, hi, plo, phi in self.chunks:
                lt = self.log_team[lo:hi]
                pos = self._segments(lo, hi, plo, phi)
                shift = lt.max()
                ex = torch.exp(lt - shift)
                e = torch.zeros(phi - plo, dtype=torch.float64, device=self.device)
                e.index_add_(0, pos, ex)
                log_e = torch.log(e) + shift
                log_lik += (self.log_team[self.win_flat_t[plo:phi]] - log_e).sum()
                p = torch.exp(lt - log_e[pos])  # P(candidate)
                for g in columns:
                    lev = self.flat.group_levels(g, slice(lo, hi))
                    weights = p * torch.exp(-tables[g][lev])
                    part[g] += torch.bincount(lev, weights, minlength=self.sizes[g] + 1)
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
) -> NumbaMM | TorchMM:
    """The MM engine over data for a device: compiled loops (team strengths of
    team_dtype) or torch, as engine says (config.compiled_engine)."""
    device = torch.device(device)
    if compiled_engine(engine, device, "model.engine"):
        return NumbaMM(data, team_dtype=team_dtype)
    # a GPU takes larger chunks: fewer kernel launches, temporaries of ~0.5 GB each
    return TorchMM(data, device, CUDA_CHUNK if device.type == "cuda" else CPU_CHUNK)
