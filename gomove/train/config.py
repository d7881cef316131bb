"""Config schemas (Hydra ConfigStore): a typo in an override fails at once, clearly.

Groups mirror the code: ``data`` (gomove.data), ``features``
(gomove.features.config.FeatureConfig), ``model`` (``ModelConfig``: MM,
gomove.train.mm.MMConfig plus the model's name; FBT and LFR use
gomove.train.sgd.SGDConfig itself, ``base_sgd``, its seed read from the top).

Top-level ``k`` and ``sample`` exist so that ``python train.py model=fbt k=5
sample=10`` works as written: configs/model/fbt.yaml sets ``k: ${k}`` and
``sample: ${sample}``, so the model group reads them (``model.k=5`` works
too, replacing the interpolation). ``model=mm`` ignores both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, OmegaConf

from gomove.features.config import FeatureConfig


@dataclass
class DataConfig:
    name: str = MISSING
    # a path or a list of paths of any kind the reader takes (file, folder, zip, tar, glob)
    train: Any = MISSING
    val: Any = None
    test: Any = MISSING
    max_games: int | None = None  # training games (first N in file order)
    max_val_games: int | None = None
    max_test_games: int | None = None
    sizes: list[int] = field(default_factory=lambda: [19])
    handicap: bool = True
    min_moves: int = 0
    strict: bool = False
    superko: bool = True
    cache_dir: str = "cache"
    shard_games: int = 100
    batch_size: int = 512
    workers: int | None = None  # extraction processes (None: all cores)


@dataclass
class ModelConfig:
    name: str = "mm"
    max_iters: int = 30
    tol: float = 1e-3
    schedule: str = "cyclic"
    # hold the training set flat in memory with cached team strengths (~24 bytes per
    # candidate, ~10x faster); false streams padded batches from the shards instead
    flat: bool = True


@dataclass
class Config:
    data: DataConfig = MISSING
    features: FeatureConfig = MISSING
    # ModelConfig or gomove.train.sgd.SGDConfig, whichever the chosen model/*.yaml builds on
    model: Any = MISSING
    k: int = 10  # latent dimension of fbt / lfr (model.k reads it)
    sample: int = 0  # fbt's sampled gradient: 0 = full, else S (model.sample reads it)
    seed: int = 0
    device: str = "auto"
    progress: bool = True
    threads: int | None = None  # torch threads (None: torch's default)
    checkpoint: str | None = None  # python -m gomove.evaluate checkpoint=PATH


def _sample(name: str) -> str:
    from gomove.samples import sample_path

    return sample_path(name)


def register() -> None:
    """Register the schemas and the ${sample:NAME} resolver (idempotent)."""
    from gomove.train.sgd import SGDConfig

    cs = ConfigStore.instance()
    cs.store(name="base_config", node=Config)
    cs.store(group="data", name="base_data", node=DataConfig)
    cs.store(group="features", name="base_features", node=FeatureConfig)
    cs.store(group="model", name="base_mm", node=ModelConfig)
    cs.store(group="model", name="base_sgd", node=SGDConfig)
    if not OmegaConf.has_resolver("sample"):
        OmegaConf.register_new_resolver("sample", _sample)
