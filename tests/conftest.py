"""Fixtures shared by the test modules: small sets of random 9x9 games on disk, a dataset."""

from __future__ import annotations

from pathlib import Path

import pytest
from gamegen import random_sgf

from gomove.data.dataset import Dataset, build_dataset, harvest_cached
from gomove.features.config import FeatureConfig
from gomove.features.extractor import FeatureExtractor
from gomove.reading.games import ReadConfig


@pytest.fixture(scope="module")
def extracted(tmp_path_factory) -> tuple[Dataset, FeatureExtractor]:
    """A dataset of 8 random 9x9 games (shapes harvested, 3 shards) and its extractor."""
    d = tmp_path_factory.mktemp("games")
    for i in range(8):
        (d / f"g{i}.sgf").write_bytes(random_sgf(9, 50, seed=100 + i))
    cache = tmp_path_factory.mktemp("cache")
    rc = ReadConfig(sizes=(9,))
    cfg = FeatureConfig(min_count=2, max_radius=5, bloom_bits=1 << 16)
    ex = FeatureExtractor(cfg, harvest_cached(d, rc, cfg, cache, workers=1, progress=False))
    return build_dataset(d, rc, ex, cache, shard_games=3, workers=1, progress=False), ex


@pytest.fixture(scope="module")
def ds(extracted) -> Dataset:
    return extracted[0]


@pytest.fixture(scope="module")
def games(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("games")
    for part, n, seed in (("train", 10, 0), ("test", 3, 50)):
        (root / part).mkdir()
        for i in range(n):
            (root / part / f"g{i}.sgf").write_bytes(random_sgf(9, 60, seed=seed + i))
    return root / "train", root / "test"
