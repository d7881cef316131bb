"""Coulom's light features (gomove/features/light.py): levels, 3x3 codes, extraction.

Invariants checked:
- hand-made positions give the stated capture, extension, self-atari and
  contiguity levels and 3x3 diagrams;
- on random 9x9 and 13x13 positions, every legal move's levels equal the slow
  oracles (reference.py: no-ladder capture and extension, self-atari,
  contiguity, the 3x3 code from colours and liberty counts);
- the canonical code is the same for the 8 symmetries of a neighbourhood, on
  every raw code and on whole transformed boards; the other colour's view is
  the colour-swapped code; levels are the canonical codes a board can show;
- FeatureExtractor with ``features=light`` has the light groups and the
  tactical extraction's candidates, with light_levels' levels.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import reference as ref
from board_ascii import board_from, loc_of, to_text
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import random_position

from gomove.board.board import (
    BLACK,
    LAST,
    TO_MOVE,
    WHITE,
    is_self_atari,
    new_board,
    play,
    setup_stone,
)
from gomove.board.coords import NO_MOVE, PASS, loc_to_gtp, to_loc
from gomove.data.extractor import FeatureExtractor
from gomove.features.config import FeatureConfig
from gomove.features.light import (
    LIGHT_GROUPS,
    N_RAW,
    board_codes,
    canonical_codes,
    code_name,
    light_code,
    light_levels,
    pattern_levels,
    swap_colors,
    transform,
)
from gomove.features.patterns import SYMMETRIES
from gomove.reading.games import ReadConfig, iter_games
from gomove.samples import sample_path


def levels(b, coord: str, color: int) -> dict[str, int]:
    size = int(b.info[0])
    code, cap, ext, sa, cont = light_levels(b, loc_of(coord, size), color, int(b.info[LAST]))
    return {"capture": cap, "extension": ext, "self_atari": sa, "contiguity": cont, "code": code}


# --- hand-made positions ---------------------------------------------------------


def test_capture_levels():
    """capture 4 takes a string in atari, 1 when that saves our string put in
    atari by the previous move (the liberty is then an extension too), 2 when
    it takes the previous move, 3 when it touches the previous move's string."""
    corner = """
        . . . . .
        . . . . .
        O O . . .
        X X . . .
        . O X . .
        """
    b = board_from(corner.replace("X X . . .", "X X O . ."), BLACK)
    assert levels(b, "A1", BLACK)["capture"] == 4  # no previous move
    b = board_from(corner, WHITE)
    play(b, loc_of("C2", 5), WHITE)  # A2-B2 now in atari at A1
    got = levels(b, "A1", BLACK)
    assert (got["capture"], got["extension"], got["self_atari"]) == (1, 1, 0)
    b = board_from(
        """
        . . . . .
        . . . . .
        . . . . .
        X X . . .
        . . X . .
        """,
        WHITE,
    )
    play(b, loc_of("B1", 5), WHITE)  # a white stone in atari at A1
    assert levels(b, "A1", BLACK)["capture"] == 2
    b = board_from(
        """
        . . . . . . .
        . . . . X X .
        . . . O . O X
        . . . . X X .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        """,
        WHITE,
    )
    play(b, loc_of("D4", 7), WHITE)  # D5-D4; F5 is in atari at E5
    got = levels(b, "E5", BLACK)
    assert (got["capture"], got["contiguity"]) == (3, 1)
    assert levels(b, "E5", WHITE)["capture"] == 0


def test_extension_self_atari_contiguity():
    """extension: the liberty of our string put in atari by the previous move;
    self-atari: no capture and one liberty left; contiguity: the 8 points
    around the previous move and only those."""
    b = board_from(
        """
        . . . . .
        . . . . .
        . O . . .
        O X . . .
        . . . . .
        """,
        WHITE,
    )
    play(b, loc_of("C2", 5), WHITE)  # black B2 in atari at B1
    assert levels(b, "B1", BLACK) | {"code": 0} == {
        "capture": 0,
        "extension": 1,
        "self_atari": 0,  # B1 extends to A1 and C1
        "contiguity": 1,
        "code": 0,
    }
    assert levels(b, "A1", BLACK)["self_atari"] == 1  # only B1 left
    assert levels(b, "A1", WHITE)["self_atari"] == 0  # joins A2: A3 and B1
    assert levels(b, "C1", BLACK)["self_atari"] == 0
    contiguous = {v: levels(b, v, BLACK)["contiguity"] for v in ("A1", "D1", "C3", "D3", "E2")}
    assert contiguous == {"A1": 0, "D1": 1, "C3": 1, "D3": 1, "E2": 0}


def test_code_names():
    """The 3x3 diagram of a point, top row first: own X, opponent O, in atari
    lower case (orthogonal points only), off-board #, the point *; the other
    colour sees it swapped."""
    b = board_from(
        """
        . . . . .
        . . . . .
        . O . . .
        O X O . .
        . . . . .
        """,
        WHITE,
    )
    assert code_name(light_code(b, loc_of("A1", 5), BLACK)) == "#OX/#*./###"
    assert code_name(light_code(b, loc_of("A1", 5), WHITE)) == "#XO/#*./###"
    # B2 is in atari (its one liberty B1); diagonal points carry no atari status
    assert code_name(light_code(b, loc_of("B1", 5), BLACK)) == "OxO/.*./###"
    assert code_name(light_code(b, loc_of("B1", 5), WHITE)) == "XoX/.*./###"


# --- random positions against the oracle -------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    rnd=st.randoms(use_true_random=False),
    size=st.sampled_from([9, 13]),
    n_moves=st.integers(0, 140),
)
def test_random_positions_against_oracle(rnd, size, n_moves):
    """Every legal move's light levels equal the oracles': no-ladder capture and
    extension, self-atari, contiguity and the 3x3 code; is_self_atari too."""
    b, last, _, ko = random_position(rnd, size, n_moves)
    player = int(b.info[TO_MOVE])
    color = b.color.tolist()
    for loc in sorted(ref.legal_moves(color, player, size, ko)):
        where = f"{loc_to_gtp(loc, size)} for {player}\n{to_text(b)}"
        code, cap, ext, sa, cont = light_levels(b, loc, player, last)
        assert code == ref.light_code(color, loc, player, size), where
        assert cap == ref.capture_level(color, loc, player, size, last, ladders=False), where
        assert ext == ref.extension_level(color, loc, player, size, last, ladders=False), where
        assert sa == int(ref.is_self_atari(color, loc, player, size)), where
        assert bool(is_self_atari(b, loc, player)) == bool(sa), where
        assert cont == int(ref.contiguous(loc, last, size)), where


# --- codes, symmetries, levels -------------------------------------------------------


def test_canonical_code_is_symmetry_invariant():
    """canonical(transform(code, s)) == canonical(code) for every raw code and symmetry;
    transforms compose like the symmetries (s applied twice for the reflections is
    the identity); colour swap is an involution and commutes with the symmetries."""
    raw = np.arange(N_RAW)
    canon = canonical_codes()
    for s in range(8):
        t = transform(raw, s)
        assert (canon[t] == canon).all()
        assert sorted(t.tolist()) == raw.tolist()  # a permutation
    for s in range(4, 8):  # the four reflections
        assert (transform(transform(raw, s), s) == raw).all()
    swap = swap_colors(raw)
    assert (swap[swap] == raw).all()
    assert (canon[swap[board_codes()]] == canon[swap[canon[board_codes()]]]).all()


def test_levels_are_the_canonical_board_codes():
    """Levels: sorted distinct canonical codes of board codes; every board code
    has a level, and every level's code is its own canonical code."""
    level_codes, raw_to_level = pattern_levels()
    canon = canonical_codes()
    assert (np.diff(level_codes) > 0).all()
    assert (canon[level_codes] == level_codes).all()
    codes = board_codes()
    assert (raw_to_level[codes] > 0).all()
    assert (level_codes[raw_to_level[codes] - 1] == canon[codes]).all()
    assert len(level_codes) == 7455  # derived in test_level_count_by_brute_force


def _grid_symmetries(grid: np.ndarray) -> list[np.ndarray]:
    """The 8 images of a square grid: 4 rotations, of it and of its transpose."""
    return [np.rot90(g, k) for g in (grid, grid.T) for k in range(4)]


def test_level_count_by_brute_force():
    """The number of pattern3x3 levels (7,455), derived without light.py's codes:
    every 3x3 neighbourhood a board can show is drawn as a 3x3 grid of symbols
    (orthogonal points empty, own, opponent, own in atari, opponent in atari;
    diagonal points empty, own, opponent; '#' off the board for the interior,
    the 4 edges and the 4 corners), reduced to the least of its 8 images under
    the symmetries of the square, and the distinct ones counted."""
    orth, diag = ".XOxo", ".XO"
    cells = [(dx, dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dx, dy) != (0, 0)]
    classes = set()
    for ox in (-1, 0, 1):
        for oy in (-1, 0, 1):
            choices = [
                "#"
                if (ox and dx == ox) or (oy and dy == oy)
                else (orth if dx == 0 or dy == 0 else diag)
                for dx, dy in cells
            ]
            for combo in itertools.product(*choices):
                grid = np.full((3, 3), "*")
                for (dx, dy), v in zip(cells, combo, strict=True):
                    grid[1 + dy, 1 + dx] = v
                classes.add(min("".join(g.ravel()) for g in _grid_symmetries(grid)))
    assert len(classes) == len(pattern_levels()[0]) == 7455


@pytest.mark.parametrize("s", range(8))
def test_board_symmetry_keeps_levels(s):
    """A random 9x9 position transformed by a symmetry of the board gives every
    point the pattern level of its image (and the same other levels)."""
    import random

    size = 9
    b, last, _, _ = random_position(random.Random(s), size, 70)
    _, raw_to_level = pattern_levels()
    sym = SYMMETRIES[s]
    c = new_board(size)
    half = (size - 1) // 2

    def image(loc):
        r, col = divmod(loc, size + 2)
        x, y = sym(col - 1 - half, r - 1 - half)
        return to_loc(y + half, x + half, size)

    for loc in ref.board_points(size):
        if b.color[loc] in (BLACK, WHITE):
            setup_stone(c, image(loc), int(b.color[loc]))
    player = int(b.info[TO_MOVE])
    for loc in ref.board_points(size):
        if b.color[loc] == 0:
            got = light_levels(b, loc, player, NO_MOVE)
            want = light_levels(c, image(loc), player, NO_MOVE)
            assert raw_to_level[got[0]] == raw_to_level[want[0]]
            assert got[1:] == want[1:]


# --- extraction ------------------------------------------------------------------------


def test_extractor_light_columns():
    """features=light: the registry is LIGHT_GROUPS; candidates are the tactical
    extraction's; each point's columns are light_levels' (pattern as its level)
    and pass has only its pass level."""
    game = next(iter(iter_games(sample_path("gnugo-train.zip"), ReadConfig(max_games=1))))
    light = FeatureExtractor(FeatureConfig(light=True, tactical=[], shapes=False))
    tactical = FeatureExtractor(FeatureConfig(shapes=False))
    assert light.registry.group_names == LIGHT_GROUPS
    got = light.game(game)
    want = tactical.game(game)
    assert np.array_equal(got["cand"], want["cand"])
    assert np.array_equal(got["winner"], want["winner"])
    _, raw_to_level = pattern_levels()
    from gomove.board.replay import game_arrays, start_board

    ga = game_arrays(game)
    b = start_board(ga)
    start = np.concatenate([[0], np.cumsum(got["n_cand"])])
    cols = got["columns"]
    for i, (loc, color) in enumerate(zip(ga.locs[:60], ga.colors[:60], strict=True)):
        b.info[TO_MOVE] = color
        last = int(b.info[LAST])
        for j in range(start[i], start[i + 1]):
            cand = int(got["cand"][j])
            row = [int(cols[g][j]) for g in LIGHT_GROUPS]
            if cand == PASS:
                assert row == [2 if last == PASS else 1, 0, 0, 0, 0, 0]
            else:
                code, *rest = light_levels(b, cand, int(color), last)
                assert row == [0, *rest, int(raw_to_level[code])]
        play(b, int(loc), int(color))


def test_light_config_excludes_tactical_and_shapes():
    with pytest.raises(ValueError, match="light"):
        FeatureConfig(light=True).validate()
