"""Process memory: the peak resident set, and handing freed heap back to the system.

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
import resource

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
