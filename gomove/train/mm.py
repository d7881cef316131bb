"""Minorization-maximization training of the Bradley-Terry move model (Coulom 2007), in torch.

The schedule, the update and the prior are gomove.train.mm_loop's (numpy;
the terms are defined there). Here: the padded engine over streamed Batches
(``collect_stats``, ``PaddedMM``: any device, the oracle the flat engines are
checked against), and ``train_mm``, which runs the loop on any engine and
returns a torch model, with validation and TensorBoard on every iteration.
The flat engines are gomove.train.mm_numba's ``NumbaMM`` (CPU) and
gomove.train.mm_flat's ``TorchMM`` (any device).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from gomove.data.batch import Batch
from gomove.features.registry import GroupSpan
from gomove.models.mm import BradleyTerry, accumulate_stats
from gomove.train.config import MMConfig
from gomove.train.device import resolve_device
from gomove.train.mm_loop import MMPasses, PassStats, StateStore, fit_gammas, log_prior
from gomove.train.report import Validate, report_row

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

log = logging.getLogger(__name__)


def check_batch(batch: Batch, groups: Sequence[GroupSpan], n_features: int) -> None:
    """Raise ValueError unless ``batch`` follows the contract of gomove.data.batch.

    Column g may hold only 0 or an index of group g, and the expert move must be
    a real candidate: MM would otherwise silently mix groups that share teams.
    """
    feat, mask, winner = batch.feat, batch.mask, batch.winner
    if feat.dim() != 3 or feat.shape[2] != len(groups):
        raise ValueError(f"feat has shape {tuple(feat.shape)}, want [B, M, {len(groups)}]")
    if feat.dtype != torch.long or mask.dtype != torch.bool:
        raise ValueError("feat must be int64 and mask bool")
    lo = torch.tensor([g[1] for g in groups], device=feat.device)
    hi = lo + torch.tensor([g[2] for g in groups], device=feat.device)
    ok = (feat == 0) | ((feat >= lo) & (feat < hi))
    if not bool(ok.all()):
        b, m, g = (int(v) for v in (~ok).nonzero()[0])
        raise ValueError(
            f"feat[{b}, {m}, {g}] = {int(feat[b, m, g])} is outside group {groups[g][0]!r} "
            f"[{int(lo[g])}, {int(hi[g])}) (n_features {n_features})"
        )
    rows = torch.arange(len(batch), device=winner.device)
    if not bool(mask[rows, winner].all()):
        raise ValueError("an expert move is not among the real candidates (mask)")


def collect_stats(
    log_gamma: torch.Tensor,
    data: Iterable[Batch],
    columns: Sequence[int],
    device: torch.device,
    groups: Sequence[GroupSpan] | None = None,
) -> PassStats:
    """One pass over ``data``: MM statistics of ``columns`` (numpy, like every
    engine's) and the log-likelihood, at log_gamma (a tensor on ``device``).

    With ``groups`` given, every batch is checked against the contract too.
    """
    n_features = log_gamma.shape[0]
    wins = torch.zeros(n_features, dtype=torch.float64, device=device)
    denom = torch.zeros(n_features, dtype=torch.float64, device=device)
    log_lik = torch.zeros((), dtype=torch.float64, device=device)
    n = 0
    with torch.no_grad():
        for batch in data:
            batch = batch.to(device)
            if groups is not None:
                check_batch(batch, groups, n_features)
            log_lik += accumulate_stats(
                log_gamma, batch.feat, batch.mask, batch.winner, columns, wins, denom
            )
            n += len(batch)
    return PassStats(wins.cpu().numpy(), denom.cpu().numpy(), float(log_lik), n)


class PaddedMM(MMPasses):
    """Passes of ``collect_stats`` over a re-iterable of padded Batches, streamed once per
    pass on ``device``; the first pass checks every batch against the contract."""

    def __init__(
        self, data: Iterable[Batch], device: torch.device, groups: Sequence[GroupSpan]
    ) -> None:
        self.data, self.device, self.groups = data, device, groups
        self.n_positions = 0  # known after the first pass
        self._checked = False

    def collect(self, log_gamma: np.ndarray, columns: Sequence[int]) -> PassStats:
        check = None if self._checked else self.groups
        lg = torch.from_numpy(log_gamma).to(self.device)
        stats = collect_stats(lg, self.data, columns, self.device, check)
        self._checked, self.n_positions = True, stats.n_positions
        return stats


def log_posterior(model: BradleyTerry, data: Iterable[Batch], device: torch.device) -> float:
    """log P(data | gamma) + log prior (Coulom 2007, 2.4), summed over positions."""
    stats = collect_stats(model.log_gamma, data, (), device)
    return stats.log_likelihood + log_prior(model.log_gamma.cpu().numpy())


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
) -> tuple[BradleyTerry, list[dict[str, Any]]]:
    """Fit gammas by MM from gamma = 1 (mm_loop.fit_gammas); return the model on
    ``device`` and one history row per iteration.

    data: an MM engine (gomove.train.mm_numba, gomove.train.mm_flat over the flat
    layout), or a re-iterable of Batches (streamed once per update, ``PaddedMM``).
    validate adds val_top1 and val_log_evidence to every row; writer (a
    SummaryWriter) gets the same scalars; checkpoint (gomove.train.resume.Resume):
    saved after every iteration and continued from (fit_gammas).
    """
    torch.manual_seed(cfg.seed)
    device = resolve_device(device)
    passes = data if isinstance(data, MMPasses) else PaddedMM(data, device, groups)
    model = BradleyTerry(n_features).to(device)

    def report(row: dict[str, Any], log_gamma: np.ndarray) -> None:
        model.log_gamma = torch.from_numpy(log_gamma).to(device)
        report_row(row, model.log_probs, validate, writer, MM_SCALARS, log)

    log_gamma, history = fit_gammas(
        passes, n_features, groups, cfg, report, progress=progress, checkpoint=checkpoint
    )
    model.log_gamma = torch.from_numpy(log_gamma).to(device)
    return model, history


MM_SCALARS = (
    ("log_likelihood", "train/log_likelihood", "log-lik {:.5f}"),
    ("log_posterior", "train/log_posterior", "log-post {:.5f}"),
    ("seconds", "time/seconds_per_iter", "{:.2f}s"),
)
