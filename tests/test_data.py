"""Datasets on disk: the flat files, the cache key, interrupted and concurrent runs,
corruption, a full disk, the padded batch loader.

Invariants checked:
- the dataset's levels, winners, games and moves equal the extractor's output game by
  game (the slow reference); the narrowest dtype holds each group;
- the loader's Batch equals a slow per-candidate construction from the extractor
  (global index = offset + level - 1, 0 for absent and for padding; mask; winner);
- the expert's candidate of every position is the played move;
- datasets are reused for the same games and features, rebuilt when either changes;
- an extraction killed after a chunk resumes after it (the committed chunks are not
  extracted again, bytes past them are cut) and gives the same files as one run;
- a full disk is a clear error and the next run resumes; a flipped byte is found
  when the dataset is opened, reported in one warning naming the file and rebuilt;
- runs building one dataset at once both succeed with the same, intact files;
- extraction with 2 workers gives the same files as 1 worker.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from gamegen import random_sgf

from gomove.atomic import atomic_save_npz
from gomove.board.coords import PASS, from_loc
from gomove.data import dataset as dataset_module
from gomove.data.dataset import Dataset, build_dataset, harvest_cached, input_fingerprint
from gomove.data.extractor import FeatureExtractor
from gomove.data.flat import level_dtype
from gomove.data.loader import BatchLoader, flat_batch
from gomove.data.store import Appender, CorruptCache
from gomove.features.config import FeatureConfig
from gomove.reading.games import ReadConfig, iter_games


@pytest.fixture(scope="module")
def games_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("games")
    for i in range(12):
        (d / f"g{i:02d}.sgf").write_bytes(random_sgf(9, 40 + 3 * i, seed=i))
    return d


def feat_cfg(**kw) -> FeatureConfig:
    return FeatureConfig(min_count=2, max_radius=6, bloom_bits=1 << 16, **kw)


def build(games_dir, ex, cache, **kw) -> Dataset:
    args = {"kind": "t", "shard_games": 5, "workers": 1, "progress": False} | kw
    return build_dataset(games_dir, ReadConfig(sizes=(9,)), ex, cache, **args)


@pytest.fixture(scope="module")
def dataset(games_dir, tmp_path_factory) -> tuple[Dataset, FeatureExtractor]:
    cache = tmp_path_factory.mktemp("cache")
    rc = ReadConfig(sizes=(9,))
    cfg = feat_cfg()
    table = harvest_cached(games_dir, rc, cfg, cache, workers=1, progress=False)
    ex = FeatureExtractor(cfg, table)
    return build(games_dir, ex, cache), ex


@pytest.fixture(scope="module")
def reference(dataset, games_dir) -> list[dict]:
    """The extractor's output for every game, in dataset order."""
    _, ex = dataset
    return [ex.game(g) for g in iter_games(games_dir, ReadConfig(sizes=(9,)))]


def files_of(ds: Dataset) -> dict[str, bytes]:
    return {n: (ds.path / f"{n}.bin").read_bytes() for n in ds.meta["files"]}


def test_level_dtype():
    assert level_dtype(16) == np.uint8
    assert level_dtype(255) == np.uint8
    assert level_dtype(256) == np.uint16
    assert level_dtype(70000) == np.int32


def test_dataset_equals_the_extractor(dataset, reference):
    """Every game's every move is a position, its levels those the extractor gives."""
    ds, ex = dataset
    assert ds.n_games == 12
    assert ds.n_positions == sum(40 + 3 * i for i in range(12))
    flat = ds.flat()
    assert isinstance(flat.words, np.memmap) and not flat.words.flags.writeable
    for g, name in enumerate(ex.registry.group_names):
        want = np.concatenate([r["columns"][name] for r in reference])
        np.testing.assert_array_equal(flat.level(g), want)
        assert flat.level(g).dtype == level_dtype(len(ex.registry.groups[g]))
    np.testing.assert_array_equal(
        np.diff(flat.pos_start), np.concatenate([r["n_cand"] for r in reference])
    )
    np.testing.assert_array_equal(flat.winner, np.concatenate([r["winner"] for r in reference]))
    np.testing.assert_array_equal(flat.move, np.concatenate([r["move"] for r in reference]))
    np.testing.assert_array_equal(
        flat.game, np.concatenate([np.full(len(r["winner"]), i) for i, r in enumerate(reference)])
    )
    assert ds.bytes_per_position > 0
    assert ds.nbytes == sum((ds.path / f"{n}.bin").stat().st_size for n in ds.meta["files"])


def test_batches_equal_slow_reference(dataset, reference):
    """Padded feat/mask/winner equal a per-candidate loop over the extractor's output."""
    ds, ex = dataset
    reg = ex.registry
    cand = [(r, p) for r in reference for p in range(len(r["winner"]))]
    rows = np.array([0, 3, 7, 60, 61, len(cand) - 1])
    batch = flat_batch(ds.flat(), rows)
    m = batch.feat.shape[1]
    for bi, p in enumerate(rows):
        r, q = cand[p]
        lo = int(r["n_cand"][:q].sum())
        n = int(r["n_cand"][q])
        assert int(batch.mask[bi].sum()) == n
        assert int(batch.winner[bi]) == r["winner"][q]
        for j in range(m):
            for g, name in enumerate(reg.group_names):
                level = int(r["columns"][name][lo + j]) if j < n else 0
                want = 0 if level == 0 else reg.index(name, level)
                assert int(batch.feat[bi, j, g]) == want


def test_winner_is_the_played_move(dataset, reference, games_dir):
    """The candidate at winner of every position is the move the game played."""
    ds, _ = dataset
    flat = ds.flat()
    games = list(iter_games(games_dir, ReadConfig(sizes=(9,))))
    starts = np.concatenate([[0], np.cumsum([len(r["cand"]) for r in reference])])
    cand = np.concatenate([r["cand"] for r in reference])
    for p in range(flat.n_positions):
        game = games[int(flat.game[p])]
        _, move = game.moves[int(flat.move[p])]
        loc = int(cand[flat.pos_start[p] + flat.winner[p]])
        assert (None if loc == PASS else from_loc(loc, 9)) == move
    assert starts[-1] == flat.n_candidates


def test_loader_streams_all_positions(dataset):
    """Every position comes exactly once per epoch, shuffled or not; max_positions caps."""
    ds, _ = dataset
    for shuffle in (False, True):
        loader = BatchLoader(ds, batch_size=64, shuffle=shuffle, seed=3)
        seen = [(int(g), int(m)) for b in loader for g, m in zip(b.game, b.move, strict=True)]
        assert len(seen) == ds.n_positions == len(set(seen))
        assert all(b.feat.dtype == torch.int64 for b in loader)
    assert sum(len(b) for b in BatchLoader(ds, batch_size=64, max_positions=100)) == 100


def test_interrupted_extraction_resumes(dataset, games_dir, tmp_path, monkeypatch):
    """Killed after its second chunk, an extraction leaves no dataset.json; the next
    run extracts only the chunks after the committed ones, cuts the bytes a killed
    chunk left, and ends with the files of an uninterrupted run."""
    ds, ex = dataset
    real = dataset_module._extract_chunk
    calls = []

    def dies_on_third(games):
        calls.append(games[0][0])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(games)

    monkeypatch.setattr(dataset_module, "_extract_chunk", dies_on_third)
    with pytest.raises(KeyboardInterrupt):
        build(games_dir, ex, tmp_path)
    folder = next(p for p in tmp_path.iterdir() if p.is_dir())
    assert not (folder / "dataset.json").exists()
    assert (folder / "progress.json").exists()
    with open(folder / "records.bin", "ab") as f:  # half a chunk written when killed
        f.write(b"\x07" * 1000)
    calls.clear()
    monkeypatch.setattr(dataset_module, "_extract_chunk", dies_on_third)
    again = build(games_dir, ex, tmp_path)
    assert calls == [10]  # only the third chunk (games 10, 11) was extracted again
    assert files_of(again) == files_of(ds)
    assert again.meta["read"] == ds.meta["read"] and again.n_games == ds.n_games
    assert not (folder / "progress.json").exists()


def test_full_disk_is_a_clear_error_and_resumes(dataset, games_dir, tmp_path, monkeypatch):
    ds, ex = dataset
    real = Appender.append
    n = []

    def full(self, rows):
        n.append(1)
        if len(n) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(self, rows)

    monkeypatch.setattr(Appender, "append", full)
    with pytest.raises(OSError, match="no space left on the device of .*resumes"):
        build(games_dir, ex, tmp_path)
    assert not any(tmp_path.glob("*/dataset.json"))
    monkeypatch.setattr(Appender, "append", real)
    assert files_of(build(games_dir, ex, tmp_path)) == files_of(ds)


def test_flipped_byte_is_found_and_rebuilt(dataset, games_dir, tmp_path, caplog):
    ds, ex = dataset
    first = build(games_dir, ex, tmp_path)
    path = first.path / "records.bin"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptCache, match="records.bin: checksum"):
        Dataset.open(first.path)
    with caplog.at_level(logging.WARNING):
        again = build(games_dir, ex, tmp_path)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "records.bin" in warned[0] and "rebuilding" in warned[0]
    assert files_of(again) == files_of(ds)
    (again.path / "winner.bin").write_bytes(b"")  # cut short: found by its length
    with pytest.raises(CorruptCache, match="winner.bin: 0 bytes"):
        Dataset.open(again.path)


def test_datasets_share_the_extractors_registry(dataset, games_dir, tmp_path, caplog):
    """A dataset built or reused for an extractor holds the extractor's registry
    object (its shape names once in memory, not once per train, validation and
    test set), and its meta no registry; one whose recorded features differ from
    the extractor's is rebuilt, said in a warning."""
    ds, ex = dataset
    first = build(games_dir, ex, tmp_path)
    assert first.registry is ex.registry and "registry" not in first.meta
    again = build(games_dir, ex, tmp_path)  # reused from the cache
    assert again.registry is ex.registry and "registry" not in again.meta
    alone = Dataset.open(first.path)  # no extractor: its own, equal
    assert alone.registry == ex.registry and alone.registry is not ex.registry
    meta_path = first.path / "dataset.json"
    meta = json.loads(meta_path.read_text())
    meta["registry"]["groups"][-1]["levels"][-1] += "x"
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(CorruptCache, match="features differ"):
        Dataset.open(first.path, registry=ex.registry)
    with caplog.at_level(logging.WARNING):
        rebuilt = build(games_dir, ex, tmp_path)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "features differ" in warned[0] and "rebuilding" in warned[0]
    assert files_of(rebuilt) == files_of(ds)


CHILD = """
import sys
import numpy as np
from gomove.data.dataset import build_dataset, harvest_cached
from gomove.features.config import FeatureConfig
from gomove.data.extractor import FeatureExtractor
from gomove.reading.games import ReadConfig
games, tables, cache, out = sys.argv[1:]
rc, cfg = ReadConfig(sizes=(9,)), FeatureConfig(min_count=2, max_radius=6, bloom_bits=1 << 16)
ex = FeatureExtractor(cfg, harvest_cached(games, rc, cfg, tables, workers=1, progress=False))
ds = build_dataset(games, rc, ex, cache, kind="t", shard_games=5, workers=1, progress=False)
np.save(out, np.asarray(ds.flat().words))
"""


def test_concurrent_builds_share_one(dataset, games_dir, tmp_path):
    """Two runs started at once on one cache both finish, with one intact dataset."""
    ds, _ = dataset
    outs = [tmp_path / f"out{i}.npy" for i in range(2)]
    cache = tmp_path / "cache"
    args = [str(games_dir), str(ds.path.parent), str(cache)]
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, *args, str(o)]) for o in outs]
    assert [p.wait(300) for p in procs] == [0, 0]
    want = np.asarray(ds.flat().words)
    for o in outs:
        np.testing.assert_array_equal(np.load(o), want)
    (folder,) = [p for p in cache.iterdir() if p.is_dir()]
    assert files_of(Dataset.open(folder)) == files_of(ds)


def test_corrupt_pattern_table_is_harvested_anew(games_dir, tmp_path, caplog):
    rc, cfg = ReadConfig(sizes=(9,)), feat_cfg()
    first = harvest_cached(games_dir, rc, cfg, tmp_path, workers=1, progress=False)
    (path,) = tmp_path.glob("patterns-*.npz")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING):
        again = harvest_cached(games_dir, rc, cfg, tmp_path, workers=1, progress=False)
    assert any(path.name in r.getMessage() for r in caplog.records)
    np.testing.assert_array_equal(again.hashes, first.hashes)


def test_parallel_extraction_matches_serial(dataset, games_dir, tmp_path):
    ds, ex = dataset
    assert files_of(build(games_dir, ex, tmp_path, workers=2)) == files_of(ds)


def test_cache_reused_and_invalidated(dataset, games_dir, tmp_path):
    """Same games + features -> same folder; other features or games -> another folder."""
    ds, ex = dataset
    cache = ds.path.parent
    again = build(games_dir, ex, cache)
    assert again.path == ds.path
    ex2 = FeatureExtractor(feat_cfg(shapes=False))
    other = build(games_dir, ex2, cache)
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


def test_atomic_save_leaves_nothing_on_failure(tmp_path):
    class Boom:
        def __array__(self, *a, **k):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        atomic_save_npz(tmp_path / "x.npz", a=Boom())
    assert list(tmp_path.iterdir()) == []
