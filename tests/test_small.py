"""Stern's small feature vector (gomove/features/small.py) and its group in extraction.

Invariants checked:
- on random 9x9 and 13x13 positions, every legal move's vector equals one
  recomputed by the pure-Python oracles (liberties after the move, the least
  liberties of an adjacent opponent string, the ko point, escaping an atari,
  the distance to the edge);
- the 256 level names are distinct;
- in extraction, ``small`` is vector + 1 on candidates whose largest shape is
  small (radius <= small_max_radius) or absent, 0 elsewhere and on pass; the
  other groups' levels are those of the same features without it;
- small features without shapes fail clearly.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import reference as ref
from gamegen import random_sgf
from synthetic import random_position

from gomove.board.board import TO_MOVE, legal_moves
from gomove.board.coords import from_loc
from gomove.data.extractor import FeatureExtractor
from gomove.data.harvest import harvest
from gomove.features.config import FeatureConfig
from gomove.features.small import level_names, small_vector
from gomove.reading.games import ReadConfig, iter_games


def oracle_vector(color, loc: int, player: int, size: int, ko: int) -> int:
    libs = ref.libs_after(color, loc, player, size)
    opp_libs = [
        len(ref.liberties(color, ref.string_at(color, nb, size), size))
        for nb in ref.adjacent(loc, size)
        if color[nb] == 3 - player
    ]
    least = min(opp_libs) if opp_libs else 0
    own_atari = any(
        len(ref.liberties(color, ref.string_at(color, nb, size), size)) == 1
        for nb in ref.adjacent(loc, size)
        if color[nb] == player
    )
    r, c = from_loc(loc, size)
    edge = min(r, c, size - 1 - r, size - 1 - c, 3)
    bits = min(max(libs, 1), 4) - 1
    bits |= min(least, 3) << 2
    bits |= (1 if ko >= 0 else 0) << 4
    bits |= (1 if own_atari and libs > 1 else 0) << 5
    return bits | edge << 6


@pytest.mark.parametrize("size, n_moves", [(9, 30), (9, 60), (13, 90)])
def test_small_vector_against_the_oracle(size, n_moves):
    rnd = random.Random(size * 1000 + n_moves)
    out = np.zeros(size * size + 1, np.int64)
    for _ in range(15):
        b, _, _, ko = random_position(rnd, size, n_moves)
        player = int(b.info[TO_MOVE])
        for loc in out[: legal_moves(b, player, False, out)]:
            want = oracle_vector(b.color, int(loc), player, size, ko)
            assert small_vector(b, int(loc), player) == want, (size, int(loc))


def test_level_names_are_distinct():
    names = level_names()
    assert len(names) == 256 == len(set(names))
    assert names[0] == "libs1/opp-/edge0" and names[255] == "libs4+/opp3+/ko/escape/edge3+"


def test_extraction_small_column(tmp_path):
    for i in range(4):
        (tmp_path / f"g{i}.sgf").write_bytes(random_sgf(9, 60, seed=300 + i))
    rc = ReadConfig(sizes=(9,))
    base = FeatureConfig(min_count=2, max_radius=6, bloom_bits=1 << 16)
    table = harvest(list(iter_games(tmp_path, rc)), base, progress=False)
    plain = FeatureExtractor(base, table)
    cfg = FeatureConfig(min_count=2, max_radius=6, bloom_bits=1 << 16, small=True)
    ex = FeatureExtractor(cfg, table)
    assert ex.registry.group_names[-1] == "small" and len(ex.registry.groups[-1]) == 256
    seen_small = seen_big = 0
    for game in iter_games(tmp_path, rc):
        a, b = ex.game(game), plain.game(game)
        for g, col in b["columns"].items():
            np.testing.assert_array_equal(a["columns"][g], col)
        shape, small = a["columns"]["shape"], a["columns"]["small"]
        radius = np.concatenate([[0], table.radius])[shape]
        big = radius > 4
        assert (small[big] == 0).all()
        assert (small[~big & (a["cand"] != -1)] > 0).all()
        assert (small[a["cand"] == -1] == 0).all()
        seen_small += int((~big).sum())
        seen_big += int(big.sum())
    assert seen_small and seen_big


def test_small_needs_shapes():
    with pytest.raises(ValueError, match="shapes=true"):
        FeatureConfig(shapes=False, small=True).validate()
