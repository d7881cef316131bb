"""Rules of the numba board on hand-made ASCII positions, and property tests on
random legal games, all checked against the oracles in tests/reference.py."""

from __future__ import annotations

import numpy as np
import pytest
import reference as ref
from board_ascii import board_from, loc_of, parse, to_text, to_text_grid
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import random_game

from gomove.board.board import (
    BLACK,
    EMPTY,
    KO,
    KO_CAPTURED,
    NHIST,
    SIZE,
    TO_MOVE,
    WALL,
    WHITE,
    Board,
    board_from_points,
    captures_of,
    copy_board,
    count_libs,
    hash_after,
    history_set,
    in_history_set,
    is_legal,
    is_superko,
    legal_moves,
    libs_after,
    new_board,
    play,
    signed_points,
    string_libs,
)
from gomove.board.coords import PASS, loc_to_gtp, to_loc
from gomove.board.replay import Rules, replay

# --- helpers -----------------------------------------------------------------


def size_of(b: Board) -> int:
    return int(b.info[SIZE])


def assert_consistent(b: Board) -> None:
    """The Board's incremental state equals recomputation from its colours.

    Invariants: the padding ring is WALL; for every string (flood fill), all
    its stones share one head that is itself a stone of the string; ``nxt``
    from the head walks exactly the string and returns to the head;
    ``nstones[head]`` and ``libs[head]`` are its size and liberty count, and
    ``count_libs``/``string_libs`` agree; ``zhash[0]`` is the Zobrist hash
    recomputed from scratch and the last ``hist`` entry.
    """
    size = size_of(b)
    on_board = set(ref.board_points(size))
    for loc in range(b.color.shape[0]):
        if loc not in on_board:
            assert b.color[loc] == WALL, f"padding loc {loc} is not WALL"
    for stones, libs in ref.strings(b.color, size):
        where = f"string at {sorted(loc_to_gtp(s, size) for s in stones)}\n{to_text(b)}"
        heads = {int(b.head[s]) for s in stones}
        assert len(heads) == 1, f"several heads {heads} for {where}"
        h = heads.pop()
        assert h in stones, f"head {h} outside {where}"
        walk = [h]
        s = int(b.nxt[h])
        while s != h and len(walk) <= len(stones):
            walk.append(s)
            s = int(b.nxt[s])
        assert s == h and set(walk) == stones and len(walk) == len(stones), f"nxt for {where}"
        assert b.nstones[h] == len(stones), f"nstones for {where}"
        assert b.libs[h] == len(libs), f"libs {b.libs[h]} != {len(libs)} for {where}"
        assert count_libs(b, h) == len(libs), f"count_libs for {where}"
        out = np.zeros(4 * len(stones) + 4, np.int32)
        n = string_libs(b, h, out)
        assert set(out[:n].tolist()) == libs, f"string_libs for {where}"
    assert int(b.zhash[0]) == ref.zobrist_hash(b.color, size), "zhash"
    k = int(b.info[NHIST])
    if k <= b.hist.shape[0]:
        assert b.hist[k - 1] == b.zhash[0], "hist does not end with the current hash"


def same_diagram(a: str, b: str) -> bool:
    return to_text_grid(parse(a)) == to_text_grid(parse(b))


def play_gtp(b: Board, coord: str, color: int) -> int:
    """Play a move given as "D4" after checking it is legal; return the captures."""
    loc = loc_of(coord, size_of(b))
    assert is_legal(b, loc, color), f"{coord} should be legal\n{to_text(b)}"
    return play(b, loc, color)


def check_move(before: str, coord: str, color: int, after: str, captured: int) -> Board:
    """Play one move on a diagram: the result, the capture count and the
    incremental state must all be right; the oracle must agree."""
    b = board_from(before, to_move=color)
    size = size_of(b)
    loc = loc_of(coord, size)
    want_color, want_captured = ref.after_move(b.color, loc, color, size)
    h = hash_after(b, loc, color)
    assert captures_of(b, loc, color) == captured == len(want_captured)
    assert play_gtp(b, coord, color) == captured
    assert same_diagram(to_text(b), after), to_text(b)
    assert b.color.tolist() == want_color
    assert b.zhash[0] == h
    assert b.info[TO_MOVE] == 3 - color
    assert_consistent(b)
    return b


def oracle_legal(b: Board, color: int) -> set[int]:
    ko = int(b.info[KO]) if color == b.info[TO_MOVE] else -1
    return ref.legal_moves(b.color, color, size_of(b), ko)


def numba_legal(b: Board, color: int, superko: bool = False) -> set[int]:
    out = np.zeros(b.color.shape[0], np.int64)
    n = legal_moves(b, color, superko, out)
    return set(out[:n].tolist())


# --- ASCII helpers and board sizes ------------------------------------------


def test_board_from_orientation_and_round_trip():
    """The top diagram row is the highest sgfmill row; board_from/to_text invert;
    loc_of reads GTP vertices and sgfmill (row, col); setup is recorded in hist[0]."""
    text = """
        X . . . .
        . . . . .
        . . O . .
        . . . . .
        . . . . X
    """
    b = board_from(text, to_move=WHITE)
    assert same_diagram(to_text(b), text)
    assert b.color[loc_of("A5", 5)] == BLACK
    assert b.color[loc_of((4, 0), 5)] == BLACK
    assert b.color[loc_of("E1", 5)] == BLACK
    assert b.color[loc_of((2, 2), 5)] == WHITE
    assert loc_of("C3", 5) == to_loc(2, 2, 5)
    assert b.info[TO_MOVE] == WHITE and b.info[KO] == -1
    assert b.info[NHIST] == 1 and b.hist[0] == b.zhash[0]
    assert_consistent(b)
    with pytest.raises(ValueError):
        board_from("X O\nO .")  # the black corner stone has no liberty
    with pytest.raises(ValueError):
        board_from("X .\n. . .")


@pytest.mark.parametrize("size", [9, 13, 19])
def test_sizes(size):
    """9x9, 13x13 and 19x19: an empty board has size*size legal moves and an
    empty hash; stones in every corner, capture in the far (top-right) corner."""
    b = new_board(size)
    assert b.color.shape[0] == (size + 2) ** 2
    assert numba_legal(b, BLACK) == set(ref.board_points(size))
    assert int(b.zhash[0]) == 0
    last = size - 1
    moves = [
        ((0, 0), BLACK),
        ((last, last), WHITE),
        ((0, last), BLACK),
        ((last, 0), WHITE),
        ((last // 2, last // 2), BLACK),
        ((last, last - 1), BLACK),
        ((last - 2, last), WHITE),
    ]
    for point, color in moves:
        loc = loc_of(point, size)
        assert is_legal(b, loc, color)
        assert play(b, loc, color) == 0
    assert_consistent(b)
    corner = loc_of((last, last), size)
    assert b.libs[b.head[corner]] == 1
    assert captures_of(b, loc_of((last - 1, last), size), BLACK) == 1
    assert play(b, loc_of((last - 1, last), size), BLACK) == 1
    assert b.color[corner] == EMPTY
    assert b.info[KO] == -1  # the capturing stone has two liberties
    assert_consistent(b)
    assert numba_legal(b, WHITE) == oracle_legal(b, WHITE)


@pytest.mark.parametrize("size", [0, 1, 20])
def test_unsupported_sizes(size):
    with pytest.raises(ValueError):
        new_board(size)


# --- captures ----------------------------------------------------------------


def test_capture_single_stone():
    """One stone in atari in the middle is taken; no ko (the capturer keeps 3 liberties)."""
    b = check_move(
        """
        . . . . .
        . . X . .
        . X O X .
        . . . . .
        . . . . .
        """,
        "C2",
        BLACK,
        """
        . . . . .
        . . X . .
        . X . X .
        . . X . .
        . . . . .
        """,
        captured=1,
    )
    assert b.info[KO] == -1 and b.info[KO_CAPTURED] == 0


def test_capture_four_strings_at_once():
    """A move whose four neighbours are four white strings in atari takes all four."""
    check_move(
        """
        . . X . .
        . X O X .
        X O . O X
        . X O X .
        . . X . .
        """,
        "C3",
        BLACK,
        """
        . . X . .
        . X . X .
        X . X . X
        . X . X .
        . . X . .
        """,
        captured=4,
    )


def test_capture_three_strings_on_the_edge():
    """Three white strings sharing one last liberty on the top edge go at once."""
    b = check_move(
        """
        X O . O X
        . X O X .
        . . X . .
        . . . . .
        . . . . .
        """,
        "C5",
        BLACK,
        """
        X . X . X
        . X . X .
        . . X . .
        . . . . .
        . . . . .
        """,
        captured=3,
    )
    assert b.libs[b.head[loc_of("C5", 5)]] == 3


def test_capture_string_on_the_edge():
    """A two-stone string on the bottom edge is taken and its points become
    liberties of every black string next to them."""
    b = check_move(
        """
        . . . . .
        . . . . .
        . . . . .
        . X X . .
        X O O . .
        """,
        "D1",
        BLACK,
        """
        . . . . .
        . . . . .
        . . . . .
        . X X . .
        X . . X .
        """,
        captured=2,
    )
    assert b.libs[b.head[loc_of("A1", 5)]] == 2  # A2, B1
    assert b.libs[b.head[loc_of("B2", 5)]] == 6  # A2 B3 C3 D2 B1 C1
    assert b.libs[b.head[loc_of("D1", 5)]] == 3  # C1 D2 E1


def test_capture_in_the_corner():
    """A corner stone is taken; its point becomes a liberty of two black strings."""
    b = check_move(
        """
        O X . . .
        . . . . .
        . . . . .
        . . . . .
        . . . . .
        """,
        "A4",
        BLACK,
        """
        . X . . .
        X . . . .
        . . . . .
        . . . . .
        . . . . .
        """,
        captured=1,
    )
    assert b.libs[b.head[loc_of("A4", 5)]] == 3
    assert b.libs[b.head[loc_of("B5", 5)]] == 3


WRAP = """
    . . . . .
    X X X X .
    X O O X .
    X O . X .
    X X X X .
"""


def test_capture_string_touching_the_move_twice():
    """C2 touches the white string twice (C3, B2): it loses one liberty, not
    two, is taken once (3 stones, hashed out once), and all three stones
    become liberties of the black ring, which C2 joins."""
    b = check_move(
        WRAP,
        "C2",
        BLACK,
        """
        . . . . .
        X X X X .
        X . . X .
        X . X X .
        X X X X .
        """,
        captured=3,
    )
    assert b.libs[b.head[loc_of("C2", 5)]] == 11  # A5-D5, E1-E4, B3, C3, B2
    b = board_from(WRAP)
    assert libs_after(b, loc_of("C2", 5), BLACK) == 11
    assert not is_legal(b, loc_of("C2", 5), WHITE)


def test_capture_by_connecting():
    """The capturing stone joins two black strings; the merged string gets the
    captured points as liberties through stones away from the move."""
    b = check_move(
        """
        . . . . .
        X X X . .
        O O X . .
        X O X . .
        . O X . .
        """,
        "A1",
        BLACK,
        """
        . . . . .
        X X X . .
        . . X . .
        X . X . .
        X . X . .
        """,
        captured=4,
    )
    assert b.libs[b.head[loc_of("A1", 5)]] == 3  # B1, B2, A3


# --- suicide -----------------------------------------------------------------

EYES = """
    . X . X .
    X . X . X
    . X . . .
    . . . X X
    . . . X .
"""


@pytest.mark.parametrize("coord", ["B4", "C5", "E1"])
def test_single_stone_suicide_forbidden(coord):
    """White may not play into a black eye (middle, edge, corner) where it
    captures nothing; black may fill its own eye."""
    b = board_from(EYES, to_move=WHITE)
    loc = loc_of(coord, 5)
    assert not is_legal(b, loc, WHITE)
    assert loc not in numba_legal(b, WHITE)
    assert not ref.is_legal(b.color, loc, WHITE, 5)
    assert is_legal(b, loc, BLACK)


MULTI = """
    . O O X .
    X X X X .
    X O . O X
    X X O X .
    . . X . .
"""


@pytest.mark.parametrize("coord", ["A5", "C3"])
def test_multi_stone_suicide_forbidden(coord):
    """A5 would make a 3-stone white string without liberties; C3 would join
    three white strings into one without liberties. Both are suicide for white
    and captures for black."""
    b = board_from(MULTI, to_move=WHITE)
    loc = loc_of(coord, 5)
    assert not is_legal(b, loc, WHITE)
    assert not ref.is_legal(b.color, loc, WHITE, 5)
    assert numba_legal(b, WHITE) == oracle_legal(b, WHITE)
    assert is_legal(b, loc, BLACK)


def test_capture_instead_of_suicide():
    """A move with no empty neighbour is legal when it captures: black A5 takes
    two stones, black C3 takes three strings."""
    check_move(
        MULTI,
        "A5",
        BLACK,
        """
        X . . X .
        X X X X .
        X O . O X
        X X O X .
        . . X . .
        """,
        captured=2,
    )
    check_move(
        MULTI,
        "C3",
        BLACK,
        """
        . O O X .
        X X X X .
        X . X . X
        X X . X .
        . . X . .
        """,
        captured=3,
    )


def test_own_last_liberty_filled_with_capture():
    """Black in atari fills its own last liberty and survives because the move
    captures the white stone that had it in atari."""
    check_move(
        """
        . . . . .
        . . . . .
        X O . . .
        O X O . .
        . X O . .
        """,
        "A1",
        BLACK,
        """
        . . . . .
        . . . . .
        X O . . .
        . X O . .
        X X O . .
        """,
        captured=1,
    )


# --- ko ----------------------------------------------------------------------

KO_SHAPE = """
    . . . . .
    . X O . .
    X O . O .
    . X O . .
    . . . . .
"""


def test_simple_ko():
    """Black takes the ko at C3: white may not retake at B3 at once (is_legal,
    legal_moves, the oracle agree), may after a move pair elsewhere, and
    that retake is a ko for black in turn. Black may still fill B3."""
    b = check_move(
        KO_SHAPE,
        "C3",
        BLACK,
        """
        . . . . .
        . X O . .
        X . X O .
        . X O . .
        . . . . .
        """,
        captured=1,
    )
    b3, c3 = loc_of("B3", 5), loc_of("C3", 5)
    assert b.info[KO] == b3 and b.info[KO_CAPTURED] == 1
    assert ref.ko_after(board_from(KO_SHAPE).color, c3, BLACK, 5) == b3
    assert not is_legal(b, b3, WHITE)
    assert b3 not in numba_legal(b, WHITE)
    assert numba_legal(b, WHITE) == oracle_legal(b, WHITE)
    assert is_legal(b, b3, BLACK)  # the ko binds only the side to move
    play_gtp(b, "E5", WHITE)
    assert b.info[KO] == -1
    play_gtp(b, "E1", BLACK)
    assert is_legal(b, b3, WHITE)
    assert play(b, b3, WHITE) == 1
    assert b.color[c3] == EMPTY
    assert b.info[KO] == c3
    assert not is_legal(b, c3, BLACK)
    assert_consistent(b)


def test_pass_clears_ko():
    """After a pass the ko point is free again."""
    b = board_from(KO_SHAPE)
    play_gtp(b, "C3", BLACK)
    play(b, PASS, WHITE)
    assert b.info[KO] == -1 and b.info[TO_MOVE] == BLACK
    play(b, PASS, BLACK)
    assert is_legal(b, loc_of("B3", 5), WHITE)


def test_snapback_is_not_ko():
    """No ko when the capturing stone joins a string, or when a lone stone
    takes two stones and is left in atari."""
    b = check_move(
        """
        . . . . .
        . . . . .
        X X . . .
        O O X . .
        . X O . .
        """,
        "A1",
        WHITE,
        """
        . . . . .
        . . . . .
        X X . . .
        O O X . .
        O . O . .
        """,
        captured=1,
    )
    assert b.info[KO] == -1  # A1 joins A2: not a lone stone
    b = board_from(
        """
        . . . . .
        . . . . .
        . . . . .
        X X O . .
        O O . O .
        """
    )
    assert play_gtp(b, "C1", BLACK) == 2
    assert b.libs[b.head[loc_of("C1", 5)]] == 1  # B1; A1 does not touch C1
    assert b.info[KO] == -1
    assert_consistent(b)


# --- positional superko ------------------------------------------------------

# Three kos (Sanko): K1 at B8/C8 and K3 at B2/C2 where black can take, K2 at
# G8/H8 where white can take. Taking and retaking each in turn brings back the
# starting position after six simple-ko-legal moves.
TRIPLE_KO = """
    . X O . . . O X .
    X O . O . O X . X
    . X O . . . O X .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . X O . . . . . .
    X O . O . . . . .
    . X O . . . . . .
"""
TRIPLE_KO_CYCLE = ["C8", "H8", "C2", "B8", "G8", "B2"]


def test_triple_ko_superko():
    """In a triple ko every move of the cycle is legal under simple ko, each
    captures one stone, and only the sixth repeats a position: is_superko is
    True for it alone (and agrees with the oracle's hash history);
    legal_moves drops it only with superko=True."""
    b = board_from(TRIPLE_KO)
    history = {ref.zobrist_hash(b.color, 9)}
    for i, coord in enumerate(TRIPLE_KO_CYCLE):
        color = BLACK if i % 2 == 0 else WHITE
        loc = loc_of(coord, 9)
        assert is_legal(b, loc, color), coord
        after, _ = ref.after_move(b.color, loc, color, 9)
        repeats = ref.zobrist_hash(after, 9) in history
        assert is_superko(b, loc, color) == repeats == (i == 5), coord
        if i == 5:
            assert loc in numba_legal(b, color, superko=False)
            assert loc not in numba_legal(b, color, superko=True)
        assert play(b, loc, color) == 1
        history.add(ref.zobrist_hash(b.color, 9))
        assert_consistent(b)
    assert same_diagram(to_text(b), TRIPLE_KO)


def test_replay_stops_at_superko():
    """The replay driver with the Rules visitor plays the whole cycle with
    superko=False and stops before the repeating sixth move with superko=True
    (and at an illegal move); with check=False it plays everything given."""
    locs = np.array([loc_of(c, 9) for c in TRIPLE_KO_CYCLE], np.int64)
    colors = np.array([BLACK, WHITE] * 3, np.int64)
    b = board_from(TRIPLE_KO)
    assert replay(b, locs, colors, Rules(True, True)) == 5
    assert b.info[TO_MOVE] == WHITE and b.color[loc_of("B2", 9)] == EMPTY
    b = board_from(TRIPLE_KO)
    assert replay(b, locs, colors, Rules(True, False)) == 6
    assert same_diagram(to_text(b), TRIPLE_KO)
    b = board_from(TRIPLE_KO)
    retake = np.array([loc_of("C8", 9), loc_of("B8", 9)], np.int64)
    assert replay(b, retake, colors[:2], Rules(True, False)) == 1  # the simple-ko retake
    b = board_from(TRIPLE_KO)
    assert replay(b, retake, colors[:2], Rules(False, False)) == 2  # no check: both played


# --- libs_after, captures_of, legal_moves against the oracle ----------------

POSITIONS = {
    "eyes": EYES,
    "multi": MULTI,
    "ko": KO_SHAPE,
    "triple_ko": TRIPLE_KO,
    "wrap": WRAP,
    "connect_and_capture": """
    . . . . .
    X X X . .
    O O X . .
    X O X . .
    . O X . .
    """,
    "fight": """
    . X O . . . .
    X . X O . . .
    . X O . O . .
    O . O X O X .
    . O X . X O .
    X O X O . O X
    . X O . O X .
    """,
    "semeai": """
    O O O O O O
    O X X X X O
    O X . . X O
    O X X . X O
    O X X X X .
    O O O O . X
    """,
}


@pytest.mark.parametrize("name", POSITIONS)
@pytest.mark.parametrize("color", [BLACK, WHITE])
def test_hand_positions_against_oracle(name, color):
    """For every legal move of either colour: libs_after, captures_of and
    hash_after equal the oracle's; legal_moves equals the oracle's legal set."""
    b = board_from(POSITIONS[name], to_move=color)
    size = size_of(b)
    legal = numba_legal(b, color)
    assert legal == oracle_legal(b, color)
    for loc in legal:
        assert libs_after(b, loc, color) == ref.libs_after(b.color, loc, color, size), loc
        assert captures_of(b, loc, color) == ref.captures_of(b.color, loc, color, size), loc
        after, _ = ref.after_move(b.color, loc, color, size)
        assert int(hash_after(b, loc, color)) == ref.zobrist_hash(after, size), loc
    assert_consistent(b)


def test_libs_after_examples():
    """Hand-counted libs_after values: captured stones count only where they
    touch the new string, shared liberties count once."""
    b = board_from(POSITIONS["connect_and_capture"])
    assert libs_after(b, loc_of("A1", 5), BLACK) == 3  # B1, B2, A3 (A3 via A2)
    assert captures_of(b, loc_of("A1", 5), BLACK) == 4
    assert libs_after(b, loc_of("A1", 5), WHITE) == 1  # captures A2, which is its liberty
    b = board_from(
        """
        X O . O X
        . X O X .
        . . X . .
        . . . . .
        . . . . .
        """
    )
    assert libs_after(b, loc_of("C5", 5), BLACK) == 3  # B5, D5, C4
    assert captures_of(b, loc_of("C5", 5), BLACK) == 3
    b = board_from(
        """
        . . . . .
        . . X . .
        . X . X .
        . . X . .
        . . . . .
        """
    )
    assert libs_after(b, loc_of("C3", 5), BLACK) == 8
    assert libs_after(b, loc_of("C3", 5), WHITE) == 0


# --- property tests on random legal games -----------------------------------


@settings(max_examples=80, deadline=None)
@given(
    rnd=st.randoms(use_true_random=False),
    size=st.sampled_from([5, 9]),
    n_moves=st.integers(1, 150),
    superko=st.booleans(),
)
def test_random_games_keep_incremental_state(rnd, size, n_moves, superko):
    """After every move of a random legal game: the colours equal the oracle's
    position after the move (captures), play returns the oracle's capture
    count, the ko point is the oracle's, and heads, nxt, nstones, libs and
    zhash equal recomputation (assert_consistent)."""
    for b, loc, color in random_game(rnd, size, n_moves, superko):
        if loc == PASS:
            want, want_cap, want_ko = b.color.tolist(), frozenset(), -1
        else:
            want, want_cap = ref.after_move(b.color, loc, color, size)
            want_ko = ref.ko_after(b.color, loc, color, size)
        after = copy_board(b)
        assert play(after, loc, color) == len(want_cap)
        assert after.color.tolist() == want
        assert after.info[KO] == want_ko
        assert_consistent(after)


@settings(max_examples=40, deadline=None)
@given(
    rnd=st.randoms(use_true_random=False),
    size=st.sampled_from([5, 9, 19]),
    n_moves=st.integers(0, 200),
)
def test_board_from_points_rebuilds_a_played_position(rnd, size, n_moves):
    """A position rebuilt from its stones alone (board_from_points, compiled) has the
    played board's colours, strings' sizes and liberties and hash, and the colour to
    move (not its history: it has none)."""
    moves = list(random_game(rnd, size, n_moves, superko=False))  # each played after its yield
    b = moves[-1][0] if moves else new_board(size)  # the one board, after the last move
    rebuilt = board_from_points(signed_points(b), size, WHITE)
    assert rebuilt.color.tolist() == b.color.tolist()
    assert rebuilt.zhash[0] == b.zhash[0]
    assert rebuilt.info[TO_MOVE] == WHITE
    for loc in np.flatnonzero((b.color == BLACK) | (b.color == WHITE)):
        assert rebuilt.libs[rebuilt.head[loc]] == b.libs[b.head[loc]]
        assert rebuilt.nstones[rebuilt.head[loc]] == b.nstones[b.head[loc]]
        assert count_libs(rebuilt, rebuilt.head[loc]) == b.libs[b.head[loc]]
    with pytest.raises(ValueError, match="want"):
        board_from_points(signed_points(b)[:-1], size, BLACK)


@settings(max_examples=80, deadline=None)
@given(
    rnd=st.randoms(use_true_random=False),
    size=st.sampled_from([5, 7, 9]),
    n_moves=st.integers(0, 150),
)
def test_random_positions_every_move_against_oracle(rnd, size, n_moves):
    """In the last position of a random legal game, for both colours:
    legal_moves equals the oracle's legal set, and with superko=True the
    moves whose position is not in the game's history; for every legal move
    libs_after and captures_of equal the oracle's, hash_after equals the hash
    after playing on a copy and the oracle's hash, and is_superko says whether
    that hash is in the game's history of positions."""
    history = {0}
    b = new_board(size)
    for b, loc, color in random_game(rnd, size, n_moves, superko=False):
        after = b.color.tolist() if loc == PASS else ref.after_move(b.color, loc, color, size)[0]
        history.add(ref.zobrist_hash(after, size))
    for color in (BLACK, WHITE):
        legal = numba_legal(b, color)
        assert legal == oracle_legal(b, color)
        no_repeat = {
            loc
            for loc in legal
            if ref.zobrist_hash(ref.after_move(b.color, loc, color, size)[0], size) not in history
        }
        assert numba_legal(b, color, superko=True) == no_repeat
        for loc in legal:
            assert libs_after(b, loc, color) == ref.libs_after(b.color, loc, color, size)
            assert captures_of(b, loc, color) == ref.captures_of(b.color, loc, color, size)
            h = hash_after(b, loc, color)
            c = copy_board(b)
            play(c, loc, color)
            assert h == c.zhash[0]
            after, _ = ref.after_move(b.color, loc, color, size)
            assert int(h) == ref.zobrist_hash(after, size)
            assert is_superko(b, loc, color) == (int(h) in history)


@settings(max_examples=60, deadline=None)
@given(
    stored=st.lists(st.integers(0, 2**20 - 1), max_size=300),
    probes=st.lists(st.integers(0, 2**20 - 1), max_size=50),
    shift=st.sampled_from([0, 12, 44]),
)
def test_history_set_is_a_set(stored, probes, shift):
    """history_set(hist, n) holds exactly hist[:n] (legal_moves' superko test): every
    stored hash and none other is found, the empty board's hash 0 included; shifted
    left, many hashes share their low bits and so their first slot."""
    values = [v << shift for v in stored]
    hist = np.array(values + [7 << shift, 9 << shift], dtype=np.uint64)  # past n: not held
    table = history_set(hist, len(values))
    for v in values + [p << shift for p in probes] + [0, 7 << shift, 9 << shift]:
        assert in_history_set(table, np.uint64(v)) == (v in values), v
