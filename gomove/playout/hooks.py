"""The playout policy interface: four numba hooks that a policy's NamedTuple type picks.

Terms:
- policy: a NamedTuple whose type picks the implementation of the hooks, each
  registered with ``numba.extending.overload`` in the policy's own module
  (gomove.playout.uniform, .rule, .pattern), so the driver (gomove.playout.driver)
  never names a policy:
  - ``policy_state(policy, b)``: the working state of playouts from b, made once
    per run of playouts;
  - ``policy_reset(policy, state)``: before each game, the board being restored
    to b;
  - ``policy_moves(policy, state, b, color, rng, max_moves, moves_out)``: the move
    loop; returns the moves played;
  - ``policy_play(policy, state, b, loc, color)``: a search's tree move, played
    with the state kept in step, before the playout.
- plain policy: one whose class sets ``PLAIN = True``: it keeps nothing in step
  with the board, its state needs no reset before a game (its policy_moves lists
  what it needs from the board it is given), and a tree move is the board's plain
  move. The overloads of policy_reset and policy_play below serve every such
  policy (``is_plain``).
"""

from __future__ import annotations

from numba import types
from numba.extending import overload

from gomove.board.board import play


def policy_state(policy, b):
    """Hook: the working state of playouts from b (module docstring); numba only."""
    raise NotImplementedError("policy_state is a numba hook: overload it for the policy's type")


def policy_reset(policy, state):
    """Hook: make state ready for a new game from the driver's start position; numba only."""
    raise NotImplementedError("policy_reset is a numba hook: overload it for the policy's type")


def policy_moves(policy, state, b, color, rng, max_moves, moves_out):
    """Hook: play a game on b to its end; returns the moves played; numba only."""
    raise NotImplementedError("policy_moves is a numba hook: overload it for the policy's type")


def policy_play(policy, state, b, loc, color):
    """Hook: play the legal move loc (or PASS) for color on b, keeping state in step with b
    (a search's tree moves before its playout); numba only."""
    raise NotImplementedError("policy_play is a numba hook: overload it for the policy's type")


def is_policy(policy, cls: type) -> bool:
    """For overloads of the hooks: is this numba type the NamedTuple class cls?"""
    return isinstance(policy, types.BaseNamedTuple) and policy.instance_class is cls


def is_plain(policy) -> bool:
    """For overloads of the hooks: is this numba type a plain policy (module docstring)?"""
    return isinstance(policy, types.BaseNamedTuple) and getattr(
        policy.instance_class, "PLAIN", False
    )


@overload(policy_reset, jit_options={"cache": True})
def _plain_reset(policy, state):
    if is_plain(policy):

        def impl(policy, state):
            pass  # policy_moves lists the empty points of the board it is given

        return impl
    return None


@overload(policy_play, jit_options={"cache": True})
def _plain_play(policy, state, b, loc, color):
    if is_plain(policy):

        def impl(policy, state, b, loc, color):
            play(b, loc, color)

        return impl
    return None
