"""Factorization Bradley-Terry move model (FBT): parameters and scoring.

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
- strength table: [F, 1 + k], row f = (w_f - ||v_f||^2 / 2, v_f), so that a team's
  E = s_0 + 1/2 ||s_1..k||^2 with s the sum of its members' rows (``team_strength``).

The model is trained by SGD on the losses of gomove.train.sgd.losses (FBT's softmax
log-loss, its sampled gradient, LFR's pairwise loss), which differentiate the same
table with a compiled backward; LFR (Wistuba and Schmidt-Thieme 2013) is this model
under another loss.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from gomove.models.calibration import floored, with_floor
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

    def strength_table(self) -> torch.Tensor:
        """The strength table [F, 1 + k] (module docstring): 1/2 (||sum v||^2 - sum
        ||v||^2) is the sum of <v_f, v_g> over unordered pairs of members, so the
        per-level part w_f - ||v_f||^2 / 2 joins v in one table."""
        w, v = self.effective()
        return torch.cat([(w - 0.5 * (v * v).sum(1)).unsqueeze(1), v], dim=1)

    def team_strength(self, feat: torch.Tensor) -> torch.Tensor:
        """E of every team: feat LongTensor[..., G] -> Tensor[...] (e.g. [B, M, G] -> [B, M]),
        O(k G) per team (``team_strength`` of the strength table). Padding (all zeros)
        gets 0."""
        return team_strength(self.strength_table(), feat)

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


def team_strength(table: torch.Tensor, feat: torch.Tensor) -> torch.Tensor:
    """E = s_0 + 1/2 sum_q s_q^2, s the sum over each team of the rows of table [F, 1 + k].

    feat: LongTensor[..., G] -> Tensor[...]: one fused embedding_bag (~3x faster than
    index_select + sum). Training differentiates it by gomove.train.sgd.losses'
    compiled backward.
    """
    g = feat.shape[-1]
    s = F.embedding_bag(feat.reshape(-1, g).contiguous(), table, mode="sum")  # [N, 1 + k]
    e = s[:, 0] + 0.5 * (s[:, 1:] * s[:, 1:]).sum(1)
    return e.view(feat.shape[:-1])
