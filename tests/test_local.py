"""Good-shape answers in the playouts (gomove.playout.pattern.local, ``SearchConfig.local``).

- local_candidates equals a reference by the definitions (the empty points
  8-adjacent to the last move and, when not 8-adjacent to it, to the move
  before; not the ko point; legal and not an own eye; the policy file's 3x3
  gamma of the point's code at least the threshold) on random 9x9 positions,
  random policies and thresholds;
- local_move draws them in proportion to policy_gamma (chi-square, fixed
  seed), and answers -1 exactly when there are none;
- the open point's code is OPEN_CODE, and local_min counts in its gamma;
- a playout with local=1 answers every move that has a good shape by one
  (neither tactics, nakade nor replies on), plays only legal moves and keeps
  its incremental state right; local=0 changes nothing;
- the search passes the settings to its playouts; bad settings are errors.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import reference as ref
from board_ascii import board_from, loc_of
from synthetic import check_replay, random_policy, random_position, recorded_game
from test_pattern_playout import chi_square_p

from gomove.board.board import (
    BLACK,
    KO,
    LAST,
    LAST2,
    SIZE,
    TO_MOVE,
    WHITE,
    Board,
    copy_board,
    new_board,
    play,
)
from gomove.board.coords import PASS
from gomove.features.light import light_code
from gomove.play.search.search import Search
from gomove.play.search.settings import SearchConfig
from gomove.playout.pattern.draw import policy_gamma
from gomove.playout.pattern.local import OPEN_CODE, local_candidates, local_move, open_gamma
from gomove.playout.pattern.state import init_gammas, new_state
from gomove.playout.policy import PatternPolicy


def slow(b: Board, color: int, last: int, last2: int, ko: int, policy, min_gamma) -> set[int]:
    """The good-shape local points by the module docstring's definitions."""
    size = int(b.info[SIZE])
    if last < 0:  # a pass (or no move yet) is not answered
        return set()
    near = set()
    for p in ref.board_points(size):
        if ref.contiguous(p, last, size) or (
            ref.contiguous(p, last2, size) and not ref.contiguous(p, last, size)
        ):
            near.add(p)
    return {
        p
        for p in near
        if b.color[p] == 0
        and p != ko
        and ref.is_legal(b.color, p, color, size)
        and not ref.oracle_is_eye(b.color, p, color, size)
        and policy.pattern[ref.light_code(b.color, p, color, size)] >= min_gamma
    }


def fast(b: Board, color: int, last: int, last2: int, ko: int, policy, min_gamma) -> set[int]:
    s = new_state(b)
    init_gammas(b, policy.tables(), s)
    n = local_candidates(b, color, last, last2, ko, policy.tables(), s, min_gamma)
    found = s.tact[:n].tolist()
    assert len(found) == len(set(found)), "a point listed twice"
    return set(found)


def test_candidates_equal_the_reference():
    rnd = random.Random(3)
    checked = nonempty = 0
    for i in range(60):
        policy = random_policy(i % 3)
        b, last, last2, ko = random_position(rnd, 9, rnd.randrange(10, 70))
        color = int(b.info[TO_MOVE])
        for min_gamma in (0.0, 0.5, 1.0, 4.0):
            want = slow(b, color, last, last2, ko, policy, min_gamma)
            assert fast(b, color, last, last2, ko, policy, min_gamma) == want
            checked += 1
            nonempty += bool(want)
    assert nonempty > checked // 2


def test_open_point_code_and_the_threshold_unit():
    b = new_board(9)
    assert light_code(b, loc_of("E5", 9), BLACK) == OPEN_CODE
    policy = random_policy(1)
    assert open_gamma(policy.tables()) == policy.pattern[OPEN_CODE]
    player = policy.player(local=1.0, local_min=2.5)
    assert player.local == 1.0
    assert player.local_gamma == pytest.approx(2.5 * policy.pattern[OPEN_CODE])


def test_draw_follows_the_playout_gammas():
    """local_move's answers on a 7x7 position after white's E4: only the good
    shapes, each in proportion to its policy_gamma (chi-square, p > 0.001)."""
    b = board_from("""
        . . . . . . .
        . . X O . . .
        . . . O O . .
        . X . X . O .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """, BLACK)  # fmt: skip
    play(b, loc_of("C5", 7), BLACK)
    play(b, loc_of("E4", 7), WHITE)
    policy = random_policy(2)
    t = policy.tables()
    last, last2, ko = int(b.info[LAST]), int(b.info[LAST2]), int(b.info[KO])
    min_gamma = 0.5 * open_gamma(t)
    good = sorted(slow(b, BLACK, last, last2, ko, policy, min_gamma))
    assert len(good) == 4 and len(slow(b, BLACK, last, last2, ko, policy, 0.0)) == 7
    weight = np.array([policy_gamma(b, p, BLACK, last, ko, t) for p in good])
    s = new_state(b)
    init_gammas(b, t, s)
    player = policy.player(local=1.0)._replace(local_gamma=min_gamma)
    n = 20_000
    rng = np.array([12345], np.uint64)
    hits = {p: 0 for p in good}
    for _ in range(n):
        move = local_move(b, BLACK, last, last2, ko, player, s, rng)
        assert move in hits
        hits[move] += 1
    observed = np.array([hits[p] for p in good])
    assert chi_square_p(observed, n * weight / weight.sum()) > 1e-3
    # a threshold no shape reaches: no answer
    never = player._replace(local_gamma=1e300)
    assert local_move(b, BLACK, last, last2, ko, never, s, rng) == -1


def answered_game(policy: PatternPolicy, start: Board, color: int, seed: int, local_min: float):
    """A checked local=1 playout; every move after one with a good shape is one."""
    player = policy.player(check=True, local=1.0, local_min=local_min)
    moves, final = recorded_game(player, start, color, seed)
    assert int(player.errors[0]) == 0, "incremental gammas differ after good-shape answers"
    check_replay(start, color, moves, final)
    b, answered = copy_board(start), 0
    for move in moves:
        last, last2, ko = int(b.info[LAST]), int(b.info[LAST2]), int(b.info[KO])
        good = slow(b, color, last, last2, ko, policy, player.local_gamma)
        weighed = {p for p in good if policy_gamma(b, p, color, last, ko, policy.tables()) > 0}
        if weighed:
            assert move in weighed, (move, sorted(weighed))
            answered += 1
        play(b, move, color)
        color = 3 - color
    return answered, len(moves)


def test_playouts_answer_by_good_shapes():
    answered = [answered_game(random_policy(s), new_board(9), BLACK, s, 1.0) for s in range(4)]
    assert sum(a for a, _ in answered) > sum(n for _, n in answered) // 4


def test_local_off_changes_nothing():
    start = new_board(9)
    policy = random_policy(2)
    games = [
        recorded_game(p, start, BLACK, 5)[0]
        for p in (policy.player(), policy.player(local=0.0, local_min=1.0))
    ]
    assert games[0] == games[1]
    assert PASS not in games[0][:10]


def test_search_plays_with_local_and_checks_the_settings():
    s = Search(
        SearchConfig(pw=False, sims=64, local=1.0, local_min=2.0, resign=0),
        PatternPolicy.neutral(),
    )
    assert s.player.local == 1.0 and s.player.local_gamma == 2.0
    assert s.run(new_board(7), BLACK, 7.5).sims == 64
    with pytest.raises(ValueError, match="local"):
        SearchConfig(local=1.5).validate()
    with pytest.raises(ValueError, match="local"):
        SearchConfig(playouts="uniform", pw=False, local=0.5).validate()
    with pytest.raises(ValueError, match="local_min"):
        SearchConfig(local_min=-1).validate()
    with pytest.raises(ValueError, match="local"):
        PatternPolicy.neutral().player(local=-0.1)
