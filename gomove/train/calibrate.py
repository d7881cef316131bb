"""The softmax temperature (and the probability floor): fitted on held-out positions,
folded into a model.

A model's probabilities are softmax(strength) over a position's legal moves; scaling
every strength by tau changes no ranking, only how sure the model is. ``fit_temperature``
finds the tau that maximizes the mean log-probability of held-out expert moves (the
rankers calibrate so after every pass, gomove.train.rankers.fit; MM, FBT and LFR with
``model.calibrate=true`` once after training, on the validation set). ``tempered``
folds tau into the parameters, so the model class and every reader stay as they are:
MM's log-gammas times tau; FBT's w times tau and v times sqrt(tau) (its strength
sum w + sum of <v_f, v_g> scales by tau exactly); the rankers' own temperature.

``calibrate(..., by="bins")`` fits for the calibration measure instead: the temperature
and the floor (gomove.models.calibration): for each floor of a grid its likeliest
temperature and a few around it, the pair whose largest bin gap on the held-out
positions is smallest. A strong model too sure of its top moves but right in the middle
needs both: the likelihood alone picks no floor, since a floor costs the expert's move a
little probability everywhere.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import torch

from gomove.data.batch import Batch
from gomove.models import MoveModel
from gomove.models.calibration import calibration, calibration_parts, floored
from gomove.models.fbt import FactorizationBT
from gomove.models.mm import BradleyTerry, masked_log_softmax
from gomove.models.rankers import AdditiveRanking
from gomove.train.context import TrainContext
from gomove.train.schemas import CALIBRATE_BY, EngineConfig

log = logging.getLogger(__name__)

Strength = Callable[[torch.Tensor], torch.Tensor]  # feat [B, M, G] -> strength [B, M]
Scored = list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]  # (strength, mask, winner)

FLOORS = tuple(0.01 * i for i in range(7))  # 0 to 0.06
TAU_FACTORS = (0.96, 0.98, 1.0, 1.02, 1.04)  # times each floor's likeliest temperature


def fit_temperature(
    strength: Strength, batches: Iterable[Batch], start: float | None = None
) -> float:
    """The temperature maximizing sum_j log softmax(temperature * strength)[expert of j].

    The log-likelihood is concave in the temperature (its second derivative is
    minus the variance of the strength under the softmax), so damped Newton steps
    from ``start`` (default 1 / sd(strengths)) converge. 1.0 when every strength ties.
    """
    return _fit_temperature(_scored(strength, batches), start)


def _scored(strength: Strength, batches: Iterable[Batch]) -> Scored:
    data = []
    with torch.no_grad():
        for b in batches:
            s = strength(b.feat).double().cpu()
            data.append((s, b.mask.cpu(), b.winner.cpu()))
    return data


def _fit_temperature(data: Scored, start: float | None) -> float:
    vals = torch.cat([s[m] for s, m, _ in data])
    sd = float(vals.std()) if vals.numel() > 1 else 0.0
    if not sd > 0:
        return 1.0
    tau = start if start is not None else 1.0 / sd
    for _ in range(50):
        grad = hess = 0.0
        for s, m, w in data:
            logits = (tau * s).masked_fill(~m, float("-inf"))
            p = torch.softmax(logits, 1)
            s0 = s.masked_fill(~m, 0.0)
            mean = (p * s0).sum(1)
            grad += float((s0[torch.arange(len(w)), w] - mean).sum())
            hess += float(((p * s0 * s0).sum(1) - mean * mean).sum())
        if hess <= 0:
            break
        step = grad / hess
        new = min(max(tau + step, tau / 2), tau * 2)  # damped, kept positive
        if abs(new - tau) < 1e-7 * tau:
            tau = new
            break
        tau = new
    return tau


def _floored_log_probs(
    data: Scored, tau: float, floor: float
) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """(log-probabilities, mask, expert's log-probability) of each scored batch under the
    softmax of tau * strength with the floor."""
    for s, m, w in data:
        lp = floored(masked_log_softmax(tau * s, m), m, floor)
        yield lp, m, lp[torch.arange(len(w)), w]


def mean_log_p(data: Scored, tau: float, floor: float) -> float:
    """Mean log-probability of the expert move over the scored positions."""
    return float(torch.cat([e for _, _, e in _floored_log_probs(data, tau, floor)]).mean())


def largest_gap(data: Scored, tau: float, floor: float) -> tuple[float | None, float]:
    """(largest calibration gap, mean log-probability of the expert move) over the scored
    positions under the softmax of tau * strength with the floor."""
    ns, ps, logs = [], [], []
    for lp, m, expert in _floored_log_probs(data, tau, floor):
        n, p = calibration_parts(lp, m)
        ns.append(n)
        ps.append(p)
        logs.append(expert.numpy())
    log_p = np.concatenate(logs)
    return calibration(np.concatenate(ns), np.concatenate(ps), log_p)[1], float(log_p.mean())


def _likeliest_tau(data: Scored, floor: float, around: float) -> float:
    """The temperature of the likeliest expert moves under the floor: a golden-section
    search over log tau in [around / 2, 2 around] (the log-likelihood is unimodal there
    in practice; without a floor it is concave, fit_temperature)."""
    lo, hi = math.log(around / 2), math.log(around * 2)
    r = (math.sqrt(5) - 1) / 2

    def ll(log_tau: float) -> float:
        return mean_log_p(data, math.exp(log_tau), floor)

    x1, x2 = hi - r * (hi - lo), lo + r * (hi - lo)
    f1, f2 = ll(x1), ll(x2)
    for _ in range(24):
        if f1 < f2:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + r * (hi - lo)
            f2 = ll(x2)
        else:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - r * (hi - lo)
            f1 = ll(x1)
    return math.exp((lo + hi) / 2)


def fit_bins(strength: Strength, batches: Iterable[Batch]) -> tuple[float, float]:
    """(temperature, floor) with the smallest largest calibration gap on the batches: for
    each of FLOORS its likeliest temperature times TAU_FACTORS, ties to the likelier.
    The likelihood's temperature and no floor when no bin has enough candidates."""
    data = _scored(strength, batches)
    tau0 = _fit_temperature(data, 1.0)
    best = (math.inf, -math.inf, tau0, 0.0)  # (gap, mean log-probability, tau, floor)
    for floor in FLOORS:
        tau_f = tau0 if floor == 0.0 else _likeliest_tau(data, floor, tau0)
        for f in TAU_FACTORS:
            gap, ll = largest_gap(data, tau_f * f, floor)
            if gap is None:
                return tau0, 0.0
            if (gap, -ll) < (best[0], -best[1]):
                best = (gap, ll, tau_f * f, floor)
        log.info("floor %.2f: temperature %.4f, best gap so far %.2f points",
                 floor, tau_f, 100 * best[0])  # fmt: skip
    return best[2], best[3]


def model_strength(model: MoveModel) -> Strength:
    """The strength a model's softmax takes (the rankers': before their temperature)."""
    if isinstance(model, BradleyTerry):
        return lambda feat: model.team_log_strength(feat.to(model.log_gamma.device))
    if isinstance(model, FactorizationBT):
        return lambda feat: model.team_strength(feat.to(model.w.device))
    if isinstance(model, AdditiveRanking):
        return lambda feat: model.team_strength(feat.to(model.theta.device))
    raise TypeError(f"no strength for {type(model).__name__}")


def tempered(model: MoveModel, tau: float) -> MoveModel:
    """A copy of model whose strengths are tau times model's (module docstring)."""
    if not tau > 0:
        raise ValueError(f"a temperature must be > 0, not {tau}")
    out = copy.deepcopy(model)
    with torch.no_grad():
        if isinstance(out, BradleyTerry):
            out.log_gamma = out.log_gamma * tau
        elif isinstance(out, FactorizationBT):
            out.w.mul_(tau)
            out.v.mul_(math.sqrt(tau))
        elif isinstance(out, AdditiveRanking):
            out.temperature.fill_(tau)
        else:
            raise TypeError(f"no temperature for {type(model).__name__}")
    return out


def calibrate(
    model: MoveModel, batches: Iterable[Batch], by: str = "likelihood"
) -> tuple[MoveModel, float, float]:
    """model tempered (and floored) as it fits the batches best, by the likelihood or by
    the calibration bins (module docstring); and the temperature and floor."""
    if by not in CALIBRATE_BY:
        raise ValueError(f"calibrate by one of {CALIBRATE_BY}, not {by!r}")
    if by == "likelihood":
        tau, floor = fit_temperature(model_strength(model), batches, start=1.0), 0.0
    else:
        tau, floor = fit_bins(model_strength(model), batches)
    out = tempered(model, tau)
    out.floor.fill_(floor)
    return out, tau, floor


def calibrated(
    model: MoveModel, history: list[dict], cfg: EngineConfig, ctx: TrainContext
) -> tuple[MoveModel, list[dict]]:
    """The model tempered on the validation set (ctx.val_data) when cfg.calibrate
    (``calibrate``); the temperature joins the last history row."""
    if not cfg.calibrate:
        return model, history
    if ctx.val_data is None:
        raise ValueError(f"{cfg.needs_validation()}: set data.val")
    model, tau, floor = calibrate(model, ctx.val_data, cfg.calibrate_by)
    history[-1]["temperature"] = tau
    history[-1]["floor"] = floor
    log.info(
        "calibrated on the validation set by %s: temperature %.4f, floor %.3f",
        cfg.calibrate_by,
        tau,
        floor,
    )
    return model, history
