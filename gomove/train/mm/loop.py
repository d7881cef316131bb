"""MM's schedule in numpy: the update, the prior and the loop over any MM engine.

Coulom's minorization-maximization (Coulom 2007, 2.5) needs only an engine's
passes (an ``MMPasses``: the MM statistics of some groups and the
log-likelihood at given log-gammas) and, between them, a closed-form update
of one group on F floats. All of that is here, in numpy and without torch, so
a process that trains by MM on the CPU (``NumbaMM``, gomove.train.mm.compiled)
carries no torch runtime: scripts/compare_mm_worker.py runs in about half the
memory of a process that imports torch. gomove.train.mm.fit wraps ``fit_gammas``
into ``train_mm``, which returns a torch model, streams padded batches
(``PaddedMM``), validates and writes TensorBoard.

Terms:
- pass: one stream over the training data at fixed gammas; it yields the MM
  statistics of the group(s) to update next and, for free, the log-likelihood
  at those gammas, which measures the previous update.
- update: one MM batch update of one group (Coulom 2007, 2.5.4); each costs
  exactly one pass, so data larger than memory is fine.
- gain: log-posterior per position gained by a group's last update.
- bound: the gain MM's minorizing function guarantees for an update (Hunter 2004:
  the surrogate rises by at least this, so the log-posterior does), per position;
  ``mm_bound``.
- iteration: one sweep over all groups ("cyclic"), or as many updates as there
  are groups ("greedy": next update the group whose last update guaranteed the
  most gain, every group once first; Coulom 2007 mentions this option for his mm tool),
  or one sweep over the groups still gaining ("lazy": those whose last update gained
  at least tol, and all of them when none did), all in ``MMConfig.order``: by
  default the groups with most gammas first.
- stopping: once a sweep over all groups gained less than tol per group (cyclic and
  lazy: lazy's full sweeps are its checks; greedy: every group's last update).
  Lazy ends as converged as cyclic by cyclic's own test, but spends its passes where
  the gains are: on data read from disk a pass is a read of all of it, and after a
  warm start most groups gain a hundredth of tol a sweep while the shapes still
  gain more than tol.
  A greedy update costs one pass too: it ranks the groups by the gain each
  update guaranteed (``bound``: the rise of MM's minorizing function, a lower
  bound of the true gain, known from the update's own statistics before any
  pass), so the next group is known when the pass after an update starts and
  that pass gathers its statistics. The true gains, which that pass measures,
  decide when to stop.
- train state: saved after every iteration to a ``checkpoint`` (anything with
  ``load() -> dict | None`` and ``save(dict)``, gomove.train.resume.Resume):
  the log-gammas, the statistics of the next update, the gains, the history
  and, for an engine with a cache (``MMPasses.caches``), the trail of updates
  (each update's group and new log-gammas, iterations x F floats in all; appended
  to a file beside the state, gomove.train.mm.trail), which a resumed run replays
  into the engine (``MMPasses.advance``) so that its cached team strengths,
  products in update order, hold the same bits as in an uninterrupted run. An
  engine without a cache (the stream over data read in chunks) needs no trail: its
  states stay the size of a few F floats.
"""

from __future__ import annotations

import logging
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from tqdm.auto import tqdm

from gomove.features.registry import GroupSpan
from gomove.train.mm.trail import Trail
from gomove.train.schemas import MMConfig

log = logging.getLogger(__name__)


@dataclass
class PassStats:
    """What one pass returns: MM statistics (float64[F], numpy) and the log-likelihood."""

    wins: np.ndarray
    denom: np.ndarray
    log_likelihood: float
    n_positions: int


class MMPasses(ABC):
    """An MM engine: passes over one fixed set of training positions."""

    n_positions: int

    @property
    def caches(self) -> bool:
        """Whether ``advance`` has a cache to bring along (a resumed run then replays
        the trail of updates into it); False for an engine that keeps none."""
        return False

    @abstractmethod
    def collect(self, log_gamma: np.ndarray, columns: Sequence[int]) -> PassStats:
        """MM statistics of the groups in columns and the log-likelihood, at log_gamma
        (float64[F]): what gomove.train.mm.padded.collect_stats returns over the same
        positions."""

    def advance(self, log_gamma: np.ndarray) -> None:
        """Bring any cached state to log_gamma without a pass, as ``collect`` would.

        A resumed run calls it with the log-gammas after every update so far, in
        order, so that a cache reaches the same bits as in an uninterrupted run.
        Without a cache (the default), nothing to do.
        """
        return None


TRAIL = "trail"  # the side file of a fit's trail of updates (gomove.train.mm.trail)


class StateStore(Protocol):
    """Where the loop's train state goes after every iteration (Resume); side_file:
    a file of its own beside the state (the trail's), None where it has none."""

    def load(self) -> dict[str, Any] | None: ...

    def save(self, state: dict[str, Any]) -> None: ...

    def side_file(self, name: str) -> Path | None: ...


class Stages:
    """One train state for a run in stages (MM's warm start, then all the data).

    The main stage (``stage(None)``) keeps its state at the top level, as a run without
    stages does, so such states resume either way; each side stage keeps its own under
    ``stage:<name>``, and a finished one its result under ``stage:<name>_done``
    (``finish``), so a resumed run goes on in the stage it was in."""

    PREFIX = "stage:"

    def __init__(self, store: StateStore | None) -> None:
        self.store = store
        self.saved: dict[str, Any] = (store.load() if store is not None else None) or {}

    def done(self, name: str) -> Any:
        """A finished side stage's result, None if it has not finished."""
        return self.saved.get(f"{self.PREFIX}{name}_done")

    def stage(self, name: str | None) -> StateStore | None:
        """The store of one stage: None the main one, else a side stage's name."""
        if self.store is None:
            return None
        return _Stage(self, name)

    def finish(self, name: str, result: Any) -> None:
        """Keep a finished side stage's result, its loop state (and trail) dropped."""
        self.saved.pop(f"{self.PREFIX}{name}", None)
        self.saved[f"{self.PREFIX}{name}_done"] = result
        self._write()
        side = self.stage(name)
        trail = side.side_file(TRAIL) if side is not None else None
        if trail is not None:
            trail.unlink(missing_ok=True)

    def _write(self) -> None:
        if self.store is not None:
            self.store.save(self.saved)


class _Stage:
    """The StateStore of one stage of a Stages."""

    def __init__(self, stages: Stages, name: str | None) -> None:
        self.stages, self.name = stages, name

    def _side(self) -> dict[str, Any]:
        return {k: v for k, v in self.stages.saved.items() if k.startswith(Stages.PREFIX)}

    def load(self) -> dict[str, Any] | None:
        if self.name is not None:
            return self.stages.saved.get(f"{Stages.PREFIX}{self.name}")
        side = self._side()
        main = {k: v for k, v in self.stages.saved.items() if k not in side}
        return main or None

    def save(self, state: dict[str, Any]) -> None:
        if self.name is not None:
            self.stages.saved[f"{Stages.PREFIX}{self.name}"] = state
        else:
            self.stages.saved = self._side() | state
        self.stages._write()

    def side_file(self, name: str) -> Path | None:
        store = self.stages.store
        if store is None:
            return None
        return store.side_file(name if self.name is None else f"{self.name}.{name}")


def softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + e^x) without overflow."""
    return np.logaddexp(0.0, x)


def log_prior(log_gamma: np.ndarray, prior_wins: float = 1.0) -> float:
    """log P(virtual results | gamma), summed over every level but ``none``.

    Each level i wins ``prior_wins`` times and loses as often against gamma 1 (Coulom
    2007, 3.3, has one of each): prior_wins * (log g - 2 log(1 + g)). Levels with no
    data sit at its maximum, gamma = 1; more virtual games hold a rarely seen
    level nearer it (with all pattern sizes: nearer its parent's value).
    """
    lg = np.asarray(log_gamma, dtype=np.float64)[1:]
    return float(prior_wins * (lg - 2.0 * softplus(lg)).sum())


def _with_prior(
    log_gamma: np.ndarray, wins: np.ndarray, denom: np.ndarray, sl: slice, prior_wins: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(log-gammas, wins, denominators) of the levels in sl with the prior's virtual games
    added: prior_wins wins and 2 prior_wins games against gamma 1 (C = 1, E = gamma + 1)."""
    lg = log_gamma[sl]
    return lg, wins[sl] + prior_wins, denom[sl] + 2.0 * prior_wins * np.exp(-softplus(lg))


def mm_update(
    log_gamma: np.ndarray,
    wins: np.ndarray,
    denom: np.ndarray,
    offset: int,
    size: int,
    prior_wins: float = 1.0,
) -> np.ndarray:
    """One MM batch update of the group at ``[offset, offset + size)``; returns new log_gamma.

    gamma_i <- W_i / sum_j C_ij / E_j (Coulom 2007, 2.5.3), with the prior's
    virtual games added: prior_wins wins (W_i += prior_wins) and twice as many games
    against gamma 1 with C = 1 and E = gamma_i + 1 (denominator += 2 prior_wins /
    (gamma_i + 1)); Coulom's prior is prior_wins = 1. wins and denom
    must be a pass's statistics at this same log_gamma. Every other index,
    including 0, is copied unchanged.
    """
    if offset < 1 or offset + size > log_gamma.shape[0]:
        raise ValueError(f"group range [{offset}, {offset + size}) outside [1, {len(log_gamma)})")
    sl = slice(offset, offset + size)
    _, w, d = _with_prior(log_gamma, wins, denom, sl, prior_wins)
    out = log_gamma.copy()
    out[sl] = np.log(w) - np.log(d)
    return out


def mm_bound(
    log_gamma: np.ndarray,
    wins: np.ndarray,
    denom: np.ndarray,
    offset: int,
    size: int,
    prior_wins: float = 1.0,
) -> float:
    """The log-posterior gain MM's update of the group at ``[offset, offset + size)``
    guarantees (its minorizer's rise; not divided by the positions).

    With w_i and d_i the prior-augmented wins and denominators of ``mm_update``
    and gamma_i' = w_i / d_i, -log E_j' >= -log E_j - (E_j' - E_j) / E_j bounds the
    change by sum_i w_i log(gamma_i' / gamma_i) - (gamma_i' - gamma_i) d_i, which
    is >= 0 and 0 exactly at a fixed point of the group.
    """
    lg, w, d = _with_prior(log_gamma, wins, denom, slice(offset, offset + size), prior_wins)
    new = np.log(w) - np.log(d)
    return float((w * (new - lg) - w + np.exp(lg) * d).sum())


Report = Callable[[dict[str, Any], np.ndarray], None]


def fit_gammas(
    passes: MMPasses,
    n_features: int,
    groups: Sequence[GroupSpan],
    cfg: MMConfig,
    report: Report | None = None,
    progress: bool = True,
    checkpoint: StateStore | None = None,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Fit gammas by MM from gamma = 1 (or from the log-gammas ``start``): the log-gammas
    (float64[n_features]) and one history row per iteration.

    groups: (name, offset, size) of each group, the engine's column order. Row 0
    of the history is the start (gamma = 1); every row has iter,
    log_likelihood and log_posterior (per position), seconds and cpu_seconds
    (wall and this process's CPU time), the updates done and each group's last
    gain; ``passes`` the passes it took. report(row, log_gamma) sees every row
    before it is saved (gomove.train.mm.fit adds validation to it). checkpoint: the
    train state is saved there after every iteration (row 0 included) and
    continued from when it loads one: the same gammas and history (times
    apart) as an uninterrupted run, bit for bit.
    """
    cfg.validate()
    active = [g for g, (_, _, size) in enumerate(groups) if size > 0]
    if cfg.order == "size":  # stable: equal sizes keep the registry's order
        active.sort(key=lambda g: -groups[g][2])
    if not active:
        raise ValueError("no feature group to train")
    for name, offset, size in groups:
        if offset < 1 or offset + size > n_features:
            raise ValueError(f"group {name!r} [{offset}, {offset + size}) not in [1, {n_features})")
    if cfg.schedule == "auto":
        raise ValueError("schedule 'auto': decide it first (gomove.train.mm.fit.resolve_schedule)")
    greedy, lazy = cfg.schedule == "greedy", cfg.schedule == "lazy"
    a = cfg.prior_wins
    start = np.zeros(n_features) if start is None else np.asarray(start, dtype=np.float64)
    log_gamma = start.copy()
    report = report or (lambda row, lg: None)

    # (group, its log-gammas after the update) of every update: replayed on resume by an
    # engine with a cache; kept only where it is saved
    keep = passes.caches and checkpoint is not None
    trail = Trail(checkpoint.side_file(TRAIL) if checkpoint is not None else None)
    state = checkpoint.load() if checkpoint is not None else None
    if state is None:
        if keep:
            trail.start()
        t0, c0 = time.perf_counter(), time.process_time()
        stats = passes.collect(log_gamma, (active[0],))  # both schedules start there
        if stats.n_positions == 0:
            raise ValueError("no training positions")
        lp = stats.log_likelihood + log_prior(log_gamma, a)
        gains = {g: math.inf for g in active}
        bounds = dict(gains)  # each group's last guaranteed gain (greedy's choice)
        nxt = active[0]  # the group the statistics in hand are for
        plan = list(active)  # the sweep under way (lazy's: the groups still gaining)
        history = [_record(0, stats, lp, time.perf_counter() - t0, [], gains, groups)]
        history[-1]["cpu_seconds"] = time.process_time() - c0
        report(history[-1], log_gamma)
        _save(checkpoint, log_gamma, 0, stats, nxt, plan, lp, gains, bounds, history, trail, start)
    else:
        log_gamma = _replay(state, start, passes, groups, trail)
        stats, lp = _stats_of(state), state["log_posterior"]
        gains, history = state["gains"], state["history"]
        if "bounds" not in state and greedy:
            raise ValueError("train state of an older gomove: its greedy schedule kept no "
                             "bounds; train again without resume=true")  # fmt: skip
        if "plan" not in state and lazy:
            raise ValueError("train state of an older gomove: it kept no plan of the lazy "
                             "schedule's sweep; train again without resume=true")  # fmt: skip
        # a cyclic state of an older gomove ends a sweep: the next one starts at active[0]
        bounds, nxt = state.get("bounds", dict(gains)), state.get("next", active[0])
        plan = list(state.get("plan", active))
        log.info("MM: resumed after iteration %d", state["iter"])
    n = stats.n_positions
    first = history[-1]["iter"] + 1

    # a resumed run may have converged already
    last = first - 1 if _converged(history[-1], gains, active, cfg.tol) else cfg.max_iters
    bar = tqdm(range(first, last + 1), desc="MM", disable=not progress)
    for it in bar:
        t0, c0 = time.perf_counter(), time.process_time()
        updated: list[int] = []
        n_updates = len(plan)  # all groups but in lazy's partial sweeps
        inner = tqdm(range(n_updates), desc=f"iter {it}", leave=False, disable=not progress)
        for u in inner:
            g = nxt
            _, offset, size = groups[g]
            inner.set_postfix(group=groups[g][0])
            bounds[g] = mm_bound(log_gamma, stats.wins, stats.denom, offset, size, a) / n
            log_gamma = mm_update(log_gamma, stats.wins, stats.denom, offset, size, a)
            if keep:
                trail.append(g, log_gamma[offset : offset + size])
            # the next pass gathers what the next update needs and measures this one
            if greedy:
                nxt = _choose(bounds, active)
            elif u + 1 < n_updates:
                nxt = plan[u + 1]
            else:  # the sweep's last update: the next sweep's first group
                plan = _next_plan(active, gains, cfg.tol) if lazy else plan
                nxt = plan[0]
            stats = passes.collect(log_gamma, (nxt,))
            new_lp = stats.log_likelihood + log_prior(log_gamma, a)
            gains[g], lp = (new_lp - lp) / n, new_lp
            updated.append(g)
        inner.close()
        row = _record(it, stats, lp, time.perf_counter() - t0, updated, gains, groups)
        row["passes"] = len(updated)
        row["cpu_seconds"] = time.process_time() - c0
        history.append(row)
        report(row, log_gamma)
        _save(checkpoint, log_gamma, it, stats, nxt, plan, lp, gains, bounds, history, trail, start)
        bar.set_postfix(ll=f"{row['log_likelihood']:.4f}", gain=f"{max(gains.values()):.2e}")
        if _converged(row, gains, active, cfg.tol):
            log.info("MM converged after %d iterations", it)
            break
    bar.close()
    return log_gamma, history


def _save(
    checkpoint: StateStore | None,
    log_gamma: np.ndarray,
    it: int,
    stats: PassStats,
    nxt: int,
    plan: list[int],
    lp: float,
    gains: dict[int, float],
    bounds: dict[int, float],
    history: list[dict[str, Any]],
    trail: Trail,
    start: np.ndarray,
) -> None:
    """Save what the loop carries after iteration ``it``: ``stats`` are those of the
    next update, so a resumed run needs no extra pass; ``start`` is the log-gammas the
    trail of updates starts from."""
    if checkpoint is None:
        return
    checkpoint.save(
        {
            "iter": it,
            "log_gamma": log_gamma,
            "wins": stats.wins,
            "denom": stats.denom,
            "log_likelihood": stats.log_likelihood,
            "n_positions": stats.n_positions,
            "next": nxt,
            "plan": plan,
            "log_posterior": lp,
            "gains": gains,
            "bounds": bounds,
            "history": history,
            "trail": trail.saved() if trail.entries else [],
            "start": start if start.any() else None,
        }
    )


def _replay(
    state: dict[str, Any],
    start: np.ndarray,
    passes: MMPasses,
    groups: Sequence[GroupSpan],
    trail: Trail,
) -> np.ndarray:
    """The saved log-gammas, reached by replaying the trail from start into the engine
    (its cache then holds the same bits as ``_save`` left it); trail gets the saved one.
    An engine without a cache takes the saved log-gammas as they are (any trail an
    older state holds unused)."""
    saved_start = state.get("start")
    if saved_start is not None and not np.array_equal(np.asarray(saved_start), start):
        raise ValueError("train state: saved from another start of the gammas")
    if not passes.caches:
        return np.asarray(state["log_gamma"], dtype=np.float64).copy()
    log_gamma = start.copy()
    passes.advance(log_gamma.copy())
    for g, values in trail.resume(state["trail"]):
        _, offset, size = groups[g]
        log_gamma[offset : offset + size] = values
        passes.advance(log_gamma.copy())
    if not np.array_equal(log_gamma, np.asarray(state["log_gamma"], dtype=np.float64)):
        raise ValueError("train state: the trail of updates does not give the saved log-gammas")
    return log_gamma


def _stats_of(state: dict[str, Any]) -> PassStats:
    return PassStats(
        np.asarray(state["wins"], dtype=np.float64),
        np.asarray(state["denom"], dtype=np.float64),
        state["log_likelihood"],
        state["n_positions"],
    )


def _next_plan(active: list[int], gains: dict[int, float], tol: float) -> list[int]:
    """Lazy schedule: the next sweep's groups, those whose last measured update gained at
    least tol, or all of them when none did: a full sweep, the check. The group just
    updated is judged by its update before (only the next pass measures this one): a
    group stops being swept one update after its gain fell below tol. Its bound would
    know now, but it is a loose lower bound (half the shapes' gain on the large split),
    so it ended single-group sweeps early with a full sweep every other time."""
    due = [g for g in active if gains[g] >= tol]
    return due or list(active)


def _converged(row: dict[str, Any], gains: dict[int, float], active: list[int], tol: float) -> bool:
    """Every group's last update gained less than tol, and the sweep just done updated
    every group (lazy's partial sweeps leave stale gains; cyclic and greedy sweeps
    update as many groups as there are)."""
    full = row.get("passes", len(active)) >= len(active)
    return full and all(gains[g] < tol for g in active)


def _choose(bounds: dict[int, float], active: list[int]) -> int:
    """Greedy schedule: the group whose last update guaranteed most (never-updated
    first, in ``active``'s order)."""
    return max(active, key=lambda g: bounds[g])


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
