"""Factorization Bradley-Terry move model (FBT) and its losses: full, sampled and LFR's.

Xiao and Müller, "Factorization Ranking Model for Move Prediction in the Game
of Go" (AAAI 2016 poster): a candidate is a team of feature levels as in
Coulom's model (gomove.models.mm), and its strength adds pairwise interactions
of k-dimensional latent vectors (a factorization machine over the team):

    E(team) = sum_f w_f + 1/2 sum_{f != g} <v_f, v_g>
            = sum_f w_f + 1/2 (||sum_f v_f||^2 - sum_f ||v_f||^2),

the second form costing O(k |team|). The expert move wins against the other
legal candidates, P(cand m of position j) = exp(E_m) / sum_legal exp(E).

Terms (indices are the global feature indices of gomove.data.batch):
- w: Parameter[F], strength of each level; v: Parameter[F, k], its latent
  interaction vector. Index 0 (``none``, also every padding entry) is fixed at
  zero: the score multiplies both by ``live`` (0 at index 0, 1 elsewhere), so
  the ``none`` index contributes nothing to any team and never gets a gradient,
  whatever the optimizer does.
- losses, each the mean over the B positions of the batch plus the L2 term
  lambda_w/2 ||w||^2 + lambda_v/2 ||v||^2 over the whole parameter vectors
  (the poster's objective, 1/n sum_j l_j + L2; a mini-batch's loss is an
  unbiased estimate of it, so the L2 term is added in full to every batch,
  not scaled by the batch's share of the data):
  - ``fbt_loss``: l_j = -log P(expert move of j), the softmax log-loss.
  - ``sampled_fbt_grad_loss``: the poster's "approximate gradient": a surrogate
    whose gradient is -h(winner) + 1/S sum_i h(sampled_i), S candidates drawn
    from the model's own distribution P_j with replacement, an unbiased
    estimate of the gradient of ``fbt_loss``.
  - ``lfr_loss``: Wistuba and Schmidt-Thieme's latent factor ranking (LFR, ECML
    2013) as the poster's baseline: the same factorized score, no competition
    among all candidates, l_j = mean over the other legal candidates o of
    -log sigmoid(E_winner - E_o) (0 for a position with a single candidate).

These losses work on padded batches (any device). gomove.train.sgd.compiled
computes the same three losses and their gradients by compiled loops over
the unpadded candidates on the CPU (tests/test_sgd_compiled.py checks them
against autograd of these).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from gomove.models.calibration import floored, with_floor
from gomove.models.fbt_kernels import scatter_team_grad
from gomove.models.mm import masked_log_softmax


class FactorizationBT(nn.Module):
    """w: Parameter[F] and v: Parameter[F, k]; ``none`` (index 0) contributes nothing.

    k = 0 is allowed: no interactions, the Bradley-Terry model with w = log gamma.
    Parameters are drawn N(0, init_std^2) for v and zero for w (as MM starts at
    gamma = 1), from ``generator`` when given (seeded, reproducible).
    """

    live: torch.Tensor
    floor: torch.Tensor

    def __init__(
        self,
        n_features: int,
        k: int = 10,
        init_std: float = 0.01,
        dtype: torch.dtype = torch.float32,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        if n_features < 1 or k < 0:
            raise ValueError(f"need n_features >= 1 and k >= 0, got {n_features}, {k}")
        v = torch.randn(n_features, k, generator=generator, dtype=torch.float64) * init_std
        v[0] = 0.0
        self.w = nn.Parameter(torch.zeros(n_features, dtype=dtype))
        self.v = nn.Parameter(v.to(dtype))
        live = torch.ones(n_features, dtype=dtype)
        live[0] = 0.0
        self.register_buffer("live", live, persistent=False)
        self.register_buffer("floor", torch.zeros((), dtype=torch.float64))

    @property
    def n_features(self) -> int:
        return self.w.shape[0]

    @property
    def k(self) -> int:
        return self.v.shape[1]

    def effective(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(w, v) with the ``none`` row zeroed, as the score uses them: Tensor[F], Tensor[F, k]."""
        return self.w * self.live, self.v * self.live.unsqueeze(1)

    def team_strength(self, feat: torch.Tensor) -> torch.Tensor:
        """E of every team: feat LongTensor[..., G] -> Tensor[...] (e.g. [B, M, G] -> [B, M]).

        O(k G) per team: 1/2 (||sum v||^2 - sum ||v||^2) is the sum of <v_f, v_g>
        over unordered pairs of members, so the per-level part w_f - ||v_f||^2 / 2
        joins v in one [F, 1 + k] table, summed over each team in one pass
        (module-level ``team_strength``). Padding (all zeros) gets 0.
        """
        w, v = self.effective()
        table = torch.cat([(w - 0.5 * (v * v).sum(1)).unsqueeze(1), v], dim=1)
        return team_strength(table, feat)

    def log_probs(self, feat: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Log-probability of every candidate, -inf on padding. [B, M, G], [B, M] -> [B, M]."""
        lp = masked_log_softmax(self.team_strength(feat), mask)
        return floored(lp, mask, float(self.floor))

    def forward(self, feat: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.log_probs(feat, mask)

    def hparams(self) -> dict[str, Any]:
        """The latent dimension k (gomove.models.MoveModel)."""
        return {"k": self.k}

    def level_strength(self) -> torch.Tensor:
        """w of every level, float64[F] on the CPU: its strength alone, without team mates."""
        return self.w.detach().cpu().double()

    def level_notes(self) -> dict[str, torch.Tensor]:
        """``|v|``, the norm of each level's interaction vector: how much its strength
        depends on its team mates."""
        return {"|v|": self.v.detach().cpu().double().norm(dim=1)}

    def log_gammas(self) -> None:
        """None: the interactions make a team's strength more than a product of gammas."""
        return None

    def l2(self, lambda_w: float, lambda_v: float) -> torch.Tensor:
        """lambda_w/2 ||w||^2 + lambda_v/2 ||v||^2 (the none row is zero, so it adds nothing)."""
        w, v = self.effective()
        return 0.5 * lambda_w * (w * w).sum() + 0.5 * lambda_v * (v * v).sum()

    @classmethod
    def from_state_dict(cls, state: dict[str, torch.Tensor]) -> FactorizationBT:
        """Rebuild a model from ``state_dict()`` output; n_features and k from v's shape."""
        n_features, k = state["v"].shape
        return cls(n_features, k, init_std=0.0, dtype=state["w"].dtype).load_saved(state)

    @torch.no_grad()
    def load_saved(self, state: dict[str, torch.Tensor]) -> FactorizationBT:
        """Load a saved state dict in place (the compiled engine's views of w and v
        follow), its floor as every model reads one (with_floor: 0 if saved before it)."""
        if state["w"].shape != self.w.shape or state["v"].shape != self.v.shape:
            raise ValueError(
                f"a saved FBT of {tuple(state['v'].shape)} (features, k) into one of "
                f"{tuple(self.v.shape)}"
            )
        self.w.copy_(state["w"])
        self.v.copy_(state["v"])
        return with_floor(self, state)


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


def team_strength(table: torch.Tensor, feat: torch.Tensor) -> torch.Tensor:
    """E = s_0 + 1/2 sum_q s_q^2, s the sum over each team of the rows of table [F, 1 + k].

    feat: LongTensor[..., G] -> Tensor[...]. Forward by one fused embedding_bag
    (~3x faster than index_select + sum); the backward scatters each team's
    gradient g (1, s_1..k) to its G members by a compiled loop on the CPU
    (gomove.models.fbt_kernels: ~5x faster than index_add_, and it skips
    teams with zero gradient, i.e. padding) and one index_add_ elsewhere. Row
    0 (``none``) gets no gradient.
    """
    g = feat.shape[-1]
    e = _TeamStrength.apply(table, feat.reshape(-1, g).contiguous())
    return e.view(feat.shape[:-1])


def init_from_mm(model: FactorizationBT, log_gamma: torch.Tensor) -> FactorizationBT:
    """Set w to a Bradley-Terry model's log-gammas (Tensor[F]; index 0 must be 0); v unchanged.

    With small v the FBT model then starts where MM ended: E = log gamma(team).
    """
    if log_gamma.shape != model.w.shape:
        raise ValueError(
            f"log_gamma has shape {tuple(log_gamma.shape)}, want {tuple(model.w.shape)}"
        )
    with torch.no_grad():
        model.w.copy_(log_gamma.to(model.w))
        model.w[0] = 0.0
    return model


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
    lw = _expert_log_probs(model.team_strength(feat), mask, winner)
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
        log_p = masked_log_softmax(model.team_strength(feat), mask)
        picks = torch.multinomial(log_p.exp(), n_samples, replacement=True, generator=generator)
        lw = log_p[rows, winner]
        objective = -lw.mean() + model.l2(lambda_w, lambda_v)
    g = feat.shape[2]
    teams = torch.cat(
        [feat[rows, winner].unsqueeze(1), feat.gather(1, picks.unsqueeze(2).expand(-1, -1, g))],
        dim=1,
    )  # [B, 1 + S, G]
    e = model.team_strength(teams)
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
    e = model.team_strength(feat)
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
