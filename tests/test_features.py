"""Coulom's tactical features (Table 1) as gomove/features/tactical.py defines
them: one hand-made position per level of every group, the ladder reader on
classic ladders, and random 9x9 and 13x13 positions against the oracles in
tests/reference.py (a pure-Python ladder reader included).

Previous moves are played with ``play()`` on the diagram's board, so that
``info[LAST]``, ``info[LAST2]`` and ``info[KO]`` are the board's own; a diagram
with no move played has no previous move (``NO_MOVE``).
"""

from __future__ import annotations

import numpy as np
import pytest
import reference as ref
from board_ascii import board_from, loc_of, to_text
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import random_position

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
    legal_moves,
    new_board,
    play,
    setup_stone,
)
from gomove.board.coords import NO_MOVE, PASS, loc_to_gtp
from gomove.features.levels import CAPTURE_COL, EXTENSION_COL, PASS_COL, SELF_ATARI_COL
from gomove.features.tactical import (
    ATARI_COL,
    BORDER_COL,
    DIST_PREV2_COL,
    DIST_PREV_COL,
    N_TACTICAL,
    TACTICAL_GROUPS,
    TACTICAL_LEVELS,
    atari_is_ladder,
    coulom_distance,
    ladder_captured,
    new_reader,
    tactical_into,
    tactical_levels,
)

COLS = {
    "pass": PASS_COL,
    "capture": CAPTURE_COL,
    "extension": EXTENSION_COL,
    "self_atari": SELF_ATARI_COL,
    "atari": ATARI_COL,
    "border": BORDER_COL,
    "dist_prev": DIST_PREV_COL,
    "dist_prev2": DIST_PREV2_COL,
}

# --- helpers -----------------------------------------------------------------


def size_of(b: Board) -> int:
    return int(b.info[SIZE])


def levels(b: Board, color: int | None = None) -> dict[str, dict[str, int]]:
    """Every legal candidate of color (default: the side to move), pass included,
    as {GTP vertex or "pass": {group: level}}, from one tactical_levels call."""
    size = size_of(b)
    color = int(b.info[TO_MOVE]) if color is None else color
    cands = np.empty(size * size + 1, dtype=np.int64)
    n = legal_moves(b, color, False, cands)
    cands[n] = PASS
    n += 1
    memo = np.full(b.color.shape[0], -1, dtype=np.int64)
    out = np.full((n, N_TACTICAL), -7, dtype=np.int64)
    tactical_levels(b, color, cands, n, memo, out)
    return {
        loc_to_gtp(int(c), size): {g: int(out[i, col]) for g, col in COLS.items()}
        for i, c in enumerate(cands[:n])
    }


def move(b: Board, vertex: str, color: int) -> None:
    """Play a move on b through the board's own play() (a pass for "pass")."""
    play(b, PASS if vertex == "pass" else loc_of(vertex, size_of(b)), color)


def lower_left(text: str, size: int = 19) -> str:
    """A size x size diagram with text in its lower-left corner and the rest empty."""
    rows = [row.replace(" ", "") for row in text.strip().splitlines() if row.strip()]
    top = ["." * size] * (size - len(rows))
    return "\n".join(top + [row + "." * (size - len(row)) for row in rows])


def add_stones(b: Board, black: tuple[str, ...] = (), white: tuple[str, ...] = ()) -> Board:
    for vertices, color in ((black, BLACK), (white, WHITE)):
        for v in vertices:
            setup_stone(b, loc_of(v, size_of(b)), color)
    return b


# White D4 in atari (black C4 C5 D3 E4), its liberty D5. Extending there
# leaves two liberties (E5, D6); black D6, white E5, black F5, white E6, ...:
# the ladder runs up and to the right along the long diagonal to the top-right
# corner of the otherwise empty board.
LADDER = """
. . . . . .
. . . . . .
. . X . . .
. . X O X .
. . . X . .
. . . . . .
. . . . . .
"""
# a white stone on the ladder's diagonal: extending next to it escapes
BREAKER = "N13"


def ladder_board(to_move: int, breaker: bool = False) -> Board:
    b = board_from(lower_left(LADDER), to_move)
    return add_stones(b, white=(BREAKER,)) if breaker else b


# --- groups and names ---------------------------------------------------------


def test_columns_follow_the_group_order():
    """The column constants are the positions of the groups in TACTICAL_LEVELS,
    and each group has the number of levels of Coulom's Table 1 (pass 2,
    capture 5, extension 2, self-atari 1, atari 3, border 4, distances 16)."""
    assert [COLS[g] for g in TACTICAL_GROUPS] == list(range(N_TACTICAL))
    sizes = {g: len(v) for g, v in TACTICAL_LEVELS.items()}
    assert sizes == {
        "pass": 2,
        "capture": 5,
        "extension": 2,
        "self_atari": 1,
        "atari": 3,
        "border": 4,
        "dist_prev": 16,
        "dist_prev2": 16,
    }


# --- pass ----------------------------------------------------------------------


def test_pass_levels():
    """pass: 1 with no previous move and after a stone; 2 right after a pass;
    the pass candidate has no other group, and no stone candidate has pass."""
    b = new_board(9)
    assert levels(b)["pass"] == {g: 1 if g == "pass" else 0 for g in COLS}
    move(b, "E5", BLACK)
    assert levels(b)["pass"]["pass"] == 1
    move(b, "pass", WHITE)
    lv = levels(b)
    assert lv["pass"] == {g: 2 if g == "pass" else 0 for g in COLS}
    assert all(v["pass"] == 0 for k, v in lv.items() if k != "pass")
    move(b, "C3", BLACK)
    assert levels(b)["pass"]["pass"] == 1


# --- capture ---------------------------------------------------------------------


def test_capture_1_string_touching_a_new_atari():
    """White D4 puts black C3-C4 in atari; C6 captures white C5, which touches
    C3-C4: capture level 1. F5 captures G5, which touches no string in atari:
    level 4 (extending at F5 would give G5 three liberties). D3 saves the
    black string by extending and captures nothing."""
    b = board_from(
        """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . X . .
        . X O X . . O X .
        X O X . . . X . .
        . O X . . . . . .
        . . O . . . . . .
        . . . . . . . . .
        """,
        WHITE,
    )
    move(b, "D4", WHITE)
    lv = levels(b)
    assert lv["C6"]["capture"] == 1
    assert lv["F5"]["capture"] == 4
    assert lv["D3"]["capture"] == 0 and lv["D3"]["extension"] == 1
    assert {k for k, v in lv.items() if v["capture"]} == {"C6", "F5"}


def test_capture_2_recapture_of_the_previous_move():
    """White D4 is played into atari; D3 captures the stone just played:
    level 2 (it also touches that string, level 3, but 2 is lower)."""
    b = board_from(
        """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . X . . . . .
        . . X . X . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        """,
        WHITE,
    )
    move(b, "D4", WHITE)
    lv = levels(b)
    assert lv["D3"]["capture"] == 2
    assert {k for k, v in lv.items() if v["capture"]} == {"D3"}


def test_capture_3_prevents_connection_to_the_previous_move():
    """White F4 is in atari at E4; white plays D4 next to E4. Capturing F4 at
    E4 touches the string of the previous move: level 3, not the ladder levels."""
    b = board_from(
        """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . X . . .
        . . . . . O X . .
        . . . . . X . . .
        . . . . . . . . .
        . . . . . . . . .
        """,
        WHITE,
    )
    move(b, "D4", WHITE)
    lv = levels(b)
    assert lv["E4"]["capture"] == 3
    assert {k for k, v in lv.items() if v["capture"]} == {"E4"}


@pytest.mark.parametrize(("breaker", "level"), [(False, 5), (True, 4)])
def test_capture_4_5_string_in_a_ladder_or_not(breaker, level):
    """White D4 in atari, no previous move: capturing it at D5 is level 5 when
    white extending at D5 would be caught in the ladder, 4 when a white stone
    on the ladder's diagonal lets it escape."""
    b = ladder_board(BLACK, breaker)
    assert b.info[LAST] == NO_MOVE
    lv = levels(b)
    assert lv["D5"]["capture"] == level
    assert {k for k, v in lv.items() if v["capture"]} == {"D5"}


def test_capture_of_two_strings_takes_the_lowest_level():
    """E4 captures both white D4 (the previous move: level 2) and white F4
    (in atari since before: level 3 alone, as E4 touches the previous move's
    string): the capture takes level 2."""
    b = board_from(
        """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . X . X . . .
        . . X . . O X . .
        . . . X . X . . .
        . . . . . . . . .
        . . . . . . . . .
        """,
        WHITE,
    )
    move(b, "D4", WHITE)
    assert levels(b)["E4"]["capture"] == 2


# --- extension ---------------------------------------------------------------------


@pytest.mark.parametrize(("breaker", "level"), [(False, 2), (True, 1)])
def test_extension_new_atari_in_a_ladder_or_not(breaker, level):
    """The LADDER with colours swapped: white's previous move E4 puts black D4
    in atari; extending at D5 is level 2 when black is still caught in the
    ladder, 1 with a black ladder breaker; other moves are not extensions."""
    b = board_from(
        lower_left(
            """
            . . O . . .
            . . O X . .
            . . . O . .
            . . . . . .
            . . . . . .
            """
        ),
        WHITE,
    )
    if breaker:
        add_stones(b, black=(BREAKER,))
    move(b, "E4", WHITE)
    lv = levels(b)
    assert lv["D5"]["extension"] == level
    assert {k for k, v in lv.items() if v["extension"]} == {"D5"}


@pytest.mark.parametrize(("previous", "level"), [("H8", 0), ("E4", 1)])
def test_extension_only_for_a_new_atari(previous, level):
    """Black D4 in atari (liberty D3) after white's previous move: with E4 the
    atari touches the previous move and D3 is an extension (three liberties
    after it: level 1); with a far move H8 the atari is not new, no extension."""
    b = board_from(
        """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . O . . . . .
        . . O X . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        """,
        WHITE,
    )
    if previous == "H8":
        add_stones(b, white=("E4",))
    move(b, previous, WHITE)
    lv = levels(b)
    assert lv["D3"]["extension"] == level
    assert all(v["extension"] == 0 for k, v in lv.items() if k != "D3")


# --- self-atari ----------------------------------------------------------------------


def test_self_atari():
    """Black B3 (between white A3, C3, B4) and B8 (joining C8, in atari, to a
    string with the one liberty A8) are self-ataris; G4, which captures white
    F4 (a ko) and is left with one liberty, is not; nor is an open point."""
    b = board_from(
        """
        . O O . . . . . .
        . . X O . . . . .
        . O O . . . . . .
        . . . . . . . . .
        . . . . . X O . .
        . O . . X O . O .
        O . O . . X O . .
        . . . . . . . . .
        . . . . . . . . .
        """,
        BLACK,
    )
    lv = levels(b)
    assert lv["B3"]["self_atari"] == 1
    assert lv["B8"]["self_atari"] == 1
    assert lv["G4"]["capture"] > 0 and lv["G4"]["self_atari"] == 0
    assert lv["E7"]["self_atari"] == 0
    # and the first-line points next to two white stones
    assert {k for k, v in lv.items() if v["self_atari"]} == {"B3", "B8", "A4", "A9", "D9"}


# --- atari ------------------------------------------------------------------------------


def test_atari_1_ladder_and_3_other():
    """White D4 with two liberties (D5, E4): E4 is an atari that works as a
    ladder (level 1); D5 is an atari white escapes by extending (level 3)."""
    b = board_from(
        lower_left(
            """
            . . X . . .
            . . X O . .
            . . . X . .
            . . . . . .
            . . . . . .
            """
        ),
        BLACK,
    )
    lv = levels(b)
    assert lv["E4"]["atari"] == 1
    assert lv["D5"]["atari"] == 3
    assert {k for k, v in lv.items() if v["atari"]} == {"D5", "E4"}
    assert atari_is_ladder(b, loc_of("E4", 19), BLACK, loc_of("D4", 19))
    assert not atari_is_ladder(b, loc_of("D5", 19), BLACK, loc_of("D4", 19))


def test_atari_3_when_the_ladder_fails():
    """The same atari at E4 with a white ladder breaker on the diagonal is not
    a ladder: level 3."""
    b = board_from(
        lower_left(
            """
            . . X . . .
            . . X O . .
            . . . X . .
            . . . . . .
            . . . . . .
            """
        ),
        BLACK,
    )
    add_stones(b, white=(BREAKER,))
    lv = levels(b)
    assert lv["E4"]["atari"] == 3
    assert lv["D5"]["atari"] == 3


def test_atari_2_when_the_previous_move_took_a_ko():
    """White's previous move Q3 takes a ko (black P3): info[KO] is set, black
    may not retake at P3, and the non-ladder atari D5 is level 2; the ladder
    atari E4 keeps level 1 (the lower level wins)."""
    b = board_from(
        lower_left(
            """
            . . X . . . . . . . . . . . . . . . .
            . . X O . . . . . . . . . . O X . . .
            . . . X . . . . . . . . . O X . X . .
            . . . . . . . . . . . . . . O X . . .
            . . . . . . . . . . . . . . . . . . .
            """
        ),
        WHITE,
    )
    move(b, "Q3", WHITE)
    assert b.info[KO] == loc_of("P3", 19)
    lv = levels(b)
    assert "P3" not in lv
    assert lv["D5"]["atari"] == 2
    assert lv["E4"]["atari"] == 1


# --- border -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "vertex", "level"),
    [
        (9, "A1", 1),
        (9, "A5", 1),
        (9, "J9", 1),
        (9, "E1", 1),
        (9, "B5", 2),
        (9, "H3", 2),
        (9, "C3", 3),
        (9, "G5", 3),
        (9, "D5", 4),
        (9, "E5", 0),
        (19, "T10", 1),
        (19, "D16", 4),
        (19, "E5", 0),
        (19, "K10", 0),
    ],
)
def test_border(size, vertex, level):
    """border: the line of the point, 1 (edge) .. 4; absent from the 5th line on."""
    assert levels(new_board(size))[vertex]["border"] == level


# --- distance to the previous moves -------------------------------------------------


# K10 is the previous move, D16 the one before: (vertex, dx, dy, d, level)
NEAR_K10 = [
    ("L10", 1, 0, 2, 1),
    ("K9", 0, 1, 2, 1),
    ("L11", 1, 1, 3, 2),
    ("J9", 1, 1, 3, 2),
    ("K12", 0, 2, 4, 3),
    ("M11", 2, 1, 5, 4),
    ("N13", 3, 3, 9, 8),
    ("Q11", 6, 1, 13, 12),
    ("P15", 5, 5, 15, 14),
    ("K18", 0, 8, 16, 15),
    ("P16", 5, 6, 17, 16),
    ("T19", 9, 9, 27, 16),
]
NEAR_D16 = [
    ("D15", 0, 1, 2, 1),
    ("E17", 1, 1, 3, 2),
    ("C14", 1, 2, 5, 4),
    ("G13", 3, 3, 9, 8),
    ("D8", 0, 8, 16, 15),
    ("D3", 0, 13, 26, 16),
]


def test_distance_table_is_coulom_distance():
    """The tables below use d = dx + dy + max(dx, dy) and level d - 1 capped at 16."""
    for vertex, dx, dy, d, level in NEAR_K10 + NEAR_D16:
        assert dx + dy + max(dx, dy) == d, vertex
        assert level == min(d, 17) - 1, vertex
    a, c = loc_of("K10", 19), loc_of("P16", 19)
    assert coulom_distance(a, c, 21) == coulom_distance(c, a, 21) == 17


DISTANCE_CASES = [("dist_prev", v, level) for v, *_, level in NEAR_K10] + [
    ("dist_prev2", v, level) for v, *_, level in NEAR_D16
]


@pytest.mark.parametrize(("group", "vertex", "level"), DISTANCE_CASES)
def test_distance_levels(group, vertex, level):
    """After black D16 and white K10: dist_prev (to K10) and dist_prev2 (to
    D16) are d - 1 for d = 2..16 and 16 for d >= 17."""
    b = new_board(19)
    move(b, "D16", BLACK)
    move(b, "K10", WHITE)
    assert levels(b)[vertex][group] == level


def test_distances_absent_after_a_pass_or_no_move():
    """dist_prev is absent after a pass and dist_prev2 when the move before the
    previous was a pass; both are absent on a fresh board (no moves)."""
    b = new_board(19)
    assert all(v["dist_prev"] == v["dist_prev2"] == 0 for v in levels(b).values())
    move(b, "D16", BLACK)
    move(b, "pass", WHITE)
    lv = levels(b)
    assert all(v["dist_prev"] == 0 for v in lv.values())
    assert lv["D15"]["dist_prev2"] == 1
    move(b, "pass", BLACK)
    move(b, "K10", WHITE)
    lv = levels(b)
    assert b.info[LAST2] == PASS
    assert all(v["dist_prev2"] == 0 for v in lv.values())
    assert lv["L10"]["dist_prev"] == 1


def test_dist_prev2_on_the_point_of_a_captured_stone():
    """White D5 joins D4 in atari, black D6 captures both; white may play D5
    again: d = 0 to the move before the previous one, which shares level 1
    with adjacent points (never a negative level)."""
    b = board_from(
        """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . X . X . . . .
        . . X . X . . . .
        . . X O X . . . .
        . . . X . . . . .
        . . . . . . . . .
        . . . . . . . . .
        """,
        WHITE,
    )
    move(b, "D5", WHITE)
    move(b, "D6", BLACK)
    lv = levels(b)
    assert lv["D5"]["dist_prev2"] == 1
    assert lv["D4"]["dist_prev2"] == 1
    assert lv["D5"]["dist_prev"] == 1
    assert all(min(v.values()) >= 0 for v in lv.values())


# --- the ladder reader ------------------------------------------------------------------


def test_ladder_works_across_the_empty_board():
    """White D4, in atari with white to move, is caught: the ladder runs along
    the long diagonal to the top-right corner."""
    b = ladder_board(WHITE)
    assert ladder_captured(b, loc_of("D4", 19))


@pytest.mark.parametrize("breaker", ["N13", "M13", "O13", "Q16", "R17"])
def test_ladder_broken_by_a_breaker(breaker):
    """The same ladder with one white stone on or next to its path ahead fails."""
    b = add_stones(board_from(lower_left(LADDER), WHITE), white=(breaker,))
    assert not ladder_captured(b, loc_of("D4", 19))


def test_ladder_stone_behind_the_ladder_does_not_break_it():
    """A white stone behind the ladder (C3, touching the black D3 that keeps
    two liberties) changes nothing: still caught."""
    b = add_stones(board_from(lower_left(LADDER), WHITE), white=("C3",))
    assert ladder_captured(b, loc_of("D4", 19))


def test_ladder_escape_by_capturing_an_attacker():
    """With white C3 and E3, black D3 is itself in atari (liberty D2): white
    escapes the ladder by capturing it."""
    b = add_stones(board_from(lower_left(LADDER), WHITE), white=("C3", "E3"))
    assert ladder_captured(b, loc_of("D4", 19)) is False


def test_ladder_midway_from_any_stone():
    """Two steps into the ladder (white D5, black D6), white D4-D5 in atari is
    still caught, asked from either of its stones."""
    b = ladder_board(WHITE)
    play(b, loc_of("D5", 19), WHITE)
    play(b, loc_of("D6", 19), BLACK)
    assert ladder_captured(b, loc_of("D5", 19)) and ladder_captured(b, loc_of("D4", 19))


def test_ladder_on_9x9():
    """9x9: the LADDER shape in the lower-left corner runs to the top-right
    corner and works; a white stone on G7 ahead breaks it."""
    text = lower_left(LADDER, 9)
    b = board_from(text, WHITE)
    assert ladder_captured(b, loc_of("D4", 9))
    b = add_stones(board_from(text, WHITE), white=("G7",))
    assert not ladder_captured(b, loc_of("D4", 9))


def test_ladder_memo_is_filled_per_string():
    """tactical_levels records the ladder verdict of the strings it reads in
    ladder_memo at their heads (1 caught, 0 not) and leaves other points -1."""
    b = ladder_board(BLACK)
    cands = np.array([loc_of("D5", 19), PASS], dtype=np.int64)
    memo = np.full(b.color.shape[0], -1, dtype=np.int64)
    out = np.zeros((2, N_TACTICAL), dtype=np.int64)
    tactical_levels(b, BLACK, cands, 2, memo, out)
    head = int(b.head[loc_of("D4", 19)])
    assert memo[head] == 1
    assert np.count_nonzero(memo != -1) == 1
    assert out[0, CAPTURE_COL] == 5 and out[1, PASS_COL] == 1


@settings(max_examples=15, deadline=None)
@given(rnd=st.randoms(use_true_random=False), size=st.sampled_from([9, 13]))
def test_one_reader_for_a_whole_game(rnd, size):
    """tactical_into with one Reader kept over every position of a random game (its
    scratch boards and their mark generations reused, as a replay's visitor keeps it)
    gives the levels and the ladder memo of tactical_levels with a reader of its own
    (checked against the oracle below), for both colours."""
    b = new_board(size)
    reader = new_reader(b.color.shape[0])
    cands = np.zeros(size * size + 1, np.int64)
    for _ in range(rnd.randrange(40, 160)):
        color = int(b.info[TO_MOVE])
        for player in (color, 3 - color):
            n = legal_moves(b, player, False, cands)
            cands[n] = PASS
            memo = [np.full(b.color.shape[0], -1, np.int64) for _ in range(2)]
            out = [np.zeros((n + 1, N_TACTICAL), np.int64) for _ in range(2)]
            tactical_levels(b, player, cands, n + 1, memo[0], out[0])
            tactical_into(b, player, cands, n + 1, memo[1], reader, out[1])
            assert np.array_equal(out[0], out[1]) and np.array_equal(memo[0], memo[1])
        n = legal_moves(b, color, False, cands)
        play(b, PASS if n == 0 else int(cands[rnd.randrange(n)]), color)


# --- random positions against the oracle -------------------------------------------


def oracle_case(b: Board, last: int, ko: int):
    """(player, colours, the oracle's legal moves in loc order, kernel levels
    int64[n, 8] of those moves and then pass)."""
    size = size_of(b)
    player = int(b.info[TO_MOVE])
    color = b.color.tolist()
    legal = sorted(ref.legal_moves(color, player, size, ko))
    cands = np.array(legal + [PASS], dtype=np.int64)
    memo = np.full(b.color.shape[0], -1, dtype=np.int64)
    out = np.full((len(cands), N_TACTICAL), -7, dtype=np.int64)
    tactical_levels(b, player, cands, len(cands), memo, out)
    return player, color, legal, out


@settings(max_examples=40, deadline=None)
@given(rnd=st.randoms(use_true_random=False), n_moves=st.integers(0, 90))
def test_random_positions_against_oracle(rnd, n_moves):
    """For every legal move (the oracle's legal set, then pass) of the side to
    move in a random 9x9 game, the levels that need no ladder reading:
    border, dist_prev, dist_prev2, pass and self_atari equal the oracle's;
    capture is present iff the move captures, at the oracle's level 1..3, or
    4/5 where only a ladder decides; extension is present iff the move is the
    liberty of a string in a new atari; atari is present iff an adjacent
    string goes from two liberties to one, at level 1 (ladder) or 2 with a ko
    on the board, else 3; the pass candidate has only its pass level."""
    size = 9
    b, last, last2, ko = random_position(rnd, size, n_moves)
    assert (b.info[LAST], b.info[LAST2], b.info[KO]) == (last, last2, ko)
    player, color, legal, out = oracle_case(b, last, ko)
    want_pass = [0] * N_TACTICAL
    want_pass[PASS_COL] = ref.pass_level(last)
    assert out[-1].tolist() == want_pass
    for i, loc in enumerate(legal):
        got = dict(zip(COLS, out[i].tolist(), strict=True))
        where = f"{loc_to_gtp(loc, size)} for {player}\n{to_text(b)}"
        assert got["pass"] == 0, where
        assert got["border"] == ref.border_level(loc, size), where
        assert got["dist_prev"] == ref.distance_level(loc, last, size), where
        assert got["dist_prev2"] == ref.distance_level(loc, last2, size), where
        assert got["self_atari"] == int(ref.is_self_atari(color, loc, player, size)), where
        cap = ref.capture_level(color, loc, player, size, last, ladders=False)
        assert min(got["capture"], 4) == cap, where
        ext = ref.extension_level(color, loc, player, size, last, ladders=False)
        assert min(got["extension"], 1) == ext, where
        assert (got["extension"] > 0) == ref.is_extension(color, loc, player, size, last), where
        atari = ref.atari_level(color, loc, player, size, ko >= 0, ladders=False)
        assert got["atari"] in ({1, atari} if atari else {0}), where
        assert (got["atari"] > 0) == ref.is_atari(color, loc, player, size), where


@settings(max_examples=30, deadline=None)
@given(
    rnd=st.randoms(use_true_random=False),
    size=st.sampled_from([9, 13]),
    n_moves=st.integers(20, 120),
)
def test_random_positions_ladder_levels_against_oracle(rnd, size, n_moves):
    """With ladders read by the pure-Python reader (reference.ladder_caught):
    capture, extension and atari levels equal the oracle's exactly for every
    legal move; and ladder_captured equals ladder_caught for every string in
    atari of either colour, with its owner to move (ko ignored, as documented)."""
    b, last, _, ko = random_position(rnd, size, n_moves)
    player, color, legal, out = oracle_case(b, last, ko)
    for i, loc in enumerate(legal):
        where = f"{loc_to_gtp(loc, size)} for {player}\n{to_text(b)}"
        assert out[i, CAPTURE_COL] == ref.capture_level(color, loc, player, size, last), where
        assert out[i, EXTENSION_COL] == ref.extension_level(color, loc, player, size, last), where
        assert out[i, ATARI_COL] == ref.atari_level(color, loc, player, size, ko >= 0), where
    c = copy_board(b)
    c.info[KO] = -1
    for stones, libs in ref.strings(color, size):
        if len(libs) == 1:
            stone = min(stones)
            want = ref.ladder_caught(color, stone, size)
            assert ladder_captured(c, stone) == want, f"{loc_to_gtp(stone, size)}\n{to_text(b)}"
