"""Zobrist keys: fixed-seed 64-bit random numbers for position and pattern hashes.

The seeds are part of the on-disk formats (shard sidecars record them): change
them and every cached dataset and harvested pattern table is invalidated.
"""

from __future__ import annotations

import numpy as np

POSITION_SEED = 20070101
PATTERN_SEED = 20060509
MAX_LOCS = (19 + 2) * (19 + 2)


def _keys(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.Generator(np.random.PCG64(seed))
    return rng.integers(1, np.iinfo(np.uint64).max, size=shape, dtype=np.uint64, endpoint=True)


# POSITION_KEYS[color, loc]: colour 1 = black, 2 = white; row 0 unused.
POSITION_KEYS = _keys(POSITION_SEED, (3, MAX_LOCS))
POSITION_KEYS[0, :] = 0
