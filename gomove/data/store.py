"""The dataset on disk: the flat layout, written straight by extraction, checksummed.

One folder per dataset, ``<cache_dir>/<kind>-<key>/``, one raw little-endian file per
array, rows appended a chunk of games at a time in game order:
- ``records.bin`` uint64: every candidate's record as FlatData holds it (gomove.data.flat:
  the code of its narrow levels' combination, then its wide levels, ``width`` bits a
  candidate, back to back in a bitstream), whole words only while extracting (the
  bits of a last partial word wait in progress.json), the partial word and a spare
  zero word written when the dataset is finished;
- ``combos.bin`` uint8[K, G8]: the dictionary, each code's narrow levels a byte a group,
  rows appended as new combinations appear;
- ``n_cand.bin`` uint16[P]: the candidates of each position (pos_start is their
  running sum, built when opened);
- ``winner.bin`` uint16[P]: the expert's candidate within its position;
- ``game.bin`` int32[P], ``move.bin`` int16[P]: the game (index in the dataset) and
  move number (0 = the first) of each position, for per-phase statistics.

Bytes: width / 8 a candidate, plus 10 per position and the dictionary: 4.29 a
candidate for the full features of all standard training games (34-bit records).

Two JSON sidecars, each written atomically:
- ``progress.json`` while extracting: the chunks committed, each file's committed
  length and CRC-32, and the carry (the records' bits not yet in a whole word). Bytes
  past a committed length (a run killed mid-chunk, a full disk) are cut off when the
  next run resumes; nothing uncommitted is read.
- ``dataset.json``, written last, marks the folder finished: the registry, counts,
  reading statistics, and each file's length and CRC-32, checked every time the
  dataset is opened (verify_files): a flipped byte is found, never trained on.

Files are written with plain appends, never through memory maps, so a full disk is
an OSError (ENOSPC) at the write, not a SIGBUS; the files of a finished dataset are
never written again (a rebuild deletes them first), so readers that have them
mapped are never cut short.
"""

from __future__ import annotations

import errno
import json
import os
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gomove.atomic import atomic_write_json
from gomove.data.fields import pack_records
from gomove.data.flat import Dictionary, Layout, finish_words, local_records, records

# 4: 16-bit codes for the full features; 3: 18-bit codes; 2: bit-packed words and 2- or
# 3-byte wide levels; 1: npz shards
FORMAT_VERSION = 4
POSITION_FILES = {
    "n_cand": np.dtype("<u2"),
    "winner": np.dtype("<u2"),
    "game": np.dtype("<i4"),
    "move": np.dtype("<i2"),
}
LEVEL_FILES = ("records", "combos")
BLOCK = 1 << 26  # bytes read at a time when checking a file


class CorruptCache(ValueError):
    """A dataset file whose length or checksum is not the one its sidecar records."""


def file_layout(sizes: Sequence[int]) -> dict[str, tuple[np.dtype, int]]:
    """Every file's (dtype, columns) for feature groups of these sizes."""
    narrow = Layout.of(sizes).n_narrow
    layout = {"records": (np.dtype("<u8"), 1), "combos": (np.dtype("u1"), narrow)}
    return layout | {n: (d, 1) for n, d in POSITION_FILES.items()}


def chunk_rows(
    parts: Sequence[dict], game_ids: Sequence[int], group_names: Sequence[str], sizes: Sequence[int]
) -> dict[str, np.ndarray]:
    """A chunk's rows for the files, before the dictionary (a worker's part): the games
    parts (FeatureExtractor.game outputs) whose dataset indices are game_ids, their
    records as flat.local_records gives them (``combos``, ``code``, ``wide``) and the
    position files' rows."""
    lay = Layout.of(sizes)
    levels = [np.concatenate([p["columns"][name] for p in parts] or [[]]) for name in group_names]
    counts = np.concatenate([p["n_cand"] for p in parts] or [[]])
    if len(counts) and counts.max() > np.iinfo(np.uint16).max:
        raise ValueError(f"a position has {counts.max()} candidates")
    top = np.array([int(np.max(lv, initial=0)) for lv in levels], dtype=np.int64)
    rows = local_records(lay, levels) | {
        "group_max": top,
        "n_cand": counts,
        "winner": np.concatenate([p["winner"] for p in parts] or [[]]),
        "game": np.concatenate(
            [np.full(len(p["winner"]), gid) for p, gid in zip(parts, game_ids, strict=True)] or [[]]
        ),
        "move": np.concatenate([p["move"] for p in parts] or [[]]),
    }
    return {k: np.ascontiguousarray(v, POSITION_FILES.get(k, v.dtype)) for k, v in rows.items()}


class Appender:
    """Appends chunks to a dataset's files and commits them (module docstring).

    committed: a progress.json's ``files`` ({name: [bytes, crc32]}) and ``carry``
    ([bits value, bit count]) to resume from: each file is cut back to its committed
    length, the dictionary read back from combos.bin; None starts the files anew.
    """

    def __init__(
        self,
        folder: Path,
        sizes: Sequence[int],
        committed: dict | None = None,
        carry: Sequence[int] | None = None,
    ):
        self.folder = folder
        self.layout = Layout.of(sizes)
        names = list(file_layout(sizes))
        self.state = {n: [0, 0] for n in names} if committed is None else committed
        self.carry = (np.uint64(int(carry[0])), int(carry[1])) if carry else (np.uint64(0), 0)
        self.files = {}
        for n in names:
            f = open(folder / f"{n}.bin", "r+b" if committed else "wb")  # noqa: SIM115
            if committed:
                if os.fstat(f.fileno()).st_size < self.state[n][0]:
                    f.close()
                    raise CorruptCache(f"{folder / n}.bin is shorter than its committed rows")
                f.truncate(self.state[n][0])
                f.seek(self.state[n][0])
            self.files[n] = f
        combos = None
        if committed:
            count = self.state["combos"][0]
            combos = np.fromfile(folder / "combos.bin", dtype="u1", count=count)
        self.dictionary = Dictionary(self.layout, combos)

    def _write(self, name: str, array: np.ndarray) -> None:
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        self.files[name].write(data)
        self.state[name][0] += data.nbytes
        self.state[name][1] = zlib.crc32(data, self.state[name][1])

    def append(self, rows: dict[str, np.ndarray]) -> None:
        """A chunk's rows (chunk_rows): its codes from the dictionary, its records packed
        after the carry, new combinations and the position rows appended."""
        known = len(self.dictionary.rows)
        recs = records(rows, self.dictionary)
        words, value, bits = pack_records(recs, self.layout.width, *self.carry)
        self.carry = (value, bits)
        self._write("records", words)
        self._write("combos", self.dictionary.combo_rows(known))
        for n in POSITION_FILES:
            self._write(n, rows[n])

    def finish(self) -> None:
        """The records' last partial word and the spare word: the files are whole."""
        self._write("records", finish_words(*self.carry))
        self.carry = (np.uint64(0), 0)

    def commit(self) -> dict:
        """Flush and sync the files; the state a progress.json records for them."""
        for f in self.files.values():
            f.flush()
            os.fsync(f.fileno())
        return {n: list(v) for n, v in self.state.items()}

    def carry_state(self) -> list[int]:
        """[bits value, bit count] of the carry, for progress.json."""
        return [int(self.carry[0]), int(self.carry[1])]

    def close(self) -> None:
        for f in self.files.values():
            f.close()


def write_progress(folder: Path, progress: dict) -> None:
    atomic_write_json(folder / "progress.json", progress)


def read_progress(folder: Path) -> dict | None:
    try:
        return json.loads((folder / "progress.json").read_text())
    except (OSError, ValueError):
        return None


def verify_files(folder: Path, files: dict) -> None:
    """Check every file's length and CRC-32 against files ({name: [bytes, crc32]});
    raise CorruptCache naming the first that differs."""
    for name, (length, crc) in files.items():
        path = folder / f"{name}.bin"
        try:
            size = path.stat().st_size
        except OSError as e:
            raise CorruptCache(f"{path}: missing ({e.strerror})") from e
        if size != length:
            raise CorruptCache(f"{path}: {size} bytes, its sidecar records {length}")
        got = 0
        with open(path, "rb") as f:
            while block := f.read(BLOCK):
                got = zlib.crc32(block, got)
        if got != crc:
            raise CorruptCache(f"{path}: checksum {got:08x}, its sidecar records {crc:08x}")


def map_files(
    folder: Path, sizes: Sequence[int], files: dict, n_candidates: int
) -> dict[str, np.ndarray]:
    """Every file of a finished dataset memory-mapped read-only (files: {name: [bytes,
    crc32]}, the groups' sizes give the dtypes and widths); the dictionary read."""
    out = {}
    for name, (dtype, cols) in file_layout(sizes).items():
        length = files[name][0]
        rows = length // (dtype.itemsize * max(cols, 1))
        shape = (rows, cols) if name == "combos" else (rows,)
        if name == "combos":
            out[name] = np.fromfile(folder / "combos.bin", dtype=dtype).reshape(shape)
        elif length:
            out[name] = np.memmap(folder / f"{name}.bin", dtype=dtype, mode="r", shape=shape)
        else:
            out[name] = np.zeros(shape, dtype=dtype)
    return out


def disk_full(e: OSError) -> bool:
    return e.errno in (errno.ENOSPC, errno.EDQUOT)


def disk_full_message(folder: Path) -> str:
    """What a full disk during an extraction into folder says: where, and what is kept."""
    return (
        f"no space left on the device of {folder} while extracting; the chunks committed so "
        "far are kept and the next run resumes after them (free space, or point "
        "data.cache_dir elsewhere)"
    )
