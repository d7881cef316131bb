"""The one playout driver: games of any policy from a position, run to the end without Python.

Terms:
- playout driver: ``run_games(b, color, komi, n, seed, max_moves, policy,
  owner_counts)``, the one loop that plays n games of a policy from b and counts
  their owners (uniform playouts, the rule and pattern policies', the Monte-Carlo
  owner feature's, the territory CRF's). The policy is any NamedTuple that
  implements the hooks of gomove.playout.hooks; game g starts from the rng state
  ``seed_state(seed, g)`` (gomove.playout.rng) and is scored by area
  (gomove.board.scoring). ``run_playouts`` is its Python face, the uniform policy
  by default.
- ``play_game``: one game on a board the caller owns (the search's simulations,
  the tests), with its moves recorded.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from gomove.board.board import BLACK, SIZE, WHITE, Board, copy_board, restore_position
from gomove.board.scoring import area_score, area_score_into, default_max_moves
from gomove.playout.hooks import policy_moves, policy_reset, policy_state
from gomove.playout.rng import seed_state
from gomove.playout.uniform import UNIFORM


@njit(cache=True)
def start_state(policy, b: Board):
    """policy_state(policy, b), callable from Python (for play_game)."""
    return policy_state(policy, b)


@njit(cache=True)
def reset_state(policy, state) -> None:
    """policy_reset(policy, state), callable from Python (before another game from the start)."""
    policy_reset(policy, state)


@njit(cache=True)
def play_game(
    b: Board,
    color: int,
    komi: float,
    rng: np.ndarray,
    max_moves: int,
    policy,
    state,
    owner_out: np.ndarray,
    moves_out: np.ndarray,
) -> float:
    """Play one game of policy on b (modified in place) to the end; return its area score.

    color moves first. rng: uint64[1], advanced. state: policy_state(policy,
    b), ready for b (policy_reset). owner_out: int8[size*size], filled with the
    final owners. moves_out: int32[k], the first k moves are recorded there
    (PASS for a pass); pass an empty array to record none. The number of moves
    played is the increase of ``b.info[NMOVES]``.
    """
    policy_moves(policy, state, b, color, rng, max_moves, moves_out)
    return area_score(b, komi, owner_out)


@njit(cache=True)
def playout(
    b: Board,
    color: int,
    komi: float,
    rng: np.ndarray,
    max_moves: int,
    owner_out: np.ndarray,
    moves_out: np.ndarray,
) -> float:
    """One uniform game on b (modified in place): play_game with the Uniform policy."""
    return play_game(
        b, color, komi, rng, max_moves, UNIFORM, policy_state(UNIFORM, b), owner_out, moves_out
    )


@njit(cache=True)
def run_games(
    b: Board,
    color: int,
    komi: float,
    n: int,
    seed: np.uint64,
    max_moves: int,
    policy,
    owner_counts_out: np.ndarray,
) -> np.ndarray:
    """The playout driver: n games of policy from b (left unchanged); their scores float64[n].

    Game g is seeded seed_state(seed, g). owner_counts_out: int64[3, size*size];
    [owner, pt] is incremented once per game by the final owner of pt (0 dame,
    1 black, 2 white).
    """
    size = b.info[SIZE]
    scratch = copy_board(b)
    state = policy_state(policy, b)
    owner = np.zeros(size * size, np.int8)
    rng = np.zeros(1, np.uint64)
    no_moves = np.zeros(0, np.int32)
    scores = np.empty(n, np.float64)
    seen = np.zeros(b.color.shape[0], np.bool_)
    region = np.empty(size * size, np.int64)
    for g in range(n):
        restore_position(scratch, b)
        policy_reset(policy, state)
        rng[0] = seed_state(seed, g)
        # play_game, with the scoring scratch kept across games
        policy_moves(policy, state, scratch, color, rng, max_moves, no_moves)
        scores[g] = area_score_into(scratch, komi, owner, seen, region)
        for pt in range(size * size):
            owner_counts_out[owner[pt], pt] += 1
    return scores


def check_playout_args(board: Board, color: int, n: int, max_moves: int | None) -> tuple[int, int]:
    """Clear errors for bad arguments of a run of playouts; returns (size, max_moves)."""
    if color not in (BLACK, WHITE):
        raise ValueError(f"color must be BLACK or WHITE, not {color}")
    if n < 0:
        raise ValueError(f"n must be >= 0, not {n}")
    size = int(board.info[SIZE])
    return size, default_max_moves(size) if max_moves is None else max_moves


def run_playouts(
    board: Board,
    color: int,
    komi: float,
    n: int,
    seed: int,
    max_moves: int | None = None,
    policy: NamedTuple = UNIFORM,
) -> tuple[np.ndarray, np.ndarray]:
    """n playouts of policy (uniform by default) from board with color to move;
    board is not modified.

    Returns (scores: float64[n], black minus white minus komi;
    owner_counts: int64[3, size, size], [owner, row, col] in sgfmill order,
    summing to n over owner at every point).
    """
    size, max_moves = check_playout_args(board, color, n, max_moves)
    counts = np.zeros((3, size * size), np.int64)
    scores = run_games(
        board, int(color), float(komi), int(n), np.uint64(seed % 2**64), int(max_moves), policy,
        counts,
    )  # fmt: skip
    return scores, counts.reshape(3, size, size)
