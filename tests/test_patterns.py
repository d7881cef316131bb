"""Shape patterns (gomove/features/patterns.py): the nested templates, the
canonical hashes (symmetry and colour-swap invariant, equal to the oracle in
tests/reference.py), the open-addressing lookup table, and the hierarchy: every
harvested pattern's parent, whose walk from a point's largest match gives its match at
every radius (checked against matching each radius directly, on hand-drawn and real
positions, under the 8 symmetries and both colours)."""

from __future__ import annotations

import numpy as np
import pytest
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

from gomove.board.board import BLACK, EMPTY, SIZE, WHITE, Board, new_board
from gomove.board.coords import to_loc
from gomove.board.replay import board_at
from gomove.data.harvest import harvest
from gomove.features.config import FeatureConfig
from gomove.features.pattern_table import PatternTable, level_name, pattern_names
from gomove.features.patterns import (
    MAX_RADIUS,
    build_table,
    distance,
    make_templates,
    match_chain,
    match_largest,
    pattern_hashes,
    pattern_states,
    table_get,
    table_insert,
)
from gomove.reading.games import ReadConfig, iter_games
from gomove.samples import sample_path

T = make_templates()
RADII = T.radii

# --- helpers -------------------------------------------------------------------


def board_of(grid: list[list[int]]) -> Board:
    """A Board whose colours are grid[row][col] (row 0 at the bottom), written
    straight into the colour array: pattern hashes read only colours, so the
    position need not be reachable (strings without liberties are fine)."""
    size = len(grid)
    b = new_board(size)
    for r in range(size):
        for c in range(size):
            b.color[to_loc(r, c, size)] = grid[r][c]
    return b


def hashes(grid: list[list[int]], row: int, col: int, player: int, t=T) -> list[int]:
    """The kernel's canonical hash per radius of t around (row, col)."""
    size = len(grid)
    out = np.zeros(len(t.radii), dtype=np.uint64)
    b = board_of(grid)
    pattern_hashes(b, to_loc(row, col, size), player, t.dx, t.dy, t.ends, t.perm, t.keys, out)
    return [int(h) for h in out]


def board_symmetries(size: int):
    """The 8 symmetries of the size x size board as maps (row, col) -> (row', col')."""
    n = size - 1
    return (
        lambda r, c: (r, c),
        lambda r, c: (c, n - r),
        lambda r, c: (n - r, n - c),
        lambda r, c: (n - c, r),
        lambda r, c: (r, n - c),
        lambda r, c: (n - r, c),
        lambda r, c: (c, r),
        lambda r, c: (n - c, n - r),
    )


def transformed(grid, sym):
    size = len(grid)
    out = [[EMPTY] * size for _ in range(size)]
    for r in range(size):
        for c in range(size):
            rr, cc = sym(r, c)
            out[rr][cc] = grid[r][c]
    return out


def swapped(grid):
    swap = {EMPTY: EMPTY, BLACK: WHITE, WHITE: BLACK}
    return [[swap[v] for v in row] for row in grid]


@st.composite
def positions(draw):
    """(grid, row, col, player): random stones on 9x9 or 19x19 at a random
    density, and an empty candidate point, often on or near an edge or corner."""
    size = draw(st.sampled_from([9, 19]))
    rnd = draw(st.randoms(use_true_random=False))
    density = draw(st.sampled_from([0.0, 0.1, 0.3, 0.6, 0.9]))
    grid = [
        [rnd.choice((BLACK, WHITE)) if rnd.random() < density else EMPTY for _ in range(size)]
        for _ in range(size)
    ]
    near_edge = st.sampled_from([0, 1, 2, 3, size - 4, size - 3, size - 2, size - 1])
    coord = st.one_of(near_edge, st.integers(0, size - 1))
    row, col = draw(coord), draw(coord)
    grid[row][col] = EMPTY
    player = draw(st.sampled_from([BLACK, WHITE]))
    return grid, row, col, player


# --- templates ---------------------------------------------------------------------


def test_distance():
    """Coulom's distance d(dx, dy) = |dx| + |dy| + max(|dx|, |dy|) (Table 1)."""
    assert distance(0, 0) == 0
    assert distance(1, 0) == distance(0, -1) == 2
    assert distance(1, 1) == distance(-1, 1) == 3
    assert distance(2, 1) == distance(-1, -2) == 5
    assert distance(3, -2) == 8
    assert distance(5, 0) == 10


def test_template_sizes_and_nesting():
    """Radii 3..10; radius 3 is the 3x3 square minus its centre (8 points);
    each template is exactly the offsets p != 0 with d(p) <= r, sorted by
    distance, so each is a prefix of the next (nested); sizes 8, 12, 20, 28,
    36, 48, 60, 72."""
    assert T.radii == tuple(range(3, MAX_RADIUS + 1))
    assert T.ends.tolist() == [8, 12, 20, 28, 36, 48, 60, 72]
    offs = list(zip(T.dx.tolist(), T.dy.tolist(), strict=True))
    assert len(set(offs)) == len(offs) == T.ends[-1]
    d = [distance(x, y) for x, y in offs]
    assert d == sorted(d)
    assert set(offs[:8]) == {(x, y) for x in (-1, 0, 1) for y in (-1, 0, 1)} - {(0, 0)}
    for r, end in zip(T.radii, T.ends, strict=True):
        want = {
            (x, y) for x in range(-r, r + 1) for y in range(-r, r + 1) if 0 < distance(x, y) <= r
        }
        assert set(offs[:end]) == want, r


def test_templates_closed_under_symmetries():
    """perm[s] is a permutation of each template (every symmetry maps the
    offsets within radius r onto themselves) that moves offset i to the
    offset SYMMETRIES[s] gives; perm[0] is the identity, and the 8 perms form
    a group (closed under composition, each with an inverse)."""
    offs = list(zip(T.dx.tolist(), T.dy.tolist(), strict=True))
    perms = {tuple(p) for p in T.perm.tolist()}
    assert len(perms) == 8
    assert T.perm[0].tolist() == list(range(len(offs)))
    for s, g in enumerate(ref.SQUARE_SYMMETRIES):
        assert tuple(offs.index(g(x, y)) for x, y in offs) in perms, s
    for p in T.perm:
        for end in T.ends:
            assert sorted(p[:end].tolist()) == list(range(end))
        for q in T.perm:
            assert tuple(p[q].tolist()) in perms
    ident = tuple(range(len(offs)))
    assert all(any(tuple(p[q].tolist()) == ident for q in T.perm) for p in T.perm)


def test_keys_depend_on_the_offset_only():
    """Templates with other radii give each offset the same keys, hence the
    same hashes at the radii they share; all keys are non-zero and distinct."""
    small = make_templates(5, 7)
    assert small.radii == (5, 6, 7)
    index = {(x, y): i for i, (x, y) in enumerate(zip(T.dx.tolist(), T.dy.tolist(), strict=True))}
    for j, (x, y) in enumerate(zip(small.dx.tolist(), small.dy.tolist(), strict=True)):
        assert small.keys[j].tolist() == T.keys[index[x, y]].tolist()
    assert np.all(T.keys != 0)
    assert len(np.unique(T.keys)) == T.keys.size
    rnd = np.random.default_rng(3)
    grid = rnd.choice([EMPTY, EMPTY, BLACK, WHITE], size=(9, 9)).tolist()
    grid[2][6] = EMPTY
    assert hashes(grid, 2, 6, BLACK, small) == hashes(grid, 2, 6, BLACK)[2:5]


@pytest.mark.parametrize(("lo", "hi"), [(1, 5), (6, 5), (3, 21)])
def test_bad_radii(lo, hi):
    with pytest.raises(ValueError, match="bad pattern radii"):
        make_templates(lo, hi)


# --- canonical hashes --------------------------------------------------------------


def test_empty_board_corners_and_colours():
    """On an empty 9x9 board the four 3-3 points have one pattern at every
    radius, whichever side is to move; the centre E5 has the 3-3 point's
    (all empty) pattern below radius 6 and another from 6 on, where the
    template around C3 first reaches off the board ((-3, 0), d = 6)."""
    grid = [[EMPTY] * 9 for _ in range(9)]
    c3 = hashes(grid, 2, 2, BLACK)
    for r, c in ((2, 6), (6, 2), (6, 6)):
        assert hashes(grid, r, c, BLACK) == c3
    assert hashes(grid, 2, 2, WHITE) == c3
    centre = hashes(grid, 4, 4, BLACK)
    same = [a == b for a, b in zip(c3, centre, strict=True)]
    assert same == [r < 6 for r in RADII]


@settings(max_examples=60, deadline=None)
@given(pos=positions())
def test_hashes_invariant_under_symmetry_and_colour_swap(pos):
    """For every radius, the canonical hash of the candidate is the same after
    any of the 8 symmetries of the whole board (candidate moved with it), and
    after swapping the colours of all stones and of the player to move."""
    grid, row, col, player = pos
    size = len(grid)
    want = hashes(grid, row, col, player)
    for sym in board_symmetries(size):
        r, c = sym(row, col)
        assert hashes(transformed(grid, sym), r, c, player) == want
    assert hashes(swapped(grid), row, col, 3 - player) == want


@settings(max_examples=40, deadline=None)
@given(pos=positions())
def test_hashes_equal_the_oracle(pos):
    """The kernel's hash at every radius equals reference.pattern_hash, which
    views the neighbourhood through each symmetry and XORs the keys of each
    offset (no perm table, no incremental radii)."""
    grid, row, col, player = pos
    size = len(grid)
    color = board_of(grid).color.tolist()
    loc = to_loc(row, col, size)
    want = [ref.pattern_hash(color, loc, player, size, r, T.dx, T.dy, T.keys) for r in RADII]
    assert hashes(grid, row, col, player) == want


@settings(max_examples=60, deadline=None)
@given(pos=positions(), data=st.data())
def test_one_more_stone_changes_the_larger_radii_only(pos, data):
    """Putting one stone on an empty on-board point at distance d from the
    candidate changes the hash at every radius >= d and at none below; a
    stone outside the largest template changes nothing."""
    grid, row, col, player = pos
    size = len(grid)
    before = hashes(grid, row, col, player)
    empties = [
        (r, c)
        for r in range(size)
        for c in range(size)
        if grid[r][c] == EMPTY and (r, c) != (row, col)
    ]
    if not empties:
        return
    r, c = data.draw(st.sampled_from(empties))
    grid[r][c] = data.draw(st.sampled_from([BLACK, WHITE]))
    d = distance(c - col, r - row)
    after = hashes(grid, row, col, player)
    assert [a != b for a, b in zip(before, after, strict=True)] == [d <= radius for radius in RADII]


def test_own_and_opponent_differ():
    """A stone next to the candidate gives a different pattern when it is the
    player's than when it is the opponent's."""
    grid = [[EMPTY] * 9 for _ in range(9)]
    grid[4][5] = BLACK
    assert hashes(grid, 4, 4, BLACK) != hashes(grid, 4, 4, WHITE)
    assert hashes(grid, 4, 4, BLACK)[0] != hashes([[EMPTY] * 9] * 9, 4, 4, BLACK)[0]


# --- the lookup table ---------------------------------------------------------------


def test_table_get_every_key_and_absent_keys():
    """build_table maps hashes[i] -> i + 1 for 1,000 random keys (load <= 1/2,
    power-of-two capacity); absent keys give -1; key 0 is refused."""
    rnd = np.random.default_rng(7)
    keys = np.unique(rnd.integers(1, 2**63, size=1000, dtype=np.uint64))
    tkeys, tvals = build_table(keys)
    cap = tkeys.shape[0]
    assert cap & (cap - 1) == 0 and cap >= 2 * len(keys)
    for i, k in enumerate(keys):
        assert table_get(tkeys, tvals, k) == i + 1
    others = rnd.integers(1, 2**63, size=200, dtype=np.uint64)
    for k in set(others.tolist()) - set(keys.tolist()):
        assert table_get(tkeys, tvals, np.uint64(k)) == -1
    empty_keys, empty_vals = build_table(np.zeros(0, dtype=np.uint64))
    assert table_get(empty_keys, empty_vals, np.uint64(5)) == -1
    with pytest.raises(ValueError, match="reserved"):
        build_table(np.array([3, 0], dtype=np.uint64))
    # the compiled fill gives the table of one insert a key, in order (colliding keys too)
    want_keys, want_vals = np.zeros_like(tkeys), np.zeros_like(tvals)
    for i, k in enumerate(keys):
        table_insert(want_keys, want_vals, np.uint64(k), i + 1)
    np.testing.assert_array_equal(tkeys, want_keys)
    np.testing.assert_array_equal(tvals, want_vals)


def test_pattern_names_are_each_patterns_name():
    """The vectorized names equal level_name's for every pattern: one and two radius
    digits mixed in any order, extreme hashes, the empty table."""
    rnd = np.random.default_rng(3)
    h = rnd.integers(1, 2**64 - 1, size=500, dtype=np.uint64)
    h[:4] = [1, 2**64 - 1, 0xABC, 2**63]
    r = rnd.integers(3, 11, size=500)
    r[:3] = [10, 3, 10]
    names = pattern_names(h, r)
    assert names == tuple(level_name(a, b) for a, b in zip(h, r, strict=True))
    assert names[:2] == ("r10:0x0000000000000001", "r3:0xffffffffffffffff")
    assert pattern_names(np.zeros(0, np.uint64), np.zeros(0, np.int64)) == ()
    table = PatternTable(h, r, np.ones(500, np.int64), 3, 10, 1)
    assert table.level_names() == names


def test_match_largest_takes_the_largest_radius():
    """match_largest gives the level of the largest radius whose hash is in
    the table, whatever the smaller radii hold, and 0 when none is."""
    grid = [[EMPTY] * 9 for _ in range(9)]
    grid[3][3] = BLACK
    grid[6][2] = WHITE
    h = np.array(hashes(grid, 4, 4, WHITE), dtype=np.uint64)
    table = np.array([h[0], 12345, h[4], h[2]], dtype=np.uint64)  # levels 1..4
    tkeys, tvals = build_table(table)
    assert match_largest(h, tkeys, tvals) == 3  # radius 7 = h[4] is level 3
    assert match_largest(h[:4], tkeys, tvals) == 4  # up to radius 6: h[2] is level 4
    assert match_largest(h[:1], tkeys, tvals) == 1
    assert match_largest(h[1:2], tkeys, tvals) == 0
    none_keys, none_vals = build_table(np.array([99], dtype=np.uint64))
    assert match_largest(h, none_keys, none_vals) == 0


# --- the hierarchy -------------------------------------------------------------------


def chain_of(h: np.ndarray, tkeys, tvals, parents) -> list[int]:
    """The walk up the parents from the largest match (patterns.match_chain)."""
    out = np.zeros(len(RADII), dtype=np.int64)
    n = match_chain(match_largest(h, tkeys, tvals), parents, out)
    return [int(v) for v in out[:n]]


def every_radius(h: np.ndarray, tkeys, tvals) -> list[int]:
    """The reference: every radius matched directly, largest first."""
    levels = [table_get(tkeys, tvals, np.uint64(x)) for x in h[::-1]]
    return [int(v) for v in levels if v > 0]


def test_parents_skip_radii_not_harvested():
    """A hand-drawn point whose patterns of radius 3, 5 and 7 are harvested (4 and 6 not):
    7's parent is 5, 5's is 3; the chain is the same under every symmetry of the board
    and with the colours swapped (the other side to move)."""
    grid = [[EMPTY] * 9 for _ in range(9)]
    for r, c, v in ((3, 3, BLACK), (6, 2, WHITE), (4, 6, BLACK), (2, 5, WHITE), (5, 5, WHITE)):
        grid[r][c] = v
    states = np.zeros(len(T.dx), dtype=np.uint8)
    pattern_states(board_of(grid), to_loc(4, 4, 9), WHITE, T.dx, T.dy, states)
    h = hashes(grid, 4, 4, WHITE)
    kept = [RADII.index(r) for r in (3, 5, 7)]
    stones = np.stack([np.where(np.arange(len(T.dx)) < T.ends[k], states, 0) for k in kept])
    table = PatternTable(
        np.array([h[k] for k in kept], dtype=np.uint64), np.array([3, 5, 7]),
        np.ones(3, dtype=np.int64), 3, MAX_RADIUS, 1, stones.astype(np.uint8),
    )  # fmt: skip
    np.testing.assert_array_equal(table.parents, [0, 1, 2])
    tkeys, tvals = table.lookup()
    for sym in board_symmetries(9):
        for g, player in (
            (transformed(grid, sym), WHITE),
            (swapped(transformed(grid, sym)), BLACK),
        ):
            hh = np.array(hashes(g, *sym(4, 4), player), dtype=np.uint64)
            assert chain_of(hh, tkeys, tvals, table.parents) == [3, 2, 1]


@pytest.fixture(scope="module")
def real_table() -> PatternTable:
    games = list(iter_games(sample_path("gnugo-train"), ReadConfig(max_games=60)))
    cfg = FeatureConfig(min_count=2, bloom_bits=1 << 18)
    return harvest(games, cfg, workers=1, progress=False)


def test_chains_equal_every_radius_on_real_games(real_table):
    """On real positions, every empty point's chain of parents from its largest match is
    the list of its matches at every radius (each looked up directly)."""
    table = real_table
    assert len(set(table.radius.tolist())) >= 4  # the hierarchy has depth here
    tkeys, tvals = table.lookup()
    games = list(iter_games(sample_path("gnugo-train"), ReadConfig(max_games=6)))
    checked = deep = 0
    for game in games:
        for move in range(1, len(game.moves), 9):
            board, color = board_at(game, move)
            size = int(board.info[SIZE])
            for row in range(size):
                for col in range(size):
                    loc = to_loc(row, col, size)
                    if board.color[loc] != EMPTY:
                        continue
                    h = np.zeros(len(RADII), dtype=np.uint64)
                    pattern_hashes(board, loc, color, T.dx, T.dy, T.ends, T.perm, T.keys, h)
                    want = every_radius(h, tkeys, tvals)
                    assert chain_of(h, tkeys, tvals, table.parents) == want
                    checked += 1
                    deep += len(want) >= 3
    assert checked > 1000 and deep > 50


def test_real_chains_under_symmetries_and_colours(real_table):
    """The chain at a point of a real position is the same at its image under the 8
    symmetries, and with the colours swapped and the other side to move."""
    tkeys, tvals = real_table.lookup()
    game = next(iter(iter_games(sample_path("gnugo-train"), ReadConfig(max_games=1))))
    board, color = board_at(game, 12)
    size = int(board.info[SIZE])
    grid = [[int(board.color[to_loc(r, c, size)]) for c in range(size)] for r in range(size)]
    other = WHITE if color == BLACK else BLACK
    seen = 0
    for row, col in ((2, 3), (3, 3), (4, 2), (size // 2, size // 2), (0, 0), (2, size - 3)):
        if grid[row][col] != EMPTY:
            continue
        want = chain_of(np.array(hashes(grid, row, col, color), np.uint64), tkeys, tvals,
                        real_table.parents)  # fmt: skip
        seen += bool(want)
        for sym in board_symmetries(size):
            for g, player in (
                (transformed(grid, sym), color),
                (swapped(transformed(grid, sym)), other),
            ):
                hh = np.array(hashes(g, *sym(row, col), player), dtype=np.uint64)
                assert chain_of(hh, tkeys, tvals, real_table.parents) == want
    assert seen
