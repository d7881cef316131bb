"""Monte-Carlo owner (Coulom 2007, Table 1): how often the mover owns a point after random games.

Terms:
- count: of n uniform playouts (gomove.playout.driver) from the position, the
  number whose final area-scoring owner of the point is the player to move
  (Coulom: "running 63 random games from the current position. For each point
  of the board, the number of final positions owned by the player to move").
- level: the count in 8 equal bins of 0..n, ``1 + count * 8 // (n + 1)``; for
  n = 63 exactly Coulom's 0-7, 8-15, ..., 56-63. Pass has no level (0).
- seed: a position's playouts are seeded from (config seed, the position's
  Zobrist hash, its move number), so a level depends only on the game and the
  config, never on which worker extracts it or in which order.

Extraction computes the levels in the same replay as every other group
(features/position.py), in the dataset's worker processes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import SIZE
from gomove.playout.driver import UNIFORM, run_games, seed_state

N_BINS = 8


def level_names(n_playouts: int) -> tuple[str, ...]:
    """Names of the 8 levels: the count range of each bin ("0-7", ..., "56-63" for 63)."""
    names = []
    for b in range(N_BINS):
        lo = -(-b * (n_playouts + 1) // N_BINS)  # smallest count with count * 8 // (n + 1) == b
        hi = -(-(b + 1) * (n_playouts + 1) // N_BINS) - 1
        names.append(f"{lo}-{hi}")
    return tuple(names)


@njit(cache=True)
def position_seed(seed: int, zhash: np.uint64, move: int) -> np.uint64:
    """The playout seed of one position: mixes the config seed, its hash and its move number."""
    return seed_state(np.uint64(seed) ^ zhash, move)


@njit(cache=True)
def owner_counts(b, color: int, n_playouts: int, seed: np.uint64, max_moves: int, out) -> None:
    """out[pt] (size*size) = playouts of n whose final owner of pt is color; b unchanged.

    The uniform playouts of the one playout driver (board.playout.run_games).
    """
    size = b.info[SIZE]
    counts = np.zeros((3, size * size), np.int64)
    run_games(b, color, 0.0, n_playouts, seed, max_moves, UNIFORM, counts)
    out[:] = counts[color]


@njit(cache=True, inline="always")
def owner_level(count: int, n_playouts: int) -> int:
    """The level (1..8) of a point owned in count of n_playouts playouts."""
    return 1 + count * N_BINS // (n_playouts + 1)
