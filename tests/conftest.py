"""Fixtures shared by the test modules: small sets of random 9x9 games on disk, a dataset."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from gamegen import random_sgf
from synthetic import cfg_of, tiny_overrides

from gomove.data.dataset import Dataset, build_dataset, harvest_cached
from gomove.data.extractor import FeatureExtractor
from gomove.features.config import FeatureConfig
from gomove.models.mm import BradleyTerry
from gomove.models.territory.crf import TerritoryCRF
from gomove.play.predict import Predictor
from gomove.reading.games import ReadConfig
from gomove.train.trainers import run

# The engines the tests start live for a few commands: no background warm-up in each
# (gomove.play.warmup; test_warmup runs it).
os.environ["GOMOVE_WARMUP"] = "0"


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


@pytest.fixture(scope="session")
def capture_model():
    """A Predictor whose model is hand-made: tactical features only, every capture level
    with gamma e^4, everything else 1: the obvious capture must come first."""
    ex = FeatureExtractor(FeatureConfig(shapes=False))
    log_gamma = torch.zeros(ex.registry.n_features, dtype=torch.float64)
    g = ex.registry.group_index("capture")
    o, s = int(ex.registry.offsets[g]), int(ex.registry.sizes[g])
    log_gamma[o : o + s] = 4.0
    return Predictor(BradleyTerry(ex.registry.n_features, log_gamma), ex, name="capture")


@pytest.fixture(scope="session")
def territory_path(tmp_path_factory) -> Path:
    """A crf.pt of a hand-set Stern CRF in which stones own their surroundings: field +1
    on the mover's stones, -1 on the opponent's, 0 on empty points (index colour * 3 +
    degree - 2), every coupling 1."""
    crf = TerritoryCRF("stern")
    with torch.no_grad():
        crf.field.copy_(torch.tensor([0.0] * 3 + [1.0] * 3 + [-1.0] * 3, dtype=torch.float64))
        crf.coupling.fill_(1.0)
    return crf.save(tmp_path_factory.mktemp("territory") / "crf.pt")


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Path]:
    """model.pt of tiny mm and fbt runs and a policy.npz of a tiny features=light run,
    on random 9x9 games (synthetic.tiny_overrides)."""
    root = tmp_path_factory.mktemp("runs")
    train, test = root / "train", root / "test"
    for part, n, seed in ((train, 10, 0), (test, 3, 50)):
        part.mkdir()
        for i in range(n):
            (part / f"g{i}.sgf").write_bytes(random_sgf(9, 60, seed=seed + i))
    base = tiny_overrides((train, test), root)
    out = {}
    for name, extra in (
        ("mm", ["model.max_iters=2"]),
        ("fbt", ["model=fbt", "k=2", "model.epochs=1"]),
        ("light", ["model.max_iters=2", "features=light"]),
    ):
        run(cfg_of([*base, *extra]), root / name)
        out[name] = root / name / "model.pt"
    out["policy"] = root / "light" / "policy.npz"
    return out
