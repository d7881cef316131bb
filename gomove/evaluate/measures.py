"""The papers' move-prediction measures over a stream of Batches.

Measures (all over the positions of a stream of Batches):
- rank: 1 + the number of other legal candidates whose probability is >= the
  expert move's. Ties are pessimistic (a tied candidate counts as ranked ahead),
  so a model that cannot tell moves apart never scores a lucky top-1.
- top1: the prediction rate, fraction of positions with rank 1 (Coulom 2007, 3.4).
- topn: cumulative rank distribution, P(rank <= n) for n = 1..max_rank
  (Coulom 2007, fig. 4; Wistuba et al. 2012, fig. 5).
- log_evidence: mean log-probability of the expert move (Coulom 2007, fig. 3).
- rank error: (rank - 1) / number of legal candidates, 0 for a perfect
  prediction. Wistuba et al. 2012 (fig. 7) use rank / legal; ours differs by
  1 / legal and makes the best rank error 0 whatever the board.
- phase: the game cut into phases of ``phase_len`` moves (Wistuba et al. use 30)
  with n, top1, log-evidence and rank error (mean and approximate quartiles,
  from a histogram of RANK_ERROR_BINS bins) per phase.
- by_pattern_size: prediction rate, log-evidence and rank error by the radius of the
  shape pattern matched at the expert move (Wistuba et al. 2012, fig. 8; Stern's
  "Rank Error vs Pattern Size"); radius 0 = no shape.
- calibration: every legal candidate's predicted probability in CAL_BINS equal bins
  of [0, 1]; per bin the candidates, their mean predicted probability and the share
  of them the expert played (a calibrated model's lie on the diagonal); the largest
  gap over bins of at least CAL_MIN candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import torch

from gomove.data.batch import Batch
from gomove.memory import release_free_heap
from gomove.models import LogProbsFn
from gomove.models.calibration import CAL_BINS, calibration, calibration_parts

RANK_ERROR_BINS = 100
TRIM_EVERY = 8  # batches scored between two release_free_heap calls (gomove.memory)


class PositionLog:
    """Every evaluated position's record, for paired comparisons of models (bootstrap
    over games, box plots): arrays in evaluation order, ``arrays()`` as numpy.

    rank, n_legal, game, move: int64; radius: the shape radius matched at the expert
    move (0: none; -1 without shape radii); log_p: float64, the expert's log-probability;
    cal_n: uint16[P, CAL_BINS], the position's legal candidates by bin of predicted
    probability, cal_p: float32[P, CAL_BINS], the sum of their probabilities (the
    calibration measure's per-position part).
    """

    FIELDS = ("rank", "n_legal", "game", "move", "radius", "log_p", "cal_n", "cal_p")
    EMPTY = {"log_p": (np.float64, (0,)), "cal_n": (np.uint16, (0, CAL_BINS)),
             "cal_p": (np.float32, (0, CAL_BINS))}  # fmt: skip

    def __init__(self) -> None:
        self.parts: dict[str, list[np.ndarray]] = {f: [] for f in self.FIELDS}

    def add(self, **cols: np.ndarray) -> None:
        for f in self.FIELDS:
            self.parts[f].append(np.asarray(cols[f]))

    def arrays(self) -> dict[str, np.ndarray]:
        out = {}
        for f, v in self.parts.items():
            dtype, shape = self.EMPTY.get(f, (np.int64, (0,)))
            out[f] = np.concatenate(v) if v else np.zeros(shape, dtype)
        return out


def uniform_log_probs(feat: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Baseline: log(1 / n_legal) on every real candidate, -inf on padding.

    Coulom 2007 reports -5.49 for it on 19x19 games. feat: [B, M, G] (unused
    but for the shared signature), mask: [B, M] -> [B, M].
    """
    n_legal = mask.sum(1, keepdim=True).to(torch.float64)
    lp = (-torch.log(n_legal)).expand(mask.shape)
    return lp.masked_fill(~mask, float("-inf"))


def expert_ranks(log_probs: torch.Tensor, mask: torch.Tensor, winner: torch.Tensor) -> torch.Tensor:
    """Pessimistic rank of the expert move: 1 + other legal candidates with >= log-prob.

    log_probs, mask: [B, M], winner: [B] -> LongTensor[B].
    """
    rows = torch.arange(winner.shape[0], device=winner.device)
    lw = log_probs[rows, winner].unsqueeze(1)
    ahead = (log_probs >= lw) & mask
    return ahead.sum(1)  # counts the expert move itself once, hence 1 + others


class _Sums:
    """Per-key running sums that grow as new keys (phases, radii) appear."""

    def __init__(self, width: int = 1) -> None:
        self.width = width
        self.n = np.zeros(0, dtype=np.int64)
        self.top1 = np.zeros(0, dtype=np.int64)
        self.log_ev = np.zeros(0, dtype=np.float64)
        self.rank_err = np.zeros(0, dtype=np.float64)
        self.hist = np.zeros((0, width), dtype=np.int64)

    def _grow(self, size: int) -> None:
        if size <= len(self.n):
            return
        extra = size - len(self.n)
        self.n = np.concatenate([self.n, np.zeros(extra, np.int64)])
        self.top1 = np.concatenate([self.top1, np.zeros(extra, np.int64)])
        self.log_ev = np.concatenate([self.log_ev, np.zeros(extra)])
        self.rank_err = np.concatenate([self.rank_err, np.zeros(extra)])
        self.hist = np.concatenate([self.hist, np.zeros((extra, self.width), np.int64)])

    def add(
        self,
        key: np.ndarray,
        top1: np.ndarray,
        log_ev: np.ndarray,
        rank_err: np.ndarray,
        err_bin: np.ndarray | None = None,
    ) -> None:
        size = int(key.max()) + 1
        self._grow(size)
        self.n[:size] += np.bincount(key, minlength=size)
        self.top1[:size] += np.bincount(key, weights=top1, minlength=size).astype(np.int64)
        self.log_ev[:size] += np.bincount(key, weights=log_ev, minlength=size)
        self.rank_err[:size] += np.bincount(key, weights=rank_err, minlength=size)
        if err_bin is not None:
            np.add.at(self.hist, (key, err_bin), 1)


def _quantile(hist: np.ndarray, q: float) -> float:
    """Quantile q of a histogram over [0, 1), as the midpoint of the bin reaching it."""
    cum = np.cumsum(hist)
    k = int(np.searchsorted(cum, q * cum[-1]))
    return (min(k, len(hist) - 1) + 0.5) / len(hist)


def evaluate(
    model_log_probs_fn: LogProbsFn,
    data: Iterable[Batch],
    *,
    shape_radius: torch.Tensor | None = None,
    phase_len: int = 30,
    max_rank: int = 30,
    device: torch.device | str | None = None,
    positions: PositionLog | None = None,
) -> dict[str, Any]:
    """Stream over ``data`` once and compute the measures of the module docstring.

    model_log_probs_fn(feat [B, M, G], mask [B, M]) -> log-probs [B, M] (padding
    is masked out here whatever the function returns there). shape_radius:
    LongTensor[F], the radius of every shape level and 0 for every other
    feature, enables ``by_pattern_size``. Batches are moved to ``device`` when
    given. Returns a JSON-ready dict: n_positions, n_games, top1, topn,
    log_evidence, mean_rank, rank_error, mean_legal, phase[, by_pattern_size].
    positions: when given, gets every position's record (PositionLog).
    """
    positions = score_positions(
        model_log_probs_fn, data, shape_radius=shape_radius, device=device, positions=positions
    )
    return measures(
        positions.arrays(),
        phase_len=phase_len,
        max_rank=max_rank,
        by_pattern_size=shape_radius is not None,
    )


def score_positions(
    model_log_probs_fn: LogProbsFn,
    data: Iterable[Batch],
    *,
    shape_radius: torch.Tensor | None = None,
    device: torch.device | str | None = None,
    positions: PositionLog | None = None,
) -> PositionLog:
    """Every position's record (PositionLog) under the model, appended to ``positions``
    (a new log by default); the arguments as ``evaluate``'s. The measures are
    functions of these records alone (``measures``), so runs on several processes
    score their positions apart and gather the records."""
    positions = positions if positions is not None else PositionLog()
    radius_dev = None
    with torch.no_grad():
        for i, batch in enumerate(data):
            if i % TRIM_EVERY == TRIM_EVERY - 1:
                release_free_heap()  # the batches' freed tensors, else ~1 GB of heap
            if device is not None:
                batch = batch.to(device)
            if len(batch) == 0:
                continue
            rows = torch.arange(len(batch), device=batch.winner.device)
            if not bool(batch.mask[rows, batch.winner].all()):
                raise ValueError("an expert move is not among the real candidates (mask)")
            lp = model_log_probs_fn(batch.feat, batch.mask).to(torch.float64)
            if torch.isnan(lp[batch.mask]).any():
                raise ValueError("the model gives NaN log-probabilities: it diverged in training")
            lp = lp.masked_fill(~batch.mask, float("-inf"))
            rank = expert_ranks(lp, batch.mask, batch.winner)
            radius = np.full(len(batch), -1, dtype=np.int64)
            if shape_radius is not None:
                if radius_dev is None:
                    radius_dev = shape_radius.to(batch.feat.device)
                radius = radius_dev[batch.feat[rows, batch.winner]].amax(-1).cpu().numpy()
            cal_n, cal_p = calibration_parts(lp, batch.mask)
            positions.add(
                cal_n=cal_n,
                cal_p=cal_p,
                rank=rank.cpu().numpy(),
                n_legal=batch.mask.sum(1).cpu().numpy(),
                game=batch.game.cpu().numpy(),
                move=batch.move.cpu().numpy(),
                radius=radius,
                log_p=lp[rows, batch.winner].cpu().numpy(),
            )
    return positions


def measures(
    records: dict[str, np.ndarray],
    *,
    phase_len: int = 30,
    max_rank: int = 30,
    by_pattern_size: bool = True,
) -> dict[str, Any]:
    """The measures of the module docstring from the positions' records
    (PositionLog.arrays()); ``evaluate`` documents the dict returned."""
    rank, n_legal, log_p = records["rank"], records["n_legal"], records["log_p"]
    n = len(rank)
    if n == 0:
        raise ValueError("no positions to evaluate")
    err = (rank - 1) / n_legal.astype(np.float64)
    hit = (rank == 1).astype(np.float64)
    rank_hist = np.bincount(np.minimum(rank, max_rank + 1) - 1, minlength=max_rank + 1)
    phases = _Sums(RANK_ERROR_BINS)
    err_bin = np.minimum((err * RANK_ERROR_BINS).astype(np.int64), RANK_ERROR_BINS - 1)
    phases.add(records["move"] // phase_len, hit, log_p, err, err_bin)
    metrics: dict[str, Any] = {
        "n_positions": n,
        "n_games": len(np.unique(records["game"])),
        "top1": int(hit.sum()) / n,
        "topn": (np.cumsum(rank_hist[:max_rank]) / n).tolist(),
        "log_evidence": float(log_p.sum()) / n,
        "mean_rank": float(rank.sum()) / n,
        "rank_error": float(err.sum()) / n,
        "mean_legal": float(n_legal.sum()) / n,
        "phase": [_phase_row(phases, int(k), phase_len) for k in np.flatnonzero(phases.n)],
    }
    if by_pattern_size:
        sizes = _Sums()
        sizes.add(records["radius"], hit, log_p, err)
        metrics["by_pattern_size"] = [
            {
                "radius": int(r),
                "n": int(sizes.n[r]),
                "fraction": float(sizes.n[r] / n),
                "top1": float(sizes.top1[r] / sizes.n[r]),
                "log_evidence": float(sizes.log_ev[r] / sizes.n[r]),
                "rank_error": float(sizes.rank_err[r] / sizes.n[r]),
            }
            for r in np.flatnonzero(sizes.n)
        ]
    if "cal_n" in records and len(records["cal_n"]) == n:
        metrics["calibration"], metrics["calibration_gap"] = calibration(
            records["cal_n"], records["cal_p"], log_p
        )
    return metrics


def _phase_row(phases: _Sums, k: int, phase_len: int) -> dict[str, Any]:
    n = int(phases.n[k])
    return {
        "phase": k,
        "first_move": k * phase_len,
        "last_move": (k + 1) * phase_len - 1,
        "n": n,
        "top1": float(phases.top1[k] / n),
        "log_evidence": float(phases.log_ev[k] / n),
        "rank_error": float(phases.rank_err[k] / n),
        "rank_error_q25": _quantile(phases.hist[k], 0.25),
        "rank_error_median": _quantile(phases.hist[k], 0.5),
        "rank_error_q75": _quantile(phases.hist[k], 0.75),
    }


def validator(
    data: Iterable[Batch], device: torch.device | str | None = None
) -> Callable[[LogProbsFn], dict[str, Any]]:
    """``validate(log_probs)`` for the trainers (gomove.train.monitor): evaluate on data."""
    return lambda log_probs: evaluate(log_probs, data, device=device)
