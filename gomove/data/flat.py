"""FlatData: the training positions held flat, the one layout every compiled and tensor engine
reads.

The padded path (gomove.data.loader.BatchLoader) pads every batch to
[B, M, G]; here every candidate of every position is held once, back to back,
no padding, read once from a dataset's shards. Three engines train over it:
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
- ``winner``: int64[P], the expert's candidate within its position.

``field(g)`` gives any group as (array, (column, shift, mask, bytes3)), which
the kernels read as ``(array[c, column] >> shift) & mask``, the word at column
being three bytes when bytes3 (fields.field_level; wide_level reads
levw); ``level(g)`` decodes one group.

Bytes per candidate: 4 W + 2 Gw (3 Gw with 65,536 levels or more, 4 Gw with
2^24) plus 16 per position: 6.06 with the full features (one word, one uint16
shape group, 249 candidates per position), 7.06 with three-byte shapes,
against 10.06 when every narrow group took a byte. The engines add their own
state (MM's numba engine: 4 bytes per candidate, float32 strengths).

``from_dataset`` builds the arrays once into ``flat/`` inside the dataset's
folder (``flat.json`` written last marks them whole) and memory-maps them
after that: loading costs no copy and no time, and processes sharing a
machine share the pages.

Candidate-major ([C, ...]) because FBT reads every group of the candidates of
a randomly chosen position: one run of memory per position instead of G
short ones. MM reads one group over all candidates; its numba engine applies
the last update's gamma change in the same pass that gathers the next
group's statistics (fields.mm_pass), so one pass reads each row once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from tqdm.auto import tqdm

from gomove.atomic import atomic_write_json
from gomove.data.dataset import Dataset
from gomove.data.fields import field_max
from gomove.data.shards import level_dtype
from gomove.features.registry import GroupSpan, Registry

if TYPE_CHECKING:
    from gomove.data.batch import Batch

log = logging.getLogger(__name__)

NARROW = 256  # groups of fewer levels are bit-packed into 32-bit words
BYTES3 = 1 << 24  # wide groups of fewer levels (and 65,536 or more) take 3 bytes a level
WORD_BITS = 32
FLAT_VERSION = 2  # of the arrays memory-mapped from a dataset's flat/ folder
FLAT_ARRAYS = ("packed", "levw", "pos_start", "winner")


class FlatData:
    """Training positions flat in memory (module docstring: the arrays).

    offsets, sizes: every group's registry offset and level count, registry
    order; registry: when loaded from a dataset (group names); min_features:
    the least n_features a model needs for these levels (the kernels index
    unchecked).
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
        packed, levw = _empty_levels(c, sizes)
        put = _putter(packed, levw, sizes)
        for g, lv in enumerate(levels):
            put(g, slice(0, c), lv)
        return cls(packed, levw, offsets, sizes, pos_start, winner, registry)

    @classmethod
    def from_dataset(cls, ds: Dataset, progress: bool = False, cache: bool = True) -> FlatData:
        """A dataset's positions, memory-mapped from its ``flat/`` folder, built there
        first when missing (shard by shard: peak memory one shard). cache=False, or a
        folder one cannot write, builds them in memory instead."""
        folder = ds.path / "flat"
        want = _flat_meta(ds)
        arrays = _open_mapped(folder, want) if cache else None
        if cache and arrays is None:
            try:
                _build_mapped(ds, folder, want, progress)
            except OSError as e:
                log.warning("cannot write %s (%s): the flat data stays in memory", folder, e)
            arrays = _open_mapped(folder, want)
        if arrays is None:
            arrays = _allocate(ds, lambda name, dtype, shape: np.empty(shape, dtype=dtype))
            _fill(ds, arrays, progress)
        return cls(
            arrays["packed"],
            arrays["levw"],
            ds.registry.offsets,
            want["sizes"],
            arrays["pos_start"],
            arrays["winner"],
            ds.registry,
        )

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
        counts = self.pos_start[positions + 1] - self.pos_start[positions]
        m = int(counts.max()) if len(positions) else 1
        feat = np.zeros((len(positions), m, len(self.sizes)), dtype=np.int64)
        mask = np.arange(m)[None, :] < counts[:, None]
        rows = np.concatenate(
            [
                np.arange(a, a + n, dtype=np.int64)
                for a, n in zip(self.pos_start[positions], counts, strict=True)
            ]
            or [np.zeros(0, dtype=np.int64)]
        )
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


def _shapes(n_candidates: int, sizes: Sequence[int]) -> dict[str, tuple[np.dtype, tuple]]:
    """dtype and shape of packed and levw for groups of these sizes."""
    narrow, wide = _split(sizes)
    _, n_words = pack_fields([sizes[g] for g in narrow])
    wide_dtype, per_group = _wide_layout([sizes[g] for g in wide])
    return {
        "packed": (np.dtype(np.uint32), (n_candidates, n_words)),
        "levw": (wide_dtype, (n_candidates, per_group * len(wide))),
    }


def _empty_levels(n_candidates: int, sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """packed (zeroed) and levw (uninitialized) for groups of these sizes."""
    shapes = _shapes(n_candidates, sizes)
    packed = np.zeros(shapes["packed"][1], dtype=shapes["packed"][0])
    levw = np.empty(shapes["levw"][1], dtype=shapes["levw"][0])
    return packed, levw


def _putter(
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


def _flat_meta(ds: Dataset) -> dict:
    """What the flat/ folder of ds must hold to be reused."""
    return {
        "flat_version": FLAT_VERSION,
        "sizes": [int(s) for s in ds.registry.sizes],
        "n_candidates": int(ds.n_candidates),
        "n_positions": int(ds.n_positions),
        "shards": [p.name for p in ds.shards],
    }


def _allocate(ds: Dataset, make: Callable[[str, np.dtype, tuple], np.ndarray]) -> dict:
    """The four arrays of ds's flat layout, each from make(name, dtype, shape)."""
    shapes = _shapes(ds.n_candidates, [int(s) for s in ds.registry.sizes])
    shapes["pos_start"] = (np.dtype(np.int64), (ds.n_positions + 1,))
    shapes["winner"] = (np.dtype(np.int64), (ds.n_positions,))
    arrays = {name: make(name, *shapes[name]) for name in FLAT_ARRAYS}
    arrays["packed"][:] = 0
    return arrays


def _fill(ds: Dataset, arrays: dict, progress: bool) -> None:
    """Read ds's shards one by one into the arrays of _allocate."""
    reg = ds.registry
    sizes = [int(s) for s in reg.sizes]
    put = _putter(arrays["packed"], arrays["levw"], sizes)
    starts, winners = arrays["pos_start"], arrays["winner"]
    starts[0] = 0
    c = p = 0
    for i in tqdm(range(len(ds.shards)), desc="load shards", disable=not progress):
        s = ds.load(i)
        n, m = s.n_candidates, s.n_positions
        if c + n > ds.n_candidates or p + m > ds.n_positions:
            break
        for g, name in enumerate(reg.group_names):
            put(g, slice(c, c + n), s.columns[name])
        starts[p + 1 : p + m + 1] = s.pos_start[1:] + c
        winners[p : p + m] = s.winner
        c, p = c + n, p + m
    else:
        if (c, p) == (ds.n_candidates, ds.n_positions):
            return
    raise ValueError(
        f"{ds.path}: the shards do not hold the {ds.n_positions} positions / "
        f"{ds.n_candidates} candidates dataset.json says"
    )


def _build_mapped(ds: Dataset, folder: Path, meta: dict, progress: bool) -> None:
    """Write ds's flat arrays as .npy files in folder through memory maps, flat.json last."""
    folder.mkdir(exist_ok=True)
    (folder / "flat.json").unlink(missing_ok=True)

    def make(name: str, dtype: np.dtype, shape: tuple) -> np.ndarray:
        return np.lib.format.open_memmap(folder / f"{name}.npy", "w+", dtype, shape)

    arrays = _allocate(ds, make)
    _fill(ds, arrays, progress)
    for a in arrays.values():
        a.flush()
    del arrays
    atomic_write_json(folder / "flat.json", meta)


def _open_mapped(folder: Path, meta: dict) -> dict[str, np.ndarray] | None:
    """The arrays of FLAT_ARRAYS memory-mapped read-only from folder, or None when it
    holds no finished arrays for meta."""
    try:
        if json.loads((folder / "flat.json").read_text()) != meta:
            return None
        return {n: np.load(folder / f"{n}.npy", mmap_mode="r") for n in FLAT_ARRAYS}
    except (OSError, ValueError):
        return None
