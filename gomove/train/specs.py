"""The trainer table: MODELS, what training a model name takes.

Terms:
- spec: a ``ModelSpec``: the name (``cfg.model.name``, a checkpoint's
  ``model_name``), the schema of its config group (gomove.train.config,
  registered in Hydra's ConfigStore as ``base_<name>`` by ``register``), its
  trainer (``fit``). The
  model class comes from gomove.models.checkpoint.MODEL_CLASSES, the table that
  loading a model uses without importing any of this.
- fit(cfg, data, ctx): train a model of the spec from data, gomove.data.flat.FlatData
  (MM's and FBT/LFR's numba engines on the CPU and their torch engines elsewhere,
  as ``model.engine`` says; the rankers' numba updates on the CPU) or a BatchLoader
  of padded batches (torch, any
  device; the oracle the other engines are tested against); returns the model
  and one history row per iteration.

Adding a model: its module in gomove/models (parameters and scoring, the
MoveModel interface) and its line in MODEL_CLASSES, its trainer in a folder of
gomove/train, its schema in gomove.train.config, its
gomove/configs/model/<name>.yaml (``defaults: [base_<name>]``) and one entry in
MODELS.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from gomove.data.batch import Batch
from gomove.data.dataset import Dataset
from gomove.data.flat import FlatData
from gomove.data.loader import BatchLoader
from gomove.features.config import FeatureConfig
from gomove.features.hierarchy import Hierarchy
from gomove.features.registry import Registry
from gomove.models import MoveModel
from gomove.models.checkpoint import load_checkpoint, model_class
from gomove.samples import sample_path
from gomove.train.calibrate import calibrate
from gomove.train.config import (
    Config,
    DataConfig,
    MMConfig,
    ModelConfig,
    RankerConfig,
    SGDConfig,
)
from gomove.train.mm.distributed import distributed_mm
from gomove.train.mm.fit import train_mm
from gomove.train.mm.loop import MMPasses
from gomove.train.mm.padded import PaddedMM
from gomove.train.mm.tensor import flat_mm
from gomove.train.monitor import Validate
from gomove.train.rankers.fit import fit_ranker
from gomove.train.resume import Resume
from gomove.train.sgd.loop import train_sgd
from gomove.train.world import World

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

log = logging.getLogger(__name__)

TrainData = FlatData | Iterable[Batch]


@dataclass(frozen=True)
class TrainContext:
    """What every trainer gets besides its config and data: the features, the device,
    validation, TensorBoard, whether to show progress bars and the validation batches."""

    registry: Registry
    device: torch.device
    validate: Validate | None = None
    writer: SummaryWriter | None = None
    progress: bool = True
    val_data: Iterable[Batch] | None = None  # held-out batches (the rankers' calibration)
    checkpoint: Resume | None = None  # the train state (mm, fbt, lfr; the rankers have none)
    world: World = World()  # the ranks, each training on its share (gomove.train.world)
    # every pattern of a candidate's chain in its team (features.shapes=all)
    hierarchy: Hierarchy | None = None


History = list[dict[str, Any]]
Fit = Callable[[Any, TrainData, TrainContext], tuple[MoveModel, History]]


@dataclass(frozen=True)
class ModelSpec:
    """One model name: config schema, model class, trainer (module docstring)."""

    name: str
    config: type[ModelConfig]
    fit: Fit

    @property
    def model(self) -> type[MoveModel]:
        """The model class (gomove.models.checkpoint.MODEL_CLASSES, the one table of them)."""
        return model_class(self.name)

    def train_data(
        self,
        cfg: ModelConfig,
        ds: Dataset,
        device: torch.device,
        batch_size: int,
        progress: bool = False,
    ) -> FlatData | BatchLoader:
        """What ``fit`` trains on: ds in the flat layout (``cfg.flat``; every trainer has
        engines over it on every device, the rankers' run on the CPU), or padded
        batches of batch_size positions cut from it."""
        if cfg.flat:
            data = ds.flat()
            log.info("training set: %.2f GB, memory-mapped", data.nbytes() / 1e9)
            return data
        return BatchLoader(ds, batch_size=batch_size)


def calibrated(
    fitted: tuple[MoveModel, History], cfg: MMConfig | SGDConfig, ctx: TrainContext
) -> tuple[MoveModel, History]:
    """The model tempered on the validation set when cfg.calibrate (gomove.train.calibrate);
    the temperature joins the last history row."""
    model, history = fitted
    if not cfg.calibrate:
        return model, history
    if ctx.val_data is None:
        raise ValueError(f"{cfg.needs_validation()}: set data.val")
    model, tau, floor = calibrate(model, ctx.val_data, cfg.calibrate_by)
    history[-1]["temperature"] = tau
    history[-1]["floor"] = floor
    log.info(
        "calibrated on the validation set by %s: temperature %.4f, floor %.3f",
        cfg.calibrate_by,
        tau,
        floor,
    )
    return model, history


def fit_mm(cfg: MMConfig, data: TrainData, ctx: TrainContext) -> tuple[MoveModel, History]:
    """Coulom's MM (gomove.train.mm.fit) on the flat layout or on padded batches."""
    reg = ctx.registry
    if isinstance(data, FlatData):
        engine: MMPasses = flat_mm(data, ctx.device, cfg.team_dtype, cfg.engine)
    else:
        engine = PaddedMM(data, ctx.device, reg.group_spans())
    fitted = train_mm(
        distributed_mm(engine, ctx.world),
        reg.n_features,
        reg.group_spans(),
        cfg,
        device=ctx.device,
        validate=ctx.validate,
        writer=ctx.writer,
        progress=ctx.progress,
        checkpoint=ctx.checkpoint,
        hierarchy=ctx.hierarchy,
    )
    return calibrated(fitted, cfg, ctx)


def fit_sgd(cfg: SGDConfig, data: TrainData, ctx: TrainContext) -> tuple[MoveModel, History]:
    """FBT or LFR by SGD (gomove.train.sgd.loop), from cfg.init_checkpoint when set."""
    init = None
    if cfg.init_checkpoint:
        state = load_checkpoint(cfg.init_checkpoint)
        if state["extractor"].registry != ctx.registry:
            raise ValueError(f"{cfg.init_checkpoint}: its feature registry differs from the data's")
        init = state["module"]
        log.info("init from %s (%s)", cfg.init_checkpoint, state["model_name"])
    reg = ctx.registry
    fitted = train_sgd(
        data,
        reg.n_features,
        cfg,
        device=ctx.device,
        validate=ctx.validate,
        writer=ctx.writer,
        progress=ctx.progress,
        groups=reg.group_spans(),
        init=init,
        checkpoint=ctx.checkpoint,
        world=ctx.world,
        hierarchy=ctx.hierarchy,
    )
    return calibrated(fitted, cfg, ctx)


def fit_rankers(cfg: RankerConfig, data: TrainData, ctx: TrainContext) -> tuple[MoveModel, History]:
    """PR, BAR or LBR (gomove.train.rankers.fit), calibrated on ctx.val_data when given.

    No train state: a few passes in file order, so a killed run trains again."""
    if ctx.world.distributed:
        raise ValueError(f"model={cfg.name} trains on one process (online updates, in order)")
    reg = ctx.registry
    if ctx.checkpoint is not None and ctx.checkpoint.resume:
        log.warning("resume: %s keeps no train state; training from the start", cfg.name)
    return fit_ranker(
        cfg,
        data,
        reg.group_spans(),
        reg.n_features,
        ctx.device,
        validate=ctx.validate,
        val_data=ctx.val_data,
        writer=ctx.writer,
        hierarchy=ctx.hierarchy,
    )


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        # Coulom 2007: one gamma per level, fitted by minorization-maximization
        ModelSpec("mm", MMConfig, fit_mm),
        # Xiao and Müller 2016: pairwise interactions of latent vectors, softmax loss, SGD
        ModelSpec("fbt", SGDConfig, fit_sgd),
        # Wistuba and Schmidt-Thieme 2013: the same score, pairwise loss (FBT's baseline)
        ModelSpec("lfr", SGDConfig, fit_sgd),
        # Wistuba et al. 2012, III: the comparison paper's rankers (numba updates on the
        # CPU whatever the device; PR also counts padded batches in tensor form)
        # probabilistic ranking: theta = wins / appearances
        ModelSpec("pr", RankerConfig, fit_rankers),
        # Bayesian Approximation Ranking: Weng and Lin's online update (Algorithm 1)
        ModelSpec("bar", RankerConfig, fit_rankers),
        # Loopy Bayesian Ranking: Stern et al.'s EP on pattern teams, filtered
        ModelSpec("lbr", RankerConfig, fit_rankers),
    )
}


def model_spec(name: str) -> ModelSpec:
    """The spec of a model name; a clear error listing the known ones otherwise."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; known models: {', '.join(MODELS)}") from None


def model_config(cfg: DictConfig) -> ModelConfig:
    """cfg.model as its spec's schema, checked (a bad combination fails before any work,
    a config that needs data.val too when there is none)."""
    spec = model_spec(cfg.model.name)
    model_cfg = spec.config(**OmegaConf.to_container(cfg.model, resolve=True))
    model_cfg.validate()
    why = model_cfg.needs_validation()
    if why is not None and cfg.data.val is None:
        raise ValueError(f"{why}: set data.val")
    return model_cfg


def register() -> None:
    """Register the config schemas, every model's from MODELS, and the ${sample:NAME}
    resolver (idempotent)."""
    cs = ConfigStore.instance()
    cs.store(name="base_config", node=Config)
    cs.store(group="data", name="base_data", node=DataConfig)
    cs.store(group="features", name="base_features", node=FeatureConfig)
    for spec in MODELS.values():
        cs.store(group="model", name=f"base_{spec.name}", node=spec.config(name=spec.name))
    if not OmegaConf.has_resolver("sample"):
        OmegaConf.register_new_resolver("sample", sample_path)
