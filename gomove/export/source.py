"""What the exporters read: a dataset, a run or a checkpoint, opened with clear errors.

Terms:
- dataset: a finished ``cache/<kind>-<key>/`` folder (``dataset.json``).
- run: a run directory holding ``model.pt``, or the checkpoint file itself;
  its training dataset is the one its config names (found in the cache the
  config names, relative paths taken from the current directory, or extracted
  again when absent).
- registry source (``gomove import --registry``): a dataset, a run or a
  checkpoint; what a model needs besides its gammas: the feature config and
  the pattern table, from the checkpoint or rebuilt from a dataset's
  ``dataset.json`` (its shape level names hold each pattern's radius and hash).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf

from gomove.data.dataset import Dataset, build_dataset
from gomove.data.extractor import FeatureExtractor
from gomove.data.sources import paths, read_config
from gomove.features.config import FeatureConfig
from gomove.features.pattern_table import PatternTable
from gomove.features.registry import SHAPE_GROUP
from gomove.models.checkpoint import load_checkpoint


class SourceError(ValueError):
    """A path the exporters cannot use; the message says what it should be."""


def checkpoint_path(path: str | Path) -> Path | None:
    """The checkpoint a run folder or file names, or None when path is neither."""
    p = Path(path)
    if p.is_file() and p.suffix == ".pt":
        return p
    if p.is_dir() and (p / "model.pt").is_file():
        return p / "model.pt"
    return None


def load_run(path: str | Path) -> dict[str, Any]:
    """load_checkpoint of a run folder or checkpoint, errors as SourceError."""
    ckpt = checkpoint_path(path)
    if ckpt is None:
        raise SourceError(f"{path}: not a run folder (no model.pt) nor a checkpoint file")
    try:
        return load_checkpoint(ckpt)
    except Exception as e:  # torch.load raises many kinds on a bad file
        raise SourceError(f"{ckpt}: cannot load the checkpoint ({e})") from None


def open_dataset(path: str | Path) -> Dataset:
    """A dataset folder; SourceError when it is none."""
    p = Path(path)
    if not (p / "dataset.json").is_file():
        raise SourceError(f"{path}: not a dataset folder (no dataset.json)")
    try:
        return Dataset.open(p)
    except (ValueError, KeyError, OSError) as e:
        raise SourceError(f"{path}: {e}") from None


def training_dataset(path: str | Path, progress: bool = False) -> Dataset:
    """The dataset of a dataset folder, or a run's training dataset (module docstring)."""
    p = Path(path)
    if not p.exists():
        raise SourceError(f"{path}: no such file or folder")
    if (p / "dataset.json").is_file():
        return open_dataset(p)
    state = load_run(p)
    cfg = OmegaConf.create(state["config"])
    d = cfg.data
    return build_dataset(
        paths(d.train),
        read_config(d, d.max_games),
        state["extractor"],
        d.cache_dir,
        kind="train",
        shard_games=d.shard_games,
        workers=d.workers,
        progress=progress,
    )


_SHAPE_NAME = re.compile(r"r(\d+):0x([0-9a-f]{16})")


def table_from_names(names: tuple[str, ...], cfg: FeatureConfig) -> PatternTable:
    """The pattern table behind a registry's shape levels (counts unknown: 0, no stones)."""
    hashes, radius = [], []
    for name in names:
        m = _SHAPE_NAME.fullmatch(name)
        if m is None:
            raise SourceError(f"shape level {name!r} is not r<radius>:0x<hash>")
        radius.append(int(m.group(1)))
        hashes.append(int(m.group(2), 16))
    return PatternTable(
        np.array(hashes, dtype=np.uint64),
        np.array(radius, dtype=np.int64),
        np.zeros(len(names), dtype=np.int64),
        cfg.min_radius,
        cfg.max_radius,
        cfg.min_count,
    )


def extractor_of(path: str | Path) -> FeatureExtractor:
    """The feature extractor (config, patterns, registry) of a dataset, run or checkpoint."""
    p = Path(path)
    if not p.exists():
        raise SourceError(f"{path}: no such file or folder")
    if checkpoint_path(p) is not None:
        return load_run(p)["extractor"]
    ds = open_dataset(p)
    cfg = FeatureConfig(**ds.meta["features"])
    table = None
    if cfg.shapes:
        shape = [g for g in ds.registry.groups if g.name == SHAPE_GROUP]
        table = table_from_names(shape[0].levels if shape else (), cfg)
    ex = FeatureExtractor(cfg, table)
    if ex.registry != ds.registry:
        raise SourceError(f"{path}: its registry cannot be rebuilt from its feature config")
    return ex
