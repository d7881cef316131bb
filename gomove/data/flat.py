"""FlatData: the positions held flat, the one layout every engine and the evaluation read.

Every candidate of every position is held once, back to back, no padding: a
dataset's files (gomove.data.store) memory-mapped as written. The padded
batches of the torch path (gomove.data.loader.BatchLoader) are cut from it. Three
engines train over it:
MM's numba and torch passes (gomove.train.mm.compiled and .tensor), the SGD steps of FBT and
LFR (gomove.train.sgd.compiled) and the rankers (gomove.train.rankers.fit).

Arrays (C candidates, P positions; the feature groups split by width):
- ``records``: every candidate's levels in one record of ``width`` bits, a bitstream
  of uint64 words (gomove.data.fields.Records, read by fields.record): first the
  code of its combination of narrow-group levels (the groups of fewer than 256
  levels), then every wide group's level (shapes, 3x3 patterns) in bit_length(levels)
  bits; the narrow groups' levels are read from the code's row of ``combos``:
- ``combos``: uint8[K, G8], each code's narrow levels, a byte a group (narrow group i
  of the record at column i), as stored; the kernels read its transpose
  (``Records.narrow``, uint8[G8, K]: a group's levels of all codes in one run, so a
  level is one load, no shift; 150 KB for the full features' 8 tactical groups, which
  stays in the cache). Codes are given in the order combinations first appear (a
  dataset's dictionary), at most 2**code_bits of them (``code_bits_of``): the full
  features' 8 tactical groups show about 17,000 combinations in 1,000 Tygem games,
  far fewer than their 624,240;
- ``offs8``, ``offsw``: int64[G8], [Gw], the registry offsets of the narrow and wide
  groups: level l > 0 of the group at offset o is the global feature o + l - 1
  (registry.feature_index);
- ``pos_start``: int64[P + 1], position p's candidates are
  pos_start[p]:pos_start[p + 1];
- ``winner``: int64[P], the expert's candidate within its position;
- ``game``, ``move``: int[P], each position's game (index in the dataset) and move
  number, when the data has them (a dataset's do).

``field(g)`` gives any group as (records, field), which the kernels read with
fields.field_level; ``level(g)`` decodes one group.

Bytes per candidate: width / 8 plus 10 per position: with the full features a
record is 16 code bits and 18 (187,815 shapes of all 27,613 training games) to 20
(the large split's) shape bits, 4.25 to 4.5 bytes, against 7.06 for the bit-packed
words and three-byte shapes before (flat version 2). The engines add their own state
(MM's numba engine: 4 bytes per candidate, float32 strengths).

A dataset's files hold the records as they are here (gomove.data.store), so
opening one costs no copy: the pages are shared by every process on the machine.

Candidate-major because FBT reads every group of the candidates of a randomly chosen
position: one run of memory per position instead of G short ones. MM reads one group
over all candidates; its numba engine applies the last update's gamma change in the
same pass that gathers the next group's statistics, so one pass reads each record once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gomove.data.fields import NARROW, WIDE, Records, field_max, pack_records, width_mask
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


NARROW_LEVELS = 256  # groups of fewer levels are narrow: their combination is a code
# A dataset's dictionary holds 1/16 of the combinations its narrow groups allow, in at
# least 16 bits: the games show far fewer (the full features' 8 tactical groups allow
# 624,240 and show about 35,000 in all 147,329 games of the large split, growing by about
# 2,500 a doubling of the games: docs/logs/scale.md), so the full features' code takes
# 16 bits, room for 65,536.
SPARE_CODE_BITS = 4  # the code's bits: those of the combinations allowed, less these
MIN_CODE_BITS = 16


def code_bits_of(combos: int) -> int:
    """The bits of a dataset's codes when its narrow groups allow combos combinations."""
    allowed = (combos - 1).bit_length()
    return min(allowed, max(MIN_CODE_BITS, allowed - SPARE_CODE_BITS))


MAX_WIDTH = 57  # bits a record: one unaligned 8-byte load holds it (fields.record_bits)


@dataclass(frozen=True)
class Layout:
    """Where every group's levels lie in a record (module docstring), from the groups'
    sizes alone: narrow and wide groups (registry order), the narrow ones' bit fields in
    a combination's words, the code's bits, each wide group's shift and bits."""

    sizes: tuple[int, ...]
    narrow: tuple[int, ...]
    wide: tuple[int, ...]
    n_narrow: int  # G8: the narrow groups, a combination's bytes
    code_bits: int
    wide_shift: tuple[int, ...]
    wide_bits: tuple[int, ...]
    width: int

    @classmethod
    def of(cls, sizes: Sequence[int]) -> Layout:
        sizes = tuple(int(s) for s in sizes)
        narrow, wide = _split(sizes)
        combos = int(np.prod([sizes[g] + 1 for g in narrow], dtype=object)) if narrow else 1
        code_bits = code_bits_of(combos)
        shifts, bits = [], []
        at = code_bits
        for g in wide:
            b = max(sizes[g].bit_length(), 1)
            shifts.append(at)
            bits.append(b)
            at += b
        if at > MAX_WIDTH:
            raise ValueError(
                f"a candidate's levels take {at} bits, more than the {MAX_WIDTH} a record "
                f"holds: fewer or smaller wide groups ({[sizes[g] for g in wide]} levels)"
            )
        return cls(sizes, tuple(narrow), tuple(wide), len(narrow), code_bits,
                   tuple(shifts), tuple(bits), at)  # fmt: skip

    def field(self, g: int) -> np.ndarray:
        """int64[4] (kind, word, shift, mask) of group g (registry order)."""
        if g in self.narrow:
            return np.array([NARROW, self.narrow.index(g), 0, 255], dtype=np.int64)
        i = self.wide.index(g)
        mask = (1 << self.wide_bits[i]) - 1
        return np.array([WIDE, 0, self.wide_shift[i], mask], dtype=np.int64)

    def bytes_per_candidate(self) -> float:
        return self.width / 8


class FlatData:
    """Training positions flat in memory (module docstring: the arrays).

    words: the records' bitstream (uint64, one spare word at the end); combos: the
    codes' narrow levels (uint8[K, G8]); offsets, sizes: every group's registry
    offset and level count, registry order; registry: when loaded from a dataset
    (group names); min_features: the least n_features a model needs for these levels
    (the kernels index unchecked); game, move: per position, or None; source: the
    dataset's records.bin behind words, or None; group_max: each group's largest
    level, when known (else read from the records).
    """

    def __init__(
        self,
        words: np.ndarray,
        combos: np.ndarray,
        offsets: Sequence[int],
        sizes: Sequence[int],
        pos_start: np.ndarray,
        winner: np.ndarray,
        registry: Registry | None = None,
        game: np.ndarray | None = None,
        move: np.ndarray | None = None,
        source: Path | None = None,
        group_max: Sequence[int] | None = None,
    ) -> None:
        self.offsets = [int(o) for o in offsets]
        self.source = source  # the records' file, when mapped from a dataset (data.chunks)
        # read in chunks of this many positions (data.chunks; data.chunk_positions), or
        # all at once: set by the run that trains on it
        self.chunk_positions: int | None = None
        self.sizes = [int(s) for s in sizes]
        self.layout = lay = Layout.of(self.sizes)
        self.offs8 = np.array([self.offsets[g] for g in lay.narrow], dtype=np.int64)
        self.offsw = np.array([self.offsets[g] for g in lay.wide], dtype=np.int64)
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
        if words.dtype != np.uint64 or words.ndim != 1:
            raise ValueError("records: want a uint64 bitstream")
        want = record_words(self.n_candidates, lay.width)
        if len(words) < want:
            raise ValueError(f"records: {len(words)} words, want {want}")
        combos = np.asarray(combos, dtype=np.uint8).reshape(-1, max(lay.n_narrow, 1))
        if not len(combos):  # no narrow group, or no candidate: code 0 reads zeros
            combos = np.zeros((1, max(lay.n_narrow, 1)), dtype=np.uint8)
        self.combos = combos
        self.records = Records(
            words, lay.width, width_mask(lay.width), np.ascontiguousarray(combos.T),
            (1 << lay.code_bits) - 1,
        )  # fmt: skip
        if len(self.offsets) and min(self.offsets) < 1:
            raise ValueError("group offsets must be >= 1 (0 is the none index)")
        self._fields = [lay.field(g) for g in range(len(self.sizes))]
        # every narrow and every wide group's field, as the kernels that read all take them
        self.narrow_read = _stack([self._fields[g] for g in lay.narrow])
        self.wide_read = _stack([self._fields[g] for g in lay.wide])
        # the kernels index the table unchecked: every global index must be < n_features
        # (group_max: each group's largest level when known, as a dataset records it;
        # else read from the records, one pass)
        self.tops = (
            [int(m) for m in group_max]
            if group_max is not None
            else [self.group_max(g) for g in range(len(self.sizes))]
        )
        self.min_features = max([1, *(o + m for o, m in zip(self.offsets, self.tops, strict=True))])

    def head(self, n_positions: int) -> FlatData:
        """The first n_positions positions, the same arrays (no copy)."""
        n = min(n_positions, self.n_positions)
        out = FlatData(
            self.words, self.combos, self.offsets, self.sizes, self.pos_start[: n + 1],
            self.winner[:n], self.registry,
            None if self.game is None else self.game[:n],
            None if self.move is None else self.move[:n], self.source, self.tops,
        )  # fmt: skip
        out.chunk_positions = self.chunk_positions
        return out

    @property
    def words(self) -> np.ndarray:
        return self.records.words

    def level_of_codes(self, g: int) -> np.ndarray:
        """int64[K]: narrow group g's level in each code's combination."""
        return self.combos[:, self.layout.narrow.index(g)].astype(np.int64)

    def group_max(self, g: int) -> int:
        """The largest level of group g over the candidates."""
        if g in self.layout.narrow:  # the combinations hold them all
            return int(self.level_of_codes(g).max(initial=0))
        return int(field_max(self.records, self._fields[g], self.n_candidates))

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
        lay = Layout.of(sizes)
        dictionary = Dictionary(lay)
        recs = records(local_records(lay, levels), dictionary)
        words, carry, bits = pack_records(recs, lay.width, np.uint64(0), 0)
        words = np.concatenate([words, finish_words(carry, bits)])
        return cls(words, dictionary.combo_rows(), offsets, sizes, pos_start, winner, registry)

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
        recs = read_records(self.records, rows)
        for g, off in enumerate(self.offsets):
            lv = self._decode(g, recs).astype(np.int64)
            feat[:, :, g][mask] = np.where(lv > 0, off + lv - 1, 0)
        return feat, mask

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.words, self.combos, self.pos_start, self.winner))

    def field(self, g: int) -> tuple[Records, np.ndarray]:
        """Group g (registry order) as the kernels read it: (records, int64 field),
        its level fields.field_level(records, field, c)."""
        return self.records, self._fields[g]

    def level(self, g: int, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """The levels of group g (registry order) of candidates rows (all by default),
        decoded into the narrowest type that holds the group."""
        if rows is None:
            rows = slice(0, self.n_candidates)
        if isinstance(rows, slice):
            rows = np.arange(*rows.indices(self.n_candidates), dtype=np.int64)
        return self._decode(g, read_records(self.records, np.asarray(rows, dtype=np.int64)))

    def _decode(self, g: int, recs: np.ndarray) -> np.ndarray:
        """Group g's levels of records (uint64[n], read_records)."""
        kind, w, shift, mask = (int(x) for x in self._fields[g])
        if kind == NARROW:
            code = (recs & np.uint64(self.records.code_mask)).astype(np.int64)
            recs = self.combos[code, w].astype(np.uint64)
        levels = (recs >> np.uint64(shift)) & np.uint64(mask)
        return levels.astype(level_dtype(self.sizes[g]))

    def expert_candidates(self) -> np.ndarray:
        """int64[P]: each position's expert move as a flat candidate index."""
        return self.pos_start[:-1] + self.winner

    def narrow_wide(self) -> tuple[list[int], list[int]]:
        """The narrow groups (registry order), read from the combinations, and the wide ones."""
        return list(self.layout.narrow), list(self.layout.wide)

    def group_spans(self) -> list[GroupSpan]:
        """(name, offset, size) of every group, registry order (names g0, g1... without one)."""
        if self.registry is not None:
            return self.registry.group_spans()
        spans = zip(self.offsets, self.sizes, strict=True)
        return [GroupSpan(f"g{g}", o, s) for g, (o, s) in enumerate(spans)]


def record_words(n_candidates: int, width: int) -> int:
    """Words a bitstream of n records of width bits takes, the spare word included."""
    return -(-n_candidates * width // 64) + 1


def read_records(r: Records, rows: np.ndarray) -> np.ndarray:
    """uint64[n]: the records of candidates rows (numpy, vectorized fields.record)."""
    bit = rows.astype(np.uint64) * np.uint64(r.width)
    w = (bit >> np.uint64(6)).astype(np.int64)
    s = bit & np.uint64(63)
    lo = r.words[w] >> s
    spill = (s + np.uint64(r.width)) > np.uint64(64)
    if spill.any():
        hi = r.words[w[spill] + 1] << (np.uint64(64) - s[spill])
        lo[spill] |= hi
    return lo & r.mask


def finish_words(carry: np.uint64, carry_bits: int) -> np.ndarray:
    """The last words of a bitstream: the carry's partial word (when it holds bits) and the
    spare zero word every stream ends with."""
    last = [carry] if carry_bits else []
    return np.array([*last, 0], dtype=np.uint64)


class Dictionary:
    """A dataset's codes of narrow combinations, kept across its chunks: a combination
    (one row of uint8[G8] levels) gets the next code the first time it appears, so the
    codes follow the order the chunks are written in (gomove.data.store)."""

    def __init__(self, layout: Layout, combos: np.ndarray | None = None) -> None:
        self.layout = layout
        self.codes: dict[bytes, int] = {}
        self.rows: list[np.ndarray] = []
        if combos is not None:
            self.codes_of(np.asarray(combos, dtype=np.uint8).reshape(-1, layout.n_narrow))

    def codes_of(self, combos: np.ndarray) -> np.ndarray:
        """uint64[k]: the codes of k combinations (uint8[k, G8]), new ones given codes."""
        out = np.empty(len(combos), dtype=np.uint64)
        limit = 1 << self.layout.code_bits
        for j, row in enumerate(combos):
            key = row.tobytes()
            code = self.codes.get(key)
            if code is None:
                code = len(self.rows)
                if code >= limit:
                    raise ValueError(
                        f"more than {limit} combinations of the narrow groups' levels: "
                        f"the dataset's dictionary is full (its codes take "
                        f"{self.layout.code_bits} bits, gomove.data.flat.code_bits_of)"
                    )
                self.codes[key] = code
                self.rows.append(row.copy())
            out[j] = code
        return out

    def combo_rows(self, start: int = 0) -> np.ndarray:
        """uint8[K - start, G8]: the combinations of codes start.. (all by default)."""
        rows = self.rows[start:]
        if not rows:
            return np.zeros((0, self.layout.n_narrow), dtype=np.uint8)
        return np.stack(rows)


def local_records(layout: Layout, levels: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """One chunk's records without the dictionary (a worker's part of the encoding):
    ``combos`` uint8[k, G8] the chunk's distinct narrow combinations, ``code`` int64[C]
    each candidate's index among them, ``wide`` uint64[C] its record's wide levels
    (``records`` adds the dictionary's codes). A level above its group's size is
    refused, since the record would silently cut it."""
    n = len(levels[0]) if len(levels) else 0
    for g, lv in enumerate(levels):
        if len(lv) and (int(np.max(lv)) > layout.sizes[g] or int(np.min(lv)) < 0):
            raise ValueError(
                f"group {g}: levels in [{int(np.min(lv))}, {int(np.max(lv))}], "
                f"the group has {layout.sizes[g]}"
            )
    wide = np.zeros(n, dtype=np.uint64)
    for i, g in enumerate(layout.wide):
        wide |= np.asarray(levels[g]).astype(np.uint64) << np.uint64(layout.wide_shift[i])
    rows = np.zeros((n, layout.n_narrow), dtype=np.uint8)
    for i, g in enumerate(layout.narrow):
        rows[:, i] = levels[g]
    if not layout.narrow:
        return {"combos": rows[:0], "code": np.zeros(n, np.int64), "wide": wide}
    keys = rows.view(np.dtype((np.void, layout.n_narrow))).reshape(n)
    uniq, inverse = np.unique(keys, return_inverse=True)
    combos = np.frombuffer(uniq.tobytes(), dtype=np.uint8).reshape(-1, layout.n_narrow)
    return {"combos": combos, "code": inverse.reshape(-1).astype(np.int64), "wide": wide}


def records(local: dict[str, np.ndarray], dictionary: Dictionary) -> np.ndarray:
    """uint64[C]: a chunk's records (local_records) with the dictionary's codes."""
    if not dictionary.layout.narrow:
        return local["wide"]
    return local["wide"] | dictionary.codes_of(local["combos"])[local["code"]]


def _stack(fields: list[np.ndarray]) -> np.ndarray:
    """int64[n, 4]: fields (int64[4] each) as rows."""
    return np.array(fields, dtype=np.int64).reshape(-1, 4)


def _split(sizes: Sequence[int]) -> tuple[list[int], list[int]]:
    """The narrow groups (fewer than NARROW_LEVELS levels) and the wide ones, registry order."""
    narrow = [g for g, s in enumerate(sizes) if s < NARROW_LEVELS]
    return narrow, [g for g, s in enumerate(sizes) if s >= NARROW_LEVELS]
