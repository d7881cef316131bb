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
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from gomove.data.batch import Batch
from gomove.features.hierarchy import Hierarchy
from gomove.features.registry import GroupSpan
from gomove.models.device import resolve_device
from gomove.models.mm import BradleyTerry
from gomove.train.config import MMConfig
from gomove.train.mm.chain import ChainPasses
from gomove.train.mm.loop import MMPasses, StateStore, fit_gammas
from gomove.train.mm.padded import PaddedMM
from gomove.train.monitor import Validate, report_row

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

log = logging.getLogger(__name__)


def train_mm(
    data: Iterable[Batch] | MMPasses,
    n_features: int,
    groups: list[GroupSpan],
    cfg: MMConfig,
    device: torch.device | str = "auto",
    validate: Validate | None = None,
    writer: SummaryWriter | None = None,
    progress: bool = True,
    checkpoint: StateStore | None = None,
    hierarchy: Hierarchy | None = None,
) -> tuple[BradleyTerry, list[dict[str, Any]]]:
    """Fit gammas by MM from gamma = 1 (loop.fit_gammas); return the model on
    ``device`` and one history row per iteration.

    data: an MM engine (gomove.train.mm.compiled, gomove.train.mm.tensor over the flat
    layout), or a re-iterable of Batches (streamed once per update, ``PaddedMM``).
    validate adds val_top1 and val_log_evidence to every row; writer (a
    SummaryWriter) gets the same scalars; checkpoint (gomove.train.resume.Resume):
    saved after every iteration and continued from (fit_gammas). hierarchy
    (features.shapes=all): every pattern of a candidate's chain in its team, trained
    as raw log-gammas one radius at a time (gomove.train.mm.chain); the model returned
    (and validated) holds the effective ones, a largest-only model.
    """
    torch.manual_seed(cfg.seed)
    device = resolve_device(device)
    passes = data if isinstance(data, MMPasses) else PaddedMM(data, device, groups)
    if hierarchy is not None:
        passes, groups = ChainPasses(passes, hierarchy), list(hierarchy.groups)
    model = BradleyTerry(n_features).to(device)

    def effective(log_gamma: np.ndarray) -> torch.Tensor:
        phi = log_gamma if hierarchy is None else hierarchy.sum_down(log_gamma)
        return torch.from_numpy(phi).to(device)

    def report(row: dict[str, Any], log_gamma: np.ndarray) -> None:
        model.log_gamma = effective(log_gamma)
        report_row(row, model.log_probs, validate, writer, MM_SCALARS, log)

    log_gamma, history = fit_gammas(
        passes, n_features, groups, cfg, report, progress=progress, checkpoint=checkpoint
    )
    model.log_gamma = effective(log_gamma)
    return model, history


MM_SCALARS = (
    ("log_likelihood", "train/log_likelihood", "log-lik {:.5f}"),
    ("log_posterior", "train/log_posterior", "log-post {:.5f}"),
    ("seconds", "time/seconds_per_iter", "{:.2f}s"),
)
