"""Simulation balancing's kernels (Silver and Tesauro 2009): playouts and their score function.

Terms:
- parameters: the log-gammas of a pattern policy by level, as the kernel
  tables index them: ``pattern3x3`` by ``t.level`` (1..K), ``capture``
  (1..4), ``extension``, ``self_atari`` and ``contiguity`` (1); level 0
  (absent) is no parameter and its gradient entry is left unused.
- score function of a playout: the gradient of the log-probability of its
  moves, sum over its moves of psi = phi(chosen) - sum_b pi(b) phi(b), where
  pi is proportional to draw.policy_gamma (the distribution the playout
  draws from; package docstring) and phi the one-hot levels of a move. Both
  colours draw from the same gammas (levels are relative to the mover), so
  one sum over both colours' moves is the gradient of the game's
  probability. Passes are forced (no move of positive gamma) and add nothing.
- ``balance_games``: n playouts from a position, each outcome z (1 when
  BLACK wins by area) written out and, with a weight, (z - baseline) x
  weight x the score function added into the gradient arrays: the REINFORCE
  estimate of the gradient of P(BLACK wins).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from gomove.board.board import KO, LAST, SIZE, Board, W, copy_board, play, restore_position
from gomove.board.coords import PASS
from gomove.board.scoring import area_score_into
from gomove.features.light import light_levels
from gomove.playout.hooks import policy_moves, policy_reset, policy_state
from gomove.playout.pattern.draw import policy_gamma
from gomove.playout.pattern.playout import PatternPlayer
from gomove.playout.pattern.tables import PolicyTables
from gomove.playout.rng import seed_state


class Gradient(NamedTuple):
    """Per-level gradient arrays, shaped as the kernel tables' gammas (level 0 unused)."""

    pattern: np.ndarray  # float64[K + 1]
    capture: np.ndarray  # float64[5]
    extension: np.ndarray  # float64[2]
    self_atari: np.ndarray  # float64[2]
    contiguity: np.ndarray  # float64[2]


class Games(NamedTuple):
    """The playouts balance_games runs from its position."""

    n: int  # how many
    seed: np.uint64  # game i is seeded seed_state(seed, i)
    max_moves: int  # the moves of a game, at most
    komi: float  # BLACK wins when its area minus WHITE's exceeds it


class Reinforce(NamedTuple):
    """What balance_games adds into the gradient (module docstring)."""

    g: Gradient  # the arrays it adds into
    baseline: float  # a game of outcome z adds (z - baseline) x weight x its score function
    weight: float  # 0: nothing is added (the outcomes only)


def zero_gradient(t: PolicyTables) -> Gradient:
    return Gradient(
        np.zeros(len(t.play)),
        np.zeros(len(t.capture)),
        np.zeros(len(t.extension)),
        np.zeros(len(t.self_atari)),
        np.zeros(len(t.contiguity)),
    )


@njit(cache=True)
def add_score_function(
    b: Board,
    color: int,
    moves: np.ndarray,
    n_moves: int,
    t: PolicyTables,
    g: Gradient,
    weight: float,
) -> None:
    """Replay moves[:n_moves] on b (modified) from color, adding weight x the score function
    (module docstring) into g."""
    size = b.info[SIZE]
    w = b.info[W]
    n = size * size
    gam = np.empty(n, np.float64)
    lev = np.empty((n, 5), np.int64)
    for i in range(n_moves):
        mv = moves[i]
        if mv != PASS:
            last = b.info[LAST]
            ko = b.info[KO]
            total = 0.0
            k = 0
            for r in range(size):
                for c in range(size):
                    p = (r + 1) * w + c + 1
                    gp = policy_gamma(b, p, color, last, ko, t)
                    gam[k] = gp
                    if gp > 0.0:
                        code, cap, ext, sa, cont = light_levels(b, p, color, last)
                        lev[k, 0] = t.level[code]
                        lev[k, 1] = cap
                        lev[k, 2] = ext
                        lev[k, 3] = sa
                        lev[k, 4] = cont
                        total += gp
                    k += 1
            code, cap, ext, sa, cont = light_levels(b, mv, color, last)
            g.pattern[t.level[code]] += weight
            g.capture[cap] += weight
            g.extension[ext] += weight
            g.self_atari[sa] += weight
            g.contiguity[cont] += weight
            for j in range(n):
                if gam[j] > 0.0:
                    q = weight * gam[j] / total
                    g.pattern[lev[j, 0]] -= q
                    g.capture[lev[j, 1]] -= q
                    g.extension[lev[j, 2]] -= q
                    g.self_atari[lev[j, 3]] -= q
                    g.contiguity[lev[j, 4]] -= q
        play(b, mv, color)
        color = 3 - color


@njit(cache=True, nogil=True)
def balance_games(
    b: Board, color: int, games: Games, player: PatternPlayer, wins_out: np.ndarray, r: Reinforce
) -> None:
    """games.n pattern playouts from b (unchanged), color to move; wins_out[i] = 1.0 when
    BLACK wins game i, else 0.0. With r.weight != 0, (z - r.baseline) x r.weight x each
    game's score function is added into r.g. Game i is seeded seed_state(games.seed, i),
    as run_games seeds."""
    n, seed, max_moves, komi = games
    g, baseline, weight = r
    size = b.info[SIZE]
    scratch = copy_board(b)
    replay_b = copy_board(b)
    state = policy_state(player, b)
    owner = np.zeros(size * size, np.int8)
    seen = np.zeros(b.color.shape[0], np.bool_)
    region = np.empty(size * size, np.int64)
    moves = np.empty(max_moves, np.int32)
    rng = np.zeros(1, np.uint64)
    for i in range(n):
        restore_position(scratch, b)
        policy_reset(player, state)
        rng[0] = seed_state(seed, i)
        nm = policy_moves(player, state, scratch, color, rng, max_moves, moves)
        z = 1.0 if area_score_into(scratch, komi, owner, seen, region) > 0.0 else 0.0
        wins_out[i] = z
        if weight != 0.0 and z != baseline:
            restore_position(replay_b, b)
            w = (z - baseline) * weight
            add_score_function(replay_b, color, moves, min(nm, max_moves), player.tables, g, w)
