"""gomove.memory: the peak resident set, and freed heap handed back (glibc)."""

from __future__ import annotations

import numpy as np
import pytest

from gomove.memory import peak_rss_mb, release_free_heap


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    pytest.skip("no /proc/self/status")


def test_peak_at_least_current():
    assert peak_rss_mb() >= rss_mb() * 0.99 > 0


def test_release_free_heap_returns_fragmented_pages():
    """Blocks freed between live ones stay resident until released."""
    blocks = [np.ones(64 * 1024 // 8 + i % 7) for i in range(3000)]  # ~190 MB of heap
    keep = blocks[::2]
    del blocks
    before = rss_mb()
    if not release_free_heap():
        pytest.skip("no malloc_trim (not glibc)")
    after = rss_mb()
    assert before - after > 50, (before, after)
    assert sum(float(b[0]) for b in keep) == len(keep)
