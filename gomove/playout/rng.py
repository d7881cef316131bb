"""Random numbers for compiled code: xorshift64* streams seeded by splitmix64.

Terms:
- rng: a ``uint64[1]`` xorshift64* state (Vigna 2016), owned by the caller, so
  a playout depends only on its position and its state and never on numpy's
  global generator. Game ``g`` of a run of playouts with ``seed`` starts from
  ``seed_state(seed, g)``, the g-th splitmix64 output for that seed, so each
  game is reproducible on its own.
- position seed: the playouts of one position of a game (the Monte-Carlo owner
  feature's, the territory CRF's) are seeded from (a config seed, the position's
  Zobrist hash, its move number), so they depend only on the game and the config,
  never on which worker reads the position or in which order.
- splitmix stream: ``splitmix_uniform`` advances a one-word state by splitmix64
  itself, the territory CRF's sampler chains' generator (one state a chain, so
  parallel chains give the same numbers whatever thread runs them).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_STAR = np.uint64(0x2545F4914F6CDD1D)
_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True)
def seed_state(seed: int, game: int) -> np.uint64:
    """The splitmix64 output number ``game`` for ``seed``: a non-zero xorshift state."""
    z = np.uint64(seed) + np.uint64(game + 1) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    if z == np.uint64(0):
        z = _GOLDEN
    return z


def new_rng(seed: int, game: int = 0) -> np.ndarray:
    """A fresh rng state array (uint64[1]) for one game: game ``game`` of ``seed``."""
    return np.array([seed_state(np.uint64(seed % 2**64), game)], dtype=np.uint64)


@njit(cache=True)
def next_random(rng: np.ndarray) -> np.uint64:
    """xorshift64*: advance rng[0] and return 64 random bits."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return x * _STAR


@njit(cache=True, inline="always")
def uniform01(rng: np.ndarray) -> float:
    """A uniform float in [0, 1) from rng (53 random bits)."""
    return float(next_random(rng) >> np.uint64(11)) * _UNIT


@njit(cache=True)
def random_below(rng: np.ndarray, n: int) -> int:
    """A uniform integer in [0, n), n < 2**32 (Lemire's multiply-shift on 32 high bits)."""
    hi = next_random(rng) >> np.uint64(32)
    return int((hi * np.uint64(n)) >> np.uint64(32))


@njit(cache=True)
def position_seed(seed: int, zhash: np.uint64, move: int) -> np.uint64:
    """The playout seed of one position: mixes the config seed, its hash and its move number."""
    return seed_state(np.uint64(seed) ^ zhash, move)


@njit(cache=True, inline="always")
def splitmix_uniform(rng: np.ndarray) -> float:
    """splitmix64 on the one-word state rng[0]: a uniform in [0, 1) (a splitmix stream)."""
    rng[0] += _GOLDEN
    z = rng[0]
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)) * _UNIT
