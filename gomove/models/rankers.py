"""The comparison paper's rankers as move models: additive team strengths, a calibrated softmax.

Wistuba, Schaefer and Platzner 2012, section III: probabilistic ranking (PR:
theta_f = W_f / A_f), Bayesian Approximation Ranking (BAR) and Loopy Bayesian
Ranking (LBR) (Gaussian strengths N(mu_f, sigma2_f)). All three predict by
the highest team strength, the sum of its members' theta (PR) or mu (BAR,
LBR). For a log-evidence they need probabilities, which none of them gives
directly: the model scores candidates by a softmax of the team strengths
times one temperature, fitted on held-out positions (gomove.train.rankers.fit),
so a model's ranking is its algorithm's and only the spread of the
probabilities is fitted. With that temperature the model is Coulom's
generalized Bradley-Terry model with log gamma_f = temperature * theta_f.

Terms:
- columns: LongTensor[K], the columns of feat (feature groups) forming a team;
  empty means every group. The single-pattern variant (Stern et al.'s Bayesian
  full ranking: a move is its largest matched shape) keeps the shape column
  only, and a candidate with no shape gets index 0, a learned "no shape"
  strength; with every group, index 0 (a group absent) stays 0.
- temperature: the softmax's inverse scale (a 0-dim float64 buffer).
"""

from __future__ import annotations

from typing import Any, Self

import torch
from torch import nn

from gomove.models.calibration import floored, with_floor
from gomove.models.mm import masked_log_softmax


class AdditiveRanking(nn.Module):
    """Team strength = sum of its members' ``theta``; P = softmax(temperature * strength)."""

    theta: torch.Tensor
    temperature: torch.Tensor
    columns: torch.Tensor
    floor: torch.Tensor

    def __init__(
        self,
        n_features: int,
        theta: torch.Tensor | None = None,
        temperature: float | torch.Tensor = 1.0,
        columns: torch.Tensor | list[int] | None = None,
    ) -> None:
        super().__init__()
        if theta is None:
            theta = torch.zeros(n_features, dtype=torch.float64)
        if theta.shape != (n_features,):
            raise ValueError(f"theta has shape {tuple(theta.shape)}, want ({n_features},)")
        cols = torch.as_tensor([] if columns is None else columns, dtype=torch.long)
        self.register_buffer("theta", theta.detach().to(torch.float64).clone())
        self.register_buffer("temperature", torch.as_tensor(temperature, dtype=torch.float64))
        self.register_buffer("columns", cols.clone())
        self.register_buffer("floor", torch.zeros((), dtype=torch.float64))

    @property
    def n_features(self) -> int:
        return self.theta.shape[0]

    @property
    def single(self) -> bool:
        """Whether teams are chosen columns (the single-pattern variant) not every group."""
        return self.columns.numel() > 0

    def team_strength(self, feat: torch.Tensor) -> torch.Tensor:
        """feat LongTensor[B, M, G] -> team strength Tensor[B, M] (uncalibrated)."""
        if self.single:
            feat = feat.index_select(2, self.columns.to(feat.device))
        return self.theta.index_select(0, feat.reshape(-1)).view(feat.shape).sum(-1)

    def log_probs(self, feat: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Log-probability of every candidate, -inf on padding. [B, M, G], [B, M] -> [B, M]."""
        lp = masked_log_softmax(self.temperature * self.team_strength(feat), mask)
        return floored(lp, mask, float(self.floor))

    def forward(self, feat: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.log_probs(feat, mask)

    def hparams(self) -> dict[str, Any]:
        return {"single": self.single}

    def level_strength(self) -> torch.Tensor:
        """temperature * theta: each level's log-gamma under the calibrated softmax."""
        return (self.temperature * self.theta).detach().cpu().double()

    def level_notes(self) -> dict[str, torch.Tensor]:
        return {"theta": self.theta.detach().cpu().double()}

    def log_gammas(self) -> torch.Tensor | None:
        """A product of gammas (exp of ``level_strength``) when teams are every group."""
        return None if self.single else self.level_strength()

    @classmethod
    def from_state_dict(cls, state: dict[str, torch.Tensor]) -> Self:
        theta = state["theta"]
        return with_floor(cls(theta.shape[0], theta, state["temperature"], state["columns"]), state)


class WinRateRanking(AdditiveRanking):
    """Probabilistic ranking (Wistuba et al. 2012, III-D): theta_f = W_f / A_f."""


class GaussianRanking(AdditiveRanking):
    """BAR and LBR: each feature's strength N(mu, sigma2); ``theta`` holds mu, predictions
    rank by the team's mean."""

    sigma2: torch.Tensor

    def __init__(
        self,
        n_features: int,
        mu: torch.Tensor | None = None,
        sigma2: torch.Tensor | None = None,
        temperature: float | torch.Tensor = 1.0,
        columns: torch.Tensor | list[int] | None = None,
    ) -> None:
        super().__init__(n_features, mu, temperature, columns)
        if sigma2 is None:
            sigma2 = torch.ones(n_features, dtype=torch.float64)
        if sigma2.shape != (n_features,):
            raise ValueError(f"sigma2 has shape {tuple(sigma2.shape)}, want ({n_features},)")
        self.register_buffer("sigma2", sigma2.detach().to(torch.float64).clone())

    @property
    def mu(self) -> torch.Tensor:
        return self.theta

    def level_notes(self) -> dict[str, torch.Tensor]:
        """mu and sigma of every level (the paper's pattern strength and its uncertainty)."""
        return {
            "mu": self.theta.detach().cpu().double(),
            "sigma": self.sigma2.detach().cpu().double().sqrt(),
        }

    @classmethod
    def from_state_dict(cls, state: dict[str, torch.Tensor]) -> Self:
        mu = state["theta"]
        model = cls(mu.shape[0], mu, state["sigma2"], state["temperature"], state["columns"])
        return with_floor(model, state)
