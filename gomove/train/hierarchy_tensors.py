"""The pattern hierarchy (gomove.features.hierarchy) in torch, for the trainers.

Training with ``features.shapes=all`` fits raw parameters (a pattern's own part, on
top of its parent's); the model a trainer returns holds the effective ones
(``collapse``: each pattern's sum over its chain), a largest-only model that every
reader scores unchanged.

- ``TorchChain``: sum_down and sum_up of features.hierarchy on tensors of any device,
  one batched add per depth of the chain (TorchSGD on CUDA);
- ``expand_feat``: padded feat [..., G] with every ancestor of the shape column as
  one more member column (the padded engines, and the tests' oracle);
- ``collapse``: the effective model of a raw one (MM, FBT/LFR, the rankers).
"""

from __future__ import annotations

import copy
from dataclasses import replace

import torch

from gomove.data.batch import Batch
from gomove.features.hierarchy import Hierarchy
from gomove.models import MoveModel
from gomove.models.fbt import FactorizationBT
from gomove.models.mm import BradleyTerry
from gomove.models.rankers import AdditiveRanking, GaussianRanking


class TorchChain:
    """Hierarchy.sum_down / sum_up over the rows of [F, ...] tensors on device."""

    def __init__(self, hierarchy: Hierarchy, device: torch.device | str) -> None:
        up = torch.as_tensor(hierarchy.up, device=device)
        self.levels = [
            (rows_t, up[rows_t])
            for rows_t in (torch.as_tensor(r, device=device) for r in hierarchy.by_depth)
        ]

    def sum_down(self, x: torch.Tensor) -> torch.Tensor:
        """Each row plus its ancestors' (a new tensor): effective from raw."""
        x = x.clone()
        for rows, parents in self.levels:  # parents are final before their children
            x[rows] += x[parents]
        return x

    def sum_up(self, g: torch.Tensor) -> torch.Tensor:
        """sum_down's transpose (a new tensor): each row plus its descendants'."""
        g = g.clone()
        for rows, parents in reversed(self.levels):  # children hold their subtree first
            g.index_add_(0, parents, g[rows])
        return g


def expand_feat(feat: torch.Tensor, hierarchy: Hierarchy) -> torch.Tensor:
    """feat [..., G] with the ancestors of column hierarchy.column appended, one column
    per step up the chain (0: none): every pattern of the chain a member of the team."""
    up = torch.as_tensor(hierarchy.up, device=feat.device)
    cols = [feat]
    cur = feat[..., hierarchy.column]
    for _ in range(hierarchy.longest - 1):
        cur = up[cur]
        cols.append(cur.unsqueeze(-1))
    return torch.cat(cols, -1)


def expand_batch(batch: Batch, hierarchy: Hierarchy) -> Batch:
    """batch with expand_feat's columns."""
    return replace(batch, feat=expand_feat(batch.feat, hierarchy))


def collapse(model: MoveModel, hierarchy: Hierarchy) -> MoveModel:
    """The effective model of a raw one trained with the hierarchy (a new model): each
    feature's parameters summed over its chain, so that its largest-only teams score
    what the raw model's chain teams do."""
    return _mapped(model, TorchChain(hierarchy, "cpu").sum_down)


def uncollapse(model: MoveModel, hierarchy: Hierarchy) -> MoveModel:
    """collapse's inverse (a new model): each feature's parameters less its parent's
    effective ones, the raw start of a run initialized from an effective model."""
    up = torch.as_tensor(hierarchy.up)

    def own(x: torch.Tensor) -> torch.Tensor:
        return torch.where((up > 0).reshape(-1, *[1] * (x.dim() - 1)), x - x[up], x)

    return _mapped(model, own)


def _mapped(model: MoveModel, fn) -> MoveModel:
    """A copy of model with fn applied to its additive per-feature parameters (float64,
    on the CPU): MM's log-gammas, FBT's table rows (w - ||v||^2 / 2, v), the rankers'
    theta (and sigma2)."""
    out = copy.deepcopy(model)
    with torch.no_grad():
        if isinstance(out, BradleyTerry):
            out.log_gamma = fn(model.log_gamma.cpu()).to(model.log_gamma)
        elif isinstance(out, FactorizationBT):
            w, v = model.w.detach().cpu().double(), model.v.detach().cpu().double()
            table = torch.cat([(w - 0.5 * (v * v).sum(1))[:, None], v], 1)
            table[0] = 0.0  # none: the score zeroes it
            new = fn(table)
            v_new = new[:, 1:]
            w_new = new[:, 0] + 0.5 * (v_new * v_new).sum(1)
            w_new[0], v_new[0] = w[0], v[0]
            out.w.copy_(w_new.to(out.w))
            out.v.copy_(v_new.to(out.v))
        elif isinstance(out, AdditiveRanking):
            out.theta = fn(model.theta.cpu()).to(model.theta)
            if isinstance(out, GaussianRanking):
                out.sigma2 = fn(model.sigma2.cpu()).to(model.sigma2)
        else:
            raise TypeError(f"features.shapes=all: no chain sums for {type(model).__name__}")
    return out
