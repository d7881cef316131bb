"""FlatData: the training positions held flat in memory, the one layout every flat engine reads.

The padded path (gomove.data.loader.BatchLoader) pads every batch to
[B, M, G]; here every candidate of every position is held once, back to back,
no padding, read once from a dataset's shards. Three engines train over it:
MM's numba and torch passes (gomove.train.mm_flat) and the SGD steps of FBT
and LFR (gomove.train.fbt_flat).

Arrays (C candidates, P positions; the feature groups split by width, each
part in registry order):
- ``lev8``: uint8[C, G8], the level of every candidate in each group of fewer
  than 256 levels (0: absent), a candidate's levels side by side;
- ``levw``: uint16 or int32[C, Gw] (shards.level_dtype of the widest group),
  the same for the other groups (shapes, 3x3 patterns);
- ``offs8``, ``offsw``: int64[G8], [Gw], the registry offsets of those groups:
  level l > 0 of the group at offset o is the global feature o + l - 1
  (registry.feature_index);
- ``pos_start``: int64[P + 1], position p's candidates are
  pos_start[p]:pos_start[p + 1];
- ``winner``: int64[P], the expert's candidate within its position.

Bytes per candidate: G8 + 2 Gw (4 Gw with 65,536 levels or more) plus 16
per position: 10.06 on 1,000 Tygem games (8 tactical groups, one uint16
shape group, 249 candidates per position). The engines add their own state
(MM's numba engine: 8 bytes per candidate).

Candidate-major ([C, G]) because FBT reads every group of the candidates of
a randomly chosen position: one run of memory per position instead of G
short ones. Measured on 1,000 Tygem games (54 million candidates, 2 shared
cores): an FBT epoch took 3.19 s (full gradient) and 1.79 s (S = 10) over
[C, G], 3.64 s and 2.43 s over [G, C]. MM reads one group over all candidates
(a strided column here); its numba engine applies the last update's gamma
change in the same pass that gathers the next group's statistics
(flat_kernels.mm_pass), so one pass reads each row once: a sweep of the 9
groups took 1.15 s over [C, G] that way, 1.17 s with separate passes over
contiguous per-group arrays (the layout before), 1.34 s separately over [C, G].
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from gomove.data.batch import Batch
from gomove.data.dataset import Dataset
from gomove.data.shards import level_dtype
from gomove.features.registry import GroupSpan, Registry

NARROW = 256  # groups of fewer levels are held as uint8


class FlatData:
    """Training positions flat in memory (module docstring: the arrays).

    offsets, sizes: every group's registry offset and level count, registry
    order; registry: when loaded from a dataset (group names); min_features:
    the least n_features a model needs for these levels (the kernels index
    unchecked).
    """

    def __init__(
        self,
        lev8: np.ndarray,
        levw: np.ndarray,
        offsets: Sequence[int],
        sizes: Sequence[int],
        pos_start: np.ndarray,
        winner: np.ndarray,
        registry: Registry | None = None,
    ) -> None:
        self.offsets = [int(o) for o in offsets]
        self.sizes = [int(s) for s in sizes]
        narrow, wide = _split(self.sizes)
        self.lev8, self.levw = lev8, levw
        self.offs8 = np.array([self.offsets[g] for g in narrow], dtype=np.int64)
        self.offsw = np.array([self.offsets[g] for g in wide], dtype=np.int64)
        self.pos_start = np.ascontiguousarray(pos_start, dtype=np.int64)
        self.winner = np.ascontiguousarray(winner, dtype=np.int64)
        self.registry = registry
        self.n_positions = len(self.winner)
        self.n_candidates = int(self.pos_start[-1])
        counts = np.diff(self.pos_start)
        if self.n_positions and (counts.min() < 1 or (self.winner >= counts).any()):
            raise ValueError("every position needs a candidate and its winner among them")
        self.max_cands = int(counts.max()) if self.n_positions else 1
        for lev, offs in ((lev8, self.offs8), (levw, self.offsw)):
            if lev.shape != (self.n_candidates, len(offs)) or not lev.flags.c_contiguous:
                raise ValueError(f"levels: want C-contiguous [{self.n_candidates}, {len(offs)}]")
        if len(self.offsets) and min(self.offsets) < 1:
            raise ValueError("group offsets must be >= 1 (0 is the none index)")
        self._levels = _columns(lev8, levw, self.sizes)
        # the kernels index the table unchecked: every global index must be < n_features
        tops = [
            o + int(lv.max(initial=0)) for o, lv in zip(self.offsets, self._levels, strict=True)
        ]
        self.min_features = max([1, *tops])

    @classmethod
    def from_levels(
        cls,
        levels: Sequence[np.ndarray],
        offsets: Sequence[int],
        sizes: Sequence[int],
        pos_start: np.ndarray,
        winner: np.ndarray,
        registry: Registry | None = None,
    ) -> FlatData:
        """From one level array[C] per group (registry order), their offsets and sizes."""
        c = len(levels[0]) if len(levels) else int(pos_start[-1])
        lev8, levw, cols = _empty_levels(c, sizes)
        for col, lv in zip(cols, levels, strict=True):
            col[:] = lv
        return cls(lev8, levw, offsets, sizes, pos_start, winner, registry)

    @classmethod
    def from_dataset(cls, ds: Dataset, progress: bool = False) -> FlatData:
        """A dataset's positions, read shard by shard straight into the arrays: peak
        memory is the result plus one shard."""
        reg = ds.registry
        sizes = [int(s) for s in reg.sizes]
        lev8, levw, cols = _empty_levels(ds.n_candidates, sizes)
        starts = np.zeros(ds.n_positions + 1, dtype=np.int64)
        winners = np.empty(ds.n_positions, dtype=np.int64)
        c = p = 0
        for i in tqdm(range(len(ds.shards)), desc="load shards", disable=not progress):
            s = ds.load(i)
            n, m = s.n_candidates, s.n_positions
            for col, g in zip(cols, reg.group_names, strict=True):
                col[c : c + n] = s.columns[g]
            starts[p + 1 : p + m + 1] = s.pos_start[1:] + c
            winners[p : p + m] = s.winner
            c, p = c + n, p + m
        if (c, p) != (ds.n_candidates, ds.n_positions):
            raise ValueError(
                f"{ds.path}: shards hold {p} positions / {c} candidates, "
                f"dataset.json says {ds.n_positions} / {ds.n_candidates}"
            )
        return cls(lev8, levw, reg.offsets, sizes, starts, winners, reg)

    @classmethod
    def from_batches(cls, batches: Iterable[Batch], groups: Sequence[GroupSpan]) -> FlatData:
        """The real candidates of padded batches (column g of feat is group groups[g]),
        for engines that train on the flat layout only (the rankers' online updates)."""
        levels: list[list[np.ndarray]] = [[] for _ in groups]
        counts, winners = [], []
        offs = np.array([o for _, o, _ in groups], dtype=np.int64)
        for b in batches:
            mask = b.mask.cpu().numpy()
            feat = b.feat.cpu().numpy()[mask]  # [C, G], positions back to back
            lev = np.where(feat > 0, feat - offs + 1, 0)
            for g in range(len(groups)):
                levels[g].append(lev[:, g])
            counts.append(mask.sum(1))
            winners.append(b.winner.cpu().numpy())
        if not counts:
            raise ValueError("no training positions")
        starts = np.concatenate([[0], np.cumsum(np.concatenate(counts))])
        return cls.from_levels(
            [np.concatenate(lv) for lv in levels],
            offs,
            [s for _, _, s in groups],
            starts,
            np.concatenate(winners),
        )

    def batch(self, positions: np.ndarray) -> Batch:
        """Positions as one padded Batch of global indices (game: the position, move 0)."""
        positions = np.asarray(positions, dtype=np.int64)
        counts = self.pos_start[positions + 1] - self.pos_start[positions]
        m = int(counts.max()) if len(positions) else 1
        feat = np.zeros((len(positions), m, len(self.sizes)), dtype=np.int64)
        mask = np.arange(m)[None, :] < counts[:, None]
        rows = np.concatenate(
            [np.arange(a, a + n) for a, n in zip(self.pos_start[positions], counts, strict=True)]
        )
        for g, (lev, off) in enumerate(zip(self._levels, self.offsets, strict=True)):
            lv = lev[rows].astype(np.int64)
            feat[:, :, g][mask] = np.where(lv > 0, off + lv - 1, 0)
        return Batch(
            torch.from_numpy(feat),
            torch.from_numpy(mask),
            torch.from_numpy(self.winner[positions].copy()),
            torch.from_numpy(positions.copy()),
            torch.zeros(len(positions), dtype=torch.long),
        )

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.lev8, self.levw, self.pos_start, self.winner))

    def level(self, g: int) -> np.ndarray:
        """The levels of group g (registry order) of every candidate, [C] (a strided view)."""
        return self._levels[g]

    def expert_candidates(self) -> np.ndarray:
        """int64[P]: each position's expert move as a flat candidate index."""
        return self.pos_start[:-1] + self.winner

    def narrow_wide(self) -> tuple[list[int], list[int]]:
        """The groups (registry order) whose levels are the columns of lev8, and of levw."""
        return _split(self.sizes)

    def group_spans(self) -> list[GroupSpan]:
        """(name, offset, size) of every group, registry order (names g0, g1... without one)."""
        if self.registry is not None:
            return self.registry.group_spans()
        spans = zip(self.offsets, self.sizes, strict=True)
        return [GroupSpan(f"g{g}", o, s) for g, (o, s) in enumerate(spans)]


def _split(sizes: Sequence[int]) -> tuple[list[int], list[int]]:
    """The groups held in lev8 (fewer than NARROW levels) and in levw, registry order."""
    narrow = [g for g, s in enumerate(sizes) if s < NARROW]
    return narrow, [g for g, s in enumerate(sizes) if s >= NARROW]


def _empty_levels(
    n_candidates: int, sizes: Sequence[int]
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """lev8 [C, G8] and levw [C, Gw] (uninitialized) for groups of these sizes, and
    each group's column in them (registry order)."""
    narrow, wide = _split(sizes)
    lev8 = np.empty((n_candidates, len(narrow)), dtype=np.uint8)
    wide_dtype = level_dtype(max([sizes[g] for g in wide], default=0))
    levw = np.empty((n_candidates, len(wide)), dtype=wide_dtype)
    return lev8, levw, _columns(lev8, levw, sizes)


def _columns(lev8: np.ndarray, levw: np.ndarray, sizes: Sequence[int]) -> list[np.ndarray]:
    """Each group's column of lev8 or levw (views), registry order."""
    narrow, wide = _split(sizes)
    cols = {g: lev8[:, i] for i, g in enumerate(narrow)}
    cols |= {g: levw[:, i] for i, g in enumerate(wide)}
    return [cols[g] for g in range(len(sizes))]
