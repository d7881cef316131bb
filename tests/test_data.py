"""Datasets on disk: shards, the cache key, interrupted runs, the padded batch loader.

Invariants checked:
- a shard round-trips through save/load unchanged; the narrowest dtype holds each group;
- the loader's Batch equals a slow per-candidate construction from the shard
  (global index = offset + level - 1, 0 for absent and for padding; mask; winner);
- the expert's candidate in every batch is the played move;
- datasets are reused for the same games and features, rebuilt when either changes;
- a shard left by an interrupted extraction is reused, and no partial file is ever left;
- extraction with 2 workers gives the same shards as 1 worker.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from gamegen import random_sgf

from gomove.atomic import atomic_save_npz
from gomove.board.coords import PASS, from_loc
from gomove.data.dataset import Dataset, build_dataset, harvest_cached, input_fingerprint
from gomove.data.loader import BatchLoader, shard_batch
from gomove.data.shards import level_dtype, load_shard, save_shard
from gomove.features.config import FeatureConfig
from gomove.features.extractor import FeatureExtractor
from gomove.reading.games import ReadConfig, iter_games


@pytest.fixture(scope="module")
def games_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("games")
    for i in range(12):
        (d / f"g{i:02d}.sgf").write_bytes(random_sgf(9, 40 + 3 * i, seed=i))
    return d


def feat_cfg(**kw) -> FeatureConfig:
    return FeatureConfig(min_count=2, max_radius=6, bloom_bits=1 << 16, **kw)


@pytest.fixture(scope="module")
def dataset(games_dir, tmp_path_factory) -> tuple[Dataset, FeatureExtractor]:
    cache = tmp_path_factory.mktemp("cache")
    rc = ReadConfig(sizes=(9,))
    cfg = feat_cfg()
    table = harvest_cached(games_dir, rc, cfg, cache, workers=1, progress=False)
    ex = FeatureExtractor(cfg, table)
    ds = build_dataset(games_dir, rc, ex, cache, kind="t", shard_games=5, workers=1, progress=False)
    return ds, ex


def test_level_dtype():
    assert level_dtype(16) == np.uint8
    assert level_dtype(255) == np.uint8
    assert level_dtype(256) == np.uint16
    assert level_dtype(70000) == np.int32


def test_dataset_counts_and_roundtrip(dataset, tmp_path):
    """Every game's every move is a position; shards round-trip through save/load."""
    ds, ex = dataset
    assert ds.n_games == 12
    assert ds.n_positions == sum(40 + 3 * i for i in range(12))
    assert len(ds.shards) == 3
    s = ds.load(0)
    save_shard(tmp_path / "x.npz", s)
    s2 = load_shard(tmp_path / "x.npz")
    for k in s.columns:
        np.testing.assert_array_equal(s.columns[k], s2.columns[k])
        assert s.columns[k].dtype == level_dtype(
            len(ex.registry.groups[ex.registry.group_index(k)])
        )
    np.testing.assert_array_equal(s.pos_start, s2.pos_start)
    np.testing.assert_array_equal(s.winner, s2.winner)
    assert ds.bytes_per_position > 0


def test_batches_equal_slow_reference(dataset):
    """Padded feat/mask/winner equal a per-candidate loop over the shard."""
    ds, ex = dataset
    reg = ex.registry
    shard = ds.load(1)
    rows = np.array([0, 3, 7, 20, 21])
    batch = shard_batch(shard, rows, reg.offsets, reg.group_names)
    m = batch.feat.shape[1]
    for bi, p in enumerate(rows):
        lo, hi = shard.pos_start[p], shard.pos_start[p + 1]
        assert int(batch.mask[bi].sum()) == hi - lo
        assert int(batch.winner[bi]) == shard.winner[p]
        for j in range(m):
            for g, name in enumerate(reg.group_names):
                if j < hi - lo:
                    level = int(shard.columns[name][lo + j])
                    want = 0 if level == 0 else reg.index(name, level)
                else:
                    want = 0
                assert int(batch.feat[bi, j, g]) == want


def test_winner_is_the_played_move(dataset, games_dir):
    """cand[winner] of every position is the move the game played."""
    ds, _ = dataset
    games = list(iter_games(games_dir, ReadConfig(sizes=(9,))))
    for i in range(len(ds.shards)):
        s = ds.load(i)
        for p in range(s.n_positions):
            game = games[int(s.game[p])]
            color, move = game.moves[int(s.move[p])]
            loc = int(s.cand[s.pos_start[p] + s.winner[p]])
            assert (None if loc == PASS else from_loc(loc, 9)) == move


def test_loader_streams_all_positions(dataset):
    """Every position comes exactly once per epoch, shuffled or not; max_positions caps."""
    ds, _ = dataset
    for shuffle in (False, True):
        loader = BatchLoader(ds, batch_size=64, shuffle=shuffle, seed=3)
        seen = [(int(g), int(m)) for b in loader for g, m in zip(b.game, b.move, strict=True)]
        assert len(seen) == ds.n_positions == len(set(seen))
        assert all(b.feat.dtype == torch.int64 for b in loader)
    assert sum(len(b) for b in BatchLoader(ds, batch_size=64, max_positions=100)) == 100


def test_cache_reused_and_invalidated(dataset, games_dir, tmp_path):
    """Same games + features -> same folder; other features or games -> another folder."""
    ds, ex = dataset
    cache = ds.path.parent
    rc = ReadConfig(sizes=(9,))
    again = build_dataset(
        games_dir, rc, ex, cache, kind="t", shard_games=5, workers=1, progress=False
    )
    assert again.path == ds.path
    ex2 = FeatureExtractor(feat_cfg(shapes=False))
    other = build_dataset(
        games_dir, rc, ex2, cache, kind="t", shard_games=5, workers=1, progress=False
    )
    assert other.path != ds.path
    assert "shape" not in other.registry.group_names
    fewer = build_dataset(
        games_dir,
        ReadConfig(sizes=(9,), max_games=3),
        ex,
        cache,
        kind="t",
        shard_games=5,
        workers=1,
        progress=False,
    )
    assert fewer.path != ds.path and fewer.n_games == 3


def test_fingerprint_is_the_content(games_dir, tmp_path):
    """The games copied elsewhere with new times keep their fingerprint (hence their
    caches, as after a machine is provisioned anew); one changed byte changes it."""
    copy = tmp_path / "copy"
    shutil.copytree(games_dir, copy)
    os.utime(copy / "g00.sgf", ns=(1, 1))
    assert input_fingerprint(copy) == input_fingerprint(games_dir)
    data = bytearray((copy / "g03.sgf").read_bytes())
    data[-3] ^= 1
    (copy / "g03.sgf").write_bytes(bytes(data))
    assert input_fingerprint(copy) != input_fingerprint(games_dir)


def test_interrupted_extraction_resumes(dataset, games_dir, tmp_path):
    """A finished shard from an interrupted run is reused; dataset.json is written last."""
    ds, ex = dataset
    cache = tmp_path / "cache"
    rc = ReadConfig(sizes=(9,))
    first = build_dataset(
        games_dir, rc, ex, cache, kind="t", shard_games=5, workers=1, progress=False
    )
    (first.path / "dataset.json").unlink()
    (first.path / "shard-00002.npz").unlink()
    marker = first.path / "shard-00000.npz"
    before = marker.stat().st_mtime_ns
    again = build_dataset(
        games_dir, rc, ex, cache, kind="t", shard_games=5, workers=1, progress=False
    )
    assert marker.stat().st_mtime_ns == before  # reused, not rewritten
    assert again.n_positions == first.n_positions
    assert again.meta["n_candidates"] == first.meta["n_candidates"]


def test_parallel_extraction_matches_serial(dataset, games_dir, tmp_path):
    ds, ex = dataset
    par = build_dataset(
        games_dir,
        ReadConfig(sizes=(9,)),
        ex,
        tmp_path,
        kind="t",
        shard_games=5,
        workers=2,
        progress=False,
    )
    for a, b in zip(ds.shards, par.shards, strict=True):
        sa, sb = load_shard(a), load_shard(b)
        for k in sa.columns:
            np.testing.assert_array_equal(sa.columns[k], sb.columns[k])
        np.testing.assert_array_equal(sa.winner, sb.winner)
        np.testing.assert_array_equal(sa.game, sb.game)


def test_atomic_save_leaves_nothing_on_failure(tmp_path):
    class Boom:
        def __array__(self, *a, **k):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        atomic_save_npz(tmp_path / "x.npz", a=Boom())
    assert list(tmp_path.iterdir()) == []
