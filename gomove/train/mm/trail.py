"""MM's trail of updates: each update's group and its log-gammas after it, in order.

A resumed engine with a cache (``MMPasses.caches``) replays the trail from the start
so that its cached team strengths, products in update order, hold the same bits as
in an uninterrupted run (gomove.train.mm.loop). The trail grows by a group's
log-gammas every update: with all pattern sizes on the large split (4,888,021
shapes) 39 MB an iteration, 1.6 GB over a warm start's 40 iterations. Held in the
train state it stayed in memory and was written whole at every save (a second copy
while torch pickled it), so it is appended instead to a file beside the train
state (``StateStore.side_file``), which the state names with the length it has
reached; a resumed run reads that much and cuts off anything a killed run appended
after its last save. Without such a file (a store that has none) the trail is held
in memory and saved in the state as a list, as older train states hold it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

_HEADER = np.dtype([("group", "<i8"), ("size", "<i8")])


class Trail:
    """The updates of one MM fit (module docstring): in the file ``path``, or in
    memory when path is None."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.items: list[tuple[int, np.ndarray]] = []  # in memory (path None)
        self.entries = 0
        self.nbytes = 0

    def start(self) -> None:
        """A fresh fit: no updates yet (a file left by an earlier run emptied)."""
        self.items, self.entries, self.nbytes = [], 0, 0
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def append(self, group: int, values: np.ndarray) -> None:
        values = np.ascontiguousarray(values, dtype="<f8")
        self.entries += 1
        if self.path is None:
            self.items.append((group, values.copy()))
            return
        head = np.array([(group, values.size)], dtype=_HEADER)
        with open(self.path, "ab") as f:
            f.write(head.tobytes())
            f.write(values.tobytes())
        self.nbytes += _HEADER.itemsize + values.nbytes

    def saved(self) -> list[tuple[int, np.ndarray]] | dict[str, Any]:
        """What a train state keeps of the trail: its file, flushed to the disk, by name
        and length (or the list itself when held in memory)."""
        if self.path is None:
            return self.items
        if self.nbytes:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        return {"file": self.path.name, "entries": self.entries, "bytes": self.nbytes}

    def resume(self, saved: list | dict[str, Any]) -> Iterator[tuple[int, np.ndarray]]:
        """The saved trail's updates in order, this trail left holding them: a list (an
        older state's, or one held in memory) is appended anew; a file's entries are
        read up to the saved length, and what a killed run wrote after it cut off."""
        if isinstance(saved, list):
            self.start()
            for group, values in saved:
                values = np.asarray(values, dtype=np.float64)
                self.append(int(group), values)
                yield int(group), values
            return
        if self.path is None or saved["file"] != self.path.name:
            raise ValueError(f"train state: its trail is in {saved['file']!r}, not here")
        length, entries = int(saved["bytes"]), int(saved["entries"])
        if not self.path.exists() or self.path.stat().st_size < length:
            raise ValueError(f"train state: its trail {self.path} is missing or short")
        with open(self.path, "r+b") as f:
            f.truncate(length)
            for _ in range(entries):
                head = np.frombuffer(f.read(_HEADER.itemsize), dtype=_HEADER)[0]
                size = int(head["size"])
                values = np.frombuffer(f.read(8 * size), dtype="<f8").astype(np.float64)
                yield int(head["group"]), values
            if f.tell() != length:
                raise ValueError(f"train state: its trail {self.path} does not end where saved")
        self.items, self.entries, self.nbytes = [], entries, length
