"""The common-fate-graph distance (gomove.board.distance) against the reference."""

from __future__ import annotations

import random

import numpy as np
import pytest
import reference as ref
from board_ascii import board_from, loc_of
from synthetic import random_position

from gomove.board.distance import cfg_distances


@pytest.mark.parametrize("size", [7, 9, 13])
def test_cfg_distances_equal_the_reference(size):
    rnd = random.Random(size)
    out = np.empty(0, np.int64)
    met: set[int] = set()
    for _ in range(60):
        b, _, _, _ = random_position(rnd, size, rnd.randrange(0, 120))
        out = np.empty(b.color.shape[0], np.int64)
        for loc in rnd.sample(ref.board_points(size), 5):
            max_d = rnd.randrange(0, 6)
            want = ref.cfg_distance(b.color, loc, size)
            cfg_distances(b, loc, max_d, out)
            for p in ref.board_points(size):
                d = want.get(p, -1)
                assert out[p] == (d if 0 <= d <= max_d else -1), (loc, p, max_d)
                met.add(int(out[p]))
    assert {0, 1, 2, 3, 4, 5} <= met


def test_a_string_is_one_point():
    b = board_from(
        """
        . . . . .
        . X X X .
        . . . O .
        . . . . .
        . . . . .
        """
    )
    out = np.empty(b.color.shape[0], np.int64)
    cfg_distances(b, loc_of("B4", 5), 3, out)  # a stone of the three: all at 0
    assert [out[loc_of(p, 5)] for p in ("B4", "C4", "D4")] == [0, 0, 0]
    # the string's liberties are at 1, the white stone next to it too, and beyond
    assert [out[loc_of(p, 5)] for p in ("A4", "E4", "C5", "C3", "D3")] == [1, 1, 1, 1, 1]
    assert out[loc_of("E3", 5)] == 2 and out[loc_of("D2", 5)] == 2
    assert out[loc_of("A2", 5)] == 3 and out[loc_of("D1", 5)] == 3
    assert out[loc_of("A1", 5)] == -1 and out[loc_of("E1", 5)] == -1  # 4 steps away
