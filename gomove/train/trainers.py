"""The trainer table: TRAINERS, what ``gomove train model=NAME`` runs for every NAME.

One row a trainer (gomove.train.context.Trainer): its name, the schema of its config
group (gomove/configs/model/NAME.yaml, registered in Hydra's ConfigStore as
``base_NAME`` by ``register``), its run (the whole of ``gomove train model=NAME``) and,
for a move-prediction model, its ``fit(cfg, data, ctx)``:

- the move models (Coulom's MM, FBT and LFR by SGD, the comparison paper's rankers)
  share one run, gomove.train.move_models.run_move_model: data -> features ->
  datasets -> fit -> evaluation -> model.pt (the model class comes from
  gomove.models.checkpoint.MODEL_CLASSES, the table that loading a model uses without
  importing any of this);
- ``territory``: Stern's territory CRF on the counted games (gomove.train.territory.run);
- ``balance``: simulation balancing of a playout policy (gomove.train.balance.run).

Adding a trainer: its config schema in gomove.train.schemas, its
gomove/configs/model/<name>.yaml (``defaults: [base_<name>]``), its trainer in a folder
of gomove/train, and one row here; a move model also needs its module in
gomove/models and its line in MODEL_CLASSES.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from hydra import compose, initialize_config_module
from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from gomove.features.config import FeatureConfig
from gomove.samples import sample_path
from gomove.train.balance.run import run_balance
from gomove.train.context import Trainer
from gomove.train.mm.fit import train_mm
from gomove.train.move_models import run_move_model
from gomove.train.rankers.fit import fit_ranker
from gomove.train.schemas import (
    BalanceConfig,
    Config,
    DataConfig,
    MMConfig,
    ModelConfig,
    RankerConfig,
    SGDConfig,
    TerritoryConfig,
)
from gomove.train.sgd.loop import train_sgd
from gomove.train.territory.run import run_territory

TRAINERS: dict[str, Trainer] = {
    t.name: t
    for t in (
        # Coulom 2007: one gamma per level, fitted by minorization-maximization
        Trainer("mm", MMConfig, run_move_model, train_mm),
        # Xiao and Müller 2016: pairwise interactions of latent vectors, softmax loss, SGD
        Trainer("fbt", SGDConfig, run_move_model, train_sgd),
        # Wistuba and Schmidt-Thieme 2013: the same score, pairwise loss (FBT's baseline)
        Trainer("lfr", SGDConfig, run_move_model, train_sgd),
        # Wistuba et al. 2012, III: the comparison paper's rankers (numba updates on the
        # CPU whatever the device; PR also counts padded batches in tensor form)
        # probabilistic ranking: theta = wins / appearances
        Trainer("pr", RankerConfig, run_move_model, fit_ranker),
        # Bayesian Approximation Ranking: Weng and Lin's online update (Algorithm 1)
        Trainer("bar", RankerConfig, run_move_model, fit_ranker),
        # Loopy Bayesian Ranking: Stern et al.'s EP on pattern teams, filtered
        Trainer("lbr", RankerConfig, run_move_model, fit_ranker),
        # Stern's territory CRF, learned from the final territory of counted games
        Trainer("territory", TerritoryConfig, run_territory),
        # Huang, Coulom and Lin 2010: playout gammas balanced on labelled positions
        Trainer("balance", BalanceConfig, run_balance),
    )
}
MOVE_MODELS = tuple(name for name, t in TRAINERS.items() if t.fit is not None)


def trainer_of(name: str) -> Trainer:
    """The row of a trainer's name; a clear error listing the known ones otherwise."""
    try:
        return TRAINERS[name]
    except KeyError:
        known = ", ".join(TRAINERS)
        raise ValueError(f"unknown model {name!r}; known models: {known}") from None


def model_config(cfg: DictConfig) -> ModelConfig:
    """cfg.model as its trainer's schema, checked (Trainer.model_config)."""
    return trainer_of(cfg.model.name).model_config(cfg)


def run(cfg: DictConfig, out_dir: str | Path) -> dict[str, Any]:
    """The whole of ``gomove train``: the run of cfg.model.name's trainer; its metrics."""
    trainer = trainer_of(cfg.model.name)
    if cfg.get("threads"):
        torch.set_num_threads(cfg.threads)
    return trainer.run(cfg, Path(out_dir), trainer)


def register() -> None:
    """Register the config schemas, every trainer's from TRAINERS, and the ${sample:NAME}
    resolver (idempotent)."""
    cs = ConfigStore.instance()
    cs.store(name="base_config", node=Config)
    cs.store(group="data", name="base_data", node=DataConfig)
    cs.store(group="features", name="base_features", node=FeatureConfig)
    for t in TRAINERS.values():
        cs.store(group="model", name=f"base_{t.name}", node=t.config(name=t.name))
    if not OmegaConf.has_resolver("sample"):
        OmegaConf.register_new_resolver("sample", sample_path)


def compose_config(overrides: list[str]) -> DictConfig:
    """The config ``train.py`` composes from these overrides (gomove/configs, the
    structured schemas registered), outside a Hydra app: for scripts and benchmarks."""
    register()
    with initialize_config_module(config_module="gomove.configs", version_base="1.3"):
        return compose("config", overrides)
