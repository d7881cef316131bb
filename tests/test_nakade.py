"""Nakade in the playouts (gomove.playout.pattern.nakade, ``SearchConfig.nakade``).

- the kernel's move equals reference.nakade_point, which floods the region and
  looks its shape up among the dead shapes drawn in every rotation and
  reflection, for every stone of random 7x7 and 9x9 positions taken as the last
  move, with every dead shape met;
- hand-made eye spaces: each dead shape's vital point, and none for the
  square, straight and bent four, a space the player to move touches, a space
  of seven points and a last move next to two spaces;
- a playout with nakade=1 plays the vital point after every move that has
  one, plays only legal moves and keeps its incremental state right;
  nakade=0 changes nothing;
- the search passes the setting to its playouts, and bad settings are errors.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import reference as ref
from board_ascii import board_from, loc_of, to_text
from synthetic import check_replay, random_position, recorded_game

from gomove.board.board import BLACK, KO, TO_MOVE, WHITE, Board, W, copy_board, new_board, play
from gomove.board.coords import PASS, from_loc
from gomove.play.search.search import Search
from gomove.play.search.settings import SearchConfig
from gomove.playout.pattern.nakade import MAX_SPACE, nakade_move
from gomove.playout.policy import PatternPolicy


def fast(b: Board, color: int, last: int) -> int:
    area = np.zeros(MAX_SPACE, np.int64)
    return int(nakade_move(b.color, b.head, b.libs, b.info, int(b.info[W]), color, last, area))


def slow(b: Board, color: int, last: int) -> int:
    size = int(b.info[W]) - 2
    ko = int(b.info[KO]) if b.info[TO_MOVE] == color else -1
    return ref.nakade_point(b.color, last, color, size, ko)


def check_lasts(b: Board, color: int, lasts, size: int, found: dict[int, int]) -> None:
    """fast == slow after each of the opponent's stones in lasts taken as the last move;
    found counts the vital points by the size of their space."""
    for last in lasts:
        if b.color[last] != 3 - color:
            continue
        want = slow(b, color, last)
        assert fast(b, color, last) == want, (from_loc(last, size), want)
        if want >= 0:
            n = len(ref.region_at(b.color, want, size))
            found[n] = found.get(n, 0) + 1


@pytest.mark.parametrize("size", [7, 9])
def test_nakade_move_equals_the_reference(size):
    rnd = random.Random(size)
    found: dict[int, int] = {}
    for _ in range(400):
        b, _, _, _ = random_position(rnd, size, rnd.randrange(20, 160))
        check_lasts(b, int(b.info[TO_MOVE]), ref.board_points(size), size, found)
    assert found.get(3, 0) >= 10 and found.get(4, 0) >= 2, found


def next_to(cells: set[tuple[int, int]], size: int) -> set[tuple[int, int]]:
    """The on-board (row, col) points next to any of cells."""
    steps = ((0, 1), (1, 0), (0, -1), (-1, 0))
    return {
        (r + dr, c + dc)
        for r, c in cells
        for dr, dc in steps
        if 0 <= r + dr < size and 0 <= c + dc < size
    }


def walled_space(rnd: random.Random, size: int) -> tuple[Board, set[int]]:
    """A random connected space walled by white (one of 1-8 points grown at random, or
    a dead shape), the wall often two stones thick, sometimes with a black stone in
    it, other white and black stones scattered around."""
    grid = [[rnd.choice("..........XO") for _ in range(size)] for _ in range(size)]
    r0, c0 = rnd.randrange(size - 2), rnd.randrange(size - 2)
    if rnd.random() < 0.5:
        shape = rnd.choice(sorted(ref.DEAD_SHAPE_TABLE, key=sorted))
        cells = {(r0 + r, c0 + c) for r, c in shape}
    else:
        cells = {(r0, c0)}
        for _ in range(rnd.randrange(8)):
            r, c = rnd.choice(sorted(cells))
            dr, dc = rnd.choice(((0, 1), (1, 0), (0, -1), (-1, 0)))
            if 0 <= r + dr < size and 0 <= c + dc < size:
                cells.add((r + dr, c + dc))
    for r, c in cells:
        grid[r][c] = "."
    wall = next_to(cells, size) - cells
    ring = next_to(wall, size) - wall - cells
    for r, c in ring if rnd.random() < 0.7 else ():  # a thick wall: last touches the space only
        grid[r][c] = "O"
    for r, c in wall:
        grid[r][c] = "O"
    if rnd.random() < 0.2:
        r, c = rnd.choice(sorted(wall))
        grid[r][c] = "X"
    b = board_from("\n".join(" ".join(row) for row in grid), to_move=BLACK)
    return b, {loc_of(rc, size) for rc in wall}


def test_nakade_move_equals_the_reference_on_walled_spaces():
    rnd = random.Random(3)
    found: dict[int, int] = {}
    for _ in range(2000):
        size = rnd.choice((7, 9))
        try:
            b, wall = walled_space(rnd, size)
        except ValueError:  # a string without liberties
            continue
        check_lasts(b, BLACK, wall, size, found)
    assert set(found) == {3, 4, 5, 6} and min(found.values()) >= 10, found


# every space in the corner of white's wall: (rows, white's last move next to it, the
# vital point black plays)
SPACES = {
    "straight three": (["...", "OOO"], "B6", "B7"),
    "bent three": (["..O", ".OO"], "B6", "A7"),
    "pyramid four": (["...", "O.O"], "A6", "B7"),
    "bulky five": (["..O", "..O", ".OO"], "C6", "A6"),
    "cross five": (["O.O", "...", "O.O"], "A7", "B6"),
    "rabbity six": (["O.O", "...", "O.."], "A7", "B6"),
}


def corner_board(rows: list[str]) -> Board:
    """The rows in the top-left corner of a 7x7 board, walled by white around them."""
    grid = [["."] * 7 for _ in range(7)]
    for r, row in enumerate(rows):
        grid[r][: len(row)] = list(row)
    height, width = len(rows), max(len(row) for row in rows)
    for r in range(height + 1):
        for c in range(width + 1):
            if (r == height or c == width) and grid[r][c] == ".":
                grid[r][c] = "O"
    return board_from("\n".join(" ".join(row) for row in grid), to_move=BLACK)


@pytest.mark.parametrize("name", SPACES)
def test_the_vital_point_of_each_dead_shape(name):
    rows, last, vital = SPACES[name]
    b = corner_board(rows)
    last = loc_of(last, 7)
    assert fast(b, BLACK, last) == loc_of(vital, 7) == slow(b, BLACK, last)


@pytest.mark.parametrize(
    "rows",
    [
        ["..", ".."],  # square four: lives or dies without a vital point
        ["....", "OOOO"],  # straight four
        ["...", ".OO"],  # bent four
        ["....", "...O"],  # seven points
    ],
)
def test_no_vital_point(rows):
    b = corner_board(rows)
    for last in ref.board_points(7):
        if b.color[last] == WHITE:
            assert fast(b, BLACK, last) == -1 == slow(b, BLACK, last)


def test_no_nakade_in_a_space_the_player_touches_or_across_two_spaces():
    b = board_from("""
        . . . X . . .
        O O O O . . .
        O O O O . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    assert fast(b, BLACK, loc_of("B6", 7)) == -1 == slow(b, BLACK, loc_of("B6", 7))
    b.color[loc_of("D7", 7)] = WHITE  # the same space, white's alone: B7 kills
    b = board_from(to_text(b))
    assert fast(b, BLACK, loc_of("B6", 7)) == loc_of("B7", 7) == slow(b, BLACK, loc_of("B6", 7))
    b = board_from("""
        . . . O . . O
        O O O O . O O
        . . . . O . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    # D7 touches A7-C7 (three) and E7-F7 (three, with E6): two spaces, no answer
    assert fast(b, BLACK, loc_of("D7", 7)) == -1 == slow(b, BLACK, loc_of("D7", 7))
    assert fast(b, BLACK, loc_of("G7", 7)) == loc_of("E7", 7)  # F7 alone: the bent three
    b = board_from("""
        . . . O X . .
        . . . O X . .
        O O O O X . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    # six points, a rectangle: no vital point
    assert fast(b, BLACK, loc_of("D7", 7)) == -1 == slow(b, BLACK, loc_of("D7", 7))


def nakade_game(start: Board, color: int, seed: int, nakade: float):
    player = PatternPolicy.neutral().player(check=True, nakade=nakade)
    moves, b = recorded_game(player, start, color, seed)
    assert int(player.errors[0]) == 0, "incremental gammas differ after vital points"
    check_replay(start, color, moves, b)
    return moves


def vital_answers(seed: int) -> int:
    """A nakade=1 playout on 7x7: every move after one with a vital point is that
    point; returns how many there were."""
    size = 7
    start = new_board(size)
    play(start, loc_of("D4", size), BLACK)
    moves = nakade_game(start, WHITE, seed, 1.0)
    r, color, prev, answered = copy_board(start), WHITE, loc_of("D4", size), 0
    for move in moves:
        want = slow(r, color, prev) if prev != PASS else -1
        if want >= 0:
            assert move == want
            answered += 1
        play(r, move, color)
        prev, color = move, 3 - color
    return answered


def test_playouts_play_the_vital_point():
    assert sum(vital_answers(seed) for seed in range(30)) >= 3


def test_nakade_off_changes_nothing():
    start = new_board(7)
    policy = PatternPolicy.neutral()
    games = [
        recorded_game(p, start, BLACK, 5)[0] for p in (policy.player(), policy.player(nakade=0.0))
    ]
    assert games[0] == games[1]


def test_search_plays_with_nakade_and_checks_the_setting():
    s = Search(SearchConfig(pw=False, sims=64, nakade=1.0, resign=0), PatternPolicy.neutral())
    assert s.player.nakade == 1.0
    assert s.run(new_board(7), BLACK, 7.5).sims == 64
    with pytest.raises(ValueError, match="nakade"):
        SearchConfig(nakade=1.5).validate()
    with pytest.raises(ValueError, match="nakade"):
        SearchConfig(playouts="uniform", pw=False, nakade=0.5).validate()
    with pytest.raises(ValueError, match="nakade"):
        PatternPolicy.neutral().player(nakade=-0.1)
