"""DeviceFlat: the flat layout held on a torch device as stored, read by the torch engines.

The arrays of gomove.data.flat.FlatData go to the device once, in their compact
form: the records' bitstream (uint64 words held as int64: torch has no shifts on
uint64), the dictionary of narrow combinations (int64), and the per-position
pos_start, winner, game and move. Nothing is widened per candidate for good: a step
decodes the levels of only the candidates it reads (``indices``), so all 27,613
training games (1.49 billion candidates, 4.25 bytes each) take 6.3 GB of an H100's
80 GB, and the engines add their own state.

On the CPU the tensors share the FlatData's memory (the memory-mapped files):
no copy. Padded Batches are cut on the device (``batch``), so the evaluation and
the padded path on CUDA copy nothing from the host but position ids.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

from gomove.data.batch import Batch
from gomove.data.fields import NARROW
from gomove.data.flat import FlatData


class DeviceFlat:
    """FlatData's arrays as tensors on device (module docstring)."""

    def __init__(self, data: FlatData, device: torch.device | str = "cpu") -> None:
        self.data = data
        self.device = torch.device(device)
        self.n_positions, self.n_candidates = data.n_positions, data.n_candidates
        self.max_cands = data.max_cands
        r = data.records
        self.words = self._put(r.words.view(np.int64))
        self.narrow = self._put(r.narrow.astype(np.int64))
        self.width = r.width
        self.width_mask = (1 << r.width) - 1 if r.width < 64 else -1
        self.code_mask = r.code_mask
        self.pos_start = self._put(data.pos_start)
        self.winner = self._put(data.winner)
        self.game = None if data.game is None else self._put(data.game)
        self.move = None if data.move is None else self._put(data.move)
        self.offsets = torch.tensor(data.offsets, dtype=torch.int64, device=self.device)
        self.n_groups = len(data.sizes)
        # (kind, word, shift, mask) of every group, registry order (gomove.data.fields)
        self.where = [tuple(int(f) for f in data.field(g)[1]) for g in range(self.n_groups)]

    def _put(self, a: np.ndarray) -> torch.Tensor:
        with warnings.catch_warnings():  # read-only memory maps: torch never writes them
            warnings.simplefilter("ignore", UserWarning)
            t = torch.from_numpy(np.asarray(a))
        return t.to(self.device)

    def nbytes(self) -> int:
        """Bytes held on the device."""
        ts = [self.words, self.narrow, self.pos_start, self.winner, self.game, self.move]
        return sum(t.numel() * t.element_size() for t in ts if t is not None)

    def rows(
        self, positions: torch.Tensor, total: int | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The candidate rows of positions (LongTensor[B] on the device), back to back:
        (rows LongTensor[R], seg LongTensor[R] the index in positions of each row's
        position, first LongTensor[B] each position's first index in rows). total: R when
        the caller knows it (from the host's pos_start), which spares a device sync."""
        start = self.pos_start[positions]
        counts = self.pos_start[positions + 1] - start
        first = torch.cumsum(counts, 0) - counts
        seg = torch.repeat_interleave(
            torch.arange(len(positions), device=self.device), counts, output_size=total
        )
        rows = start[seg] + torch.arange(len(seg), device=self.device) - first[seg]
        return rows, seg, first

    def records(self, rows: torch.Tensor | slice) -> torch.Tensor:
        """The records of rows (a LongTensor or a slice), int64 (gomove.data.fields.record:
        width bits from bit row * width of the stream)."""
        if isinstance(rows, slice):
            rows = torch.arange(*rows.indices(self.n_candidates), device=self.device)
        bit = rows * self.width
        w = bit >> 6
        s = bit & 63
        # >> on int64 copies the sign bit: keep the low 64 - s bits of the first word
        lo = (self.words[w] >> s) & torch.where(s > 0, (1 << (64 - s).clamp(max=63)) - 1, -1)
        spill = s + self.width > 64
        hi = torch.where(spill, self.words[(w + 1).clamp(max=len(self.words) - 1)], 0)
        lo = lo | (hi << (64 - s).clamp(max=63))
        return lo & self.width_mask

    def group_levels(self, g: int, rows: torch.Tensor | slice) -> torch.Tensor:
        """Group g's levels (0: absent) of rows (a LongTensor or a slice), int64."""
        return self.record_levels(g, self.records(rows))

    def record_levels(self, g: int, recs: torch.Tensor) -> torch.Tensor:
        """Group g's levels of records (``records``), int64."""
        kind, w, shift, mask = self.where[g]
        word = self.narrow[w, recs & self.code_mask] if kind == NARROW else recs
        return (word >> shift) & mask

    def indices(self, rows: torch.Tensor | slice) -> torch.Tensor:
        """LongTensor[R, G]: every group's global feature index of rows (0: absent)."""
        cols = []
        recs = self.records(rows)
        for g in range(self.n_groups):
            lv = self.record_levels(g, recs)
            cols.append(torch.where(lv > 0, self.offsets[g] + lv - 1, 0))
        return torch.stack(cols, 1) if cols else torch.zeros((0, 0), dtype=torch.int64)

    def batch(self, positions: torch.Tensor) -> Batch:
        """The positions (LongTensor[B] on the device) as one padded Batch on the device."""
        if self.game is None or self.move is None:
            raise ValueError("these flat data have no game and move numbers")
        rows, seg, first = self.rows(positions)
        counts = self.pos_start[positions + 1] - self.pos_start[positions]
        m = int(counts.max()) if len(positions) else 1
        col = torch.arange(len(rows), device=self.device) - first[seg]
        shape = (len(positions), m, self.n_groups)
        feat = torch.zeros(shape, dtype=torch.int64, device=self.device)
        feat[seg, col] = self.indices(rows)
        mask = torch.arange(m, device=self.device)[None, :] < counts[:, None]
        return Batch(
            feat,
            mask,
            self.winner[positions],
            self.game[positions].to(torch.int64),
            self.move[positions].to(torch.int64),
        )


class DeviceBatches:
    """Padded Batches of batch_size positions cut on the device, in order: what the
    evaluation reads (like gomove.data.loader.BatchLoader, without the host)."""

    def __init__(self, flat: DeviceFlat, batch_size: int = 1024) -> None:
        self.flat, self.batch_size = flat, batch_size

    def __len__(self) -> int:
        return self.flat.n_positions

    def __iter__(self):
        n = self.flat.n_positions
        for lo in range(0, n, self.batch_size):
            hi = min(lo + self.batch_size, n)
            yield self.flat.batch(torch.arange(lo, hi, device=self.flat.device))
