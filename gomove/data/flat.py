"""FlatData: the positions held flat, the one layout every engine and the evaluation read.

Every candidate of every position is held once, back to back, no padding: a
dataset's files (gomove.data.store) memory-mapped as written. The padded
batches of the torch path (gomove.data.loader.BatchLoader) are cut from it. Three
engines train over it:
MM's numba and torch passes (gomove.train.mm.compiled and .tensor), the SGD steps of FBT and
LFR (gomove.train.sgd.compiled) and the rankers (gomove.train.rankers.fit).

Arrays (C candidates, P positions; the feature groups split by width, each
part in registry order):
- ``packed``: uint32[C, W], the levels of every group of fewer than 256
  levels bit-packed (level 0: absent): group i of those takes
  ``fields[i] = (word, shift, mask)``, bit_length(size) bits, first fit in
  registry order; the 8 tactical groups of the full features take 23 bits,
  one word;
- ``levw``: the levels of the other groups (shapes, 3x3 patterns), by the
  widest of them: uint16[C, Gw] below 65,536 levels, uint8[C, 3 Gw] (three
  little-endian bytes a level, group i in columns 3i..3i+2) below 2^24
  (the 187,815 shapes of all 27,613 training games), else int32[C, Gw];
- ``offs8``, ``offsw``: int64[G8], [Gw], the registry offsets of those groups:
  level l > 0 of the group at offset o is the global feature o + l - 1
  (registry.feature_index);
- ``pos_start``: int64[P + 1], position p's candidates are
  pos_start[p]:pos_start[p + 1];
- ``winner``: int64[P], the expert's candidate within its position;
- ``game``, ``move``: int[P], each position's game (index in the dataset) and move
  number, when the data has them (a dataset's do).

``field(g)`` gives any group as (array, (column, shift, mask, bytes3)), which
the kernels read as ``(array[c, column] >> shift) & mask``, the word at column
being three bytes when bytes3 (fields.field_level; wide_level reads
levw); ``level(g)`` decodes one group.

Bytes per candidate: 4 W + 2 Gw (3 Gw with 65,536 levels or more, 4 Gw with
2^24) plus 16 per position: 6.06 with the full features (one word, one uint16
shape group, 249 candidates per position), 7.06 with three-byte shapes,
against 10.06 when every narrow group took a byte. The engines add their own
state (MM's numba engine: 4 bytes per candidate, float32 strengths).

A dataset's files hold packed and levw as they are here
(gomove.data.store), so opening one costs no copy: the pages are shared by
every process on the machine.

Candidate-major ([C, ...]) because FBT reads every group of the candidates of
a randomly chosen position: one run of memory per position instead of G
short ones. MM reads one group over all candidates; its numba engine applies
the last update's gamma change in the same pass that gathers the next
group's statistics (fields.mm_pass), so one pass reads each row once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from gomove.data.fields import field_max
from gomove.features.registry import GroupSpan, Registry

if TYPE_CHECKING:
    from gomove.data.batch import Batch


def level_dtype(n_levels: int) -> np.dtype:
    """The narrowest type that holds levels 0..n_levels of one group."""
    if n_levels < 256:
        return np.dtype(np.uint8)
    if n_levels < 65536:
        return np.dtype(np.uint16)
    return np.dtype(np.int32)


NARROW = 256  # groups of fewer levels are bit-packed into 32-bit words
BYTES3 = 1 << 24  # wide groups of fewer levels (and 65,536 or more) take 3 bytes a level
WORD_BITS = 32


class FlatData:
    """Training positions flat in memory (module docstring: the arrays).

    offsets, sizes: every group's registry offset and level count, registry
    order; registry: when loaded from a dataset (group names); min_features:
    the least n_features a model needs for these levels (the kernels index
    unchecked); game, move: per position, or None.
    """

    def __init__(
        self,
        packed: np.ndarray,
        levw: np.ndarray,
        offsets: Sequence[int],
        sizes: Sequence[int],
        pos_start: np.ndarray,
        winner: np.ndarray,
        registry: Registry | None = None,
        game: np.ndarray | None = None,
        move: np.ndarray | None = None,
    ) -> None:
        self.offsets = [int(o) for o in offsets]
        self.sizes = [int(s) for s in sizes]
        narrow, wide = _split(self.sizes)
        self.fields, n_words = pack_fields([self.sizes[g] for g in narrow])
        self.packed, self.levw = packed, levw
        self.offs8 = np.array([self.offsets[g] for g in narrow], dtype=np.int64)
        self.offsw = np.array([self.offsets[g] for g in wide], dtype=np.int64)
        self.pos_start = np.ascontiguousarray(pos_start, dtype=np.int64)
        self.winner = np.ascontiguousarray(winner, dtype=np.int64)
        self.registry = registry
        self.game, self.move = game, move
        self.n_positions = len(self.winner)
        self.n_candidates = int(self.pos_start[-1])
        counts = np.diff(self.pos_start)
        if self.n_positions and (counts.min() < 1 or (self.winner >= counts).any()):
            raise ValueError("every position needs a candidate and its winner among them")
        self.max_cands = int(counts.max()) if self.n_positions else 1
        if packed.dtype != np.uint32 or packed.shape != (self.n_candidates, n_words):
            raise ValueError(f"packed: want uint32 [{self.n_candidates}, {n_words}]")
        self.bytes3 = levw.dtype == np.uint8
        width = len(wide) * (3 if self.bytes3 else 1)
        if levw.shape != (self.n_candidates, width):
            raise ValueError(f"levw: want [{self.n_candidates}, {width}]")
        for a in (packed, levw):
            if not a.flags.c_contiguous:
                raise ValueError("levels must be C-contiguous")
        if len(self.offsets) and min(self.offsets) < 1:
            raise ValueError("group offsets must be >= 1 (0 is the none index)")
        self._where = {g: (packed, np.append(self.fields[i], 0)) for i, g in enumerate(narrow)}
        for i, g in enumerate(wide):
            wide_field = [3 * i, 0, BYTES3 - 1, 1] if self.bytes3 else [i, 0, _dtype_mask(levw), 0]
            self._where[g] = (levw, np.array(wide_field, dtype=np.int64))
        # the kernels index the table unchecked: every global index must be < n_features
        tops = [o + field_max(*self.field(g)) for g, o in enumerate(self.offsets)]
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
        packed, levw = empty_levels(c, sizes)
        put = level_putter(packed, levw, sizes)
        for g, lv in enumerate(levels):
            put(g, slice(0, c), lv)
        return cls(packed, levw, offsets, sizes, pos_start, winner, registry)

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

    def padded(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions padded as a Batch holds them (gomove.data.batch): feat, int64
        [B, M, G] global indices, and mask, bool [B, M] (gomove.train.rankers.fit
        wraps them into a Batch)."""
        positions = np.asarray(positions, dtype=np.int64)
        start = self.pos_start[positions]
        counts = self.pos_start[positions + 1] - start
        m = int(counts.max()) if len(positions) else 1
        mask = np.arange(m)[None, :] < counts[:, None]
        # each real slot's candidate row: its position's start plus its column
        rows = (start[:, None] + np.arange(m)[None, :])[mask]
        feat = np.zeros((len(positions), m, len(self.sizes)), dtype=np.int64)
        for g, off in enumerate(self.offsets):
            lv = self.level(g, rows).astype(np.int64)
            feat[:, :, g][mask] = np.where(lv > 0, off + lv - 1, 0)
        return feat, mask

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.packed, self.levw, self.pos_start, self.winner))

    def field(self, g: int) -> tuple[np.ndarray, np.ndarray]:
        """Group g (registry order) as the kernels read it: (array [C, n], int64
        (column, shift, mask, bytes3)), its level ``(array[c, column] >> shift) &
        mask``, array[c, column] three little-endian bytes when bytes3."""
        return self._where[g]

    def level(self, g: int, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """The levels of group g (registry order) of candidates rows (all by default),
        decoded into the narrowest type that holds the group."""
        arr, (col, shift, mask, bytes3) = self.field(g)
        sel = slice(None) if rows is None else rows
        words = arr[sel, col].astype(np.int64)
        if bytes3:
            words |= (arr[sel, col + 1].astype(np.int64) << 8) | (
                arr[sel, col + 2].astype(np.int64) << 16
            )
        return ((words >> shift) & mask).astype(level_dtype(self.sizes[g]))

    def expert_candidates(self) -> np.ndarray:
        """int64[P]: each position's expert move as a flat candidate index."""
        return self.pos_start[:-1] + self.winner

    def narrow_wide(self) -> tuple[list[int], list[int]]:
        """The groups (registry order) whose levels are packed, and those in levw."""
        return _split(self.sizes)

    def group_spans(self) -> list[GroupSpan]:
        """(name, offset, size) of every group, registry order (names g0, g1... without one)."""
        if self.registry is not None:
            return self.registry.group_spans()
        spans = zip(self.offsets, self.sizes, strict=True)
        return [GroupSpan(f"g{g}", o, s) for g, (o, s) in enumerate(spans)]


def pack_fields(sizes: Sequence[int]) -> tuple[np.ndarray, int]:
    """int64[G, 3] (word, shift, mask) of groups of these sizes (levels 0..size, each
    in one word, first fit in order) and the number of 32-bit words they take."""
    fields = np.zeros((len(sizes), 3), dtype=np.int64)
    used: list[int] = []  # bits taken in each word
    for i, size in enumerate(sizes):
        bits = max(int(size).bit_length(), 1)
        if bits > WORD_BITS:
            raise ValueError(f"a group of {size} levels does not fit a {WORD_BITS}-bit word")
        w = next((w for w, u in enumerate(used) if u + bits <= WORD_BITS), len(used))
        if w == len(used):
            used.append(0)
        fields[i] = (w, used[w], (1 << bits) - 1)
        used[w] += bits
    return fields, len(used)


def _split(sizes: Sequence[int]) -> tuple[list[int], list[int]]:
    """The groups packed (fewer than NARROW levels) and those in levw, registry order."""
    narrow = [g for g, s in enumerate(sizes) if s < NARROW]
    return narrow, [g for g, s in enumerate(sizes) if s >= NARROW]


def _dtype_mask(levw: np.ndarray) -> int:
    """All the value bits of an unsigned or non-negative level type."""
    return int(np.iinfo(levw.dtype).max)


def _wide_layout(sizes: Sequence[int]) -> tuple[np.dtype, int]:
    """levw's dtype and columns a group for wide groups of these sizes (module docstring)."""
    top = max(sizes, default=0)
    if 65536 <= top < BYTES3:
        return np.dtype(np.uint8), 3
    return level_dtype(top), 1


def level_shapes(n_candidates: int, sizes: Sequence[int]) -> dict[str, tuple[np.dtype, tuple]]:
    """dtype and shape of packed and levw for groups of these sizes."""
    narrow, wide = _split(sizes)
    _, n_words = pack_fields([sizes[g] for g in narrow])
    wide_dtype, per_group = _wide_layout([sizes[g] for g in wide])
    return {
        "packed": (np.dtype(np.uint32), (n_candidates, n_words)),
        "levw": (wide_dtype, (n_candidates, per_group * len(wide))),
    }


def empty_levels(n_candidates: int, sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """packed (zeroed) and levw (uninitialized) for groups of these sizes."""
    shapes = level_shapes(n_candidates, sizes)
    packed = np.zeros(shapes["packed"][1], dtype=shapes["packed"][0])
    levw = np.empty(shapes["levw"][1], dtype=shapes["levw"][0])
    return packed, levw


def level_putter(
    packed: np.ndarray, levw: np.ndarray, sizes: Sequence[int]
) -> Callable[[int, slice, np.ndarray], None]:
    """put(g, rows, levels): write group g's levels of candidates rows into packed or
    levw (packed words of rows must start zeroed); a level above the group's size is
    refused, since packing would silently cut it."""
    narrow, wide = _split(sizes)
    fields, _ = pack_fields([sizes[g] for g in narrow])
    where = {g: ("p", i) for i, g in enumerate(narrow)} | {g: ("w", i) for i, g in enumerate(wide)}

    def put(g: int, rows: slice, lv: np.ndarray) -> None:
        if len(lv) and (int(lv.max()) > sizes[g] or int(lv.min()) < 0):
            raise ValueError(
                f"group {g}: levels in [{int(lv.min())}, {int(lv.max())}], the group has {sizes[g]}"
            )
        kind, i = where[g]
        if kind == "w" and levw.dtype == np.uint8:  # three little-endian bytes
            for b in range(3):
                levw[rows, 3 * i + b] = (lv >> (8 * b)) & 0xFF
        elif kind == "w":
            levw[rows, i] = lv
        else:
            w, shift, _ = fields[i]
            packed[rows, w] |= lv.astype(np.uint32) << np.uint32(shift)

    return put
