"""Training of the comparison paper's rankers: PR by counting, BAR and LBR online.

Wistuba, Schaefer and Platzner 2012, section III. The updates themselves are
gomove.train.rankers.kernels (numba, serial over positions in order: BAR and
LBR are filters, each position's posterior the next one's prior); here they
are driven over FlatData, reported and calibrated.

Terms:
- pass: one visit of every training position (``passes`` of them), in the
  data's order (game by game, move by move) or, with ``shuffle``, in a seeded
  random order drawn anew each pass.
- row: a history row after every pass (and every ``report_every`` positions):
  iter, positions (seen so far), seconds (the updates alone, wall time),
  cpu_seconds, online_top1 (the expert move had the strictly highest team
  strength just before its own update), temperature, ep_iters (LBR: mean
  message-passing iterations per position), and validation when given.
- calibration: the softmax temperature that maximizes the mean
  log-probability of the expert moves of held-out positions (the validation
  set; without one, ``calibrate_positions`` evenly spaced training positions),
  by Newton's method on the concave one-parameter log-likelihood. It changes
  no ranking, only the log-evidence (gomove.models.rankers).
"""

from __future__ import annotations

import copy
import logging
import math
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from gomove.data.batch import Batch
from gomove.data.flat import FlatData
from gomove.data.loader import flat_batch
from gomove.features.hierarchy import Hierarchy
from gomove.features.registry import SHAPE_GROUP, GroupSpan
from gomove.models.rankers import AdditiveRanking, GaussianRanking, WinRateRanking
from gomove.train.calibrate import fit_temperature, model_strength
from gomove.train.context import TrainContext
from gomove.train.hierarchy_tensors import collapse
from gomove.train.monitor import Validate, report_row
from gomove.train.rankers.kernels import (
    EPSettings,
    Positions,
    TeamLevels,
    bar_pass,
    lbr_pass,
    pr_counts,
)
from gomove.train.schemas import RankerConfig

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

log = logging.getLogger(__name__)

CALIBRATION_BATCH = 512  # positions per batch when calibrating on training positions

RANKER_SCALARS = (
    ("online_top1", "train/online_top1", "online top1 {:.4f}"),
    ("temperature", "train/temperature", "temperature {:.3f}"),
    ("ep_iters", "train/ep_iterations", "EP iters {:.2f}"),
    ("seconds", "time/seconds_per_iter", "{:.2f}s"),
)


class Members:
    """Which groups form a team, as the kernels take it (kernels.team_members).

    columns: the registry columns of the single-pattern variant (the shape group),
    empty for every group. names: the groups' names (default: data's). hierarchy:
    each member's ancestors join the team (features.shapes=all).
    """

    def __init__(
        self,
        data: FlatData,
        single: bool,
        names: Sequence[str] | None = None,
        hierarchy: Hierarchy | None = None,
    ) -> None:
        names = list(names) if names is not None else [s.name for s in data.group_spans()]
        if single:
            if SHAPE_GROUP not in names:
                raise ValueError(
                    "model.single=true needs shape patterns (features.shapes=true): a move "
                    f"is its largest matched shape; the groups are {names}"
                )
            used = {names.index(SHAPE_GROUP)}
            self.columns = [names.index(SHAPE_GROUP)]
        else:
            used = set(range(len(names)))
            self.columns = []
        narrow, wide = data.narrow_wide()
        self.use8 = np.array([g in used for g in narrow], dtype=np.bool_)
        self.usew = np.array([g in used for g in wide], dtype=np.bool_)
        self.zero_member = single
        self.data = data
        self.up = np.zeros(0, dtype=np.int64) if hierarchy is None else hierarchy.up
        self.extra = 0 if hierarchy is None else hierarchy.longest - 1

    def args(self) -> tuple[Positions, TeamLevels]:
        """The kernels' level arguments: the positions and how to read their teams."""
        d = self.data
        teams = TeamLevels(
            d.records, d.narrow_read, d.offs8, self.use8, d.wide_read, d.offsw, self.usew,
            self.zero_member, self.up, self.extra,
        )  # fmt: skip
        return Positions(d.pos_start, d.winner), teams


def win_rates(wins: np.ndarray, appear: np.ndarray) -> np.ndarray:
    """theta_f = W_f / A_f (Wistuba et al. 2012, III-D), 0 for a feature never seen."""
    return np.divide(wins, appear, out=np.zeros_like(wins), where=appear > 0)


def pr_counts_torch(
    batches: Iterable[Batch], n_features: int, columns: Sequence[int], device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """PR's counts W[F] and A[F] over padded batches in tensor form (any device); with
    columns (the single-pattern variant) those columns only, level 0 counting as index 0."""
    wins = torch.zeros(n_features, dtype=torch.float64, device=device)
    appear = torch.zeros(n_features, dtype=torch.float64, device=device)
    cols = torch.as_tensor(list(columns), dtype=torch.long, device=device)
    for b in batches:
        b = b.to(device)
        feat = b.feat.index_select(2, cols) if len(cols) else b.feat
        rows = torch.arange(len(b), device=device)
        every, won = feat[b.mask], feat[rows, b.winner]
        if not len(cols):  # level 0 is an absent group, not a member
            every, won = every[every > 0], won[won > 0]
        appear += torch.bincount(every.reshape(-1), minlength=n_features).double()
        wins += torch.bincount(won.reshape(-1), minlength=n_features).double()
    return wins, appear


def calibration_batches(
    data: FlatData, cfg: RankerConfig, val_data: Iterable[Batch] | None
) -> Iterable[Batch]:
    """The validation batches, or evenly spaced training positions as padded batches."""
    if val_data is not None:
        return val_data
    n = min(cfg.calibrate_positions, data.n_positions)
    pos = np.unique(np.linspace(0, data.n_positions - 1, n).astype(np.int64))
    return [
        flat_batch(data, pos[i : i + CALIBRATION_BATCH])
        for i in range(0, len(pos), CALIBRATION_BATCH)
    ]


def gaussian_prior(
    cfg: RankerConfig, n_features: int, hierarchy: Hierarchy | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """BAR's and LBR's prior (mu, sigma2) of every feature's own strength: N(prior_mu,
    prior_sigma2); with a hierarchy, a pattern with a parent adds to its parent's value
    a part of mean 0 and variance prior_sigma2, or hierarchy_sigma2 with cfg.hierarchy."""
    mu = torch.full((n_features,), cfg.prior_mu, dtype=torch.float64)
    sigma2 = torch.full((n_features,), cfg.prior_sigma2, dtype=torch.float64)
    if not cfg.single:  # index 0 is an absent group, never a member
        mu[0] = 0.0
    if hierarchy is not None:
        child = torch.from_numpy(hierarchy.up > 0)
        mu[child] = 0.0
        if cfg.hierarchy:
            sigma2[child] = cfg.hierarchy_sigma2
    return mu, sigma2


def fit_ranker(
    cfg: RankerConfig, data: FlatData | Iterable[Batch], ctx: TrainContext
) -> tuple[AdditiveRanking, list[dict[str, Any]]]:
    """Train cfg.name (pr, bar or lbr) on data; return the model (on ctx.device) and history.

    data: FlatData, or padded batches (PR counts them in tensor form on the device;
    BAR and LBR, whose updates are sequential, convert them to the flat layout).
    ctx.groups: (name, offset, size) of feat's columns; ctx.val_data: the held-out
    batches the temperature is calibrated on. No train state: a few passes in file
    order, so a killed run trains again; one process (online updates, in order).
    Row 0 of the history is the prior (every strength 0). ctx.hierarchy
    (features.shapes=all, or cfg.hierarchy):
    every pattern of a candidate's chain is a member of its team, each with its own
    strength, the part it adds to its parent's (prior mean 0); with cfg.hierarchy,
    Stern's hierarchical model: a pattern with a parent has prior variance
    cfg.hierarchy_sigma2 around its parent's value, a root cfg.prior_sigma2
    (gomove.train.rankers.kernels' module docstring: the factor graph). The model
    returned holds each pattern's value (the chain's sums), a largest-only model.
    """
    cfg.validate()
    if ctx.world.distributed:
        raise ValueError(f"model={cfg.name} trains on one process (online updates, in order)")
    if ctx.checkpoint is not None and ctx.checkpoint.resume:
        log.warning("resume: %s keeps no train state; training from the start", cfg.name)
    groups, n_features, device = ctx.groups, ctx.n_features, ctx.device
    validate, val_data, writer, hierarchy = ctx.validate, ctx.val_data, ctx.writer, ctx.hierarchy
    if cfg.hierarchy and hierarchy is None:
        raise ValueError("model.hierarchy=true needs the pattern hierarchy (shape patterns)")
    if cfg.name == "pr" and not isinstance(data, FlatData) and hierarchy is None:
        return _fit_pr_padded(cfg, data, groups, n_features, device, validate, val_data, writer)
    flat = data if isinstance(data, FlatData) else FlatData.from_batches(data, groups)
    if flat.n_positions == 0:
        raise ValueError("no training positions")
    if flat.min_features > n_features:
        raise ValueError(f"levels reach feature {flat.min_features - 1}, n_features {n_features}")
    members = Members(flat, cfg.single, hierarchy=hierarchy)
    calib = calibration_batches(flat, cfg, val_data)
    if cfg.name == "pr":
        model: AdditiveRanking = WinRateRanking(n_features, columns=members.columns)
    else:
        mu, sigma2 = gaussian_prior(cfg, n_features, hierarchy)
        model = GaussianRanking(n_features, mu, sigma2, columns=members.columns)

    def report(row: dict[str, Any]) -> None:
        """_report on the model's values (the chain sums with a hierarchy)."""
        shown = model if hierarchy is None else collapse(model, hierarchy)
        _report(row, shown, calib, validate, writer, device)
        model.temperature.copy_(shown.temperature)

    def result() -> AdditiveRanking:
        return (model if hierarchy is None else collapse(model, hierarchy)).to(device)

    history = [{"iter": 0, "positions": 0}]
    report(history[-1])
    if cfg.name == "pr":
        t0, c0 = time.perf_counter(), time.process_time()
        wins, appear = pr_counts(*members.args(), n_features)
        model.theta.copy_(torch.from_numpy(win_rates(wins, appear)))
        row = {"iter": 1, "positions": flat.n_positions}
        row |= {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}
        history.append(row)
        report(row)
        return result(), history
    mu_np, s2_np = model.theta.numpy(), model.sigma2.numpy()  # updated in place
    step = cfg.report_every or flat.n_positions
    seen = 0
    rng = np.random.default_rng(cfg.seed)
    for _ in range(cfg.passes):
        order = np.arange(flat.n_positions, dtype=np.int64)
        if cfg.shuffle:
            order = rng.permutation(order)
        for p0 in range(0, flat.n_positions, step):
            p1 = min(p0 + step, flat.n_positions)
            t0, c0 = time.perf_counter(), time.process_time()
            ep_iters = None
            if cfg.name == "bar":
                hits = bar_pass(
                    mu_np, s2_np, order[p0:p1], *members.args(), cfg.beta2, cfg.kappa,
                    flat.max_cands,
                )  # fmt: skip
            else:
                ep = EPSettings(cfg.beta2, cfg.ep_iters, cfg.ep_tol)
                hits, iters = lbr_pass(
                    mu_np, s2_np, order[p0:p1], *members.args(), ep, flat.max_cands
                )
                ep_iters = iters / (p1 - p0)
            seen += p1 - p0
            row = {
                "iter": len(history),
                "positions": seen,
                "seconds": time.perf_counter() - t0,
                "cpu_seconds": time.process_time() - c0,
                "online_top1": hits / (p1 - p0),
            }
            if ep_iters is not None:
                row["ep_iters"] = ep_iters
            if not (np.isfinite(mu_np).all() and (s2_np > 0).all() and np.isfinite(s2_np).all()):
                raise FloatingPointError(f"{cfg.name}: strengths diverged after {seen} positions")
            history.append(row)
            report(row)
    return result(), history


def _fit_pr_padded(
    cfg: RankerConfig,
    data: Iterable[Batch],
    groups: list[GroupSpan],
    n_features: int,
    device: torch.device,
    validate: Validate | None,
    val_data: Iterable[Batch] | None,
    writer: SummaryWriter | None,
) -> tuple[AdditiveRanking, list[dict[str, Any]]]:
    """PR over padded batches, counted in tensor form on device; calibrated on val_data
    or, without one, on the training batches themselves."""
    columns = []
    if cfg.single:
        names = [name for name, _, _ in groups]
        if SHAPE_GROUP not in names:
            raise ValueError("model.single=true needs shape patterns (features.shapes=true)")
        columns = [names.index(SHAPE_GROUP)]
    model = WinRateRanking(n_features, columns=columns).to(device)
    calib = val_data if val_data is not None else data
    history = [{"iter": 0, "positions": 0}]
    _report(history[-1], model, calib, validate, writer, device)
    t0, c0 = time.perf_counter(), time.process_time()
    wins, appear = pr_counts_torch(data, n_features, columns, device)
    model.theta.copy_(torch.where(appear > 0, wins / appear.clamp(min=1), 0.0))
    n = sum(len(b) for b in data)
    row = {"iter": 1, "positions": n}
    row |= {"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}
    history.append(row)
    _report(row, model, calib, validate, writer, device)
    return model, history


def _report(
    row: dict[str, Any],
    model: AdditiveRanking,
    calib: Iterable[Batch],
    validate: Validate | None,
    writer: SummaryWriter | None,
    device: torch.device,
) -> None:
    """Calibrate the temperature, then validate, log and write the row (report_row)."""
    t0 = time.perf_counter()
    tau = fit_temperature(model_strength(model), calib)
    model.temperature.fill_(tau)
    row["temperature"] = tau
    row["calibrate_seconds"] = time.perf_counter() - t0
    if not math.isfinite(tau):
        raise FloatingPointError("the softmax temperature is not finite")
    shown = model if model.theta.device == device else copy.deepcopy(model).to(device)
    report_row(row, shown.log_probs, validate, writer, RANKER_SCALARS, log)
