"""The uniform policy: every move drawn uniformly among the mover's playable points.

Terms:
- playable (for color): legal (simple ko applies, superko does not), not one of
  color's own eyes (gomove.board.scoring), and, with ``selfatari_max`` > 0, not a
  self-atari of more than that many stones (board.big_self_atari).
- uniform policy (``Uniform``): each move is drawn uniformly from the mover's
  playable points; with none the side passes. A game ends after two consecutive
  passes within the playout, or after max_moves moves.
- settle policy: ``Uniform(selfatari_max=limit)``, the uniform policy that never
  leaves more than ``limit`` stones in atari by its own move, which the territory
  labels play from a finished game (gomove.data.territory_labels): uniform playouts
  kill big live groups by self-atari and break every seki.
- empty lists: ``empties[:n_empty]`` lists the empty points of the board and
  ``epos[loc]`` is loc's index there (-1 for every other point); a draw keeps them
  as a permutation (``draw_empty``) and a move in step (``take_empty``), so a move
  costs no scan of the board. The rule policy (gomove.playout.rule) draws from them
  too.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from gomove.board.board import (
    EMPTY,
    SIZE,
    Board,
    W,
    adjacent_heads,
    big_self_atari,
    is_legal_arrays,
    play_arrays,
)
from gomove.board.coords import PASS
from gomove.board.scoring import eye_at
from gomove.playout.hooks import is_policy, policy_moves, policy_state
from gomove.playout.rng import random_below


@njit(cache=True, inline="always")
def playable(b: Board, loc: int, color: int, limit: int) -> bool:
    """May a drawn move go to the empty point loc: not one of color's eyes, legal (simple
    ko, no suicide), and, with limit > 0, not a big self-atari (board.big_self_atari)."""
    bc, head, _, libs, _, _, info, _, _ = b
    return (
        not eye_at(bc, info[W], loc, color)
        and is_legal_arrays(bc, head, libs, info, loc, color)
        and (limit <= 0 or not big_self_atari(b, loc, color, limit))
    )


@njit(cache=True, inline="always")
def list_empties(b: Board, empties: np.ndarray, epos: np.ndarray) -> int:
    """The empty points of b into empties (returned: how many), each one's index there
    into epos (-1 for every other point): the list the uniform draws keep."""
    size = b.info[SIZE]
    w = b.info[W]
    epos[:] = -1
    n_empty = np.int64(0)  # a literal 0 had uniform_moves compiled twice (11 s of CPU)
    for r in range(size):
        for c in range(size):
            loc = (r + 1) * w + c + 1
            if b.color[loc] == EMPTY:
                empties[n_empty] = loc
                epos[loc] = n_empty
                n_empty += 1
    return n_empty


@njit(cache=True, inline="always")
def draw_empty(
    b: Board, color: int, rng: np.ndarray, empties: np.ndarray, epos: np.ndarray,
    n_empty: int, limit: int,
) -> int:  # fmt: skip
    """A playable point drawn uniformly from empties[:n_empty], or PASS for none: drawn
    without replacement until one is playable; rejected points are swapped past the
    draw, so the list stays a permutation (epos kept with it)."""
    k = n_empty
    while k > 0:
        i = random_below(rng, k)
        cand = empties[i]
        if playable(b, cand, color, limit):
            return cand
        k -= 1
        other = empties[k]
        empties[i] = other
        epos[other] = i
        empties[k] = cand
        epos[cand] = k
    return PASS


@njit(cache=True, inline="always")
def take_empty(
    b: Board, move: int, color: int, empties: np.ndarray, epos: np.ndarray, n_empty: int
) -> int:
    """Keep the list in step with color's move (a point, before it is played): the move
    leaves it, the stones it captures (the opponent strings in atari next to it) join
    it; returns the new length."""
    bc, head, nxt, libs, _, _, info, _, _ = b
    i = epos[move]
    other = empties[n_empty - 1]
    empties[i] = other
    epos[other] = i
    epos[move] = -1
    n_empty -= 1
    for hh in adjacent_heads(bc, head, info[W], move, 3 - color):
        if hh != -1 and libs[hh] == 1:
            s = hh
            while True:
                empties[n_empty] = s
                epos[s] = n_empty
                n_empty += 1
                s = nxt[s]
                if s == hh:
                    break
    return n_empty


@njit(cache=True, inline="always")
def play_listed(
    b: Board, move: int, color: int, empties: np.ndarray, epos: np.ndarray, n_empty: int,
    moves_out: np.ndarray, n_moves: int,
) -> int:  # fmt: skip
    """Play color's drawn move (a point or PASS) on b with the empty list kept in step
    (take_empty), and record it as move n_moves in moves_out when there is room; returns
    the list's new length. The step every move loop that draws from the list ends with."""
    if move != PASS:
        n_empty = take_empty(b, move, color, empties, epos, n_empty)
    play_arrays(b, move, color)
    if n_moves < moves_out.shape[0]:
        moves_out[n_moves] = move
    return n_empty


@njit(cache=True, _nrt=False)
def uniform_moves(
    b: Board, color: int, rng: np.ndarray, max_moves: int, empties: np.ndarray,
    epos: np.ndarray, n_empty: int, moves_out: np.ndarray, limit: int = 0,
) -> int:  # fmt: skip
    """The move loop of playout, on the board's arrays.

    empties[:n_empty] lists the empty points, epos[loc] is loc's index there
    (list_empties, draw_empty, take_empty); limit > 0 also rejects a self-atari of more
    than limit stones (playable): the settle policy.
    Compiled without numba's reference counting, as gomove.playout.pattern's play_moves.
    """
    passes = 0
    n_moves = 0
    while n_moves < max_moves and passes < 2:
        move = draw_empty(b, color, rng, empties, epos, n_empty, limit)
        passes = passes + 1 if move == PASS else 0
        n_empty = play_listed(b, move, color, empties, epos, n_empty, moves_out, n_moves)
        n_moves += 1
        color = 3 - color
    return n_moves


@njit(cache=True)
def empty_lists(b: Board) -> tuple[np.ndarray, np.ndarray]:
    """Room for the empty points of b, as a list and by loc (list_empties fills them):
    the state of the policies that draw from them."""
    return np.empty(b.info[SIZE] * b.info[SIZE], np.int64), np.empty(b.color.shape[0], np.int64)


class Uniform(NamedTuple):
    """The uniform policy, and with selfatari_max > 0 the settle policy (module docstring)."""

    selfatari_max: int = 0  # a drawn move never leaves more stones in atari (0: any)

    PLAIN = True  # a class attribute, not a field (hooks.is_plain)


UNIFORM = Uniform()


def settle_policy(limit: int) -> Uniform:
    """The settle policy: uniform playouts without a self-atari of more than limit stones."""
    if limit < 0:
        raise ValueError(f"the settle policy's limit must be >= 0, not {limit}")
    return Uniform(int(limit))


@overload(policy_state, jit_options={"cache": True})
def _uniform_state(policy, b):
    if is_policy(policy, Uniform):

        def impl(policy, b):
            return empty_lists(b)

        return impl
    return None


@overload(policy_moves, jit_options={"cache": True})
def _uniform_moves(policy, state, b, color, rng, max_moves, moves_out):
    if is_policy(policy, Uniform):

        def impl(policy, state, b, color, rng, max_moves, moves_out):
            empties, epos = state
            n_empty = list_empties(b, empties, epos)
            return uniform_moves(
                b, color, rng, max_moves, empties, epos, n_empty, moves_out, policy.selfatari_max
            )

        return impl
    return None
