"""The run of a move-prediction model: data -> features -> datasets -> model -> evaluation.

``run_move_model(cfg, out_dir, trainer)`` is ``gomove train model=NAME`` for every move
model of the trainer table (gomove.train.trainers: mm, fbt, lfr, pr, bar, lbr): the
trainer's ``fit(cfg.model, data, ctx)`` is its one call into the model family, the
context passed whole (gomove.train.context.TrainContext), then the calibration
MM, FBT and LFR may ask for (gomove.train.calibrate.calibrated).

Writes into the run directory: ``model.pt`` (checkpoint: registry, pattern
table, parameters, config), ``train_state.pt`` (the trainer's state after
its last iteration or epoch, gomove.train.resume, for ``resume=true``; kept
at the end, so a run killed during evaluation, or rerun with resume=true,
re-evaluates without training again), ``gammas.md`` (Coulom's Table 1 as learned),
``policy.npz`` (the playout policy, with ``features=light`` and ``model=mm``),
``metrics.json``, ``summary.txt``, ``positions.npz`` (every test position's rank,
legal moves, game, move number, matched shape radius and log-probability, for
paired comparisons: gomove.experiment.compare), PNG plots and TensorBoard events (``tb/``).
``gomove evaluate`` scores a saved model alone (gomove.evaluate.saved_model).
"""

from __future__ import annotations

import gc
import logging
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf
from torch.utils.tensorboard import SummaryWriter

from gomove.atomic import atomic_save_npz
from gomove.data.dataset import Dataset, build_dataset, default_workers, harvest_cached
from gomove.data.extractor import FeatureExtractor
from gomove.data.flat import FlatData
from gomove.data.loader import BatchLoader, scoring_batches
from gomove.data.sources import paths, read_config
from gomove.evaluate.measures import measures, score_positions, validator
from gomove.evaluate.report import format_table, write_report
from gomove.features.config import FeatureConfig
from gomove.features.hierarchy import Hierarchy
from gomove.features.light_gammas import LightGammas
from gomove.features.registry import Registry
from gomove.memory import AnonPeak, peak_rss_mb
from gomove.models import MoveModel
from gomove.models.checkpoint import save_checkpoint, write_gamma_table
from gomove.models.device import resolve_device
from gomove.train.calibrate import calibrated
from gomove.train.context import TrainContext, Trainer, seed_everything
from gomove.train.resume import TRAIN_STATE, Resume
from gomove.train.schemas import EngineConfig, MoveModelConfig
from gomove.train.world import (
    World,
    close_world,
    gather_arrays,
    harvest_cached_shared,
    init_world,
    prefix_logs,
)

log = logging.getLogger(__name__)


@dataclass
class Datasets:
    extractor: FeatureExtractor
    train: Dataset
    val: Dataset | None
    test: Dataset


def prepare_data(cfg: DictConfig, world: World | None = None) -> Datasets:
    """Harvest shapes on the training games and extract train/val/test, all cached.

    On several processes (world), each rank extracts and holds its share of the
    training and test games (gomove.train.world), the validation set only
    rank 0, which validates; the shapes are counted on the ranks' shares, the
    counts summed before the table is cut (harvest_cached_shared).
    """
    world = world or World()
    d = cfg.data
    progress = cfg.progress and world.main
    # the cores of a machine shared by its ranks
    workers = d.workers or max(1, default_workers() // world.local_size)
    feat_cfg = FeatureConfig(**OmegaConf.to_container(cfg.features, resolve=True))
    feat_cfg.validate()
    train_read = read_config(d, d.max_games)
    table = None
    if feat_cfg.shapes:
        t0 = time.perf_counter()
        # several ranks: each counts its share, the counts summed before the cut
        harvest = harvest_cached
        if world.distributed:
            harvest = partial(harvest_cached_shared, world=world)
        table = harvest(paths(d.train), train_read, feat_cfg, d.cache_dir, workers, progress)
        log.info(
            "harvested %d shape patterns in %.1f s: %s",
            len(table),
            time.perf_counter() - t0,
            table.summary(),
        )
    ex = FeatureExtractor(feat_cfg, table)

    def build(which: str, max_games: int | None, part: tuple[int, int] | None) -> Dataset:
        t0 = time.perf_counter()
        ds = build_dataset(
            paths(d[which]),
            read_config(d, max_games),
            ex,
            d.cache_dir,
            kind=which,
            shard_games=d.shard_games,
            workers=workers,
            progress=progress,
            part=part,
        )
        log.info(
            "%s: %d games, %d positions, %.0f bytes/position (%s), %.1f s",
            which,
            ds.n_games,
            ds.n_positions,
            ds.bytes_per_position,
            ds.path,
            time.perf_counter() - t0,
        )
        if ds.n_positions == 0:
            share = f" (rank {world.rank}'s share of {world.size})" if part else ""
            raise ValueError(
                f"data.{which} gave no positions{share}: check the paths and filters "
                f"({ds.meta.get('read')})"
            )
        return ds

    train = build("train", d.max_games, world.part)
    val = build("val", d.max_val_games, None) if d.val and world.main else None
    test = build("test", d.max_test_games, world.part)
    return Datasets(ex, train, val, test)


def run_move_model(cfg: DictConfig, out_dir: str | Path, trainer: Trainer) -> dict[str, Any]:
    """Train and evaluate a move model as cfg says; return the metrics.

    Launched by torchrun on several processes (gomove.train.world), every
    rank trains on its share of the data and returns the same metrics; rank 0
    alone writes the run directory.
    """
    out = Path(out_dir)
    seed_everything(cfg.seed)
    world, device = init_world(resolve_device(cfg.device))
    prefix_logs(world)
    with AnonPeak() as anon:
        metrics = _run(cfg, out, world, device, trainer, anon)
    close_world(world)
    return metrics


def _run(
    cfg: DictConfig, out: Path, world: World, device: torch.device, trainer: Trainer,
    anon: AnonPeak,
) -> dict[str, Any]:  # fmt: skip
    if world.main:
        out.mkdir(parents=True, exist_ok=True)
        log.info("config:\n%s", OmegaConf.to_yaml(cfg, resolve=True))
    log.info("device: %s, run directory: %s", device, out)
    progress = cfg.progress and world.main
    model_cfg = trainer.model_config(cfg)  # a bad combination fails now, not after extraction
    t_data = time.perf_counter()
    anon.stage("data")
    data = prepare_data(cfg, world)
    data_seconds = time.perf_counter() - t_data
    anon.stage("train")
    reg = data.extractor.registry
    bs = cfg.data.batch_size
    train_data = train_data_of(model_cfg, data.train, bs, cfg.data.chunk_positions)
    # cut from the memory-mapped layout at each validation (no copy held)
    val_loader = scoring_batches(data.val, bs, device) if data.val else None
    validate = validator(val_loader, device) if val_loader is not None else None
    test_loader = scoring_batches(data.test, bs, device)

    writer = SummaryWriter(str(out / "tb")) if world.main else None
    t0 = time.perf_counter()
    if cfg.resume and world.distributed:
        # each rank's SGD draws from its own generators, which rank 0's file lacks
        raise ValueError("resume=true continues a one-process run; run it without torchrun")
    run_cfg = OmegaConf.to_container(cfg, resolve=True)
    # only rank 0 saves the train state (every rank holds the same model)
    within = None if cfg.save_minutes is None else 60.0 * cfg.save_minutes
    train_state = (
        Resume(out / TRAIN_STATE, run_cfg, resume=cfg.resume, data_seconds=data_seconds,
               peak_anon_mb=lambda: anon.peak_mb, within_seconds=within)
        if world.main else None
    )  # fmt: skip
    hierarchy = training_hierarchy(data.extractor, getattr(model_cfg, "hierarchy", False))
    ctx = TrainContext.of(
        reg, device, validate=validate, writer=writer, progress=progress, val_data=val_loader,
        checkpoint=train_state, world=world, hierarchy=hierarchy,
    )  # fmt: skip
    model, history = trainer.fit(model_cfg, train_data, ctx)
    if isinstance(model_cfg, EngineConfig):  # MM, FBT and LFR may be tempered after
        model, history = calibrated(model, history, model_cfg, ctx)
    # the training and validation sets go before the test set is read: the peak is training's
    del train_data, val_loader, validate, ctx
    gc.collect()
    train_seconds = time.perf_counter() - t0
    if writer is not None:
        writer.close()

    anon.stage("test")
    radius = torch.from_numpy(data.extractor.shape_radius())
    # each rank scores its share of the test games; the records gathered, in game order
    records = score_positions(
        model.log_probs, test_loader, shape_radius=radius, device=device
    ).arrays()
    records = gather_arrays(world, records)
    order = np.lexsort((records["move"], records["game"]))
    records = {k: v[order] for k, v in records.items()}
    metrics = measures(records)
    rank_positions = [int(n) for n in world.all_gather(data.train.n_positions)]
    rank_games = world.all_gather(data.train.n_games)
    metrics.update(
        {
            "train_seconds": train_seconds,
            # the trainer's own per-iteration times: the algorithm, validation excluded
            "algorithm_seconds": sum(float(h.get("seconds", 0.0)) for h in history),
            "model": cfg.model.name,
            "n_features": reg.n_features,
            "n_shapes": len(data.extractor.table) if data.extractor.table is not None else 0,
            "train_positions": sum(rank_positions),
            "train_games": sum(rank_games),
            "iterations": len(history) - 1,
            # the epoch whose parameters the model has (model.keep_best), else the last
            "kept_iter": history[-1].get("kept_iter", history[-1].get("iter")) if history else None,
            "peak_rss_mb": peak_rss_mb(),
            # the process's own memory, without the page cache of the mapped dataset files
            # (gomove.memory.AnonPeak: the run so far, its harvest, training and scoring)
            "peak_anon_mb": anon.peak_mb,
            # this attempt's peak in each stage: data (harvest and extraction, or opening
            # the caches), train (the model's fit and validation), test (scoring)
            "peak_anon_mb_by_stage": dict(anon.by_stage),
            "world_size": world.size,
            "rank_positions": rank_positions,
            # per rank: harvest and extraction (or opening the caches), and peak memory
            "rank_data_seconds": [float(x) for x in world.all_gather(data_seconds)],
            "rank_peak_rss_mb": [float(x) for x in world.all_gather(peak_rss_mb())],
        }
    )
    log.info("memory of the process's own, this attempt's peak by stage: %s", ", ".join(
        f"{k} {v / 1024:.2f} GB" for k, v in anon.by_stage.items()))  # fmt: skip
    # the attempts that trained it (1 unless resumed, which only one process does);
    # resumed, the whole run's cost (gomove.train.resume's ``spent``): the earlier
    # attempts' and this one's
    metrics["attempts"] = 1
    if train_state is not None:
        metrics |= train_state.whole_cost(train_seconds, data_seconds, anon.peak_mb)
    if world.main:
        save_checkpoint(out / "model.pt", model, data.extractor, cfg, history)
        write_gamma_table(out / "gammas.md", model, reg)
        if data.extractor.cfg.light:
            write_policy(out / "policy.npz", model, reg)
        atomic_save_npz(out / "positions.npz", **records)
        write_report(metrics, out)
        print(format_table(metrics))
    return metrics


def train_data_of(
    cfg: MoveModelConfig, ds: Dataset, batch_size: int, chunk_positions: int | None = None
) -> FlatData | BatchLoader:
    """What ``fit`` trains on: ds in the flat layout (``cfg.flat``; every trainer has
    engines over it on every device, the rankers' run on the CPU), read in chunks of
    chunk_positions positions when given (gomove.data.chunks), or padded batches of
    batch_size positions cut from it."""
    if cfg.flat:
        data = ds.flat()
        data.chunk_positions = chunk_positions
        log.info("training set: %.2f GB, memory-mapped", data.nbytes() / 1e9)
        return data
    return BatchLoader(ds, batch_size=batch_size)


def training_hierarchy(ex: FeatureExtractor, model_asks: bool) -> Hierarchy | None:
    """The pattern hierarchy when features.shapes=all or the model asks for it
    (model.hierarchy); else None, every model's largest-only teams."""
    if not (ex.cfg.all_shapes or model_asks):
        return None
    if ex.table is None:
        raise ValueError("the pattern hierarchy needs shape patterns: features.shapes=all")
    h = Hierarchy.of(ex.registry, ex.table)
    log.info(
        "pattern hierarchy: %d of %d patterns have a parent, chains of up to %d",
        int((h.up > 0).sum()), len(ex.table), h.longest,
    )  # fmt: skip
    return h


def write_policy(path: Path, model: MoveModel, reg: Registry) -> None:
    """The playout policy of a light-feature model (features.light_gammas), next to model.pt."""
    log_gamma = model.log_gammas()
    if log_gamma is None:
        log.info("no playout policy: a pattern policy needs a product of gammas (model=mm)")
        return
    LightGammas.from_gammas(reg, log_gamma.numpy()).save(path)
    log.info("playout policy: %s", path)
