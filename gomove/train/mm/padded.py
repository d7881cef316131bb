"""MM's padded engine: the statistics of streamed padded Batches in torch, on any device.

The oracle the flat-layout engines (gomove.train.mm.compiled, gomove.train.mm.tensor) are
checked against. Terms (W_i, denominator_i, C_ij, E_j) as in gomove.models.mm.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import torch

from gomove.data.batch import Batch
from gomove.features.registry import GroupSpan
from gomove.models.mm import BradleyTerry, masked_log_softmax, member_log_gamma
from gomove.train.mm.loop import MMPasses, PassStats, log_prior


def accumulate_stats(
    log_gamma: torch.Tensor,
    feat: torch.Tensor,
    mask: torch.Tensor,
    winner: torch.Tensor,
    columns: Sequence[int],
    wins: torch.Tensor,
    denom: torch.Tensor,
) -> torch.Tensor:
    """Add one batch's MM statistics of the groups in ``columns`` to wins and denom.

    feat: LongTensor[B, M, G], mask: BoolTensor[B, M], winner: LongTensor[B];
    wins, denom: float64 Tensor[F], updated in place (slot 0 collects the
    ``none`` index and padding and means nothing). Returns the batch's
    log-likelihood, sum_j log P(expert move of j), a float64 scalar tensor.

    C_ij / E_j = exp(log team - log gamma_i - logsumexp_j) (Coulom 2007, 2.5.3),
    i.e. P(cand) / gamma_i, computed in log space so no product of gammas can
    overflow. A level present in several candidates of a position adds each of
    them: C_ij sums the team mates over every team of j that contains i.
    """
    member = member_log_gamma(log_gamma, feat)  # [B, M, G]
    log_p = masked_log_softmax(member.sum(-1), mask)
    rows = torch.arange(feat.shape[0], device=feat.device)
    log_lik = log_p[rows, winner].sum()
    cols = list(columns)
    if not cols:
        return log_lik
    pick = _columns(cols)
    idx = pick(feat).reshape(-1)  # [B * M * k]
    win_idx = pick(feat[rows, winner].unsqueeze(1)).reshape(-1)  # [B * k]
    wins += torch.bincount(win_idx, minlength=wins.shape[0]).to(wins.dtype)
    # padding has log_p = -inf, so it adds exp(-inf) = 0
    ratio = torch.exp(log_p.unsqueeze(-1) - pick(member)).reshape(-1)
    denom.scatter_add_(0, idx, ratio)
    return log_lik


def _columns(cols: list[int]) -> Callable[[torch.Tensor], torch.Tensor]:
    """A function taking columns ``cols`` of a [B, M, G] tensor: a view when they
    are contiguous (one group, or all), since advanced indexing copies slowly."""
    lo, hi = cols[0], cols[-1] + 1
    if cols == list(range(lo, hi)):
        return lambda t: t[:, :, lo:hi]
    index = torch.tensor(cols)
    return lambda t: t.index_select(2, index.to(t.device))


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
    """One pass over ``data``: MM statistics of ``columns`` (numpy, like every
    engine's) and the log-likelihood, at log_gamma (a tensor on ``device``).

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
    return PassStats(wins.cpu().numpy(), denom.cpu().numpy(), float(log_lik), n)


class PaddedMM(MMPasses):
    """Passes of ``collect_stats`` over a re-iterable of padded Batches, streamed once per
    pass on ``device``; the first pass checks every batch against the contract."""

    def __init__(
        self, data: Iterable[Batch], device: torch.device, groups: Sequence[GroupSpan]
    ) -> None:
        self.data, self.device, self.groups = data, device, groups
        self.n_positions = 0  # known after the first pass
        self._checked = False

    def collect(self, log_gamma: np.ndarray, columns: Sequence[int]) -> PassStats:
        check = None if self._checked else self.groups
        lg = torch.from_numpy(log_gamma).to(self.device)
        stats = collect_stats(lg, self.data, columns, self.device, check)
        self._checked, self.n_positions = True, stats.n_positions
        return stats


def log_posterior(model: BradleyTerry, data: Iterable[Batch], device: torch.device) -> float:
    """log P(data | gamma) + log prior (Coulom 2007, 2.4), summed over positions."""
    stats = collect_stats(model.log_gamma, data, (), device)
    return stats.log_likelihood + log_prior(model.log_gamma.cpu().numpy())
