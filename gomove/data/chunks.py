"""Reading the flat layout a chunk of positions at a time, the next chunk's pages asked for
while this one is worked on: how training reads data larger than memory.

Terms:
- chunk: ``chunk_positions`` consecutive positions (``data.chunk_positions``); its
  candidates' records are one contiguous span of the dataset's records.bin.
- prefetch: the operating system is told (posix_fadvise WILLNEED) that the next chunk's
  span will be read, so its pages come from the disk while the kernels work on this
  chunk; the reading overlaps the work, and nothing is copied into the process's own
  memory: the pages belong to the page cache, which the kernel frees as it needs.
  Data built in memory (no file behind it) needs no prefetch.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from gomove.data.flat import FlatData


def chunk_bounds(n_positions: int, chunk_positions: int | None) -> np.ndarray:
    """int64[K + 1]: chunk k's positions are bounds[k]:bounds[k + 1] (one chunk for None)."""
    step = chunk_positions or max(n_positions, 1)
    return np.unique(np.r_[np.arange(0, n_positions, step), n_positions]).astype(np.int64)


class Prefetch:
    """Asks the page cache for spans of a FlatData's records.bin in a background thread."""

    def __init__(self, data: FlatData) -> None:
        self.data = data
        path = data.source
        self.fd = os.open(path, os.O_RDONLY) if path is not None and Path(path).exists() else None
        self.thread: threading.Thread | None = None

    def span(self, lo: int, hi: int) -> tuple[int, int]:
        """(offset, length) in bytes of the records of positions lo:hi."""
        width = self.data.layout.width
        first = int(self.data.pos_start[lo]) * width // 64 * 8
        last = (int(self.data.pos_start[hi]) * width + 63) // 64 * 8 + 8
        return first, last - first

    def ask(self, lo: int, hi: int) -> None:
        """Start bringing positions lo:hi's records into the page cache (returns at once)."""
        if self.fd is None or hi <= lo:
            return
        self.wait()
        offset, length = self.span(lo, hi)
        fd = self.fd

        def run() -> None:
            os.posix_fadvise(fd, offset, length, os.POSIX_FADV_WILLNEED)

        self.thread = threading.Thread(target=run, name="gomove-prefetch", daemon=True)
        self.thread.start()

    def wait(self) -> None:
        if self.thread is not None:
            self.thread.join()
            self.thread = None

    def close(self) -> None:
        self.wait()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def in_chunks(data: FlatData, order: Sequence[int] | None = None) -> Iterator[tuple[int, int]]:
    """(lo, hi) of every chunk of data (data.chunk_positions; one chunk for None), in
    order (chunk indices; by default in file order), the next one prefetched while the
    caller works on the one yielded, the first asked for before it is yielded."""
    bounds = chunk_bounds(data.n_positions, data.chunk_positions)
    order = list(range(len(bounds) - 1)) if order is None else list(order)
    fetch = Prefetch(data)
    try:
        if order:  # the first chunk too: read by its batches alone, it comes page by page
            fetch.ask(int(bounds[order[0]]), int(bounds[order[0] + 1]))
        for i, k in enumerate(order):
            if i + 1 < len(order):
                nxt = order[i + 1]
                fetch.ask(int(bounds[nxt]), int(bounds[nxt + 1]))
            yield int(bounds[k]), int(bounds[k + 1])
    finally:
        fetch.close()
