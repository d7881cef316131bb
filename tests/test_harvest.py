"""Shape harvesting (Bloom filter + exact counts, PatternTable), the feature
registry, and FeatureExtractor.game, checked against Counter and the oracles
in tests/reference.py."""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import reference as ref
from numba import types
from numba.typed import Dict

from gomove.board.board import BLACK, WHITE
from gomove.board.coords import PASS, from_loc, gtp_to_loc, move_to_loc, to_loc
from gomove.data.dataset import harvest_source
from gomove.data.extractor import FeatureExtractor
from gomove.data.harvest import (
    CHUNK_GAMES,
    RADIUS_BITS,
    STONE_WORDS,
    _bloom_seen,
    _dump,
    count_arrays,
    count_patterns,
    count_shards,
    count_sightings,
    false_positives,
    harvest,
    shard_of,
    table_of,
)
from gomove.features.config import FeatureConfig
from gomove.features.pattern_table import TABLE_FORMAT_VERSION, PatternTable
from gomove.features.patterns import make_templates, states_hash, table_get
from gomove.features.registry import NONE_INDEX, Group, Registry
from gomove.features.tactical import TACTICAL_GROUPS, TACTICAL_LEVELS
from gomove.reading.games import ReadConfig
from gomove.reading.sgf import Game, parse_game

FIXTURES = Path(__file__).parent / "fixtures"

# --- helpers -------------------------------------------------------------------


def make_game(moves: str, size: int = 9, setup: tuple[str, ...] = (), name: str = "hand") -> Game:
    """A Game from "B C3 W G7 B pass ..." (GTP vertices); setup: black stones."""
    words = moves.split()
    seq = []
    for c, v in zip(words[::2], words[1::2], strict=True):
        point = None if v == "pass" else from_loc(gtp_to_loc(v, size), size)
        seq.append((BLACK if c == "B" else WHITE, point))
    stones = [(BLACK, *from_loc(gtp_to_loc(v, size), size)) for v in setup]
    return Game(name, size, 6.5, len(stones), stones, seq)


def fixture(name: str) -> Game:
    return parse_game((FIXTURES / name).read_bytes(), name)


# openings in mirrored corners share shapes; a handicap game and passes too
HAND_GAMES = [
    make_game("B C3 W G7 B G3 W C7 B E5 W E3 B D3 W E4 B D4 W F5", name="a"),
    make_game("B G7 W C3 B C7 W G3 B E5 W E7 B F7 W E6 B F6 W D5", name="b"),
    make_game("B E5 W C3 B G7 W pass B C7 W G3 B D4", name="c"),
    make_game("W E5 B C7 W G3 B D4 W E3 B pass W F6", setup=("C3", "G7"), name="d"),
]
FIXTURE_GAMES = ["game9.sgf", "short9.sgf", "ko9.sgf", "pass9.sgf"]


def all_games() -> list[Game]:
    return HAND_GAMES + [fixture(n) for n in FIXTURE_GAMES]


@functools.cache
def harvested() -> PatternTable:
    """The table of all_games() with min_count 2 (harvested once per session)."""
    return harvest(all_games(), FeatureConfig(min_count=2, bloom_bits=1 << 22), progress=False)


def new_counts():
    return Dict.empty(types.uint64, types.int64)


def unpack(counts) -> dict[int, tuple[int, int]]:
    """counts -> {hash: (count, radius index)} (read through the compiled _dump:
    a typed Dict's Python view cannot hand out uint64 keys >= 2**63)."""
    keys, vals = _dump(counts)
    mask = (1 << RADIUS_BITS) - 1
    return {int(k): (int(v) >> RADIUS_BITS, int(v) & mask) for k, v in zip(keys, vals, strict=True)}


def oracle_table(games, cfg: FeatureConfig) -> dict[tuple[int, int], int]:
    """{(radius, hash): count} of the patterns played >= cfg.min_count times."""
    t = make_templates(cfg.min_radius, cfg.max_radius)
    counts = ref.played_pattern_counts(games, t.radii, t.dx, t.dy, t.keys)
    return {k: n for k, n in counts.items() if n >= cfg.min_count}


def table_dict(table: PatternTable) -> dict[tuple[int, int], int]:
    return {
        (int(r), int(h)): int(c)
        for h, r, c in zip(table.hashes, table.radius, table.count, strict=True)
    }


# --- the Bloom filter and the counts -----------------------------------------------


def test_bloom_seen_is_test_and_set():
    """_bloom_seen: False on a key's first test (which sets its bits), True after;
    a filter with every bit set reports every key as seen."""
    bits = np.zeros(1 << 10, dtype=np.uint64)
    keys = np.random.default_rng(1).integers(1, 2**63, size=50, dtype=np.uint64)
    assert not any(_bloom_seen(bits, k, 4) for k in keys)
    assert all(_bloom_seen(bits, k, 4) for k in keys)
    assert 0 < np.count_nonzero(bits) and np.unpackbits(bits.view(np.uint8)).sum() <= 200
    full = np.full(2, np.iinfo(np.uint64).max, dtype=np.uint64)
    assert _bloom_seen(full, np.uint64(12345), 3)


def key_stream(seed: int, rows: int = 3000, cols: int = 4) -> np.ndarray:
    """hashes[rows, cols]: per column, keys drawn (Zipf-like, many seen once)
    from that column's own pool; 1 row in 10 is zero (a pass)."""
    rnd = np.random.default_rng(seed)
    pools = rnd.integers(1, 2**64 - 1, size=(cols, 2000), dtype=np.uint64)
    idx = np.minimum(rnd.zipf(1.3, size=(rows, cols)) - 1, 1999)
    out = np.stack([pools[c, idx[:, c]] for c in range(cols)], axis=1)
    out[rnd.random(rows) < 0.1] = 0
    return out


def count(
    stream: np.ndarray, bits: np.ndarray, k: int, counts, n_shards: int = 1, shard: int = 0
) -> None:
    """count_sightings without configurations (all-empty states of one point)."""
    stones = Dict.empty(types.uint64, types.UniTuple(types.uint64, STONE_WORDS))
    states = np.zeros((stream.shape[0], 1), np.uint8)
    ends = np.ones(stream.shape[1], np.int64)
    count_sightings(stream, states, ends, bits, k, counts, stones, n_shards, shard)
    assert set(stones) <= set(counts)  # the ones that entered counts in this call


def test_count_sightings_exact_with_a_big_filter():
    """With a filter far larger than the stream (no false positives): every
    key seen n >= 2 times has count n and the radius index of its column,
    keys seen once are absent, zeros are skipped; feeding the stream in two
    chunks gives the same counts as one."""
    stream = key_stream(0)
    want = Counter(int(h) for h in stream.ravel() if h != 0)
    col = {int(h): c for c in range(stream.shape[1]) for h in stream[:, c] if h != 0}
    assert any(n == 1 for n in want.values()) and any(n >= 5 for n in want.values())
    counts = new_counts()
    count(stream, np.zeros(1 << 16, np.uint64), 4, counts)
    assert unpack(counts) == {h: (n, col[h]) for h, n in want.items() if n >= 2}
    chunked = new_counts()
    bits = np.zeros(1 << 16, np.uint64)
    count(stream[:1234], bits, 4, chunked)
    count(stream[1234:], bits, 4, chunked)
    assert unpack(chunked) == unpack(counts)


def test_count_sightings_small_filter_overcounts_by_at_most_one():
    """With a tiny, saturated filter: every key seen twice or more is kept,
    and any kept count is the true count or one more (a false positive on the
    first sighting)."""
    stream = key_stream(1, rows=2000)
    want = Counter(int(h) for h in stream.ravel() if h != 0)
    counts = new_counts()
    count(stream, np.zeros(2, np.uint64), 2, counts)
    got = unpack(counts)
    assert {h for h, n in want.items() if n >= 2} <= set(got)
    assert all(want[h] <= n <= want[h] + 1 for h, (n, _) in got.items())
    assert any(n == want[h] + 1 for h, (n, _) in got.items())


@pytest.mark.parametrize("n_shards", [2, 3])
def test_count_sightings_shards_partition_the_counts(n_shards):
    """With n_shards, each shard counts exactly the keys whose high 32 bits are that
    shard modulo n_shards, with their unsharded counts: the shards' counts partition
    the whole's (a filter without false positives)."""
    stream = key_stream(2)
    whole = new_counts()
    count(stream, np.zeros(1 << 16, np.uint64), 4, whole)
    merged: dict[int, tuple[int, int]] = {}
    for s in range(n_shards):
        part = new_counts()
        count(stream, np.zeros(1 << 16, np.uint64), 4, part, n_shards, s)
        got = unpack(part)
        assert got and all((h >> 32) % n_shards == s for h in got)
        assert all(int(shard_of(np.uint64(h), n_shards)) == s for h in got)
        assert not set(got) & set(merged)
        merged |= got
    assert merged == unpack(whole)


@pytest.mark.parametrize("min_count", [0, 2, 3, 5, 1000])
def test_count_arrays_keeps_min_count_as_a_filter_of_all(min_count):
    """count_arrays(counts, min_count) (the kept patterns dumped alone, so the
    harvest's memory is the dict's, not the dict's again as arrays) is every
    pattern's arrays filtered by count >= min_count, in the same order."""
    counts = new_counts()
    count(key_stream(0), np.zeros(1 << 16, np.uint64), 4, counts)
    keys, n, rad = count_arrays(counts)
    keep = n >= min_count
    got = count_arrays(counts, min_count)
    if min_count in (3, 5):  # the filter's entries are all seen twice: these cut
        assert 0 < len(got[0]) < len(keys)
    for a, b in zip(got, (keys[keep], n[keep], rad[keep]), strict=True):
        np.testing.assert_array_equal(a, b)


# --- harvest -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("min_count", "min_radius", "max_radius"), [(2, 3, 10), (3, 3, 10), (2, 4, 6)]
)
def test_harvest_keeps_the_patterns_played_min_count_times(min_count, min_radius, max_radius):
    """harvest keeps exactly the (radius, canonical hash) pairs the oracle
    counts >= min_count times over the played non-pass moves, with the exact
    counts; the table is ordered by radius, then by decreasing count, then
    by hash; its metadata are the config's."""
    games = all_games()
    cfg = FeatureConfig(
        min_count=min_count, min_radius=min_radius, max_radius=max_radius, bloom_bits=1 << 22
    )
    table = harvest(games, cfg, progress=False)
    want = oracle_table(games, cfg)
    assert len(want) > 10
    assert table_dict(table) == want
    assert len(table) == len(want)
    keys = list(
        zip(table.radius.tolist(), (-table.count).tolist(), table.hashes.tolist(), strict=True)
    )
    assert keys == sorted(keys)
    assert (table.min_radius, table.max_radius, table.min_count) == (
        min_radius,
        max_radius,
        min_count,
    )
    assert set(table.radius.tolist()) <= set(range(min_radius, max_radius + 1))
    assert table.count.min() >= min_count
    check_stones(table)


def check_stones(table: PatternTable) -> None:
    """Every kept pattern's configuration hashes back to the pattern (states_hash),
    uses the four states only, and is 0 beyond its own template."""
    t = make_templates(table.min_radius, table.max_radius)
    assert table.stones is not None and table.stones.shape == (len(table), int(t.ends[-1]))
    assert table.stones.max() <= 3
    for h, r, st in zip(table.hashes, table.radius, table.stones, strict=True):
        n = int(t.ends[t.radii.index(int(r))])
        assert states_hash(t, st[:n]) == int(h)
        assert not st[n:].any()


def test_harvest_with_two_workers_equals_one():
    """workers=2 (fork pool, several chunks of games) gives the same table as
    workers=1, array for array."""
    games = all_games() * 8  # more than one chunk of 25 games
    cfg = FeatureConfig(min_count=5, bloom_bits=1 << 22)
    one = harvest(games, cfg, workers=1, progress=False)
    two = harvest(iter(games), cfg, workers=2, progress=False)
    for name in ("hashes", "radius", "count", "stones"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))
    assert len(one) > 0


@pytest.mark.parametrize(("cap", "workers"), [(40, 1), (200, 2), (10**9, 1)])
def test_harvest_past_its_cap_counts_in_shards(tmp_path, caplog, cap, workers):
    """With a parts folder and more patterns than harvest_max_patterns, the harvest
    counts the saved sightings in shards: the same table, array for array, as the
    harvest without a cap (a filter without false positives), the oracle's; and again
    from the saved parts alone."""
    games = all_games() * 4  # several chunks of 25 games
    cfg = FeatureConfig(min_count=3, bloom_bits=1 << 22, harvest_max_patterns=cap)
    whole = harvest(games, cfg, progress=False)  # no parts: no cap
    assert table_dict(whole) == oracle_table(games, cfg)
    parts = tmp_path / "parts"
    with caplog.at_level("INFO", logger="gomove.data.harvest"):
        sharded = harvest(iter(games), cfg, workers=workers, progress=False, parts=parts)
        again = harvest(iter(games), cfg, workers=1, progress=False, parts=parts)
    said = [r.getMessage() for r in caplog.records if "shards" in r.getMessage()]
    assert len(said) == (0 if cap == 10**9 else 2)
    assert len(list(parts.iterdir())) == -(-len(games) // CHUNK_GAMES)
    for table in (sharded, again):
        for name in ("hashes", "radius", "count", "stones"):
            np.testing.assert_array_equal(getattr(table, name), getattr(whole, name))


@pytest.mark.parametrize("n_shards", [1, 3, 5])
def test_count_shards_equals_the_whole(tmp_path, n_shards):
    """count_shards over a harvest's saved parts, in any number of shards, keeps the
    patterns the harvest keeps (table_of puts them in the same order)."""
    games, parts = all_games() * 2, tmp_path / "parts"
    cfg = FeatureConfig(min_count=2, bloom_bits=1 << 22)
    whole = harvest(games, cfg, progress=False, parts=parts)
    c = count_patterns(games, cfg, progress=False, parts=parts)  # reads the parts
    found = count_shards(parts, c.chunks, c.t, cfg, n_shards, progress=False)
    table = table_of(*found, c.t, cfg)
    for name in ("hashes", "radius", "count", "stones"):
        np.testing.assert_array_equal(getattr(table, name), getattr(whole, name))


def test_false_positives_of_a_filter():
    """false_positives: the share of bits set, and that share to the k."""
    bits = np.zeros(1 << 21, np.uint64)
    assert false_positives(bits, 4) == (0.0, 0.0)
    bits[::2] = np.iinfo(np.uint64).max
    assert false_positives(bits, 3) == (0.5, 0.125)


def test_a_full_filter_is_reported_and_the_shards_size_theirs(tmp_path, caplog):
    """A filter far too small: the whole count warns that it is full and counts many
    patterns one too many; the shards' filters, sized by the sightings, keep every
    pattern played twice or more with its count or one more, and overcount fewer."""
    games = all_games() * 2
    cfg = FeatureConfig(min_count=2, bloom_bits=64, harvest_max_patterns=40)
    want = oracle_table(games, cfg)
    with caplog.at_level("INFO", logger="gomove.data.harvest"):
        whole = table_dict(harvest(games, cfg, progress=False))
        full = [r for r in caplog.records if "full" in r.getMessage()]
        assert [r.levelname for r in full] == ["WARNING"]
        sharded = table_dict(harvest(games, cfg, progress=False, parts=tmp_path / "parts"))
    assert any("shard 1/" in r.getMessage() for r in caplog.records)

    def too_many(got: dict) -> int:
        assert set(want) <= set(got)
        assert all(want.get(k, 1) <= n <= want.get(k, 1) + 1 for k, n in got.items())
        return sum(n != want.get(k) for k, n in got.items())

    assert too_many(sharded) < too_many(whole)


def test_a_tiny_cap_is_refused():
    """features.harvest_max_patterns below 1,000: a clear error from validate (each shard
    reads every saved sighting again, so a tiny cap would mean thousands of passes)."""
    with pytest.raises(ValueError, match="harvest_max_patterns"):
        FeatureConfig(harvest_max_patterns=10).validate()
    FeatureConfig(harvest_max_patterns=1000).validate()


def test_count_patterns_cap_needs_parts():
    """A cap without a folder for the sightings to count again: a clear error."""
    with pytest.raises(ValueError, match="parts folder"):
        count_patterns(all_games(), FeatureConfig(), max_patterns=10)


def test_harvest_no_games():
    """No games: an empty table that still records its radii and min_count."""
    table = harvest([], FeatureConfig(min_count=2), progress=False)
    assert len(table) == 0 and table.hashes.dtype == np.uint64
    assert (table.min_radius, table.max_radius, table.min_count) == (3, 10, 2)


def test_pattern_table_save_load_round_trip(tmp_path):
    """save then load gives the same arrays and metadata; level names are
    "r<radius>:0x<hash>"; lookup maps hash i to level i + 1; a file of another
    format version is refused."""
    table = harvested()
    path = tmp_path / "sub" / "table.npz"
    table.save(path)
    back = PatternTable.load(path)
    for name in ("hashes", "radius", "count", "stones"):
        np.testing.assert_array_equal(getattr(back, name), getattr(table, name))
        assert getattr(back, name).dtype == getattr(table, name).dtype
    assert (back.min_radius, back.max_radius, back.min_count) == (3, 10, 2)
    names = back.level_names()
    assert names[0] == f"r{int(table.radius[0])}:0x{int(table.hashes[0]):016x}"
    assert len(set(names)) == len(names) == len(table)
    assert back.summary()["patterns"] == len(table)
    assert sum(back.summary()["per_radius"].values()) == len(table)
    tkeys, tvals = back.lookup()
    assert [table_get(tkeys, tvals, h) for h in back.hashes] == list(range(1, len(back) + 1))
    bad = tmp_path / "bad.npz"
    meta = np.array([TABLE_FORMAT_VERSION + 1, 3, 10, 2])
    np.savez(bad, hashes=table.hashes, radius=table.radius, count=table.count, meta=meta)
    with pytest.raises(ValueError, match="format"):
        PatternTable.load(bad)


# --- registry --------------------------------------------------------------------------


def small_registry() -> Registry:
    return Registry(
        [
            Group("pass", ("not_after_pass", "after_pass")),
            Group("capture", TACTICAL_LEVELS["capture"]),
            Group("border", ("1", "2", "3", "4")),
        ]
    )


def test_registry_offsets_and_names():
    """Index 0 is "none"; groups take consecutive index ranges in order
    (offsets 1, 3, 8); names read "group:level"; index() and name() invert
    each other over every feature, by level number or by level name."""
    reg = small_registry()
    assert reg.offsets.tolist() == [1, 3, 8]
    assert reg.sizes.tolist() == [2, 5, 4]
    assert reg.n_features == 12
    assert reg.name(NONE_INDEX) == "none"
    assert reg.name(3 + 4) == "capture:ladder"
    assert reg.index("capture", "ladder") == reg.index("capture", 5) == 7
    assert reg.names()[1:4] == ["pass:not_after_pass", "pass:after_pass", "capture:atari_defence"]
    for i in range(1, reg.n_features):
        group, level = reg.name(i).split(":", 1)
        assert reg.index(group, level) == i
    assert reg.group_of().tolist() == [-1, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2]
    with pytest.raises(ValueError, match="levels 1..5"):
        reg.index("capture", 6)
    with pytest.raises(ValueError, match="levels 1..4"):
        reg.index("border", 0)


def test_registry_global_indices():
    """levels[..., G] -> offset + level - 1 where the level is set, 0 (none)
    where it is absent, for any leading shape."""
    reg = small_registry()
    levels = np.array([[[0, 0, 0], [2, 5, 1]], [[1, 1, 4], [0, 3, 0]]])
    want = np.array([[[0, 0, 0], [2, 7, 8]], [[1, 3, 11], [0, 5, 0]]])
    np.testing.assert_array_equal(reg.global_indices(levels), want)


def test_registry_round_trip_and_errors():
    """to_dict/from_dict give an equal registry with the same spec hash; a
    changed level changes the hash; duplicate groups are refused; an unknown
    group is a KeyError naming the known groups."""
    reg = small_registry()
    back = Registry.from_dict(reg.to_dict())
    assert back == reg and back.spec_hash() == reg.spec_hash()
    assert back.offsets.tolist() == reg.offsets.tolist()
    other = Registry([Group("pass", ("a", "b"))] + list(reg.groups[1:]))
    assert other != reg and other.spec_hash() != reg.spec_hash()
    with pytest.raises(ValueError, match="duplicate"):
        Registry([Group("pass", ("a",)), Group("pass", ("b",))])
    with pytest.raises(KeyError, match="no feature group 'atari'.*capture"):
        reg.index("atari", 1)
    with pytest.raises(KeyError, match="no feature group"):
        reg.group_index("shape")


# --- FeatureExtractor -----------------------------------------------------------------


def test_extractor_registry_follows_the_config():
    """Without shapes: the registry has the configured tactical groups in
    tactical.py's order and sizes; with shapes it needs a table, and appends a
    "shape" group with one level per pattern (shape_radius gives radii)."""
    cfg = FeatureConfig(shapes=False)
    fx = FeatureExtractor(cfg)
    assert fx.registry.group_names == TACTICAL_GROUPS
    assert fx.registry.name(fx.registry.index("capture", 5)) == "capture:ladder"
    assert fx.registry.name(fx.registry.index("dist_prev", 16)) == "dist_prev:>=17"
    assert fx.registry.n_features == 1 + sum(len(v) for v in TACTICAL_LEVELS.values())
    with pytest.raises(ValueError, match="PatternTable"):
        FeatureExtractor(FeatureConfig(shapes=True))
    table = harvested()
    fx = FeatureExtractor(FeatureConfig(min_count=2), table)
    assert fx.registry.group_names == TACTICAL_GROUPS + ("shape",)
    radius = fx.shape_radius()
    o = fx.registry.offsets[-1]
    assert radius[o : o + len(table)].tolist() == table.radius.tolist()
    assert not radius[:o].any()


@pytest.mark.parametrize("name", ["game9.sgf", "ko9.sgf", "pass9.sgf", "hand"])
def test_extractor_game_candidates_and_winners(name):
    """For every position of the game: the candidates are the oracle's legal
    moves (simple ko, recomputed by replaying with reference.after_move) in
    loc order, then pass last; cand[pos_start + winner] is the move played;
    no position is skipped. The shape level of each candidate is the level of
    the largest radius whose oracle hash is in the table (0: none)."""
    game = HAND_GAMES[0] if name == "hand" else fixture(name)
    table = harvested()
    fx = FeatureExtractor(FeatureConfig(min_count=2), table)
    out = fx.game(game)
    t = fx.templates
    level_of = {
        (int(r), int(h)): i + 1
        for i, (h, r) in enumerate(zip(table.hashes, table.radius, strict=True))
    }
    size = game.size
    n_moves = len(game.moves)
    assert out["skipped"] == 0
    assert out["move"].tolist() == list(range(n_moves))
    pos_start = np.concatenate([[0], np.cumsum(out["n_cand"])])
    assert set(out["columns"]) == set(TACTICAL_GROUPS) | {"shape"}
    assert all(len(c) == pos_start[-1] for c in out["columns"].values())
    color = [0] * ((size + 2) ** 2)
    ko = -1
    for i, (player, point) in enumerate(game.moves):
        cands = out["cand"][pos_start[i] : pos_start[i + 1]].tolist()
        legal = sorted(ref.legal_moves(color, player, size, ko))
        assert cands == legal + [PASS], f"move {i + 1}"
        loc = move_to_loc(point, size)
        assert out["cand"][pos_start[i] + out["winner"][i]] == loc
        if i % 3 == 0:  # the oracle's shape levels, on every third position
            shapes = out["columns"]["shape"][pos_start[i] : pos_start[i + 1]].tolist()
            for c, got in zip(legal, shapes[:-1], strict=True):
                want = 0
                for r in t.radii:
                    h = ref.pattern_hash(color, c, player, size, r, t.dx, t.dy, t.keys)
                    want = level_of.get((r, h), want)
                assert got == want, f"move {i + 1} candidate {c}"
            assert out["columns"]["shape"][pos_start[i + 1] - 1] == 0  # pass: no shape
        if point is None:
            ko = -1
        else:
            ko = ref.ko_after(color, loc, player, size)
            color, _ = ref.after_move(color, loc, player, size)


def test_extractor_tactical_columns_only():
    """With a subset of tactical groups and no shapes, the columns are those
    groups, the registry has only them, and the pass candidate's pass level
    is 1 or 2 as the previous move was a stone or a pass."""
    cfg = FeatureConfig(tactical=["pass", "border"], shapes=False)
    fx = FeatureExtractor(cfg)
    assert fx.registry.group_names == ("pass", "border")
    game = fixture("pass9.sgf")
    out = fx.game(game)
    assert set(out["columns"]) == {"pass", "border"}
    pos_end = np.cumsum(out["n_cand"]) - 1
    prev_pass = [False] + [m is None for _, m in game.moves[:-1]]
    assert out["columns"]["pass"][pos_end].tolist() == [2 if p else 1 for p in prev_pass]
    # border of a candidate: its line, 1..4, absent from the 5th
    start = 0
    for n in out["n_cand"]:
        for loc, level in zip(
            out["cand"][start : start + n - 1],
            out["columns"]["border"][start : start + n - 1],
            strict=True,
        ):
            assert level == ref.border_level(int(loc), 9)
        start += n
    assert to_loc(4, 4, 9) in out["cand"].tolist()


def test_harvest_min_count_1_keeps_patterns_seen_once():
    """min_count=1 should keep every played pattern, as harvest's docstring says."""
    games = all_games()
    cfg = FeatureConfig(min_count=1, bloom_bits=1 << 22)
    assert table_dict(harvest(games, cfg, progress=False)) == oracle_table(games, cfg)


def test_the_cap_keys_the_table_not_the_datasets(tmp_path):
    """harvest_max_patterns changes the pattern table's cache key (past it, the filter's
    false positives differ) but no dataset's: it changes no feature level."""
    capped = FeatureConfig(harvest_max_patterns=1000)
    assert capped.key_dict() == FeatureConfig().key_dict()
    table = [
        harvest_source(FIXTURES, ReadConfig(), c, tmp_path)[0] for c in (capped, FeatureConfig())
    ]
    assert table[0] != table[1] and table[0].parent == tmp_path
