"""The losses FBT and LFR train on, on padded batches, and the gradient of a team's strength.

Xiao and Müller's poster (seeds 002): each loss is the mean over the B positions of
the batch plus the L2 term lambda_w/2 ||w||^2 + lambda_v/2 ||v||^2 over the whole
parameter vectors (the poster's objective, 1/n sum_j l_j + L2; a mini-batch's loss is
an unbiased estimate of it, so the L2 term is added in full to every batch, not
scaled by the batch's share of the data):

- ``fbt_loss``: l_j = -log P(expert move of j), the softmax log-loss.
- ``sampled_fbt_grad_loss``: the poster's "approximate gradient": a surrogate
  whose gradient is -h(winner) + 1/S sum_i h(sampled_i), S candidates drawn
  from the model's own distribution P_j with replacement, an unbiased
  estimate of the gradient of ``fbt_loss``.
- ``lfr_loss``: Wistuba and Schmidt-Thieme's latent factor ranking (LFR, ECML
  2013) as the poster's baseline: the same factorized score, no competition
  among all candidates, l_j = mean over the other legal candidates o of
  -log sigmoid(E_winner - E_o) (0 for a position with a single candidate).

``trained_strength`` is the model's team strength (gomove.models.fbt) with a
hand-written backward: each team's gradient g (1, s_1..k) scattered to its G members
by a compiled loop on the CPU (gomove.train.sgd.kernels.scatter_team_grad: ~5x faster
than index_add_, and it skips teams with zero gradient, i.e. padding) and one
index_add_ elsewhere; row 0 (``none``) gets no gradient.

These are the padded engine's losses (gomove.train.sgd.padded, any device);
gomove.train.sgd.compiled computes the same three losses and their gradients by
compiled loops over the unpadded candidates on the CPU (tests/test_sgd_compiled.py
checks them against autograd of these).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.nn import functional as F

from gomove.data.batch import Batch
from gomove.models.fbt import FactorizationBT
from gomove.models.mm import masked_log_softmax
from gomove.train.schemas import SGDConfig
from gomove.train.sgd.kernels import scatter_team_grad


class _TeamStrength(torch.autograd.Function):
    """E = s_0 + 1/2 ||s_1..k||^2 with s the sum of each team's table rows."""

    @staticmethod
    def forward(ctx, table: torch.Tensor, bags: torch.Tensor) -> torch.Tensor:
        s = F.embedding_bag(bags, table, mode="sum")  # [N, 1 + k]
        ctx.save_for_backward(bags, s)
        ctx.n_rows = table.shape[0]
        return s[:, 0] + 0.5 * (s[:, 1:] * s[:, 1:]).sum(1)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        # dE/ds = (1, s_1..k), the same for every member of the team
        bags, s = ctx.saved_tensors
        out = grad.new_zeros(ctx.n_rows, s.shape[1])
        if grad.device.type == "cpu":
            scatter_team_grad(out.numpy(), bags.numpy(), s.numpy(), grad.contiguous().numpy())
        else:
            ds = s * grad.unsqueeze(1)
            ds[:, 0] = grad
            out.index_add_(0, bags.reshape(-1), ds.repeat_interleave(bags.shape[1], dim=0))
            out[0] = 0.0
        return out, None


def table_strength(table: torch.Tensor, feat: torch.Tensor) -> torch.Tensor:
    """gomove.models.fbt.team_strength(table, feat) (LongTensor[..., G] -> Tensor[...])
    with the compiled backward of the module docstring: the same forward, one fused
    embedding_bag."""
    g = feat.shape[-1]
    e = _TeamStrength.apply(table, feat.reshape(-1, g).contiguous())
    return e.view(feat.shape[:-1])


def trained_strength(model: FactorizationBT, feat: torch.Tensor) -> torch.Tensor:
    """model.team_strength(feat), differentiable by the compiled backward."""
    return table_strength(model.strength_table(), feat)


@dataclass
class Loss:
    """One batch's loss. ``loss`` is what to call backward() on; the others are detached.

    objective: the model family's own loss at these parameters (mean per
    position + L2): for the sampled gradient, the full softmax log-loss its
    gradient estimates. log_lik: sum over the positions of log P(expert move)
    under the softmax, whatever the loss. n: the number of positions.
    """

    loss: torch.Tensor
    objective: torch.Tensor
    log_lik: torch.Tensor
    n: int


def _expert_log_probs(scores: torch.Tensor, mask: torch.Tensor, winner: torch.Tensor):
    rows = torch.arange(winner.shape[0], device=winner.device)
    return masked_log_softmax(scores, mask)[rows, winner]


def fbt_loss(
    model: FactorizationBT,
    feat: torch.Tensor,
    mask: torch.Tensor,
    winner: torch.Tensor,
    lambda_w: float = 0.0,
    lambda_v: float = 0.0,
) -> Loss:
    """Mean softmax log-loss -log P(expert move) over the batch + L2 (the poster's objective).

    feat: LongTensor[B, M, G], mask: BoolTensor[B, M], winner: LongTensor[B].
    """
    lw = _expert_log_probs(trained_strength(model, feat), mask, winner)
    loss = -lw.mean() + model.l2(lambda_w, lambda_v)
    return Loss(loss, loss.detach(), lw.detach().sum(), len(winner))


def sampled_fbt_grad_loss(
    model: FactorizationBT,
    feat: torch.Tensor,
    mask: torch.Tensor,
    winner: torch.Tensor,
    n_samples: int,
    generator: torch.Generator | None = None,
    lambda_w: float = 0.0,
    lambda_v: float = 0.0,
) -> Loss:
    """Surrogate whose gradient is the poster's unbiased sampled estimate of ``fbt_loss``'s.

    Per position j, S = n_samples candidates are drawn with replacement from
    P_j (the model's masked softmax, no gradient through the draw), and
    l_j = -E(winner) + 1/S sum_i E(sampled_i), so that grad l_j =
    -h(winner) + 1/S sum_i h(sampled_i), whose expectation is -h(winner) +
    sum_m P_j(m) h(m), the gradient of -log P_j(winner). Only the 1 + S teams
    per position carry gradient, so the backward pass costs O(S) per position
    instead of O(M). ``objective`` and ``log_lik`` are the full softmax ones,
    computed from the same no-grad forward pass that gives P_j.
    """
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    rows = torch.arange(winner.shape[0], device=winner.device)
    with torch.no_grad():
        log_p = masked_log_softmax(trained_strength(model, feat), mask)
        picks = torch.multinomial(log_p.exp(), n_samples, replacement=True, generator=generator)
        lw = log_p[rows, winner]
        objective = -lw.mean() + model.l2(lambda_w, lambda_v)
    g = feat.shape[2]
    teams = torch.cat(
        [feat[rows, winner].unsqueeze(1), feat.gather(1, picks.unsqueeze(2).expand(-1, -1, g))],
        dim=1,
    )  # [B, 1 + S, G]
    e = trained_strength(model, teams)
    loss = (e[:, 1:].mean(1) - e[:, 0]).mean() + model.l2(lambda_w, lambda_v)
    return Loss(loss, objective, lw.sum(), len(winner))


def lfr_loss(
    model: FactorizationBT,
    feat: torch.Tensor,
    mask: torch.Tensor,
    winner: torch.Tensor,
    lambda_w: float = 0.0,
    lambda_v: float = 0.0,
) -> Loss:
    """LFR's pairwise loss: mean over positions of the mean over the other legal
    candidates o of -log sigmoid(E_winner - E_o), + L2. A position whose only
    legal candidate is the expert move adds 0. ``log_lik`` is the softmax one,
    for comparison with FBT.
    """
    e = trained_strength(model, feat)
    rows = torch.arange(winner.shape[0], device=winner.device)
    ew = e[rows, winner]
    others = mask.clone()
    others[rows, winner] = False
    pair = F.softplus(e - ew.unsqueeze(1)) * others  # -log sigmoid(E_w - E_o)
    per_pos = pair.sum(1) / others.sum(1).clamp(min=1)
    loss = per_pos.mean() + model.l2(lambda_w, lambda_v)
    with torch.no_grad():
        lw = _expert_log_probs(e, mask, winner)
    return Loss(loss, loss.detach(), lw.sum(), len(winner))


def batch_loss(
    model: FactorizationBT, batch: Batch, cfg: SGDConfig, generator: torch.Generator
) -> Loss:
    """The loss cfg asks for on one batch: lfr_loss (name "lfr"), sampled_fbt_grad_loss
    (sample = S > 0) or fbt_loss."""
    args = (model, batch.feat, batch.mask, batch.winner)
    reg = {"lambda_w": cfg.lambda_w, "lambda_v": cfg.lambda_v}
    if cfg.name == "lfr":
        return lfr_loss(*args, **reg)
    if cfg.sample:
        return sampled_fbt_grad_loss(*args, cfg.sample, generator, **reg)
    return fbt_loss(*args, **reg)
