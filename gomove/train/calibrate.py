"""The softmax temperature: one scalar fitted on held-out positions, folded into a model.

A model's probabilities are softmax(strength) over a position's legal moves; scaling
every strength by tau changes no ranking, only how sure the model is. ``fit_temperature``
finds the tau that maximizes the mean log-probability of held-out expert moves (the
rankers calibrate so after every pass, gomove.train.rankers.fit; MM, FBT and LFR with
``model.calibrate=true`` once after training, on the validation set). ``tempered``
folds tau into the parameters, so the model class and every reader stay as they are:
MM's log-gammas times tau; FBT's w times tau and v times sqrt(tau) (its strength
sum w + sum of <v_f, v_g> scales by tau exactly); the rankers' own temperature.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable

import torch

from gomove.data.batch import Batch
from gomove.models import MoveModel
from gomove.models.fbt import FactorizationBT
from gomove.models.mm import BradleyTerry
from gomove.models.rankers import AdditiveRanking

Strength = Callable[[torch.Tensor], torch.Tensor]  # feat [B, M, G] -> strength [B, M]


def fit_temperature(
    strength: Strength, batches: Iterable[Batch], start: float | None = None
) -> float:
    """The temperature maximizing sum_j log softmax(temperature * strength)[expert of j].

    The log-likelihood is concave in the temperature (its second derivative is
    minus the variance of the strength under the softmax), so damped Newton steps
    from ``start`` (default 1 / sd(strengths)) converge. 1.0 when every strength ties.
    """
    data = []
    with torch.no_grad():
        for b in batches:
            s = strength(b.feat).double().cpu()
            data.append((s, b.mask.cpu(), b.winner.cpu()))
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


def calibrate(model: MoveModel, batches: Iterable[Batch]) -> tuple[MoveModel, float]:
    """model tempered by the temperature that fits batches best, and that temperature."""
    tau = fit_temperature(model_strength(model), batches, start=1.0)
    return tempered(model, tau), tau
