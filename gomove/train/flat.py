"""FlatTeams: the training set held flat in memory, with cached team strengths for fast MM.

Terms:
- flat candidates: every candidate of every position, back to back (no padding),
  ``pos[c]`` its position; group g's levels per candidate in ``levels[g]`` in
  the narrowest integer type (shards' compact form: ~24 bytes per candidate with
  the caches below, so 10,000 games of 19x19 fit in ~13 GB).
- cached strengths: ``log_team[c]`` (float64) for the log-gammas last seen. An MM
  update changes one group, so the next pass only adds that group's change
  (one gather per candidate) instead of re-summing all G groups.

``collect(log_gamma, columns)`` returns exactly what gomove.train.mm.collect_stats
returns on the same data, but far cheaper (tests check one against the other).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from gomove.data.dataset import Dataset
from gomove.features.registry import Registry
from gomove.train.flat_kernels import mm_pass, scale_teams
from gomove.train.mm import PassStats


class FlatTeams:
    def __init__(
        self,
        levels: list[torch.Tensor],
        pos_start: np.ndarray,
        winner: np.ndarray,
        registry: Registry,
        device: torch.device | str = "cpu",
        chunk_positions: int = 16384,
        engine: str = "auto",
    ):
        self.device = torch.device(device)
        if engine == "auto":
            engine = "numba" if self.device.type == "cpu" else "torch"
        if engine not in ("numba", "torch"):
            raise ValueError(f"engine must be 'auto', 'numba' or 'torch', not {engine!r}")
        self.engine = engine
        self.registry = registry
        self.offsets = [int(o) for o in registry.offsets]
        self.sizes = [int(s) for s in registry.sizes]
        self.n_positions = len(winner)
        self.n_candidates = int(pos_start[-1])
        win_flat = pos_start[:-1] + winner.astype(np.int64)
        # wins never change: the levels of the expert moves
        self.win_levels = [torch.from_numpy(lv[win_flat].astype(np.int64)) for lv in levels]
        self._seen: torch.Tensor | None = None  # log_gamma the cached strengths reflect
        if engine == "numba":
            self.levels_np = levels
            self.pos_start = pos_start
            self.win_flat_np = win_flat
            self.chunk_pos = np.unique(
                np.r_[np.arange(0, self.n_positions, 2048), self.n_positions]
            ).astype(np.int64)
            self.team = np.ones(self.n_candidates, dtype=np.float64)
            return
        self.levels = [torch.from_numpy(lv).to(self.device) for lv in levels]
        counts = np.diff(pos_start)
        self.pos = torch.from_numpy(
            np.repeat(np.arange(self.n_positions, dtype=np.int32), counts)
        ).to(self.device)
        self.win_flat = torch.from_numpy(win_flat).to(self.device)
        self.chunks = [
            (
                int(pos_start[lo]),
                int(pos_start[min(lo + chunk_positions, self.n_positions)]),
                lo,
                min(lo + chunk_positions, self.n_positions),
            )
            for lo in range(0, self.n_positions, chunk_positions)
        ]
        self.log_team = torch.zeros(self.n_candidates, dtype=torch.float64, device=self.device)

    @classmethod
    def from_dataset(
        cls, ds: Dataset, device: torch.device | str = "cpu", progress: bool = False, **kw
    ) -> FlatTeams:
        levels, starts, winners = load_columns(ds, progress=progress)
        return cls(levels, starts, winners, ds.registry, device, **kw)

    def nbytes(self) -> int:
        if self.engine == "numba":
            arrays = [*self.levels_np, self.pos_start, self.win_flat_np, self.team]
            return sum(a.nbytes for a in arrays)
        arrays = [*self.levels, self.pos, self.win_flat, self.log_team]
        return sum(a.numel() * a.element_size() for a in arrays)

    def _table(self, log_gamma: torch.Tensor, g: int) -> torch.Tensor:
        """log-gamma by level of group g, level 0 (absent) -> 0."""
        o, s = self.offsets[g], self.sizes[g]
        return torch.cat([log_gamma.new_zeros(1), log_gamma[o : o + s]])

    def _sync(self, log_gamma: torch.Tensor) -> None:
        """Bring the cached strengths to log_gamma, group by group, only where it changed."""
        n_groups = len(self.sizes)
        if self._seen is None:
            if self.engine == "numba":
                self.team.fill(1.0)
            else:
                self.log_team.zero_()
            changed = range(n_groups)
            old = torch.zeros_like(log_gamma)
        else:
            old = self._seen
            diff = log_gamma != old
            changed = [
                g
                for g in range(n_groups)
                if bool(diff[self.offsets[g] : self.offsets[g] + self.sizes[g]].any())
            ]
        for g in changed:
            delta = self._table(log_gamma, g) - self._table(old, g)
            if self.engine == "numba":
                scale_teams(self.team, self.levels_np[g], torch.exp(delta).cpu().numpy())
                continue
            for lo, hi, _, _ in self.chunks:
                self.log_team[lo:hi] += delta[self.levels[g][lo:hi].long()]
        self._seen = log_gamma.clone()

    def collect(self, log_gamma: torch.Tensor, columns: Sequence[int]):
        """MM statistics of the groups in columns, and the log-likelihood, at log_gamma."""
        if self.engine == "numba":
            return self._collect_numba(log_gamma.cpu(), columns)
        log_gamma = log_gamma.to(self.device)
        self._sync(log_gamma)
        f = log_gamma.shape[0]
        wins = torch.zeros(f, dtype=torch.float64, device=self.device)
        denom = torch.zeros(f, dtype=torch.float64, device=self.device)
        tables = {g: self._table(log_gamma, g) for g in columns}
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
                log_lik += (self.log_team[self.win_flat[plo:phi]] - log_e).sum()
                p = torch.exp(lt - log_e[pos])  # P(candidate)
                for g in columns:
                    lev = self.levels[g][lo:hi].long()
                    part[g].index_add_(0, lev, p * torch.exp(-tables[g][lev]))
        for g in columns:
            o, s = self.offsets[g], self.sizes[g]
            denom[o : o + s] = part[g][1:]
            wins[o : o + s] = torch.bincount(self.win_levels[g], minlength=s + 1)[1:].double()
        return PassStats(wins, denom, float(log_lik), self.n_positions)

    def _collect_numba(self, log_gamma: torch.Tensor, columns: Sequence[int]) -> PassStats:
        self._sync(log_gamma)
        f = log_gamma.shape[0]
        wins = torch.zeros(f, dtype=torch.float64)
        denom = torch.zeros(f, dtype=torch.float64)
        log_lik = None
        for g in columns or [0]:
            o, s = self.offsets[g], self.sizes[g]
            ll, part = mm_pass(
                self.team,
                self.pos_start,
                self.win_flat_np,
                self.chunk_pos,
                self.levels_np[g],
                s + 1,
            )
            log_lik = ll if log_lik is None else log_lik
            if g in columns:
                denom[o : o + s] = torch.from_numpy(part[1:]) * torch.exp(-log_gamma[o : o + s])
                wins[o : o + s] = torch.bincount(self.win_levels[g], minlength=s + 1)[1:].double()
        return PassStats(wins, denom, float(log_lik), self.n_positions)


def load_columns(
    ds: Dataset, out: Sequence[np.ndarray] | None = None, progress: bool = False
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """A dataset's candidates back to back: (levels, pos_start, winner).

    levels: one array[C] per feature group (registry order), each candidate's
    level; pos_start: int64[P + 1], position p's candidates are
    pos_start[p]:pos_start[p + 1]; winner: int64[P], the expert's candidate
    within its position. out: arrays[C] to fill, one per group (e.g. rows of a
    stacked matrix); by default new ones in the shards' dtype, uint16 widened
    to int32 (torch has no uint16). Filled in place, shard by shard: peak
    memory is the result plus one shard.
    """
    groups = ds.registry.group_names
    first = ds.load(0)
    if out is None:
        out = [
            np.empty(ds.n_candidates, dtype=_torch_int(first.columns[g][:0]).dtype) for g in groups
        ]
    if len(out) != len(groups) or any(len(a) != ds.n_candidates for a in out):
        raise ValueError(f"out: want {len(groups)} arrays of {ds.n_candidates} candidates")
    starts = np.zeros(ds.n_positions + 1, dtype=np.int64)
    winners = np.empty(ds.n_positions, dtype=np.int64)
    c = p = 0
    for i in tqdm(range(len(ds.shards)), desc="load shards", disable=not progress):
        s = first if i == 0 else ds.load(i)
        n, m = s.n_candidates, s.n_positions
        for col, g in zip(out, groups, strict=True):
            col[c : c + n] = s.columns[g]
        starts[p + 1 : p + m + 1] = s.pos_start[1:] + c
        winners[p : p + m] = s.winner
        c, p = c + n, p + m
    if (c, p) != (ds.n_candidates, ds.n_positions):
        raise ValueError(
            f"{ds.path}: shards hold {p} positions / {c} candidates, "
            f"dataset.json says {ds.n_positions} / {ds.n_candidates}"
        )
    return list(out), starts, winners


def _torch_int(a: np.ndarray) -> np.ndarray:
    """Torch has no uint16: widen it to int32 (uint8 stays)."""
    return a.astype(np.int32) if a.dtype == np.uint16 else a
