"""Every point's pattern hashes kept along a replay (gomove/features/pattern_state.py),
against the hashes recomputed from scratch (patterns.pattern_hashes, itself checked
against reference.pattern_hash in test_patterns.py):

- at every position of random legal games (9x9, 19x19, other template radii) and of
  real games (the fixtures, a handicap game's setup stones included, and sample games),
  every point's rings for both colours to move equal the XOR of the keys computed
  by numpy from the board's colours, and its hash of every radius pattern_hashes';
- the cached shape level of every empty point equals match_largest of the recomputed
  hashes at every position, so no level is kept past a change inside its templates;
- a state moved to an unrelated position (another game, an empty board) is that
  position's, and the count of changed points is the points whose colour differs.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from synthetic import random_game

from gomove.board.board import EMPTY, SIZE, Board, new_board, play
from gomove.board.replay import game_arrays, start_board
from gomove.data.harvest import harvest
from gomove.features.config import FeatureConfig
from gomove.features.pattern_state import (
    new_pattern_state,
    point_hashes,
    shape_level,
    sync_pattern_state,
)
from gomove.features.patterns import (
    S_EMPTY,
    S_OFF,
    S_OPP,
    S_OWN,
    Templates,
    make_templates,
    match_largest,
    pattern_hashes,
)
from gomove.reading.games import ReadConfig, iter_games
from gomove.reading.sgf import parse_game
from gomove.samples import sample_path

FIXTURES = Path(__file__).parent / "fixtures"
T = make_templates()


def from_scratch(b: Board, t: Templates, color: int, pt: int) -> list[int]:
    size = int(b.info[SIZE])
    loc = (pt // size + 1) * (size + 2) + pt % size + 1
    out = np.zeros(len(t.radii), np.uint64)
    pattern_hashes(b, loc, color, t.dx, t.dy, t.ends, t.perm, t.keys, out)
    return out.tolist()


def rings_from_scratch(b: Board, t: Templates, color: int) -> np.ndarray:
    """uint64[N, R, 8]: every point's rings with color to move, by numpy from the keys:
    XOR over ring k's template points i of keys[perm[s, i], state of the point]."""
    size = int(b.info[SIZE])
    grid = b.color.reshape(size + 2, size + 2)[1:-1, 1:-1].astype(np.int64)
    state = np.where(grid == EMPTY, S_EMPTY, np.where(grid == color, S_OWN, S_OPP))
    pad = np.full((size + 20, size + 20), S_OFF)
    pad[10:-10, 10:-10] = state
    rows, cols = np.divmod(np.arange(size * size), size)
    states = pad[rows[:, None] + 10 + t.dy[None, :], cols[:, None] + 10 + t.dx[None, :]]
    keys = t.keys[t.perm[:, None, :], states[None, :, :]]  # [8, N, P]
    lo = np.concatenate([[0], t.ends[:-1]])
    rings = [
        np.bitwise_xor.reduce(keys[:, :, a:z], axis=2) for a, z in zip(lo, t.ends, strict=True)
    ]
    return np.stack(rings, axis=2).transpose(1, 2, 0)


def assert_all_points(ps, b: Board, t: Templates, step: int = 1) -> None:
    """Every point's rings, and every step-th point's hashes, both colours to move, equal
    the keys' XOR and pattern_hashes' recomputed from scratch."""
    size = int(b.info[SIZE])
    out = np.zeros(len(t.radii), np.uint64)
    for color in (1, 2):
        assert np.array_equal(ps.rings[color - 1], rings_from_scratch(b, t, color))
        for pt in range(0, size * size, step):
            point_hashes(ps, color, pt, out)
            assert out.tolist() == from_scratch(b, t, color, pt), (color, pt)


def random_moves(size: int, n_moves: int, seed: int):
    """A seeded random legal game: (board before, loc, colour) before each move."""
    return random_game(random.Random(seed), size, n_moves, superko=False)


@pytest.mark.parametrize(
    ("size", "n_moves", "radii", "seed"),
    [(9, 150, (3, 10), 1), (9, 120, (2, 6), 2), (19, 160, (3, 10), 3), (13, 100, (4, 7), 4)],
)
def test_random_games_every_position(size, n_moves, radii, seed):
    """At every position of a random game (captures and all), every point's hashes."""
    t = make_templates(*radii)
    ps = new_pattern_state(size, t)
    step = 3 if size == 19 else 1
    for b, _, _ in random_moves(size, n_moves, seed):
        sync_pattern_state(ps, b.color, size)
        assert_all_points(ps, b, t, step)


def fixture_games():
    games = [parse_game((FIXTURES / n).read_bytes(), n) for n in ("game19.sgf", "handicap19.sgf")]
    return games + list(iter_games(sample_path("gnugo-train"), ReadConfig(max_games=2)))


def test_real_games_every_position():
    """Real games, setup stones included, every position: every point's hashes."""
    for game in fixture_games():
        ga = game_arrays(game)
        b = start_board(ga)
        ps = new_pattern_state(game.size, T)
        for i in range(len(ga.locs)):
            sync_pattern_state(ps, b.color, game.size)
            assert_all_points(ps, b, T, step=1 if i % 10 == 0 else 7)
            play(b, int(ga.locs[i]), int(ga.colors[i]))


def test_levels_follow_every_change():
    """The cached level of every empty point, for the colour to move, equals
    match_largest of its recomputed hashes at every position of real games."""
    games = list(iter_games(sample_path("gnugo-train"), ReadConfig(max_games=40)))
    table = harvest(games, FeatureConfig(min_count=2, bloom_bits=1 << 18), progress=False)
    tkeys, tvals = table.lookup()
    matched = 0
    for game in games[:3]:
        ga = game_arrays(game)
        b = start_board(ga)
        size = game.size
        ps = new_pattern_state(size, T)
        for i in range(len(ga.locs)):
            color = int(ga.colors[i])
            sync_pattern_state(ps, b.color, size)
            for pt in range(size * size):
                if b.color[(pt // size + 1) * (size + 2) + pt % size + 1] != EMPTY:
                    continue
                want = match_largest(
                    np.array(from_scratch(b, T, color, pt), np.uint64), tkeys, tvals
                )
                assert shape_level(ps, color, pt, tkeys, tvals) == want, (i, pt)
                matched += want > 0
            play(b, int(ga.locs[i]), int(ga.colors[i]))
    assert matched > 1000


def test_unrelated_positions():
    """Moved from one game's last position to another's, then to the empty board, the
    state is each position's; sync counts the points whose colour changed."""
    size = 9
    boards = [list(random_moves(size, 80, seed))[-1][0] for seed in (5, 6)]  # the last: played
    ps = new_pattern_state(size, T)
    previous = new_board(size).color
    for b in (*boards, new_board(size)):
        changed = sync_pattern_state(ps, b.color, size)
        assert changed == int(np.count_nonzero(b.color != previous))
        assert_all_points(ps, b, T)
        previous = b.color.copy()
    assert sync_pattern_state(ps, previous, size) == 0
