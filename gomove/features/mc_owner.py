"""Monte-Carlo owner (Coulom 2007, Table 1): how often the mover owns a point after random games.

Terms:
- count: of n uniform playouts (gomove.board.playout) from the position, the
  number whose final area-scoring owner of the point is the player to move
  (Coulom: "running 63 random games from the current position. For each point
  of the board, the number of final positions owned by the player to move").
- level: the count in 8 equal bins of 0..n, ``1 + count * 8 // (n + 1)``; for
  n = 63 exactly Coulom's 0-7, 8-15, ..., 56-63. Pass has no level (0).
- seed: a position's playouts are seeded from (config seed, the position's
  Zobrist hash, its move number), so a level depends only on the game and the
  config, never on which worker extracts it or in which order.

The kernels live here rather than in gomove.play because they are a feature:
extraction calls them once per game, in the dataset's worker processes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import SIZE, W, copy_board, play
from gomove.board.playout import default_max_moves, playout, restore_board, seed_state

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
    """out[pt] (int32[size*size]) = playouts of n whose final owner of pt is color; b unchanged."""
    size = b.info[SIZE]
    scratch = copy_board(b)
    owner = np.zeros(size * size, np.int8)
    rng = np.zeros(1, np.uint64)
    no_moves = np.zeros(0, np.int32)
    out[:] = 0
    for g in range(n_playouts):
        restore_board(scratch, b)
        rng[0] = seed_state(seed, g)
        playout(scratch, color, 0.0, rng, max_moves, owner, no_moves)
        for pt in range(size * size):
            if owner[pt] == color:
                out[pt] += 1


@njit(cache=True)
def owner_levels_game(
    b,
    locs: np.ndarray,
    colors: np.ndarray,
    cand: np.ndarray,
    pos_start: np.ndarray,
    n_playouts: int,
    seed: int,
    max_moves: int,
    levels_out: np.ndarray,
) -> None:
    """Replay a game on b, writing the MC-owner level of every candidate.

    cand: int16 locs of the candidates of every move back to back, move i's
    at cand[pos_start[i]:pos_start[i + 1]] (empty for a move extraction left
    out, which then costs no playouts), pass = -1. levels_out: uint8, same
    length as cand.
    """
    size = b.info[SIZE]
    w = b.info[W]
    counts = np.zeros(size * size, np.int32)
    for i in range(locs.shape[0]):
        lo = pos_start[i]
        hi = pos_start[i + 1]
        if hi > lo:
            s = position_seed(seed, b.zhash[0], i)
            owner_counts(b, colors[i], n_playouts, s, max_moves, counts)
            for c in range(lo, hi):
                loc = cand[c]
                if loc < 0:
                    levels_out[c] = 0
                else:
                    pt = (loc // w - 1) * size + loc % w - 1
                    levels_out[c] = 1 + counts[pt] * N_BINS // (n_playouts + 1)
        play(b, locs[i], colors[i])


def owner_column(
    b,
    locs: np.ndarray,
    colors: np.ndarray,
    cand: np.ndarray,
    pos_start: np.ndarray,
    n_playouts: int,
    seed: int,
    max_moves: int | None = None,
) -> np.ndarray:
    """uint8 MC-owner levels of a game's candidates (see ``owner_levels_game``); b is replayed."""
    if n_playouts < 1:
        raise ValueError(f"mc_owner_playouts must be >= 1, not {n_playouts}")
    if max_moves is None:
        max_moves = default_max_moves(int(b.info[SIZE]))
    out = np.zeros(len(cand), dtype=np.uint8)
    owner_levels_game(
        b, locs, colors, cand, pos_start, int(n_playouts), int(seed), int(max_moves), out
    )
    return out
