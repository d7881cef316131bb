"""What a trainer is given and what a row of the trainer table holds.

Terms:
- TrainContext: everything a move model's trainer gets besides its config and its
  data, passed whole (``fit(cfg, data, ctx)``): the features (n_features, the
  groups' spans, the registry when the data has one), the device, validation,
  TensorBoard, progress bars, the validation batches, the train state for
  ``resume=true``, torchrun's world and the pattern hierarchy.
- Trainer: one row of gomove.train.trainers.TRAINERS: a name (``model=NAME``), the
  schema of its config group, ``run(cfg, out_dir, trainer)``, the whole of ``gomove
  train model=NAME``, and for a move model its ``fit``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from gomove.data.batch import Batch
from gomove.data.flat import FlatData
from gomove.features.hierarchy import Hierarchy
from gomove.features.registry import GroupSpan, Registry
from gomove.models import MoveModel
from gomove.models.device import resolve_device
from gomove.train.monitor import Validate
from gomove.train.resume import Resume
from gomove.train.schemas import ModelConfig
from gomove.train.world import World

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

TrainData = FlatData | Iterable[Batch]
History = list[dict[str, Any]]


@dataclass(frozen=True)
class TrainContext:
    """What every move model's trainer gets besides its config and data (module docstring)."""

    n_features: int
    groups: list[GroupSpan]
    device: torch.device | str = "auto"  # resolved when made: "auto" is CUDA when present
    validate: Validate | None = None
    writer: SummaryWriter | None = None
    progress: bool = True
    val_data: Iterable[Batch] | None = None  # held-out batches (the rankers' calibration)
    checkpoint: Resume | None = None  # the train state (mm, fbt, lfr; the rankers have none)
    world: World = World()  # the ranks, each training on its share (gomove.train.world)
    # every pattern of a candidate's chain in its team (features.shapes=all)
    hierarchy: Hierarchy | None = None
    registry: Registry | None = None  # the data's registry (fbt's init_checkpoint is checked)

    def __post_init__(self) -> None:
        object.__setattr__(self, "device", resolve_device(self.device))

    @classmethod
    def of(cls, registry: Registry, device: torch.device | str = "auto", **kw: Any) -> TrainContext:
        """The context of data with this registry: its features and groups."""
        return cls(registry.n_features, registry.group_spans(), device, registry=registry, **kw)


Fit = Callable[[Any, TrainData, TrainContext], tuple[MoveModel, History]]
Run = Callable[[Any, Path, "Trainer"], dict[str, Any]]


@dataclass(frozen=True)
class Trainer:
    """One row of the trainer table (module docstring)."""

    name: str
    config: type[ModelConfig]
    run: Run
    fit: Fit | None = None  # a move model's trainer (the run of gomove.train.move_models)

    def model_config(self, cfg: DictConfig) -> ModelConfig:
        """cfg.model as this trainer's schema, checked: a bad combination fails before any
        work, a config that needs data.val too when there is none."""
        model_cfg = self.config(**OmegaConf.to_container(cfg.model, resolve=True))
        model_cfg.validate()
        why = model_cfg.needs_validation()
        if why is not None and cfg.data.val is None:
            raise ValueError(f"{why}: set data.val")
        return model_cfg


def seed_everything(seed: int) -> None:
    """Seed Python's, numpy's and torch's global generators (a run's start)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
