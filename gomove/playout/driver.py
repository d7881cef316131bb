"""Playouts on the numba board, run to the end without Python: the one driver and uniform play.

Terms:
- rng: a ``uint64[1]`` xorshift64* state (Vigna 2016), owned by the caller, so
  a playout depends only on its position and its state and never on numpy's
  global generator. Game ``g`` of a ``run_games`` call with ``seed`` starts
  from ``seed_state(seed, g)``, the g-th splitmix64 output for that seed, so
  each game is reproducible on its own.
- playout driver: ``run_games(b, color, komi, n, seed, max_moves, policy,
  owner_counts)``, the one loop that plays n games from b and counts their
  owners (uniform playouts, the pattern policy's, the Monte-Carlo owner
  feature's). A policy is a NamedTuple whose type picks the implementation of
  three hooks: ``policy_state(policy, b)`` (working state for playouts from
  b, made once per call), ``policy_reset(policy, state)`` (before each game,
  the board being restored to b) and ``policy_moves(policy, state, b, color,
  rng, max_moves, moves_out)`` (the move loop; returns the moves played).
  ``Uniform`` is implemented here; layers above register their policies with
  ``numba.extending.overload`` (gomove.playout.pattern), so the board layer never
  imports them. A search adds ``policy_play(policy, state, b, loc, color)``:
  its tree moves, played with the state kept in step, before the playout.
  A policy that keeps nothing in step with the board sets ``PLAIN = True`` on its
  class and gets the driver's policy_reset and policy_play (``is_plain``).
- eye (of color): an empty point whose 4 neighbours are all color or WALL, and
  whose diagonal points hold at most 1 opponent stone in the middle of the
  board and none when a diagonal is WALL (edge or corner): the classic
  playout eye (Bruegmann 1993; Gelly et al. 2006, "MoGo").
- uniform policy: each move is drawn uniformly from the mover's legal moves
  that do not fill one of its own eyes (simple ko applies, superko does not);
  with no such move the side passes. A game ends after two consecutive passes
  within the playout, or after max_moves moves.
- area score: stones plus empty regions that touch stones of one colour only
  (Chinese / Tromp-Taylor: nothing is removed as dead), black minus white minus
  komi. owner per flat point: 1 black, 2 white, 0 neither (dame).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from gomove.board.board import (
    BLACK,
    EMPTY,
    SIZE,
    WALL,
    WHITE,
    Board,
    W,
    adjacent_heads,
    big_self_atari,
    copy_board,
    is_legal_arrays,
    neighbours,
    play,
    play_arrays,
)
from gomove.board.coords import PASS, to_loc

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_STAR = np.uint64(0x2545F4914F6CDD1D)


@njit(cache=True)
def seed_state(seed: int, game: int) -> np.uint64:
    """The splitmix64 output number ``game`` for ``seed``: a non-zero xorshift state."""
    z = np.uint64(seed) + np.uint64(game + 1) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    if z == np.uint64(0):
        z = _GOLDEN
    return z


def new_rng(seed: int, game: int = 0) -> np.ndarray:
    """A fresh rng state array (uint64[1]) for ``playout``."""
    return np.array([seed_state(np.uint64(seed % 2**64), game)], dtype=np.uint64)


@njit(cache=True)
def next_random(rng: np.ndarray) -> np.uint64:
    """xorshift64*: advance rng[0] and return 64 random bits."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return x * _STAR


_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, inline="always")
def uniform01(rng: np.ndarray) -> float:
    """A uniform float in [0, 1) from rng (53 random bits)."""
    return float(next_random(rng) >> np.uint64(11)) * _UNIT


@njit(cache=True)
def random_below(rng: np.ndarray, n: int) -> int:
    """A uniform integer in [0, n), n < 2**32 (Lemire's multiply-shift on 32 high bits)."""
    hi = next_random(rng) >> np.uint64(32)
    return int((hi * np.uint64(n)) >> np.uint64(32))


@njit(cache=True, inline="always")
def eye_at(bc, w: int, loc: int, color: int) -> bool:
    """is_eye on the board's colours (bc = b.color)."""
    if bc[loc] != EMPTY:
        return False
    for nb in (loc - w, loc - 1, loc + 1, loc + w):
        c = bc[nb]
        if c != color and c != WALL:
            return False
    opp = 3 - color
    n_opp = 0
    n_wall = 0
    for d in (loc - w - 1, loc - w + 1, loc + w - 1, loc + w + 1):
        c = bc[d]
        if c == opp:
            n_opp += 1
        elif c == WALL:
            n_wall += 1
    if n_wall > 0:
        return n_opp == 0
    return n_opp <= 1


@njit(cache=True)
def is_eye(b: Board, loc: int, color: int) -> bool:
    """Is the empty point loc an eye of color (see the module docstring)?"""
    return eye_at(b.color, b.info[W], loc, color)


@njit(cache=True)
def area_score(b: Board, komi: float, owner_out: np.ndarray) -> float:
    """Area score, black minus white minus komi; owner_out: int8[size*size] by flat point."""
    size = b.info[SIZE]
    seen = np.zeros(b.color.shape[0], np.bool_)
    region = np.empty(size * size, np.int64)
    return area_score_into(b, komi, owner_out, seen, region)


def judged_dead(b: Board, own: np.ndarray) -> np.ndarray:
    """bool[size * size] ([row, col] order): the stones of every string that own
    (P(black) - P(white) owning each point, float[size, size] in [row, col] order)
    gives to the other colour on average over the string's stones. A string lives or
    dies whole, so a map that is unsure at some of its stones still judges it once."""
    size = int(b.info[SIZE])
    locs = to_loc(*np.divmod(np.arange(size * size), size), size)
    colour = b.color[locs]
    sign = np.where(colour == BLACK, 1.0, np.where(colour == WHITE, -1.0, 0.0))
    stone = sign != 0
    heads = b.head[locs]
    kept = sign * np.asarray(own, np.float64).reshape(-1)
    sums = np.bincount(heads[stone], weights=kept[stone], minlength=b.color.shape[0])
    return stone & (sums[heads] < 0)


def area_score_judged(b: Board, komi: float, own: np.ndarray) -> float:
    """area_score after removing the strings that own (judged_dead) gives to the other
    colour: the dead stones a referee removes before counting."""
    return area_score_without(b, komi, judged_dead(b, own))


def area_score_without(b: Board, komi: float, dead: np.ndarray) -> float:
    """area_score after removing the stones dead (bool[size * size], [row, col] order)."""
    size = int(b.info[SIZE])
    locs = to_loc(*np.divmod(np.arange(size * size), size), size)
    judged = copy_board(b)
    judged.color[locs[np.asarray(dead, bool).reshape(-1)]] = EMPTY
    return float(area_score(judged, komi, np.zeros(size * size, np.int8)))


@njit(cache=True)
def area_score_into(
    b: Board, komi: float, owner_out: np.ndarray, seen: np.ndarray, region: np.ndarray
) -> float:
    """area_score with its scratch given: seen bool[L], region int64[size*size] (the driver
    allocates them once per call, not once per game)."""
    size = b.info[SIZE]
    w = b.info[W]
    seen[:] = False
    black = 0
    white = 0
    for r in range(size):
        for c in range(size):
            loc = (r + 1) * w + c + 1
            col = b.color[loc]
            if col == BLACK:
                owner_out[r * size + c] = BLACK
                black += 1
            elif col == WHITE:
                owner_out[r * size + c] = WHITE
                white += 1
            elif not seen[loc]:
                # flood fill the empty region through loc, noting the colours it touches
                seen[loc] = True
                region[0] = loc
                n = 1
                i = 0
                touches_black = False
                touches_white = False
                while i < n:
                    p = region[i]
                    i += 1
                    for nb in neighbours(b, p):
                        cn = b.color[nb]
                        if cn == EMPTY:
                            if not seen[nb]:
                                seen[nb] = True
                                region[n] = nb
                                n += 1
                        elif cn == BLACK:
                            touches_black = True
                        elif cn == WHITE:
                            touches_white = True
                owner = EMPTY
                if touches_black and not touches_white:
                    owner = BLACK
                    black += n
                elif touches_white and not touches_black:
                    owner = WHITE
                    white += n
                for j in range(n):
                    p = region[j]
                    owner_out[(p // w - 1) * size + p % w - 1] = owner
    return black - white - komi


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
    n_empty = 0
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


@njit(cache=True, _nrt=False)
def uniform_moves(
    b: Board, color: int, rng: np.ndarray, max_moves: int, empties: np.ndarray,
    epos: np.ndarray, n_empty: int, moves_out: np.ndarray, limit: int = 0,
) -> int:  # fmt: skip
    """The move loop of playout, on the board's arrays.

    empties[:n_empty] lists the empty points, epos[loc] is loc's index there
    (list_empties, draw_empty, take_empty); limit > 0 also rejects a self-atari of more
    than limit stones (playable), as the territory labels' settle playouts do.
    Compiled without numba's reference counting, as gomove.playout.pattern's play_moves.
    """
    passes = 0
    n_moves = 0
    while n_moves < max_moves and passes < 2:
        move = draw_empty(b, color, rng, empties, epos, n_empty, limit)
        if move == PASS:
            passes += 1
        else:
            passes = 0
            n_empty = take_empty(b, move, color, empties, epos, n_empty)
        play_arrays(b, move, color)
        if n_moves < moves_out.shape[0]:
            moves_out[n_moves] = move
        n_moves += 1
        color = 3 - color
    return n_moves


# ---- the playout driver and its hooks ---------------------------------------------------


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
    """For overloads of the hooks: is this numba type a policy NamedTuple whose class sets
    ``PLAIN = True``? Such a policy keeps nothing in step with the board: its state
    needs no reset before a game (its policy_moves lists what it needs from the board it
    is given), and a tree move is the board's plain move. The driver's overloads of
    policy_reset and policy_play below serve every such policy."""
    return isinstance(policy, types.BaseNamedTuple) and getattr(
        policy.instance_class, "PLAIN", False
    )


@njit(cache=True)
def empty_lists(b: Board) -> tuple[np.ndarray, np.ndarray]:
    """Room for the empty points of b, as a list and by loc (list_empties fills them):
    the state of the policies that draw from them."""
    return np.empty(b.info[SIZE] * b.info[SIZE], np.int64), np.empty(b.color.shape[0], np.int64)


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


class Uniform(NamedTuple):
    """The uniform policy (module docstring)."""

    PLAIN = True  # a class attribute, not a field (is_plain)


UNIFORM = Uniform()


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
            return uniform_moves(b, color, rng, max_moves, empties, epos, n_empty, moves_out)

        return impl
    return None


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
def restore_position(dst: Board, src: Board) -> None:
    """restore_board without the superko history: playouts never read it (and only write
    past src's, so dst's stays src's), and at 8 KB it costs more than the rest."""
    dst.color[:] = src.color
    dst.head[:] = src.head
    dst.nxt[:] = src.nxt
    dst.libs[:] = src.libs
    dst.nstones[:] = src.nstones
    dst.mark[:] = src.mark
    dst.info[:] = src.info
    dst.zhash[:] = src.zhash


@njit(cache=True)
def restore_board(dst: Board, src: Board) -> None:
    """Copy src's whole state into dst (same shapes) without allocating."""
    restore_position(dst, src)
    dst.hist[:] = src.hist


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


@njit(cache=True)
def default_max_moves(size: int) -> int:
    """A game's move limit when the caller gives none (compiled: numba callers use it too)."""
    return 3 * size * size


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
