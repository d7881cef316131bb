"""Training Stern's territory CRF (gomove.models.territory): maximum likelihood with the
model's statistics from persistent Swendsen-Wang chains, or pseudo-likelihood."""
