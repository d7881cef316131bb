"""Minorization-maximization training of the Bradley-Terry move model (Coulom 2007).

Terms:
- pass: one stream over the training data at fixed gammas; it yields the MM
  statistics of the group(s) to update next and, for free, the log-likelihood
  at those gammas, which measures the previous update.
- update: one MM batch update of one group (Coulom 2007, 2.5.4); each costs
  exactly one pass, so data larger than memory is fine.
- gain: log-posterior per position gained by a group's last update.
- iteration: one sweep over all groups ("cyclic") or as many updates as there
  are groups ("greedy": next update the group whose last update gained most,
  every group once first; Coulom 2007 mentions this option for his mm tool),
  both in ``MMConfig.order``: by default the groups with most gammas first.
  A greedy update costs one pass too: the pass after updating g gathers the
  statistics of the group likely chosen next (g again when its gains, which
  shrink about geometrically, predict it still leads; ``_guess``), and the
  other candidate as well when the engine gathers it cheaply (``cheap``: a
  sparse group of NumbaMM); only a wrong guess costs a second pass; the
  history's ``passes`` counts them.
- engine: what runs the passes, an ``MMPasses``: ``PaddedMM`` over padded
  Batches (streamed, any device: the oracle), or gomove.train.mm_flat's
  ``NumbaMM`` (CPU) and ``TorchMM`` (any device) over the flat layout, with
  cached team strengths.
- train state (gomove.train.resume): saved after every iteration with the
  ``checkpoint`` argument: the log-gammas, the statistics of the next update,
  the gains, the history and the trail of updates (each update's group and
  new log-gammas, iterations x F floats in all), which a resumed run replays
  into the engine (``MMPasses.advance``) so that its cached team strengths,
  products in update order, hold the same bits as in an uninterrupted run.
"""

from __future__ import annotations

import logging
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from tqdm.auto import tqdm

from gomove.data.batch import Batch
from gomove.features.registry import GroupSpan
from gomove.models.mm import BradleyTerry, accumulate_stats, log_prior, mm_update
from gomove.train.config import MMConfig
from gomove.train.device import resolve_device
from gomove.train.report import Validate, report_row
from gomove.train.resume import Resume

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

log = logging.getLogger(__name__)


@dataclass
class PassStats:
    """What one pass returns: MM statistics (Tensor[F], float64) and the log-likelihood."""

    wins: torch.Tensor
    denom: torch.Tensor
    log_likelihood: float
    n_positions: int


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
    """One pass over ``data``: MM statistics of ``columns`` and the log-likelihood.

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
    return PassStats(wins, denom, float(log_lik), n)


class MMPasses(ABC):
    """An MM engine: passes over one fixed set of training positions."""

    n_positions: int

    @abstractmethod
    def collect(self, log_gamma: torch.Tensor, columns: Sequence[int]) -> PassStats:
        """MM statistics of the groups in columns and the log-likelihood, at log_gamma:
        what ``collect_stats`` returns over the same positions."""

    def advance(self, log_gamma: torch.Tensor) -> None:
        """Bring any cached state to log_gamma without a pass, as ``collect`` would.

        A resumed run calls it with the log-gammas after every update so far, in
        order, so that a cache reaches the same bits as in an uninterrupted run.
        Without a cache (the default), nothing to do.
        """
        return None

    def cheap(self, g: int) -> bool:
        """Whether group g's statistics cost little beside another group's in one
        ``collect`` (the greedy schedule then gathers them too rather than guess)."""
        return False


class PaddedMM(MMPasses):
    """Passes of ``collect_stats`` over a re-iterable of padded Batches, streamed once per
    pass on ``device``; the first pass checks every batch against the contract."""

    def __init__(
        self, data: Iterable[Batch], device: torch.device, groups: Sequence[GroupSpan]
    ) -> None:
        self.data, self.device, self.groups = data, device, groups
        self.n_positions = 0  # known after the first pass
        self._checked = False

    def collect(self, log_gamma: torch.Tensor, columns: Sequence[int]) -> PassStats:
        check = None if self._checked else self.groups
        stats = collect_stats(log_gamma, self.data, columns, self.device, check)
        self._checked, self.n_positions = True, stats.n_positions
        return stats


def log_posterior(model: BradleyTerry, data: Iterable[Batch], device: torch.device) -> float:
    """log P(data | gamma) + log prior (Coulom 2007, 2.4), summed over positions."""
    stats = collect_stats(model.log_gamma, data, (), device)
    return stats.log_likelihood + float(log_prior(model.log_gamma))


def train_mm(
    data: Iterable[Batch] | MMPasses,
    n_features: int,
    groups: list[GroupSpan],
    cfg: MMConfig,
    device: torch.device | str = "auto",
    validate: Validate | None = None,
    writer: SummaryWriter | None = None,
    progress: bool = True,
    checkpoint: Resume | None = None,
) -> tuple[BradleyTerry, list[dict[str, Any]]]:
    """Fit gammas by MM from gamma = 1; return the model and one history row per iteration.

    data: an MM engine (gomove.train.mm_flat over the flat layout), or a
    re-iterable of Batches (streamed once per update, ``PaddedMM``). groups:
    (name, offset, size) of each column of feat. Row 0 of the history is the
    start (gamma = 1); every row has iter, log_likelihood and log_posterior
    (per position), seconds and cpu_seconds (of MM, validation excluded; wall
    and this process's CPU time), the updates done and
    each group's last gain, plus val_top1 and val_log_evidence when validate
    is given. writer: an optional SummaryWriter getting the same scalars.
    checkpoint: the train state is saved there after every iteration (row 0
    included) and, with its ``resume``, continued from: the same model and
    history (times apart) as an uninterrupted run, bit for bit.
    """
    cfg.validate()
    torch.manual_seed(cfg.seed)
    device = resolve_device(device)
    active = [g for g, (_, _, size) in enumerate(groups) if size > 0]
    if cfg.order == "size":  # stable: equal sizes keep the registry's order
        active.sort(key=lambda g: -groups[g][2])
    if not active:
        raise ValueError("no feature group to train")
    for name, offset, size in groups:
        if offset < 1 or offset + size > n_features:
            raise ValueError(f"group {name!r} [{offset}, {offset + size}) not in [1, {n_features})")
    model = BradleyTerry(n_features).to(device)
    greedy = cfg.schedule == "greedy"
    passes = data if isinstance(data, MMPasses) else PaddedMM(data, device, groups)

    def collect(cols: Sequence[int]) -> PassStats:
        return passes.collect(model.log_gamma, cols)

    extra_passes = 0  # greedy: passes beyond one per update (a wrong guess)

    # (group, its log-gammas after the update) of every update: replayed on resume
    trail: list[tuple[int, torch.Tensor]] = []
    state = checkpoint.load() if checkpoint is not None else None
    if state is None:
        t0, c0 = time.perf_counter(), time.process_time()
        stats = collect((active[0],))  # both schedules start with the first group
        if stats.n_positions == 0:
            raise ValueError("no training positions")
        lp = stats.log_likelihood + float(log_prior(model.log_gamma))
        gains = {g: math.inf for g in active}
        prev_gains = dict(gains)  # each group's gain before its last one (greedy's guess)
        history = [_record(0, stats, lp, time.perf_counter() - t0, [], gains, groups)]
        history[-1]["cpu_seconds"] = time.process_time() - c0
        _report(history[-1], model, validate, writer)
        _save(checkpoint, model, 0, stats, lp, gains, prev_gains, history, trail)
    else:
        stats, lp, gains, prev_gains, history = _restore(state, model, passes, groups, trail)
        log.info("MM: resumed after iteration %d", state["iter"])
    n = stats.n_positions
    first = history[-1]["iter"] + 1

    # a resumed run may have converged already
    last = first - 1 if all(gains[g] < cfg.tol for g in active) else cfg.max_iters
    bar = tqdm(range(first, last + 1), desc="MM", disable=not progress)
    for it in bar:
        t0, c0 = time.perf_counter(), time.process_time()
        updated: list[int] = []
        inner = tqdm(range(len(active)), desc=f"iter {it}", leave=False, disable=not progress)
        for u in inner:
            g = _choose(gains, active) if greedy else active[u]
            _, offset, size = groups[g]
            inner.set_postfix(group=groups[g][0])
            model.log_gamma = mm_update(model.log_gamma, stats.wins, stats.denom, offset, size)
            trail.append((g, model.log_gamma[offset : offset + size].cpu().clone()))
            # the next pass gathers what the next update needs and measures this one;
            # greedy: the next group is the best of the others unless g's new gain beats
            # them all, which only this pass tells, so guess, and pass again if wrong
            # (the other candidate too when the engine gathers it cheaply)
            if greedy:
                nxt = _guess(gains, prev_gains, g, active)
                others = [h for h in active if h != g]
                alt = g if nxt != g or not others else _choose(gains, others)
                cols = (nxt, alt) if alt != nxt and passes.cheap(alt) else (nxt,)
            else:
                cols = (active[(u + 1) % len(active)],)
            stats = collect(cols)
            new_lp = stats.log_likelihood + float(log_prior(model.log_gamma))
            prev_gains[g], gains[g] = gains[g], (new_lp - lp) / n
            lp = new_lp
            updated.append(g)
            if greedy and _choose(gains, active) not in cols:
                stats = collect((_choose(gains, active),))
                extra_passes += 1
        inner.close()
        row = _record(it, stats, lp, time.perf_counter() - t0, updated, gains, groups)
        row["passes"] = len(updated) + extra_passes
        extra_passes = 0
        row["cpu_seconds"] = time.process_time() - c0
        history.append(row)
        _report(row, model, validate, writer)
        _save(checkpoint, model, it, stats, lp, gains, prev_gains, history, trail)
        bar.set_postfix(ll=f"{row['log_likelihood']:.4f}", gain=f"{max(gains.values()):.2e}")
        if all(gains[g] < cfg.tol for g in active):
            log.info("MM converged after %d iterations", it)
            break
    bar.close()
    return model, history


def _save(
    checkpoint: Resume | None,
    model: BradleyTerry,
    it: int,
    stats: PassStats,
    lp: float,
    gains: dict[int, float],
    prev_gains: dict[int, float],
    history: list[dict[str, Any]],
    trail: list[tuple[int, torch.Tensor]],
) -> None:
    """Save what the loop carries after iteration ``it``: ``stats`` are those of the
    next update, so a resumed run needs no extra pass."""
    if checkpoint is None:
        return
    checkpoint.save(
        {
            "iter": it,
            "log_gamma": model.log_gamma.cpu(),
            "wins": stats.wins.cpu(),
            "denom": stats.denom.cpu(),
            "log_likelihood": stats.log_likelihood,
            "n_positions": stats.n_positions,
            "log_posterior": lp,
            "gains": gains,
            "prev_gains": prev_gains,
            "history": history,
            "trail": trail,
        }
    )


def _restore(
    state: dict[str, Any],
    model: BradleyTerry,
    passes: MMPasses,
    groups: Sequence[GroupSpan],
    trail: list[tuple[int, torch.Tensor]],
) -> tuple[PassStats, float, dict[int, float], dict[int, float], list[dict[str, Any]]]:
    """Set model and passes as ``_save`` left them (the engine's cache by replaying the
    trail, so that it holds the same bits); returns the loop's other variables."""
    device = model.log_gamma.device
    log_gamma = torch.zeros_like(model.log_gamma)
    passes.advance(log_gamma.clone())
    for g, values in state["trail"]:
        _, offset, size = groups[g]
        log_gamma[offset : offset + size] = values.to(device)
        passes.advance(log_gamma.clone())
        trail.append((g, values))
    if not torch.equal(log_gamma.cpu(), state["log_gamma"]):
        raise ValueError("train state: the trail of updates does not give the saved log-gammas")
    model.log_gamma = log_gamma
    stats = PassStats(
        state["wins"].to(device),
        state["denom"].to(device),
        state["log_likelihood"],
        state["n_positions"],
    )
    return stats, state["log_posterior"], state["gains"], state["prev_gains"], state["history"]


def _choose(gains: dict[int, float], active: list[int]) -> int:
    """Greedy schedule: the group whose last update gained most (never-updated first)."""
    return max(active, key=lambda g: gains[g])


def _guess(gains: dict[int, float], prev_gains: dict[int, float], g: int, active: list[int]) -> int:
    """Greedy schedule: the group likely chosen after updating g, before g's new gain
    is known: g's gains shrink about geometrically, so its next one is predicted as
    last * (last / previous); every other group's gain is known."""
    last, prev = gains[g], prev_gains[g]
    pred = last * last / prev if math.isfinite(prev) and prev > 0 and last > 0 else last
    if not math.isfinite(pred):
        pred = -math.inf  # never updated twice yet: the others come first
    return _choose(gains | {g: pred}, active)


def _record(
    it: int,
    stats: PassStats,
    lp: float,
    seconds: float,
    updated: list[int],
    gains: dict[int, float],
    groups: Sequence[GroupSpan],
) -> dict[str, Any]:
    n = stats.n_positions
    return {
        "iter": it,
        "log_likelihood": stats.log_likelihood / n,
        "log_posterior": lp / n,
        "seconds": seconds,
        "updates": [groups[g][0] for g in updated],
        "gains": {groups[g][0]: v for g, v in gains.items() if math.isfinite(v)},
    }


MM_SCALARS = (
    ("log_likelihood", "train/log_likelihood", "log-lik {:.5f}"),
    ("log_posterior", "train/log_posterior", "log-post {:.5f}"),
    ("seconds", "time/seconds_per_iter", "{:.2f}s"),
)


def _report(
    row: dict[str, Any],
    model: BradleyTerry,
    validate: Validate | None,
    writer: SummaryWriter | None,
) -> None:
    """Add validation measures to ``row``, log it and write it to TensorBoard."""
    report_row(row, model.log_probs, validate, writer, MM_SCALARS, log)
