"""gomove: fast move-prediction models for Go learned from expert game records.

Where to start reading: the packages bottom to top, each importing only those below
it (tests/test_layers.py; README, Modules): ``board`` (the rules), ``reading`` (game
records), ``features`` (what a candidate move is made of), ``playout`` (random games
to the end), ``data`` (extraction and the on-disk layout), ``models``, ``evaluate``,
``train`` (``gomove train``: gomove.train.trainers), ``export``, ``play`` (search, GTP,
analysis), ``experiment`` (studies), ``bench`` and ``cli`` (``gomove SUB``). This
module points numba's cache at the folder of these kernel sources and seeds it from
the cache a wheel ships (gomove.kernel_cache).
"""

from __future__ import annotations

import os
from pathlib import Path

from gomove import kernel_cache

__version__ = "0.1.0"

# must happen before numba is imported (it reads its config once)
_key = kernel_cache.kernel_key()
os.environ.setdefault("NUMBA_CACHE_DIR", str(kernel_cache.cache_dir(_key)))
kernel_cache.seed(Path(os.environ["NUMBA_CACHE_DIR"]), _key)
