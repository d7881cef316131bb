"""The pattern policy in the board's playout driver: its move loop and its three hooks.

Terms:
- PatternPlayer: the policy as the playout driver (gomove.playout.driver)
  takes it: the kernel tables, ``check`` (run check.check_gammas before every
  draw), ``errors`` (int64[1], where check counts mismatches), the last good
  ``replies``, ``tactics``, the probability of a tactical answer, and
  ``nakade``, the probability of playing the vital point of an eye space,
  ``local``, the probability of answering by a good shape next to the last two
  moves, and ``local_gamma``, the 3x3 gamma a good shape needs (pattern.local).
- its state (``policy_state``): the PatternState of the start position, plus
  a copy of its base gammas that ``policy_reset`` restores before each game.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from gomove.board.board import KO, LAST, LAST2, SIZE, Board, W, big_self_atari, play_arrays
from gomove.board.coords import PASS
from gomove.features.levels import last_move
from gomove.playout.hooks import is_policy, policy_moves, policy_play, policy_reset, policy_state
from gomove.playout.pattern.check import check_gammas
from gomove.playout.pattern.draw import (
    MAX_TRIES,
    acceptance,
    collect_hot,
    draw_exact,
    hot_gammas,
    propose,
    self_atari_scale,
)
from gomove.playout.pattern.local import local_move, open_gamma
from gomove.playout.pattern.nakade import nakade_move
from gomove.playout.pattern.replies import no_replies, playable_reply
from gomove.playout.pattern.state import (
    PatternState,
    copy_state,
    init_gammas,
    new_state,
    play_and_update,
)
from gomove.playout.pattern.tables import PolicyTables
from gomove.playout.pattern.tactics import tactical_moves
from gomove.playout.rng import random_below, uniform01


class PatternPlayer(NamedTuple):
    """A pattern policy for the playout driver (module docstring)."""

    tables: PolicyTables
    check: bool
    errors: np.ndarray  # int64[1]
    replies: np.ndarray  # int32[2, L] or [2, 0]: last good replies (pattern.replies)
    tactics: float  # the probability of answering by a tactical move (pattern.tactics)
    nakade: float  # the probability of playing an eye space's vital point (pattern.nakade)
    selfatari_max: int  # drawn moves leave at most this many stones in atari (0: any)
    local: float = 0.0  # the probability of a good-shape answer (pattern.local)
    local_gamma: float = 0.0  # the 3x3 gamma of a good shape (pattern.local)


def pattern_player(
    tables: PolicyTables,
    check: bool = False,
    replies: np.ndarray | None = None,
    tactics: float = 0.0,
    nakade: float = 0.0,
    selfatari_max: int = 0,
    local: float = 0.0,
    local_min: float = 4.0,
) -> PatternPlayer:
    """The PatternPlayer of tables for the playout driver, its arguments checked; the
    defaults play the policy's own draws and nothing else. With check, errors[0] counts
    the mismatches of the incremental state (gomove.playout.pattern.check); replies: a
    table of last good replies the playouts answer by (gomove.playout.pattern.replies;
    None: off); tactics: the probability of a tactical answer
    (gomove.playout.pattern.tactics); nakade: the probability of an eye space's vital
    point (gomove.playout.pattern.nakade); selfatari_max: a drawn move never leaves more
    stones in atari (0: no limit; gomove.board.board.big_self_atari); local: the
    probability of a good-shape answer next to the last two moves, a good shape's 3x3
    gamma at least local_min times the open point's (gomove.playout.pattern.local)."""
    for name, p in (("tactics", tactics), ("nakade", nakade), ("local", local)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} is a probability in [0, 1], not {p}")
    if selfatari_max < 0:
        raise ValueError(f"selfatari_max must be >= 0 (0: no limit), not {selfatari_max}")
    if not local_min >= 0:
        raise ValueError(f"local_min must be >= 0, not {local_min}")
    return PatternPlayer(
        tables,
        check,
        np.zeros(1, np.int64),
        no_replies() if replies is None else replies,
        float(tactics),
        float(nakade),
        int(selfatari_max),
        float(local),
        local_min * open_gamma(tables),
    )


@njit(cache=True, _nrt=False)
def play_moves(
    b: Board,
    color: int,
    rng: np.ndarray,
    max_moves: int,
    player: PatternPlayer,
    s: PatternState,
    moves_out: np.ndarray,
) -> int:
    """The move loop of a pattern-policy game of player on b, s holding b's base
    gammas; returns the number of moves played. A move answers the previous one by
    its playable last good reply when replies holds one, else, with probability
    tactics, by a tactical move when there is one, else, with probability nakade,
    by the vital point of the eye space next to it when there is one, else, with
    probability local, by a good shape next to it or to the move before
    (pattern.local) when there is one, else it is drawn (with selfatari_max,
    never a self-atari of more stones: gomove.board.board.big_self_atari).

    Compiled without numba's reference counting (it allocates nothing, and
    its caller holds every array): counting references at every read of a
    Board, table or state field cost five times the rest of the work.
    """
    t, check, errors, replies, tactics, nakade, selfatari_max, local, _ = player
    size = b.info[SIZE]
    w = b.info[W]
    bc, head, _, libs, _, _, info, _, _ = b
    sa_limit = np.int64(selfatari_max)
    rows = s.rows
    sa_max, sa_yes, sa_no = self_atari_scale(t)
    gen = s.gen[0]
    passes = 0
    n_moves = 0
    while n_moves < max_moves and passes < 2:
        ci = color - 1
        last = info[LAST]
        ko = info[KO]
        move = playable_reply(replies, bc, head, libs, info, w, color, last, info[LAST2])
        if move < 0 and tactics > 0.0 and (tactics >= 1.0 or uniform01(rng) < tactics):
            nt = tactical_moves(b, color, last, s.tact)
            if nt > 0:
                move = s.tact[random_below(rng, nt)]
        if move < 0 and nakade > 0.0 and (nakade >= 1.0 or uniform01(rng) < nakade):
            move = nakade_move(bc, head, libs, info, w, color, last, s.tact)
        if move < 0 and local > 0.0 and (local >= 1.0 or uniform01(rng) < local):
            move = local_move(b, color, last, info[LAST2], ko, player, s, rng)
        if move < 0:
            gen += 1
            lm = last_move(bc, head, libs, w, color, last)
            nh, ncont = collect_hot(b, color, last, ko, gen, lm.na, s, t)
            hot_total = hot_gammas(b, color, ko, nh, ncont, lm, s, t)
            if check:
                s.gen[0] = gen
                errors[0] += check_gammas(b, color, last, ko, t, s, nh, hot_total)
            base_total = 0.0
            for r in range(size):
                base_total += rows[ci, r]
            move = PASS
            drawn = False
            for _ in range(MAX_TRIES):
                move = propose(size, w, ci, s, nh, hot_total, base_total, rng)
                if move == PASS:
                    drawn = True
                    break
                acc = acceptance(b, move, color, gen, s, t, sa_yes, sa_no)
                if acc >= 1.0 or uniform01(rng) < acc:
                    if big_self_atari(b, move, color, sa_limit):
                        continue  # redrawn: the draw is over the other moves
                    drawn = True
                    break
            if not drawn:
                move = draw_exact(b, color, last, ko, t, rng, sa_limit)
        if move == PASS:
            passes += 1
            play_arrays(b, PASS, color)
        else:
            passes = 0
            play_and_update(b, move, color, s, t)
        if n_moves < moves_out.shape[0]:
            moves_out[n_moves] = move
        n_moves += 1
        color = 3 - color
    s.gen[0] = gen
    return n_moves


@overload(policy_state, jit_options={"cache": True})
def _pattern_state(policy, b):
    if is_policy(policy, PatternPlayer):

        def impl(policy, b):
            s = new_state(b)
            init_gammas(b, policy.tables, s)
            start = new_state(b)
            copy_state(start, s)
            return s, start

        return impl
    return None


@overload(policy_reset, jit_options={"cache": True})
def _pattern_reset(policy, state):
    if is_policy(policy, PatternPlayer):

        def impl(policy, state):
            s, start = state
            copy_state(s, start)

        return impl
    return None


@overload(policy_moves, jit_options={"cache": True})
def _pattern_moves(policy, state, b, color, rng, max_moves, moves_out):
    if is_policy(policy, PatternPlayer):

        def impl(policy, state, b, color, rng, max_moves, moves_out):
            s, _ = state
            return play_moves(b, color, rng, max_moves, policy, s, moves_out)

        return impl
    return None


@overload(policy_play, jit_options={"cache": True})
def _pattern_play(policy, state, b, loc, color):
    if is_policy(policy, PatternPlayer):

        def impl(policy, state, b, loc, color):
            s, _ = state
            if loc == PASS:
                play_arrays(b, PASS, color)
            else:
                play_and_update(b, loc, color, s, policy.tables)

        return impl
    return None
