"""Rule playouts: MoGo's kind of light policy without patterns, half the cost of the
pattern policy's (gomove.playout.pattern) and as good a judge of who owns what.

The territory CRF reads a handful of playouts a position beside its static reading
(gomove.models.territory.features); uniform playouts kill groups that live and
pattern playouts cost 0.14 ms each on 19x19. These rules, in the spirit of Gelly et
al. 2006 ("MoGo": answer ataris, then play near the last move, else at random), gave
the owner's sign as often as the shipped pattern policy on 165 positions of the
validation month at each of moves 50, 150 and 200; a playout from move 150 takes
0.07 ms (docs/territory.md).

Terms:
- playable (for color): gomove.playout.uniform.playable with ``selfatari_max`` as its
  limit: legal (simple ko, no suicide), not one of color's own eyes, and not a
  self-atari of more than that many stones.
- a move, after an opponent move ``last`` on the board:
  1. an answer to it when there is one: capturing last's string when it is in
     atari, or extending one of the mover's strings next to last that is in atari
     by its liberty (when that leaves it more than one liberty); drawn uniformly
     among the legal answers;
  2. else, with probability ``near``, a playable point among the 8 around last,
     drawn uniformly;
  3. else (or when none is playable) a playable point drawn uniformly from the
     whole board, as the uniform policy draws (gomove.playout.uniform.draw_empty);
     with none the side passes.
- games end as uniform playouts do (two passes in a row, or max_moves).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from gomove.board.board import (
    EMPTY,
    LAST,
    Board,
    W,
    adjacent_heads,
    big_self_atari,
    first_liberty,
    is_legal_arrays,
)
from gomove.board.coords import PASS
from gomove.playout.hooks import is_policy, policy_moves, policy_state
from gomove.playout.rng import random_below, uniform01
from gomove.playout.uniform import draw_empty, empty_lists, list_empties, play_listed, playable


class RulePlayer(NamedTuple):
    """The rule policy for the playout driver (module docstring)."""

    selfatari_max: int  # a move never leaves a string of more stones than this in atari
    near: float  # the probability of a point around the last move when no answer

    PLAIN = True  # nothing kept in step with the board (hooks.is_plain)


RULES = RulePlayer(3, 1.0)  # chosen on the validation month (docs/territory.md)


def rule_player(selfatari_max: int = 3, near: float = 1.0) -> RulePlayer:
    """A RulePlayer, its arguments checked."""
    if selfatari_max < 1:
        raise ValueError(f"selfatari_max must be >= 1, not {selfatari_max}")
    if not 0.0 <= near <= 1.0:
        raise ValueError(f"near is a probability in [0, 1], not {near}")
    return RulePlayer(int(selfatari_max), float(near))


@njit(cache=True, inline="always")
def answers(b: Board, color: int, last: int, out: np.ndarray) -> int:
    """Rule 1's moves after the opponent's move last, into out; returns how many (a point
    may be listed twice, which weighs it twice)."""
    bc, head, nxt, libs, _, _, info, _, _ = b
    w = info[W]
    n = 0
    lh = head[last]
    if libs[lh] == 1:
        lib = first_liberty(bc, nxt, w, lh, -1)
        if is_legal_arrays(bc, head, libs, info, lib, color):
            out[n] = lib
            n += 1
    for h in adjacent_heads(bc, head, w, last, color):
        if h != -1 and libs[h] == 1:
            lib = first_liberty(bc, nxt, w, h, -1)
            if is_legal_arrays(bc, head, libs, info, lib, color) and not big_self_atari(
                b, lib, color, 1
            ):
                out[n] = lib
                n += 1
    return n


@njit(cache=True, inline="always")
def near_move(b: Board, color: int, last: int, limit: int, rng: np.ndarray, buf: np.ndarray) -> int:
    """Rule 2's move: a playable point around last drawn uniformly, or PASS for none.

    Drawn without replacement among the empty points around last until one is
    playable (each playable point is equally likely to come first), so only the
    points drawn are tested, not all 8.
    """
    bc = b.color
    w = b.info[W]
    k = 0
    for d in (-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1):
        p = last + d
        if bc[p] == EMPTY:
            buf[k] = p
            k += 1
    while k > 0:
        i = random_below(rng, k)
        p = buf[i]
        if playable(b, p, color, limit):
            return p
        k -= 1
        buf[i] = buf[k]
    return PASS


@njit(cache=True, _nrt=False)
def rule_moves(
    b: Board,
    color: int,
    rng: np.ndarray,
    max_moves: int,
    player: RulePlayer,
    empties: np.ndarray,
    epos: np.ndarray,
    n_empty: int,
    buf: np.ndarray,
    moves_out: np.ndarray,
) -> int:
    """The move loop of a rule game on b (module docstring); returns the moves played.

    empties[:n_empty] lists the empty points and epos[loc] is loc's index there (-1:
    none), as gomove.playout.uniform.list_empties makes them (draw_empty and take_empty
    keep them as the uniform playouts do, play_listed plays a move); buf: scratch for
    the candidates of rules 1 and 2 (at least 8 long).
    """
    limit, near = player
    bc = b.color
    info = b.info
    passes = 0
    n_moves = 0
    while n_moves < max_moves and passes < 2:
        move = PASS
        last = info[LAST]
        if last >= 0 and bc[last] == 3 - color:
            n = answers(b, color, last, buf)
            if n > 0:
                move = buf[random_below(rng, n)]
            elif near > 0.0 and (near >= 1.0 or uniform01(rng) < near):
                move = near_move(b, color, last, limit, rng, buf)
        if move == PASS:
            move = draw_empty(b, color, rng, empties, epos, n_empty, limit)
        passes = passes + 1 if move == PASS else 0
        n_empty = play_listed(b, move, color, empties, epos, n_empty, moves_out, n_moves)
        n_moves += 1
        color = 3 - color
    return n_moves


@overload(policy_state, jit_options={"cache": True})
def _rule_state(policy, b):
    if is_policy(policy, RulePlayer):

        def impl(policy, b):
            empties, epos = empty_lists(b)
            return empties, epos, np.empty(16, np.int64)  # and the candidates of rules 1, 2

        return impl
    return None


@overload(policy_moves, jit_options={"cache": True})
def _rule_moves(policy, state, b, color, rng, max_moves, moves_out):
    if is_policy(policy, RulePlayer):

        def impl(policy, state, b, color, rng, max_moves, moves_out):
            empties, epos, buf = state
            n_empty = list_empties(b, empties, epos)
            return rule_moves(
                b, color, rng, max_moves, policy, empties, epos, n_empty, buf, moves_out
            )

        return impl
    return None
