"""Swendsen-Wang sweeps in torch, batched over positions: the territory model's training
statistics on any device (CUDA as the CPU).

The same sweep as gomove.models.territory.sampler (bonds, clusters, each cluster's
orientation from its fields, Rao-Blackwellized expectations), for B positions of
one board size at once: spins s[B, N], fields h[B, N], couplings w[B, E] over the
shared edge list edges[E, 2]. Clusters are found by label propagation: every
point starts as its own label; each round, both ends of an open bond take the
smaller label, then labels jump to their label's label (pointer jumping), until
nothing changes; the cluster's label is its smallest point.
"""

from __future__ import annotations

import torch


def clusters(open_bond: torch.Tensor, edges: torch.Tensor, n: int) -> torch.Tensor:
    """Long[B, N]: the smallest point of each point's cluster under the open bonds [B, E]."""
    bsz = open_bond.shape[0]
    dev = open_bond.device
    lab = torch.arange(n, device=dev).expand(bsz, n).contiguous()
    a, b = edges[:, 0].long(), edges[:, 1].long()
    big = torch.full((), n, device=dev, dtype=lab.dtype)
    while True:
        la, lb = lab[:, a], lab[:, b]
        m = torch.where(open_bond, torch.minimum(la, lb), big)
        new = lab.clone()
        new.scatter_reduce_(1, a.expand(bsz, -1), m, reduce="amin")
        new.scatter_reduce_(1, b.expand(bsz, -1), m, reduce="amin")
        new = torch.gather(new, 1, new)  # pointer jumping
        if torch.equal(new, lab):
            return lab
        lab = new


def sweep(
    h: torch.Tensor,
    w: torch.Tensor,
    s: torch.Tensor,
    edges: torch.Tensor,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One sweep of every chain. h[B, N], w[B, E] float; s[B, N] in {+1, -1} (float).

    Returns (new s, E[s_i | bonds] [B, N], E[s_i s_j | bonds] [B, E]).
    """
    bsz, n = s.shape
    a, b = edges[:, 0].long(), edges[:, 1].long()
    prod = s[:, a] * s[:, b]
    satisfied = prod * torch.sign(w) > 0
    u = torch.rand(w.shape, device=w.device, dtype=w.dtype, generator=generator)
    open_bond = satisfied & (u < -torch.expm1(-2.0 * w.abs()))
    lab = clusters(open_bond, edges, n)
    field = torch.zeros_like(h).scatter_add_(1, lab, h * s)  # H_C at each cluster's label
    t = torch.tanh(field)
    t_pt = torch.gather(t, 1, lab)
    mean = s * t_pt
    same = lab[:, a] == lab[:, b]
    pair = torch.where(same, prod, prod * t_pt[:, a] * t_pt[:, b])
    keep = torch.rand(h.shape, device=h.device, dtype=h.dtype, generator=generator)
    keep = keep < torch.sigmoid(2.0 * field)  # drawn per label; read at each point's label
    sign = torch.where(torch.gather(keep, 1, lab), 1.0, -1.0).to(s.dtype)
    return s * sign, mean, pair


def run_chains(
    h: torch.Tensor,
    w: torch.Tensor,
    s: torch.Tensor,
    edges: torch.Tensor,
    sweeps: int,
    burn: int = 0,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """burn + sweeps sweeps; returns (last s, mean E[s_i] [B, N], mean E[s_i s_j] [B, E])."""
    for _ in range(burn):
        s, _, _ = sweep(h, w, s, edges, generator)
    mean = torch.zeros_like(h)
    pair = torch.zeros_like(w)
    for _ in range(sweeps):
        s, m, p = sweep(h, w, s, edges, generator)
        mean += m
        pair += p
    return s, mean / max(sweeps, 1), pair / max(sweeps, 1)
