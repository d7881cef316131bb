"""gomove.memory: the peak resident set, its anonymous part's peak, and freed heap
handed back (glibc)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from gomove.memory import anon_rss_mb, peak_rss_mb, release_free_heap


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


ANON_SCRIPT = """
import sys, time
import numpy as np
from gomove.memory import AnonPeak
path = sys.argv[1]
with AnonPeak(interval=0.01) as mapped:
    start = mapped.peak_mb
    assert np.memmap(path, dtype=np.float64, mode="r").sum() == 25_000_000
print(mapped.peak_mb - start)
with AnonPeak(interval=0.01) as own:
    start = own.peak_mb
    a = np.ones(25_000_000, dtype=np.float64)
    time.sleep(0.1)
    del a
print(own.peak_mb - start)
"""


def test_anon_peak_sees_an_array_and_not_a_mapped_file(tmp_path):
    """AnonPeak counts the process's own memory: a 200 MB array filled and freed shows
    in its peak; reading a 200 MB memory-mapped file does not. In a fresh process: a
    long-lived one (the test runner) may serve the array from heap pages it already
    holds, which adds nothing to its resident memory."""
    if anon_rss_mb() is None:
        pytest.skip("no /proc/self/status")
    path = tmp_path / "big.bin"
    np.ones(25_000_000, dtype=np.float64).tofile(path)
    done = subprocess.run(
        [sys.executable, "-c", ANON_SCRIPT, str(path)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    mapped, own = (float(x) for x in done.stdout.split())
    assert mapped < 100, mapped
    assert own > 150, own


STAGE_SCRIPT = """
import time
import numpy as np
from gomove.memory import AnonPeak
with AnonPeak(interval=0.01) as anon:
    anon.stage("small")
    time.sleep(0.05)
    anon.stage("big")
    a = np.ones(25_000_000, dtype=np.float64)
    time.sleep(0.1)
    del a
    anon.stage("after")
    time.sleep(0.05)
s = anon.by_stage
print(s["small"], s["big"], s["after"], anon.peak_mb)
"""


def test_anon_peak_by_stage():
    """AnonPeak.stage counts the samples from then on under a name: a 200 MB array
    made and freed in one stage shows in that stage's peak, not in the stages before
    and after it; the whole peak is the largest stage's."""
    if anon_rss_mb() is None:
        pytest.skip("no /proc/self/status")
    done = subprocess.run([sys.executable, "-c", STAGE_SCRIPT], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    small, big, after, peak = (float(x) for x in done.stdout.split())
    assert big - small > 150 and big - after > 150, (small, big, after)
    assert peak == big
