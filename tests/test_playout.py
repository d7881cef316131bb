"""Uniform random playouts (gomove/playout/driver.py) against slow Python oracles.

Invariants checked: every playout ends (two passes in a row, or max_moves);
replayed on a fresh copy, every recorded move is legal (``is_legal``), no move
fills the mover's own eye, and a side passes only when it has no legal
non-eye move; the final board equals the replayed one; the area score and
owners equal a flood-fill oracle and hand counts; same seed gives the same
games, different seeds different ones; owner counts sum to n at every point;
``run_playouts`` leaves its board unchanged; the first move is uniform.
"""

from __future__ import annotations

import numpy as np
import pytest
import reference as ref
from board_ascii import board_from, loc_of
from synthetic import CORNER, EYES, check_replay

from gomove.board.board import (
    BLACK,
    EMPTY,
    NMOVES,
    SIZE,
    WALL,
    WHITE,
    Board,
    copy_board,
    new_board,
)
from gomove.board.coords import PASS, from_loc
from gomove.board.scoring import area_score, default_max_moves, is_eye
from gomove.playout.driver import playout, run_playouts
from gomove.playout.rng import new_rng

# --- oracles -----------------------------------------------------------------


def board_state(b: Board) -> list[np.ndarray]:
    return [a.copy() for a in b]


# --- helpers -----------------------------------------------------------------


def recorded_playout(start: Board, color: int, komi: float, seed: int, max_moves: int):
    """One playout on a copy of start; (final board, score, owner, moves played)."""
    size = int(start.info[SIZE])
    b = copy_board(start)
    owner = np.full(size * size, -1, np.int8)
    moves = np.full(max_moves, -99, np.int32)
    score = playout(b, color, komi, new_rng(seed), max_moves, owner, moves)
    n = int(b.info[NMOVES] - start.info[NMOVES])
    return b, score, owner, moves[:n].tolist()


def check_game(start: Board, color: int, komi: float, seed: int) -> list[int]:
    size = int(start.info[SIZE])
    max_moves = default_max_moves(size)
    final, score, owner, moves = recorded_playout(start, color, komi, seed, max_moves)
    assert len(moves) == max_moves or moves[-2:] == [PASS, PASS]
    assert len(moves) <= max_moves
    # the game would have ended at any earlier pair of passes
    assert all(moves[i] != PASS or moves[i + 1] != PASS for i in range(len(moves) - 2))
    check_replay(start, color, moves, final)
    want_score, want_owner = ref.oracle_area(final.color, size, komi)
    assert score == want_score
    assert owner.tolist() == want_owner
    return moves


# --- eyes --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("coord", "color", "want"),
    [
        ("A9", BLACK, True),  # corner, no diagonal opponent
        ("C9", BLACK, True),  # edge, no diagonal opponent
        ("D7", BLACK, True),  # middle, no diagonal opponent
        ("H7", BLACK, False),  # H8 is white
        ("C3", BLACK, True),  # middle, one diagonal opponent (B2)
        ("G3", WHITE, True),  # middle, no diagonal opponent
        ("B1", BLACK, False),  # A1 white next to it
        ("D1", BLACK, False),  # E1 empty
        ("F8", WHITE, False),  # F9 empty, G8 black
        ("D7", WHITE, False),  # black point
        ("B9", BLACK, False),  # a stone, not empty
    ],
)
def test_is_eye_examples(coord, color, want):
    """The kernel's eye test on hand-picked points equals the stated answer and the oracle."""
    b = board_from(EYES)
    loc = loc_of(coord, 9)
    assert bool(is_eye(b, loc, color)) == want
    assert ref.oracle_is_eye(b.color, loc, color, 9) == want


def test_is_eye_diagonals():
    """Two opponent diagonals make a false eye in the middle; one does on the edge."""
    middle = board_from(
        """
        . . . . .
        . O X O .
        . X . X .
        . . X . .
        . . . . .
        """
    )
    assert not is_eye(middle, loc_of("C3", 5), BLACK)
    edge = board_from(
        """
        . . . . .
        . . . . .
        . . . . .
        X X O . .
        X . X . .
        """
    )
    assert not is_eye(edge, loc_of("B1", 5), BLACK)
    edge_ok = board_from(
        """
        . . . . .
        . . . . .
        . . . . .
        X X X O .
        X . X O .
        """
    )
    assert is_eye(edge_ok, loc_of("B1", 5), BLACK)


def test_oracle_agrees_with_kernel_on_every_point():
    """is_eye equals oracle_is_eye at every point of EYES for both colours."""
    b = board_from(EYES)
    for loc in ref.board_points(9):
        for color in (BLACK, WHITE):
            assert bool(is_eye(b, loc, color)) == ref.oracle_is_eye(b.color, loc, color, 9)


# --- area score --------------------------------------------------------------

WALLS = "\n".join([". . . X O . . . ."] * 9)
DAME = "\n".join(["O . . X . O . . ."] + [". . . X . O . . ."] * 8)


@pytest.mark.parametrize(
    ("diagram", "komi", "black", "white"),
    [
        (WALLS, 7.5, 36, 45),  # columns A-D black, E-J white
        (DAME, 0.0, 9, 37),  # white A1 spoils black's area; column E is dame
        (CORNER, 7.0, 4, 77),  # black 3 stones + A9; white owns the rest
    ],
)
def test_area_score_hand_counts(diagram, komi, black, white):
    """Area score and owner counts of finished positions equal hand counts and the oracle."""
    b = board_from(diagram)
    owner = np.full(81, -1, np.int8)
    score = area_score(b, komi, owner)
    assert score == black - white - komi
    assert (owner == BLACK).sum() == black
    assert (owner == WHITE).sum() == white
    assert (owner == EMPTY).sum() == 81 - black - white
    assert (score, owner.tolist()) == ref.oracle_area(b.color, 9, komi)


def test_area_score_dame_owner():
    """In DAME (owner[row, col], row 0 at the bottom), the stone-free column E and
    the area A-C spoiled by the white stone at A9 are owner 0."""
    b = board_from(DAME)
    owner = np.full(81, -1, np.int8).reshape(9, 9)
    area_score(b, 0.0, owner.reshape(-1))
    assert (owner[:, 4] == 0).all()
    assert owner[8, 0] == WHITE
    spoiled = owner[:, :3].copy()
    spoiled[8, 0] = 0
    assert (spoiled == 0).all()
    assert (owner[:, 3] == BLACK).all() and (owner[:, 5:] == WHITE).all()


# --- whole playouts ----------------------------------------------------------


@pytest.mark.parametrize("seed", range(30))
def test_playouts_9x9_empty(seed):
    """Random 9x9 games from the empty board: legal, no eye fills, oracle score."""
    check_game(new_board(9), BLACK if seed % 2 else WHITE, 7.5, seed)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("diagram", [EYES, CORNER])
def test_playouts_9x9_from_positions(diagram, seed):
    """Random 9x9 games from mid-game positions, either colour first."""
    check_game(board_from(diagram), BLACK if seed % 2 else WHITE, 0.5, seed)


@pytest.mark.parametrize("seed", range(2))
def test_playouts_19x19(seed):
    """A few random 19x19 games: legal, no eye fills, oracle score."""
    check_game(new_board(19), BLACK, 7.5, 100 + seed)


def test_playout_short_max_moves():
    """max_moves cuts the game; the score is still the oracle's area score."""
    final, score, owner, moves = recorded_playout(new_board(9), BLACK, 7.5, 3, 10)
    assert len(moves) == 10 and PASS not in moves
    assert (score, owner.tolist()) == ref.oracle_area(final.color, 9, 7.5)


def test_same_seed_same_game_other_seed_other_game():
    """playout and run_playouts are functions of their seed."""
    start = new_board(9)
    a = recorded_playout(start, BLACK, 7.5, 11, 243)
    b = recorded_playout(start, BLACK, 7.5, 11, 243)
    c = recorded_playout(start, BLACK, 7.5, 12, 243)
    assert a[3] == b[3] and a[1] == b[1]
    assert a[3] != c[3]
    s1, o1 = run_playouts(start, BLACK, 7.5, 20, seed=5)
    s2, o2 = run_playouts(start, BLACK, 7.5, 20, seed=5)
    s3, _ = run_playouts(start, BLACK, 7.5, 20, seed=6)
    assert np.array_equal(s1, s2) and np.array_equal(o1, o2)
    assert not np.array_equal(s1, s3)
    assert len(set(s1.tolist())) > 1  # the games of one call differ too


def test_run_playouts_counts_and_board_unchanged():
    """Owner counts are [3, size, size] and sum to n per point; the board is untouched."""
    start = board_from(EYES, to_move=WHITE)
    before = board_state(start)
    scores, counts = run_playouts(start, WHITE, 7.5, 25, seed=1)
    assert scores.shape == (25,) and counts.shape == (3, 9, 9)
    assert (counts.sum(axis=0) == 25).all()
    for a, b in zip(before, board_state(start), strict=True):
        assert np.array_equal(a, b)
    # a point in an unconditionally safe corner eye of black stays black in every game
    r, c = from_loc(loc_of("A9", 9), 9)
    assert counts[BLACK, r, c] == 25
    # each game's owners sum to the score: sum over games of (black - white) - n * komi
    assert scores.sum() == pytest.approx((counts[BLACK] - counts[WHITE]).sum() - 25 * 7.5)


def test_first_move_is_uniform():
    """On an empty 3x3 board the first move is uniform over the 9 points
    (games seeded as run_games seeds them)."""
    n = 9000
    start = new_board(3)
    owner = np.zeros(9, np.int8)
    first = np.zeros(1, np.int32)
    hits = np.zeros(start.color.shape[0], np.int64)
    for g in range(n):
        playout(copy_board(start), BLACK, 0.0, new_rng(7, g), 1, owner, first)
        hits[first[0]] += 1
    hits = hits[ref.board_points(3)]
    assert hits.sum() == n
    assert (np.abs(hits - n / 9) < 0.15 * n / 9).all(), hits


def test_run_playouts_rejects_bad_arguments():
    with pytest.raises(ValueError):
        run_playouts(new_board(9), WALL, 7.5, 1, 0)
    with pytest.raises(ValueError):
        run_playouts(new_board(9), BLACK, 7.5, -1, 0)


# --- scores against sgfmill --------------------------------------------------


def sgfmill_board(b: Board):
    """The same stones on an sgfmill board."""
    from sgfmill import boards

    size = int(b.info[SIZE])
    sb = boards.Board(size)
    black, white = [], []
    for loc in np.nonzero((b.color == BLACK) | (b.color == WHITE))[0]:
        (black if b.color[loc] == BLACK else white).append(from_loc(int(loc), size))
    sb.apply_setup(black, white, [])
    return sb


def test_area_score_equals_sgfmill_on_sample_game_ends():
    """The 75 sample GNU Go games' final positions, each replayed by sgfmill's own
    rules and by gomove's: the same stones, and the same area score (sgfmill's
    ``area_score``, which also counts every stone as alive)."""
    from sgfmill import boards

    from gomove.reading.games import ReadConfig, iter_games, replay_game
    from gomove.samples import sample_path

    paths = [sample_path("gnugo-train"), sample_path("gnugo-test")]
    n = 0
    for game in iter_games(paths, ReadConfig()):
        sb = boards.Board(game.size)
        for color, move in game.moves:
            if move is not None:
                sb.play(*move, "b" if color == BLACK else "w")
        ours = replay_game(game)
        assert sgfmill_board(ours).list_occupied_points() == sb.list_occupied_points()
        owner = np.zeros(game.size**2, np.int8)
        assert area_score(ours, 0.0, owner) == sb.area_score()
        n += 1
    assert n == 75


@pytest.mark.parametrize("size", [9, 19])
def test_area_score_equals_sgfmill_after_playouts(size):
    """Boards at the end of seeded playouts, copied stone by stone to sgfmill: same score."""
    for seed in range(6):
        b = new_board(size)
        owner = np.zeros(size * size, np.int8)
        score = playout(
            b, BLACK, 6.5, new_rng(seed), default_max_moves(size), owner, np.zeros(0, np.int32)
        )
        assert score == sgfmill_board(b).area_score() - 6.5
