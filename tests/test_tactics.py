"""Tactical answers in the playouts (gomove.playout.pattern.tactics, ``SearchConfig.tactics``).

- the kernel's moves equal reference.tactical_moves, which plays every atari
  and answer out on a copy, on random positions of 7x7 and 9x9 games, with
  every kind of move met many times;
- hand-made positions: the two decisive ataris on a corner stone, none on a
  string that escapes, an escape from a decisive atari and none from an
  atari that is not, an escape to three liberties kept and one into a
  ladder left out, a capture that saves;
- a playout with tactics=1 answers every move by a tactical move when there
  is one (checked on a replay by the reference), plays only legal moves and
  keeps its incremental state right; tactics=0 changes nothing;
- the search passes the setting to its playouts, and bad settings are errors.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import reference as ref
from board_ascii import board_from, loc_of
from synthetic import check_replay, random_position, recorded_game

from gomove.board.board import (
    BLACK,
    KO,
    TO_MOVE,
    WHITE,
    Board,
    W,
    copy_board,
    new_board,
    play,
)
from gomove.board.coords import PASS
from gomove.play.search.search import Search
from gomove.play.search.settings import SearchConfig
from gomove.playout.pattern.tactics import tactical_moves
from gomove.playout.policy import PatternPolicy


def fast(b: Board, color: int, last: int) -> set[int]:
    out = np.zeros(b.color.shape[0], np.int64)
    n = tactical_moves(b, color, last, out)
    moves = out[:n].tolist()
    assert len(moves) == len(set(moves)), "a tactical move listed twice"
    return set(moves)


def slow(b: Board, color: int, last: int) -> set[int]:
    size = int(b.info[W]) - 2
    ko = int(b.info[KO]) if b.info[TO_MOVE] == color else -1
    return ref.tactical_moves(b.color, last, color, size, ko)


@pytest.mark.parametrize("size", [7, 9])
def test_tactical_moves_equal_the_reference(size):
    rnd = random.Random(size)
    found = {"capture": 0, "escape": 0, "decisive": 0}
    for _ in range(300):
        b, last, _, _ = random_position(rnd, size, rnd.randrange(10, 90))
        color = int(b.info[TO_MOVE])
        want = slow(b, color, last)
        assert fast(b, color, last) == want
        for x in want:
            attacks = [
                nb for nb in ref.adjacent(x, size)
                if b.color[nb] == 3 - color and ref.libs_of(b.color, nb, size) == 2
            ]  # fmt: skip
            if ref.captures_of(b.color, x, color, size):
                found["capture"] += 1
            else:
                found["decisive" if attacks else "escape"] += 1
    assert min(found.values()) >= 5, found


CORNER_STONE = """
. . . . .
. . . . .
. . . . .
. X . . .
O . . . .
"""

ESCAPES = """
. . . . . . .
. . . . . . .
. . . X . . .
. . X O . . .
. . . . . . .
. . . . . . .
. . . . . . .
"""


def test_decisive_ataris_on_a_corner_stone():
    b = board_from(CORNER_STONE)
    assert fast(b, BLACK, loc_of("A1", 5)) == {loc_of("A2", 5), loc_of("B1", 5)}


def test_no_decisive_atari_on_a_string_that_escapes():
    b = board_from(ESCAPES)  # white D4, liberties E4 and D3, escapes from both ataris
    last = loc_of("D4", 7)
    assert slow(b, BLACK, last) == set() == fast(b, BLACK, last)


def test_escape_only_from_a_decisive_atari():
    # black B1, two liberties after white's B2: white's C1 would be decisive, so black
    # escapes to C1 (three liberties; A1 would leave one)
    b = board_from("""
        . . . . .
        . . . . .
        . . . . .
        . O . . .
        . X . . .
    """)
    assert fast(b, BLACK, loc_of("B2", 5)) == {loc_of("C1", 5)}
    # black D4, two liberties after white's D5, escapes from both ataris: no answer
    b = board_from(ESCAPES.replace("X", "o").replace("O", "X").replace("o", "O"))
    assert fast(b, BLACK, loc_of("D5", 7)) == set() == slow(b, BLACK, loc_of("D5", 7))


def test_escapes_to_three_liberties_not_into_a_ladder():
    # black D4 in atari after white's E4 (last): D5 gives three liberties
    b = board_from("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . O X O . .
        . . . O . . .
        . . . . . . .
        . . . . . . .
    """)
    assert fast(b, BLACK, loc_of("E4", 7)) == {loc_of("D5", 7)}
    # black C3 in atari after white's D3 (last): C4 gives two liberties, a ladder
    b = board_from("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . O . . .
        . O X O . . .
        . . O . . . .
        . . . . . . .
    """)
    assert fast(b, BLACK, loc_of("D3", 7)) == set() == slow(b, BLACK, loc_of("D3", 7))


def test_a_capture_that_saves():
    # black C4 in atari after white's B4; white D4 next to it is in atari (D5): take
    # it, or extend to C3, which joins D3 for four liberties
    b = board_from("""
        . . . . . . .
        . . . . . . .
        . . O . . . .
        . O X O X . .
        . . . X . . .
        . . . . . . .
        . . . . . . .
    """)
    assert fast(b, BLACK, loc_of("B4", 7)) == {loc_of("D5", 7), loc_of("C3", 7)}


def tactical_game(start: Board, color: int, seed: int, tactics: float):
    policy = PatternPolicy.neutral()
    player = policy.player(check=True, tactics=tactics)
    moves, b = recorded_game(player, start, color, seed)
    assert int(player.errors[0]) == 0, "incremental gammas differ after tactical moves"
    check_replay(start, color, moves, b)
    return moves


@pytest.mark.parametrize("seed", range(4))
def test_playouts_answer_by_tactical_moves(seed):
    size = 9
    start = new_board(size)
    play(start, loc_of("E5", size), BLACK)
    moves = tactical_game(start, WHITE, seed, 1.0)
    r, color, prev, answered = copy_board(start), WHITE, loc_of("E5", size), 0
    for move in moves:
        want = slow(r, color, prev) if prev != PASS else set()
        if want:
            assert move in want
            answered += 1
        play(r, move, color)
        prev, color = move, 3 - color
    assert answered >= 5


def test_tactics_off_changes_nothing():
    start = new_board(7)
    policy = PatternPolicy.neutral()
    games = [
        recorded_game(p, start, BLACK, 5)[0] for p in (policy.player(), policy.player(tactics=0.0))
    ]
    assert games[0] == games[1]


def test_search_plays_with_tactics_and_checks_the_setting():
    s = Search(SearchConfig(pw=False, sims=64, tactics=1.0, resign=0), PatternPolicy.neutral())
    assert s.player.tactics == 1.0
    res = s.run(new_board(7), BLACK, 7.5)
    assert res.sims == 64
    with pytest.raises(ValueError, match="tactics"):
        SearchConfig(tactics=1.5).validate()
    with pytest.raises(ValueError, match="tactics"):
        SearchConfig(playouts="uniform", pw=False, tactics=0.5).validate()
    with pytest.raises(ValueError, match="tactics"):
        PatternPolicy.neutral().player(tactics=-0.1)
