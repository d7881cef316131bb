"""Atomic writes: a file appears whole or not at all, so an interrupted run loses nothing.

``atomic_write(path, write)`` is the one mechanism: ``write`` fills a temporary
file beside ``path``, which then replaces it in one rename. The npz, text and
JSON forms (and the checkpoints' torch.save) are calls of it. ``exclusive(path)``
makes concurrent builders of one cache take turns.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np

# the process's umask, read once (reading it means setting it)
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def atomic_write(path: str | Path, write: Callable[[BinaryIO], None]) -> None:
    """Write path through ``write(file)`` on a temporary file renamed into place, with
    the permissions open() would give it (mkstemp's are the owner's only)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_save_npz(path: str | Path, compress: bool = False, **arrays: np.ndarray) -> None:
    """np.savez (np.savez_compressed with compress) to path, atomically."""
    save = np.savez_compressed if compress else np.savez
    atomic_write(path, lambda f: save(f, **arrays))


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write(path, lambda f: f.write(text.encode()))


def atomic_write_json(path: str | Path, obj: object) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


@contextmanager
def exclusive(path: str | Path) -> Iterator[None]:
    """Hold an exclusive lock on the file path (created if missing) for the block: runs
    that build the same cache at once take turns, and the later ones find it built.
    flock(2): released when the holder exits or dies, so a killed run never leaves
    a lock behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
