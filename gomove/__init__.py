"""gomove: fast move-prediction models for Go learned from expert game records."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__version__ = "0.1.0"


def _numba_cache_dir() -> Path:
    """A numba cache folder named by a hash of every module that holds kernels.

    Numba's own cache is invalidated per source file only: a kernel compiled
    with another file's kernel inlined keeps the old code after that file
    changes (seen here: a changed hash-table slot function left cached callers
    looking up the wrong slots). Keying the whole cache on all kernel sources
    makes any change recompile everything.
    """
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        if b"numba" in data:
            h.update(path.relative_to(root).as_posix().encode())
            h.update(data)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "gomove" / "numba" / h.hexdigest()[:16]


# must happen before numba is imported (it reads its config once)
os.environ.setdefault("NUMBA_CACHE_DIR", str(_numba_cache_dir()))
