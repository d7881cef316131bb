"""Final-territory labels (gomove.data.territory_labels) on hand-made finished positions.

Diagrams: top row first (tests/board_ascii.py); arrays are [row, col] with row 0 at
the bottom, so ``grid(...)`` turns an expected diagram into one.
"""

from __future__ import annotations

import multiprocessing as mp
import zipfile
from pathlib import Path

import numpy as np
import pytest
from board_ascii import board_from

import gomove.data.territory_labels as territory
from gomove.board.board import BLACK, WHITE
from gomove.data.territory_labels import (
    SKIP_REASONS,
    final_territory,
    game_territory,
    label_game,
    load_territory,
    parse_result,
    placed_stones,
    territory_dataset,
    territory_from_dead,
    territory_path,
)
from gomove.reading.sgf import Game

TYGEM = Path(__file__).resolve().parents[2] / "shared" / "data" / "tygem-9d-2006-06.zip"
SYMBOL = {"+": 1, "-": -1, ".": 0, "1": True, "0": False}


def grid(text: str, dtype=np.int8) -> np.ndarray:
    """An expected map from a diagram of SYMBOL characters, top row first -> [row, col]."""
    rows = [line.split() for line in text.strip().splitlines()]
    return np.array([[SYMBOL[ch] for ch in row] for row in reversed(rows)], dtype=dtype)


# A white stone (B3) inside black's area and a black one (H5) inside white's: both dead.
DEAD = """
. . . . X O . . .
. . . . X O . . .
. . . . X O . . .
. . . . X O . . .
. . . . X O . X .
. . . . X O . . .
. O . . X O . . .
. . . . X O . . .
. . . . X O . . .
"""

# Black A2-D2/B1-C1 (eye A1) and white E1-H2 (eye G1) share the liberty D1: filling it
# is a self-atari, so neither does (seki). The outer walls live in their territories.
SEKI = """
. . . O X . . . .
. . . O X . . . .
. . . O X . . . .
. . . O X . . . .
. . . O X . . . .
. . . O X . . . .
O O O O X X X X X
X X X X O O O O X
. X X . O O . O X
"""

# The E column is dame: empty points touching both colours.
DAME = """
. . . X . O . . .
. . . X . O . . .
. . . X . O . . .
. . . X . O . . .
. . . X . O . . .
. . . X . O . . .
. . . X . O . . .
. . . X . O . . .
. . . X . O . . .
"""


def test_dead_stones_inside_territory_are_removed_and_counted_for_the_owner():
    final = final_territory(board_from(DEAD), 6.5, 0, 0)
    dead = np.zeros((9, 9), bool)
    dead[4, 7] = True  # H5
    dead[2, 1] = True  # B3
    np.testing.assert_array_equal(final.dead, dead)
    expected = np.zeros((9, 9), np.int8)
    expected[:, :5] = 1
    expected[:, 5:] = -1
    np.testing.assert_array_equal(final.owner, expected)
    assert not final.seki.any()
    assert final.area == 45 - 36
    assert final.territory_score == 9 - 6.5  # no stone placed: area difference minus komi


def test_seki_stones_live_their_shared_liberty_is_nobodys_and_their_eyes_are_not_territory():
    board = board_from(SEKI)
    final = final_territory(board, 0.0, 0, 0)
    assert not final.dead.any()
    np.testing.assert_array_equal(
        final.owner,
        grid("""
            - - - - + + + + +
            - - - - + + + + +
            - - - - + + + + +
            - - - - + + + + +
            - - - - + + + + +
            - - - - + + + + +
            - - - - + + + + +
            + + + + - - - - +
            + + + . - - - - +
        """),
    )
    np.testing.assert_array_equal(
        final.seki,
        grid(
            """
            0 0 0 0 0 0 0 0 0
            0 0 0 0 0 0 0 0 0
            0 0 0 0 0 0 0 0 0
            0 0 0 0 0 0 0 0 0
            0 0 0 0 0 0 0 0 0
            0 0 0 0 0 0 0 0 0
            0 0 0 0 0 0 0 0 0
            1 1 1 1 1 1 1 1 0
            1 1 1 0 1 1 1 1 0
            """,
            bool,
        ),
    )
    # black: 13 outer stones + 24 territory + 6 seki stones + eye A1; white: 10 + 18 + 7 + G1
    assert final.area == 44 - 36
    # the two seki eyes (A1 black, G1 white) cancel; drop white's from seki and black's
    # eye alone is left out of the territory score
    assert final.territory_score == 8.0
    black_only = final.seki & (final.owner == 1)
    again = territory_from_dead(board, 0.0, 0, 0, final.dead, black_only)
    assert again.area == 8 and again.territory_score == 8.0 - 1


def test_dame_belong_to_nobody():
    final = final_territory(board_from(DAME), 0.5, 0, 0)
    assert not final.dead.any()
    expected = np.zeros((9, 9), np.int8)
    expected[:, :4] = 1
    expected[:, 5:] = -1
    np.testing.assert_array_equal(final.owner, expected)
    assert final.area == 0 and final.territory_score == -0.5


def _point(vertex: str) -> tuple[int, int]:
    """GTP vertex of a 9x9 board -> sgfmill (row, col)."""
    return int(vertex[1:]) - 1, "ABCDEFGHJ".index(vertex[0])


# Black walls the E column, white the F column; white invades at B5 and is captured
# (one prisoner for black), black's H5 stays inside white's area, dead at the end.
WALLS = [f"{c}{r}" for r in (5, 4, 6, 3, 7, 2, 8, 1, 9) for c in "EF"]
TAIL = ["H5", "B5", "A5", None, "C5", None, "B4", None, "B6"]  # B6 captures B5


def walls_game(result: str | None = "W+1.5", source: str = "walls") -> Game:
    names = WALLS + TAIL
    moves = [
        (BLACK if i % 2 == 0 else WHITE, None if v is None else _point(v))
        for i, v in enumerate(names)
    ]
    return Game(source, 9, 6.5, 0, [], moves, result)


def test_territory_score_of_a_small_game_is_territory_plus_prisoners():
    game = walls_game()
    assert placed_stones(game) == (9 + 5, 9 + 1)  # passes place no stone
    final = game_territory(game)
    dead = np.zeros((9, 9), bool)
    dead[4, 7] = True  # H5
    np.testing.assert_array_equal(final.dead, dead)
    # Japanese count: black territory A-D less its 4 stones there (B5, empty again,
    # counts) = 32, plus 1 prisoner (B5); white territory G-J = 27 (H5 included),
    # plus 1 prisoner (the dead H5): 33 - 28 - 6.5
    assert final.territory_score == 33 - 28 - 6.5
    # by area: black 9 + 4 stones + 32, white 9 + 27
    assert final.area == 45 - 36
    assert final.territory_score == final.area - (14 - 10) - 6.5
    assert label_game(game)[1] is None
    assert label_game(walls_game("W+2.5"))[1] == "score mismatch"
    assert label_game(walls_game("W+R"))[1] == "not counted"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("B+2.5", 2.5),
        ("W+0.5", -0.5),
        ("b+12", 12.0),
        (" W+3.5 ", -3.5),
        ("B+.5", 0.5),
        ("0", 0.0),
        ("Draw", 0.0),
        ("W+R", None),
        ("B+Resign", None),
        ("B+T", None),
        ("W+F", None),
        ("Void", None),
        ("?", None),
        ("B+", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_result(text, expected):
    assert parse_result(text) == expected


def _sgf(game: Game) -> bytes:
    letters = "abcdefghi"
    nodes = "".join(
        f";{'BW'[c - 1]}[{'' if m is None else letters[m[1]] + letters[8 - m[0]]}]"
        for c, m in game.moves
    )
    return f"(;GM[1]FF[4]SZ[9]KM[6.5]RE[{game.result}]{nodes})".encode()


def write_games(folder: Path) -> Path:
    """Five 9x9 records in file order: counted, resigned, a wrong score, not SGF, counted."""
    folder.mkdir()
    (folder / "a.sgf").write_bytes(_sgf(walls_game("W+1.5")))
    (folder / "b.sgf").write_bytes(_sgf(walls_game("B+R")))
    (folder / "c.sgf").write_bytes(_sgf(walls_game("B+3.5")))
    (folder / "d.sgf").write_bytes(b"not a game")
    (folder / "e.sgf").write_bytes(_sgf(walls_game("W+1.5")))
    return folder


def test_dataset_holds_every_position_of_the_labelled_games_and_loads_from_its_cache(
    tmp_path, monkeypatch
):
    games = write_games(tmp_path / "games")
    cache = tmp_path / "cache"
    data = territory_dataset(games, cache, max_games=4, progress=False, size=9, workers=1)
    n = len(walls_game().moves)
    assert data.stats["games"] == 4 and data.stats["labelled"] == 2
    assert data.stats["skipped"] == {
        "not counted": 1,
        "score mismatch": 1,
        "unreadable": 1,
        "filtered": 0,
    }
    assert set(data.stats["skipped"]) == set(SKIP_REASONS)
    assert len(data) == data.stats["positions"] == 2 * (n + 1)
    assert data.size == 9 and data.colour.shape == (2 * (n + 1), 81)
    np.testing.assert_array_equal(data.game, np.repeat([0, 1], n + 1))
    np.testing.assert_array_equal(data.move, np.tile(np.arange(n + 1), 2))
    np.testing.assert_array_equal(data.to_move[: n + 1], np.resize([1, -1], n + 1))
    assert data.names[0].endswith("a.sgf") and data.names[1].endswith("e.sgf")
    np.testing.assert_array_equal(data.n_moves, [n, n])
    np.testing.assert_array_equal(data.komi, [6.5, 6.5])
    np.testing.assert_array_equal(data.result, [-1.5, -1.5])
    final = game_territory(walls_game())
    np.testing.assert_array_equal(data.owner[0], final.owner.reshape(-1))
    assert not data.colour[0].any()  # the empty board before move 1
    # after move 1 (black E5) and after the capture at the end
    assert data.colour[1, 4 * 9 + 4] == 1 and np.count_nonzero(data.colour[1]) == 1
    last = data.colour[n]
    assert last[4 * 9 + 1] == 0 and last[4 * 9 + 0] == 1 and last[4 * 9 + 7] == 1
    assert np.count_nonzero(last == 1) == 9 + 5 and np.count_nonzero(last == -1) == 9
    np.testing.assert_array_equal(data.at_move("last"), [n, 2 * n + 1])
    np.testing.assert_array_equal(data.at_move(3), [3, n + 4])
    np.testing.assert_array_equal(data.positions_owner(data.at_move(0))[1], data.owner[1])

    path = territory_path(games, cache, max_games=4, size=9)
    assert path.exists() and path.with_suffix(".json").exists()

    def no_labelling(*args, **kwargs):
        raise AssertionError("labelled again instead of loading the cache")

    monkeypatch.setattr(territory, "_label_games", no_labelling)
    again = territory_dataset(games, cache, max_games=4, progress=False, size=9)
    for name in ("colour", "to_move", "move", "game", "owner", "komi", "result", "n_moves"):
        np.testing.assert_array_equal(getattr(again, name), getattr(data, name))
    assert again.names == data.names and again.stats == data.stats
    assert again.colour.dtype == np.int8 and again.move.dtype == np.int16
    assert again.game.dtype == np.int32 and again.komi.dtype == np.float32
    # another max_games is another set
    with pytest.raises(AssertionError, match="labelled again"):
        territory_dataset(games, cache, max_games=5, progress=False, size=9)


def test_dataset_with_other_playouts_must_name_them(tmp_path):
    with pytest.raises(ValueError, match="method"):
        territory_dataset(tmp_path, tmp_path, playouts=lambda *a: None)


def _build(args: tuple[Path, Path]) -> int:
    games, cache = args
    return territory_dataset(games, cache, progress=False, size=9, workers=1).stats["labelled"]


def test_two_runs_on_one_cache_both_succeed(tmp_path):
    games = write_games(tmp_path / "games")
    cache = tmp_path / "cache"
    final_territory(board_from(DAME), 0.0, 0, 0, n=2)  # compiled once, before the fork
    with mp.get_context("fork").Pool(2) as pool:
        assert pool.map(_build, [(games, cache)] * 2) == [2, 2]
    data = load_territory(territory_path(games, cache, size=9))
    assert data.stats["labelled"] == 2
    assert [p.name for p in cache.iterdir() if p.name.startswith(".")] == []  # no temp left


def test_dataset_on_a_pool_matches_one_process(tmp_path):
    games = write_games(tmp_path / "games")
    one = territory_dataset(games, tmp_path / "one", progress=False, size=9, workers=1)
    two = territory_dataset(games, tmp_path / "two", progress=False, size=9, workers=2)
    np.testing.assert_array_equal(one.colour, two.colour)
    np.testing.assert_array_equal(one.owner, two.owner)
    assert one.names == two.names


@pytest.mark.skipif(not TYGEM.exists(), reason=f"{TYGEM} is absent")
def test_real_games_labelled_agree_with_their_recorded_scores(tmp_path):
    small = tmp_path / "first.zip"
    with zipfile.ZipFile(TYGEM) as src, zipfile.ZipFile(small, "w") as dst:
        for name in src.namelist()[:12]:
            dst.writestr(name, src.read(name))
    data = territory_dataset(small, tmp_path / "cache", max_games=12, progress=False, workers=1)
    s = data.stats
    assert s["games"] == 12 and s["labelled"] + sum(s["skipped"].values()) == 12
    assert s["labelled"] >= 2  # about a third of Tygem games are counted, most labelled
    assert len(data) == int((data.n_moves + 1).sum())
    for g, name in enumerate(data.names):
        member = name.rsplit(":", 1)[1]
        with zipfile.ZipFile(small) as z:
            assert f"RE[{'B' if data.result[g] > 0 else 'W'}+" in z.read(member).decode()
        final = data.colour[data.at_move("last")[g]]
        owned = data.owner[g]
        # a live stone's point is its colour's; dead ones are the owner's opponent's
        assert np.all((final == 0) | (owned == final) | (owned == -final))
