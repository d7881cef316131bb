"""The dataset on disk: the flat layout, written straight by extraction, checksummed.

One folder per dataset, ``<cache_dir>/<kind>-<key>/``, one raw little-endian file per
array, rows appended a chunk of games at a time in game order:
- ``packed.bin``, ``levw.bin``: every candidate's levels as FlatData holds them
  (gomove.data.flat: bit-packed words, then the wide groups in 2 or 3 bytes);
- ``n_cand.bin`` uint16[P]: the candidates of each position (pos_start is their
  running sum, built when opened);
- ``winner.bin`` uint16[P]: the expert's candidate within its position;
- ``game.bin`` int32[P], ``move.bin`` int16[P]: the game (index in the dataset) and
  move number (0 = the first) of each position, for per-phase statistics.

Bytes: 4 W + 2 (or 3) per wide group per candidate, plus 10 per position: 7.1 a
candidate for the full features of all training games, three-byte shapes.

Two JSON sidecars, each written atomically:
- ``progress.json`` while extracting: the chunks committed, each file's committed
  length and CRC-32. Bytes past a committed length (a run killed mid-chunk, a
  full disk) are cut off when the next run resumes; nothing uncommitted is read.
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
from gomove.data.flat import empty_levels, level_putter, level_shapes

FORMAT_VERSION = 2  # 1: npz shards
POSITION_FILES = {
    "n_cand": np.dtype("<u2"),
    "winner": np.dtype("<u2"),
    "game": np.dtype("<i4"),
    "move": np.dtype("<i2"),
}
LEVEL_FILES = ("packed", "levw")
BLOCK = 1 << 26  # bytes read at a time when checking a file


class CorruptCache(ValueError):
    """A dataset file whose length or checksum is not the one its sidecar records."""


def file_layout(sizes: Sequence[int]) -> dict[str, tuple[np.dtype, int]]:
    """Every file's (dtype, columns) for feature groups of these sizes."""
    shapes = level_shapes(0, sizes)
    layout = {n: (shapes[n][0], shapes[n][1][1]) for n in LEVEL_FILES}
    return layout | {n: (d, 1) for n, d in POSITION_FILES.items()}


def encode_chunk(
    parts: Sequence[dict], game_ids: Sequence[int], group_names: Sequence[str], sizes: Sequence[int]
) -> dict[str, np.ndarray]:
    """The rows of the files for the games parts (FeatureExtractor.game outputs) whose
    dataset indices are game_ids."""
    n = sum(len(p["cand"]) for p in parts)
    packed, levw = empty_levels(n, sizes)
    put = level_putter(packed, levw, sizes)
    for g, name in enumerate(group_names):
        put(g, slice(0, n), np.concatenate([p["columns"][name] for p in parts] or [[]]))
    counts = np.concatenate([p["n_cand"] for p in parts] or [[]])
    if len(counts) and counts.max() > np.iinfo(np.uint16).max:
        raise ValueError(f"a position has {counts.max()} candidates")
    rows = {
        "packed": packed,
        "levw": levw,
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

    committed: a progress.json's ``files`` ({name: [bytes, crc32]}) to resume from:
    each file is cut back to its committed length; None starts the files anew.
    """

    def __init__(self, folder: Path, names: Sequence[str], committed: dict | None = None):
        self.folder = folder
        self.state = {n: [0, 0] for n in names} if committed is None else committed
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

    def append(self, rows: dict[str, np.ndarray]) -> None:
        for n, f in self.files.items():
            data = np.ascontiguousarray(rows[n]).reshape(-1).view(np.uint8)
            f.write(data)
            self.state[n][0] += data.nbytes
            self.state[n][1] = zlib.crc32(data, self.state[n][1])

    def commit(self) -> dict:
        """Flush and sync the files; the state a progress.json records for them."""
        for f in self.files.values():
            f.flush()
            os.fsync(f.fileno())
        return {n: list(v) for n, v in self.state.items()}

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
    crc32]}, the groups' sizes give the dtypes and widths)."""
    out = {}
    for name, (dtype, cols) in file_layout(sizes).items():
        length = files[name][0]
        rows = length // (dtype.itemsize * cols) if cols else n_candidates
        shape = (rows, cols) if name in LEVEL_FILES else (rows,)
        out[name] = (
            np.memmap(folder / f"{name}.bin", dtype=dtype, mode="r", shape=shape)
            if length
            else np.zeros(shape, dtype=dtype)
        )
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
