"""The Monte-Carlo owner feature group (gomove/features/mc_owner.py).

Invariants checked:
- the 8 levels are Coulom's count bins (0-7, ..., 56-63 for 63 playouts) and
  cover 0..n without gaps for any n;
- on a fixed position, a point inside the mover's living group's eye is owned
  in every playout (level 8) and a point inside the opponent's in none;
- every candidate's level in an extracted game equals a slow reference that
  runs ``run_playouts`` position by position with the documented seed
  (pass gets level 0);
- a level depends only on the position and the config seed: the same game
  extracted twice, alone or after other games, gives the same column; another
  seed gives another column;
- the registry places ``mc_owner`` after the tactical groups and before
  shapes, and datasets with it extract in parallel exactly as serially.
"""

from __future__ import annotations

import numpy as np
import pytest
from board_ascii import board_from, loc_of
from gamegen import random_sgf

from gomove.board.board import BLACK, WHITE, play
from gomove.board.coords import from_loc
from gomove.board.replay import game_arrays, start_board
from gomove.board.scoring import default_max_moves
from gomove.data.dataset import build_dataset
from gomove.data.extractor import FeatureExtractor
from gomove.data.visitor import owner_counts
from gomove.features.config import FeatureConfig
from gomove.features.mc_owner import N_BINS, level_names
from gomove.playout.driver import run_playouts
from gomove.playout.rng import position_seed
from gomove.reading.games import ReadConfig
from gomove.reading.sgf import parse_game

# black lives with eyes at A1 and C1, white with eyes at G9 and J9
TWO_GROUPS = """
    . . . . . O . O .
    . . . . . O O O O
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    X X X X . . . . .
    . X . X . . . . .
"""


def owner_cfg(n: int = 7, seed: int = 0, **kw) -> FeatureConfig:
    return FeatureConfig(shapes=False, mc_owner=True, mc_owner_playouts=n, mc_owner_seed=seed, **kw)


def test_level_names_are_coulom_bins():
    assert level_names(63) == (
        "0-7",
        "8-15",
        "16-23",
        "24-31",
        "32-39",
        "40-47",
        "48-55",
        "56-63",
    )
    for n in (1, 7, 10, 63, 100):
        counts = []
        for name in level_names(n):
            lo, hi = map(int, name.split("-"))
            counts += list(range(lo, hi + 1))
        # every count 0..n in exactly one bin, in the bin the level formula gives
        assert counts == list(range(n + 1))
        for b, name in enumerate(level_names(n)):
            lo, hi = map(int, name.split("-"))
            for c in range(lo, hi + 1):
                assert c * N_BINS // (n + 1) == b


def test_owner_counts_on_living_groups():
    b = board_from(TWO_GROUPS, to_move=BLACK)
    n = 40
    out = np.zeros(81, np.int32)
    for color in (BLACK, WHITE):
        owner_counts(b, color, n, np.uint64(3), default_max_moves(9), out)
        mine, theirs = ("C1", "G9") if color == BLACK else ("G9", "C1")
        for vertex, want in ((mine, n), (theirs, 0)):
            r, c = from_loc(loc_of(vertex, 9), 9)
            assert out[r * 9 + c] == want, (color, vertex)
        assert out.min() >= 0 and out.max() <= n


def reference_column(game, cand, pos_start, n, seed):
    """Slow: one run_playouts call per position, then the level formula per candidate."""
    ga = game_arrays(game)
    b = start_board(ga)
    size = ga.size
    out = []
    for i, (loc, color) in enumerate(zip(ga.locs, ga.colors, strict=True)):
        lo, hi = pos_start[i], pos_start[i + 1]
        if hi > lo:
            s = position_seed(seed, b.zhash[0], i)
            _, counts = run_playouts(b, int(color), 0.0, n, int(s))
            mine = counts[int(color)]
            for c in cand[lo:hi]:
                if c < 0:
                    out.append(0)
                else:
                    r, cc = from_loc(int(c), size)
                    out.append(1 + int(mine[r, cc]) * N_BINS // (n + 1))
        play(b, int(loc), int(color))
    return np.array(out, dtype=np.uint8)


@pytest.fixture(scope="module")
def game():
    return parse_game(random_sgf(9, 30, seed=4), "g.sgf")


def test_extracted_levels_equal_reference(game):
    n, seed = 5, 11
    out = FeatureExtractor(owner_cfg(n, seed)).game(game)
    col = out["columns"]["mc_owner"]
    pos_start = np.r_[0, np.cumsum(out["n_cand"])]
    assert len(pos_start) - 1 == len(game.moves)  # random_sgf games have no skipped move
    want = reference_column(game, out["cand"], pos_start, n, seed)
    np.testing.assert_array_equal(col, want)
    assert (col[out["cand"] < 0] == 0).all() and (col[out["cand"] >= 0] >= 1).all()


def test_levels_depend_only_on_position_and_seed(game):
    ex = FeatureExtractor(owner_cfg(5, 11))
    first = ex.game(game)["columns"]["mc_owner"]
    ex.game(parse_game(random_sgf(9, 20, seed=9), "other.sgf"))
    again = ex.game(game)["columns"]["mc_owner"]
    np.testing.assert_array_equal(first, again)
    other = FeatureExtractor(owner_cfg(5, 12)).game(game)["columns"]["mc_owner"]
    assert not np.array_equal(first, other)


def test_no_playouts_is_rejected():
    """mc_owner_playouts < 1 is a clear config error, from validate and from the extractor."""
    with pytest.raises(ValueError, match="mc_owner_playouts"):
        owner_cfg(0).validate()
    with pytest.raises(ValueError, match="mc_owner_playouts"):
        FeatureExtractor(owner_cfg(0))


def test_registry_order_and_names():
    ex = FeatureExtractor(owner_cfg(63))
    names = ex.registry.group_names
    assert names[-1] == "mc_owner" and names[:-1] == tuple(FeatureConfig().tactical)
    assert ex.registry.name(ex.registry.index("mc_owner", 8)) == "mc_owner:56-63"
    assert "mc_owner" not in FeatureExtractor(FeatureConfig(shapes=False)).registry.group_names


def test_dataset_with_owner_parallel_equals_serial(tmp_path):
    games = tmp_path / "games"
    games.mkdir()
    for i in range(4):
        (games / f"g{i}.sgf").write_bytes(random_sgf(9, 24, seed=20 + i))
    ex = FeatureExtractor(owner_cfg(3, 1))
    rc = ReadConfig(sizes=(9,))
    kw = {"kind": "t", "shard_games": 2, "progress": False}
    serial = build_dataset(games, rc, ex, tmp_path / "a", workers=1, **kw)
    par = build_dataset(games, rc, ex, tmp_path / "b", workers=2, **kw)
    assert serial.registry.group_names[-1] == "mc_owner"
    g = serial.registry.group_index("mc_owner")
    ca, cb = serial.flat().level(g), par.flat().level(g)
    assert ca.max() <= N_BINS
    np.testing.assert_array_equal(ca, cb)


def test_cache_key_fields():
    """Datasets without the group keep the keys they had before the group existed."""
    off = FeatureConfig().key_dict()
    assert not any(k.startswith("mc_owner") for k in off)
    on = owner_cfg(63, 0).key_dict()
    assert on["mc_owner"] is True and on["mc_owner_playouts"] == 63
    assert owner_cfg(31, 0).key_dict() != on and owner_cfg(63, 1).key_dict() != on
