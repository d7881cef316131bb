"""MM passes over the flat layout on any device by torch ops, and the engine for a device.

``TorchMM`` keeps log-strengths, float64[C], and the levels copied to the
device (wide groups as int32, which torch indexes), and runs chunked torch
ops; it shares the cache's bookkeeping with gomove.train.mm.compiled's
``NumbaMM`` (the CPU engine, torch-free), and both return what
gomove.train.mm.padded.collect_stats returns over the same positions.
``flat_mm(data, device)`` picks the engine for a device.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from gomove.data.flat import FlatData
from gomove.train.mm.cached import CachedMM
from gomove.train.mm.compiled import NumbaMM
from gomove.train.mm.loop import PassStats


class TorchMM(CachedMM):
    """MM passes by torch ops on ``device``, in chunks of ``chunk_positions`` positions."""

    def __init__(
        self, data: FlatData, device: torch.device | str = "cpu", chunk_positions: int = 16384
    ) -> None:
        super().__init__(data)
        self.device = torch.device(device)
        self.levels = [
            torch.from_numpy(_indexable(data.level(g))).to(self.device)
            for g in range(len(self.sizes))
        ]
        counts = np.diff(data.pos_start)
        p = data.n_positions
        self.pos = torch.from_numpy(np.repeat(np.arange(p, dtype=np.int32), counts)).to(self.device)
        self.win_flat_t = torch.from_numpy(self.win_flat).to(self.device)
        starts = data.pos_start
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
        """Memory of the engine's own tensors (the levels on the device included)."""
        tensors = [*self.levels, self.pos, self.win_flat_t, self.log_team]
        return sum(t.numel() * t.element_size() for t in tensors)

    def advance(self, log_gamma: np.ndarray) -> None:
        """The cache brought to log_gamma, each change added chunk by chunk."""
        for g, delta in self._changes(log_gamma):
            d = torch.from_numpy(delta).to(self.device)
            for lo, hi, _, _ in self.chunks:
                self.log_team[lo:hi] += d[self.levels[g][lo:hi].long()]

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
                pos = (self.pos[lo:hi] - plo).long()
                shift = lt.max()
                ex = torch.exp(lt - shift)
                e = torch.zeros(phi - plo, dtype=torch.float64, device=self.device)
                e.index_add_(0, pos, ex)
                log_e = torch.log(e) + shift
                log_lik += (self.log_team[self.win_flat_t[plo:phi]] - log_e).sum()
                p = torch.exp(lt - log_e[pos])  # P(candidate)
                for g in columns:
                    lev = self.levels[g][lo:hi].long()
                    part[g].index_add_(0, lev, p * torch.exp(-tables[g][lev]))
        wins, denom = np.zeros(f), np.zeros(f)
        for g in columns:
            o, s = self.offsets[g], self.sizes[g]
            denom[o : o + s] = part[g][1:].cpu().numpy()
            self._wins(wins, g)
        return PassStats(wins, denom, float(log_lik), self.n_positions)


def flat_mm(
    data: FlatData, device: torch.device | str = "cpu", team_dtype: str = "float32"
) -> NumbaMM | TorchMM:
    """The MM engine over data for a device: compiled loops on the CPU (team strengths
    of team_dtype), torch elsewhere."""
    device = torch.device(device)
    if device.type == "cpu":
        return NumbaMM(data, team_dtype=team_dtype)
    return TorchMM(data, device)


def _indexable(levels: np.ndarray) -> np.ndarray:
    """Torch indexes with uint8 or int32/int64 tensors, not uint16: widen those to int32."""
    return levels.astype(np.int32) if levels.dtype == np.uint16 else levels
