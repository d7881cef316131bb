"""Process memory: the peak resident set, the peak of its anonymous part, and handing
freed heap back to the system.

The resident set counts the pages of memory-mapped dataset files a run has read:
they belong to the page cache, which the kernel takes back as it needs, so a run
over data larger than memory shows a resident set as large as the machine's free
memory whatever it holds itself. ``AnonPeak`` samples the anonymous part alone
(``RssAnon``: the heap, numpy's and torch's arrays), what a run needs of its own.

Scoring padded batches allocates and frees tensors of a new shape every batch;
glibc keeps the freed blocks in its heap, fragmented, so a process's resident
memory grows by about 1 GB over the 110,564 positions of a validation set in
batches of 512 and stays there (docs/logs/scale.md, "The whole training set").
``release_free_heap`` returns those pages (glibc's malloc_trim), so a training
run's peak is its data's and not its validation's.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import resource
import threading
from pathlib import Path

_LIBC_NAME = ctypes.util.find_library("c")
_LIBC = ctypes.CDLL(_LIBC_NAME) if _LIBC_NAME else None
_TRIM = getattr(_LIBC, "malloc_trim", None)  # glibc only


def peak_rss_mb() -> float:
    """This process's peak resident memory in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def release_free_heap() -> bool:
    """Give the heap's free pages back to the system; False where libc cannot."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True


def anon_rss_mb() -> float | None:
    """This process's anonymous resident memory in MiB, None where /proc does not say."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    m = re.search(r"^RssAnon:\s+(\d+) kB", status, re.MULTILINE)
    return int(m.group(1)) / 1024 if m else None


class AnonPeak:
    """The largest anonymous resident memory seen while it runs: sampled every
    ``interval`` seconds by a daemon thread (``peak_mb``; None where unknown), and
    the largest of each stage a run names (``stage``; ``by_stage``, in MiB): which
    of a run's harvest, training or scoring needs the memory, without a profiler."""

    def __init__(self, interval: float = 0.25) -> None:
        self.interval = interval
        self.peak_mb = anon_rss_mb()
        self.by_stage: dict[str, float] = {}
        self._stage: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def stage(self, name: str) -> None:
        """Count the samples from now on under stage name (sampled once now)."""
        with self._lock:
            self._stage = name
        self._note(anon_rss_mb())

    def _note(self, now: float | None) -> None:
        if now is None:
            return
        with self._lock:
            if self.peak_mb is None or now > self.peak_mb:
                self.peak_mb = now
            if self._stage is not None and now > self.by_stage.get(self._stage, 0.0):
                self.by_stage[self._stage] = now

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self._note(anon_rss_mb())

    def __enter__(self) -> AnonPeak:
        if self.peak_mb is not None:
            self._thread = threading.Thread(target=self._sample, name="gomove-anon", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.peak_mb is not None:
            self._note(anon_rss_mb())
