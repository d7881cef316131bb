"""Checkpoints, the model table and the readable gamma table.

A checkpoint holds everything needed to score new positions: the feature
config, the registry, the harvested pattern table, the model's name (a key of
``MODEL_CLASSES``), its hyperparameters (``model_args``, the model's
``hparams()``: k for fbt/lfr, empty for mm) and its parameters (the state
dict). ``read_checkpoint`` reads the file; ``load_checkpoint`` also rebuilds the
model by the class its name stands for. Loading a model imports nothing of
training: gomove.train.trainers builds its trainer table on ``MODEL_CLASSES``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from gomove.atomic import atomic_write, atomic_write_text
from gomove.data.extractor import FeatureExtractor
from gomove.features.config import FeatureConfig
from gomove.features.light import PATTERN3X3_GROUP
from gomove.features.pattern_table import PatternTable
from gomove.features.registry import SHAPE_GROUP, Registry
from gomove.models import MoveModel
from gomove.models.fbt import FactorizationBT
from gomove.models.mm import BradleyTerry
from gomove.models.packed import is_packed, read_packed
from gomove.models.rankers import GaussianRanking, WinRateRanking

CHECKPOINT_VERSION = 1
PATTERN_GROUPS = (SHAPE_GROUP, PATTERN3X3_GROUP)  # listed by their best and worst levels only

# Which class a model name stands for (``cfg.model.name``, a checkpoint's ``model_name``).
MODEL_CLASSES: dict[str, type[MoveModel]] = {
    "mm": BradleyTerry,  # Coulom 2007: one gamma per level
    "fbt": FactorizationBT,  # Xiao and Müller 2016: latent pairwise interactions
    "lfr": FactorizationBT,  # Wistuba and Schmidt-Thieme 2013: the same score, pairwise loss
    "pr": WinRateRanking,  # Wistuba et al. 2012: probabilistic ranking
    "bar": GaussianRanking,  # Bayesian approximation ranking (Weng and Lin)
    "lbr": GaussianRanking,  # loopy Bayesian ranking (Stern et al.)
}


def model_class(name: str) -> type[MoveModel]:
    """The class of a model name; a clear error listing the known ones otherwise."""
    try:
        return MODEL_CLASSES[name]
    except KeyError:
        known = ", ".join(MODEL_CLASSES)
        raise ValueError(f"unknown model {name!r}; known models: {known}") from None


def save_checkpoint(
    path: str | Path,
    model: MoveModel,
    ex: FeatureExtractor,
    cfg: DictConfig | dict,
    history: list[dict] | None = None,
) -> None:
    path = Path(path)
    table = ex.table
    state = {
        "version": CHECKPOINT_VERSION,
        "model_name": str(cfg["model"]["name"]),
        "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "model_args": model.hparams(),
        "registry": ex.registry.to_dict(),
        "features": OmegaConf.to_container(OmegaConf.structured(ex.cfg)),
        "patterns": None if table is None else table.to_dict(),
        "config": OmegaConf.to_container(cfg, resolve=True) if OmegaConf.is_config(cfg) else cfg,
        "history": history or [],
    }
    atomic_write(path, lambda f: torch.save(state, f))


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The checkpoint dict, with ``extractor`` (FeatureExtractor) rebuilt and checked; a
    ``.npz`` path is a packed checkpoint (gomove.models.packed)."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: no such model file")
    if is_packed(path):
        state = read_packed(path)
    else:
        state = torch.load(path, map_location="cpu", weights_only=False)
        if state.get("version") != CHECKPOINT_VERSION:
            raise ValueError(
                f"{path}: checkpoint version {state.get('version')}, expected {CHECKPOINT_VERSION}"
            )
    p = state["patterns"]
    table = None if p is None else PatternTable.from_dict(p)
    ex = FeatureExtractor(FeatureConfig(**state["features"]), table)
    same = (
        ex.registry.spec_hash() == state["registry_hash"]
        if state["registry"] is None
        else ex.registry == Registry.from_dict(state["registry"])
    )
    if not same:
        raise ValueError(
            f"{path}: the registry rebuilt from the checkpoint's features differs "
            "from the saved one (feature code changed since it was trained)"
        )
    state["extractor"] = ex
    return state


def write_gamma_table(
    path: str | Path, model: MoveModel, reg: Registry, top_shapes: int = 30
) -> None:
    """Coulom's Table 1 as learned: gamma and Elo of every non-shape level, best/worst shapes.

    A level's gamma is exp of its ``level_strength()`` (an mm model's
    log-gamma; an fbt/lfr model's w, the level's strength alone), followed by
    the model's ``level_notes()`` columns (fbt/lfr: ``|v|``, the norm of its
    interaction vector). Shapes are ordered by log-strength.
    """
    log_gamma = model.level_strength().numpy()
    notes = {title: a.numpy() for title, a in model.level_notes().items()}
    extra = "".join(f" {title} |" for title in notes)
    rule = "---|" * len(notes)
    lines = [f"| feature | level | gamma | Elo |{extra}", f"|---|---|---|---|{rule}"]

    def row(group: str, level: str, i: int) -> str:
        lg = log_gamma[i]
        cells = f"| {group} | {level} | {math.exp(lg):.3f} | {400 * lg / math.log(10):+.0f} |"
        return cells + "".join(f" {a[i]:.3f} |" for a in notes.values())

    shapes = []  # pattern groups: shape, and light.py's pattern3x3
    for group, off in zip(reg.groups, reg.offsets, strict=True):
        idx = np.arange(off, off + len(group))
        if group.name in PATTERN_GROUPS:
            shapes.append((group, idx))
            continue
        lines += [row(group.name, lv, int(i)) for lv, i in zip(group.levels, idx, strict=True)]
    for group, idx in shapes:
        order = idx[np.argsort(-log_gamma[idx])]
        lines += [
            "",
            f"{group.name}: {len(idx)} patterns; the {top_shapes} strongest and weakest.",
            "",
            f"| feature | pattern | gamma | Elo |{extra}",
            f"|---|---|---|---|{rule}",
        ]
        chosen = (
            list(order[:top_shapes]) + list(order[-top_shapes:])
            if len(order) > 2 * top_shapes
            else list(order)
        )
        lines += [row(group.name, group.levels[int(i) - idx[0]], int(i)) for i in chosen]
    atomic_write_text(path, "\n".join(lines) + "\n")


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """A checkpoint (``read_checkpoint``) with ``module``, its model rebuilt on the CPU
    by the class of its name, its hparams checked against ``model_args``."""
    state = read_checkpoint(path)
    module = model_class(state["model_name"]).from_state_dict(state["model"])
    hparams = module.hparams()
    for key, value in state.get("model_args", {}).items():
        if hparams.get(key) != value:
            raise ValueError(
                f"{path}: model_args {key} = {value} but the saved parameters give "
                f"{key} = {hparams.get(key)}"
            )
    state["module"] = module
    return state
