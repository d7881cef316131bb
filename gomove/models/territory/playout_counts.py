"""What a handful of playouts from a position says of each point's owner: the counts the
mc, pmc and rmc feature sets (gomove.models.territory.features) and the dead strings'
judge (gomove.models.territory.judge) read.

The playouts run on the position's canonical form (the mover as black, turned by the
symmetry whose image hashes least) and are seeded by that hash, so the counts depend
on the position alone: the same in training as in a query, and the same under the 8
symmetries and both colours.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from gomove.board.board import BLACK, SIZE, WHITE, copy_board, place_points
from gomove.board.scoring import default_max_moves
from gomove.models.territory.reading import geometry
from gomove.playout.driver import run_games
from gomove.playout.rng import position_seed
from gomove.playout.uniform import UNIFORM


@njit(cache=True)
def _canonical(rel: np.ndarray, sym: np.ndarray, keys: np.ndarray) -> tuple[int, np.uint64]:
    """The symmetry whose image of the stones hashes least, and that hash."""
    best = 0
    best_key = np.uint64(0)
    for k in range(sym.shape[0]):
        key = np.uint64(0)
        for i in range(rel.shape[0]):
            if rel[i] != 0:
                key ^= keys[sym[k, i], 0 if rel[i] > 0 else 1]
        if k == 0 or key < best_key:
            best = k
            best_key = key
    return best, best_key


def mc_counts(
    rel: np.ndarray, size: int, playouts: int, player: Any = UNIFORM
) -> tuple[np.ndarray, np.ndarray]:
    """(how many of the playouts the mover owns each point in, how many the opponent):
    int64[N] each, for the stones rel (int8[N], the mover's +1), playouts of player (a
    playout driver's policy: uniform by default, or a PatternPlayer).

    The playouts run on the position's canonical form (the mover as black, turned by
    the symmetry whose image hashes least) and are seeded by that hash, so the counts
    depend on the position alone: the same in training as in a query, and the same
    under the 8 symmetries and both colours (exactly, for a position that is not
    itself symmetric)."""
    geo = geometry(size)
    rel = np.ascontiguousarray(rel, dtype=np.int8)
    if rel.shape != (size * size,):
        raise ValueError(f"rel: want {size * size} points, not {rel.shape}")
    return playout_counts(rel, playouts, player, geo.sym, geo.sym_keys, geo.empty_board)


@njit(cache=True)
def playout_counts(rel, playouts, player, sym, sym_keys, empty_board):
    """mc_counts, compiled: a query makes one call from Python, not one per step."""
    k, key = _canonical(rel, sym, sym_keys)
    n = rel.shape[0]
    canonical = np.empty_like(rel)
    stones = 0
    for i in range(n):
        canonical[sym[k, i]] = rel[i]
        if rel[i] != 0:
            stones += 1
    b = copy_board(empty_board)  # black to move, as the mover
    place_points(b, canonical)
    size = b.info[SIZE]
    counts = np.zeros((3, n), np.int64)
    seed = position_seed(0, key, stones)
    run_games(b, BLACK, 0.0, playouts, seed, default_max_moves(size), player, counts)
    mine = np.empty(n, np.int64)
    theirs = np.empty(n, np.int64)
    for i in range(n):
        mine[i] = counts[BLACK, sym[k, i]]
        theirs[i] = counts[WHITE, sym[k, i]]
    return mine, theirs
