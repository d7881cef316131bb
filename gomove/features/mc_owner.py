"""Monte-Carlo owner (Coulom 2007, Table 1): how often the mover owns a point after random games.

Terms:
- count: of n uniform playouts (gomove.playout.uniform) from the position, the
  number whose final area-scoring owner of the point is the player to move
  (Coulom: "running 63 random games from the current position. For each point
  of the board, the number of final positions owned by the player to move").
- level: the count in 8 equal bins of 0..n, ``1 + count * 8 // (n + 1)``; for
  n = 63 exactly Coulom's 0-7, 8-15, ..., 56-63. Pass has no level (0).
- seed: a position's playouts are seeded by its position seed
  (gomove.playout.rng.position_seed: config seed, Zobrist hash, move number), so a
  level depends only on the game and the config, never on which worker extracts
  it or in which order.

Extraction plays the playouts and computes the levels in the same replay as every
other group (gomove.data.visitor), in the dataset's worker processes.
"""

from __future__ import annotations

from numba import njit

N_BINS = 8


def level_names(n_playouts: int) -> tuple[str, ...]:
    """Names of the 8 levels: the count range of each bin ("0-7", ..., "56-63" for 63)."""
    names = []
    for b in range(N_BINS):
        lo = -(-b * (n_playouts + 1) // N_BINS)  # smallest count with count * 8 // (n + 1) == b
        hi = -(-(b + 1) * (n_playouts + 1) // N_BINS) - 1
        names.append(f"{lo}-{hi}")
    return tuple(names)


@njit(cache=True, inline="always")
def owner_level(count: int, n_playouts: int) -> int:
    """The level (1..8) of a point owned in count of n_playouts playouts."""
    return 1 + count * N_BINS // (n_playouts + 1)
