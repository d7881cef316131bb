"""Minorization-maximization training of the Bradley-Terry move model (Coulom 2007), in torch.

The schedule, the update and the prior are gomove.train.mm.loop's (numpy;
the terms are defined there). Here ``train_mm`` runs the loop on any engine and
returns a torch model, with validation and TensorBoard on every iteration. The
engines: ``padded`` (streamed padded Batches in torch, any device: the oracle),
``compiled`` (numba over the flat layout, CPU) and ``tensor`` (torch over the
flat layout, any device).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from gomove.data.batch import Batch
from gomove.data.flat import FlatData
from gomove.models.mm import BradleyTerry
from gomove.train.context import TrainContext
from gomove.train.mm.chain import ChainPasses
from gomove.train.mm.distributed import distributed_mm
from gomove.train.mm.loop import MMPasses, Stages, fit_gammas
from gomove.train.mm.padded import PaddedMM
from gomove.train.mm.tensor import flat_mm
from gomove.train.monitor import report_row
from gomove.train.schemas import MMConfig

log = logging.getLogger(__name__)


def train_mm(
    cfg: MMConfig, data: FlatData | Iterable[Batch] | MMPasses, ctx: TrainContext
) -> tuple[BradleyTerry, list[dict[str, Any]]]:
    """Fit gammas by MM from gamma = 1 (loop.fit_gammas); return the model on
    ``ctx.device`` and one history row per iteration.

    data: FlatData (the engine ``model.engine`` picks for the device: compiled loops or
    torch, gomove.train.mm.tensor.flat_mm), a re-iterable of Batches (streamed once per
    update, ``PaddedMM``), or an MM engine itself. On several processes (ctx.world)
    every rank's pass statistics are summed (gomove.train.mm.distributed).
    ctx.validate adds val_top1 and val_log_evidence to every row; ctx.writer (a
    SummaryWriter) gets the same scalars; ctx.checkpoint (gomove.train.resume.Resume):
    saved after every iteration and continued from (fit_gammas). ctx.hierarchy
    (features.shapes=all): every pattern of a candidate's chain in its team, trained
    as raw log-gammas one radius at a time (gomove.train.mm.chain); the model returned
    (and validated) holds the effective ones, a largest-only model.
    """
    torch.manual_seed(cfg.seed)
    cfg = resolve_schedule(cfg, data)
    device, groups, hierarchy = ctx.device, ctx.groups, ctx.hierarchy
    # with the data read in chunks, first MM in memory on its first positions (a stage
    # of the train state of its own)
    stages = Stages(ctx.checkpoint)
    start, warm = None, None
    if isinstance(data, FlatData) and cfg.warm_positions and data.chunk_positions is not None:
        if data.n_positions > cfg.warm_positions:
            start, warm = _warm_start(cfg, data, ctx, stages)
    passes = _engine(cfg, data, ctx)
    if hierarchy is not None:
        groups = list(hierarchy.groups)
    model = BradleyTerry(ctx.n_features).to(device)

    def effective(log_gamma: np.ndarray) -> torch.Tensor:
        phi = log_gamma if hierarchy is None else hierarchy.sum_down(log_gamma)
        return torch.from_numpy(phi).to(device)

    def report(row: dict[str, Any], log_gamma: np.ndarray) -> None:
        model.log_gamma = effective(log_gamma)
        report_row(row, model.log_probs, ctx.validate, ctx.writer, MM_SCALARS, log)

    log_gamma, history = fit_gammas(
        passes, ctx.n_features, groups, cfg, report, progress=ctx.progress,
        checkpoint=stages.stage(None), start=start,
    )  # fmt: skip
    if warm is not None:
        history[0]["warm"] = warm
    model.log_gamma = effective(log_gamma)
    return model, history


def resolve_schedule(cfg: MMConfig, data: FlatData | Iterable[Batch] | MMPasses) -> MMConfig:
    """cfg with schedule "auto" decided: "lazy" over data read in chunks (each pass a read
    of all of it from disk, the warm start's too: one schedule a run), "cyclic" otherwise."""
    if cfg.schedule != "auto":
        return cfg
    chunked = isinstance(data, FlatData) and data.chunk_positions is not None
    return replace(cfg, schedule="lazy" if chunked else "cyclic")


def _engine(
    cfg: MMConfig, data: FlatData | Iterable[Batch] | MMPasses, ctx: TrainContext
) -> MMPasses:
    """The MM passes over data (train_mm's docstring), summed over ranks and over each
    candidate's chain of patterns (ctx.hierarchy) where those apply."""
    if isinstance(data, FlatData):
        passes: MMPasses = flat_mm(data, ctx.device, cfg.team_dtype, cfg.engine)
    elif isinstance(data, MMPasses):
        passes = data
    else:
        passes = PaddedMM(data, ctx.device, ctx.groups)
    passes = distributed_mm(passes, ctx.world)
    return passes if ctx.hierarchy is None else ChainPasses(passes, ctx.hierarchy)


def _log_warm(row: dict[str, Any], _log_gamma: np.ndarray) -> None:
    """A warm start's iteration in the log (it can take many minutes; not validated)."""
    log.info("MM warm start: iter %d  log-lik %.5f  log-post %.5f  %.2fs", row["iter"],
             row["log_likelihood"], row["log_posterior"], row["seconds"])  # fmt: skip


def _warm_start(
    cfg: MMConfig, data: FlatData, ctx: TrainContext, stages: Stages
) -> tuple[np.ndarray, dict[str, Any]]:
    """MM to convergence on the first cfg.warm_positions positions, held in memory (the
    cached engine): its log-gammas, raw as the main stage trains them, and a summary of
    the stage (its iterations, positions, seconds). Kept in the train state once done,
    so a resumed run does not fit it again."""
    done = stages.done("warm")
    if done is not None:
        return np.asarray(done["log_gamma"]), done["summary"]
    t0 = time.perf_counter()
    head = data.head(cfg.warm_positions)
    head.chunk_positions = None  # in memory
    passes = _engine(cfg, head, ctx)
    groups = ctx.groups if ctx.hierarchy is None else list(ctx.hierarchy.groups)
    log.info("MM: a warm start on the first %d positions, in memory", head.n_positions)
    log_gamma, rows = fit_gammas(
        passes, ctx.n_features, groups, cfg, report=_log_warm, progress=ctx.progress,
        checkpoint=stages.stage("warm"),
    )  # fmt: skip
    summary = {
        "positions": head.n_positions,
        "iterations": len(rows) - 1,
        "log_likelihood": rows[-1]["log_likelihood"],
        "seconds": time.perf_counter() - t0,
    }
    stages.finish("warm", {"log_gamma": log_gamma, "summary": summary})
    return log_gamma, summary


MM_SCALARS = (
    ("log_likelihood", "train/log_likelihood", "log-lik {:.5f}"),
    ("log_posterior", "train/log_posterior", "log-post {:.5f}"),
    ("seconds", "time/seconds_per_iter", "{:.2f}s"),
)
