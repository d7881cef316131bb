"""Swendsen-Wang sampling of the territory model, compiled: one position at a time, for play.

The model is an Ising model with local fields: P(s) ~ exp(sum_i h_i s_i +
sum_(i,j) w_ij s_i s_j), s_i in {+1, -1}. One Swendsen-Wang sweep:
1. bonds: each neighbour pair whose spins satisfy its coupling (s_i s_j = sign w_ij)
   is bonded with probability 1 - exp(-2 |w_ij|); the others are not. This is
   exact for couplings of either sign: exp(w s_i s_j) = exp(|w|) ((1 - p) + p [satisfied]).
2. clusters: the connected components of the bonds (union-find); within a
   cluster the bonds fix every spin relative to the others.
3. each cluster C takes its orientation from the fields exactly (heat bath, no
   rejection): with H_C = sum_(i in C) h_i s_i it keeps its spins with probability
   sigmoid(2 H_C) and flips them all otherwise.

Estimates are Rao-Blackwellized: given the clusters of a sweep, E[s_i] =
s_i tanh(H_C(i)) exactly, and E[s_i s_j] is s_i s_j inside one cluster and
s_i s_j tanh(H_C(i)) tanh(H_C(j)) across two, so each sweep contributes its
conditional expectations rather than one noisy sample (same mean, less
variance). The score samples (sum of the spins) are the raw states.

The torch twin batched over positions (training, CUDA) is
gomove.models.territory.batched; both are checked against exact enumeration
on small boards in the tests.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from gomove.playout.rng import splitmix_uniform


def chain_rng(*keys: int) -> np.ndarray:
    """A chain's RNG state (uint64[1]) from integer keys (seed, step, position, ...)."""
    ss = np.random.SeedSequence([int(k) & 0xFFFFFFFF for k in keys])
    return ss.generate_state(1, dtype=np.uint64)


@njit(cache=True, inline="always")
def _find(parent: np.ndarray, i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@njit(cache=True)
def open_probabilities(w: np.ndarray) -> np.ndarray:
    """1 - exp(-2 |w_ij|): the chance a satisfied pair is bonded (made once a chain)."""
    out = np.empty(w.shape[0], np.float64)
    for e in range(w.shape[0]):
        out[e] = -np.expm1(-2.0 * abs(w[e]))
    return out


@njit(cache=True)
def sweep(
    h: np.ndarray,
    edges: np.ndarray,
    w: np.ndarray,
    p_open: np.ndarray,
    s: np.ndarray,
    parent: np.ndarray,
    field: np.ndarray,
    mean_out: np.ndarray,
    pair_out: np.ndarray,
    weight: float,
    rng: np.ndarray,
) -> None:
    """One Swendsen-Wang sweep of s (int8[N], changed in place); adds weight times the
    conditional expectations of s_i to mean_out[N] and of s_i s_j to pair_out[E]
    (pair_out of length 0: not kept). p_open: open_probabilities(w); parent, field:
    scratch of N."""
    n = s.shape[0]
    for i in range(n):
        parent[i] = i
        field[i] = 0.0
    for e in range(edges.shape[0]):
        a = edges[e, 0]
        b = edges[e, 1]
        we = w[e]
        prod = s[a] * s[b]
        if (we > 0.0 and prod > 0) or (we < 0.0 and prod < 0):
            if splitmix_uniform(rng) < p_open[e]:
                ra = _find(parent, a)
                rb = _find(parent, b)
                if ra != rb:
                    parent[ra] = rb
    for i in range(n):
        r = _find(parent, i)
        parent[i] = r
        field[r] += h[i] * s[i]
    # each root: tanh(H_C) for the RB expectations (s_i tanh(H_C) is the same after a
    # flip, so the pre-flip spins serve), then the orientation, keep with prob sigmoid(2 H_C)
    for i in range(n):
        if parent[i] == i:
            field[i] = np.tanh(field[i])
    for i in range(n):
        mean_out[i] += weight * s[i] * field[parent[i]]
    if pair_out.shape[0]:
        for e in range(edges.shape[0]):
            a = edges[e, 0]
            b = edges[e, 1]
            ra = parent[a]
            rb = parent[b]
            prod = s[a] * s[b]
            if ra == rb:
                pair_out[e] += weight * prod
            else:
                pair_out[e] += weight * prod * field[ra] * field[rb]
    for i in range(n):
        if parent[i] == i:  # sigmoid(2 H) = (1 + tanh H) / 2
            field[i] = 1.0 if splitmix_uniform(rng) < 0.5 * (1.0 + field[i]) else -1.0
    for i in range(n):
        if field[parent[i]] < 0.0:
            s[i] = -s[i]


@njit(cache=True)
def run_chain(
    h: np.ndarray,
    edges: np.ndarray,
    w: np.ndarray,
    s: np.ndarray,
    sweeps: int,
    burn: int,
    rng: np.ndarray,
    pairs: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """burn + sweeps sweeps from state s (int8[N], left in the last state); rng: the
    chain's state (chain_rng), advanced.

    Returns (E[s_i] float64[N], E[s_i s_j] float64[E] or empty, the sum of the spins
    after each counted sweep float64[sweeps]).
    """
    n = s.shape[0]
    p_open = open_probabilities(w)
    parent = np.empty(n, np.int64)
    field = np.empty(n, np.float64)
    mean = np.zeros(n, np.float64)
    pair = np.zeros(edges.shape[0] if pairs else 0, np.float64)
    dummy_m = np.zeros(n, np.float64)
    dummy_p = np.zeros(0, np.float64)
    totals = np.empty(sweeps, np.float64)
    for _ in range(burn):
        sweep(h, edges, w, p_open, s, parent, field, dummy_m, dummy_p, 0.0, rng)
    inv = 1.0 / max(sweeps, 1)
    for t in range(sweeps):
        sweep(h, edges, w, p_open, s, parent, field, mean, pair, inv, rng)
        tot = 0.0
        for i in range(n):
            tot += s[i]
        totals[t] = tot
    return mean, pair, totals


@njit(cache=True, parallel=True)
def run_chains(
    h: np.ndarray,
    edges: np.ndarray,
    w: np.ndarray,
    s: np.ndarray,
    sweeps: int,
    rng: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """sweeps sweeps of B chains in parallel: h[B, N], w[B, E], s int8[B, N] (advanced),
    rng uint64[B, 1] (advanced). Returns (E[s_i] [B, N], E[s_i s_j] [B, E]), as
    gomove.models.territory.batched.run_chains gives them."""
    bsz, n = s.shape
    mean = np.zeros((bsz, n), np.float64)
    pair = np.zeros((bsz, edges.shape[0]), np.float64)
    inv = 1.0 / max(sweeps, 1)
    for k in prange(bsz):
        parent = np.empty(n, np.int64)
        field = np.empty(n, np.float64)
        p_open = open_probabilities(w[k])
        for _ in range(sweeps):
            sweep(h[k], edges, w[k], p_open, s[k], parent, field, mean[k], pair[k], inv, rng[k])
    return mean, pair


def first_spins(h: np.ndarray, seed: int) -> np.ndarray:
    """A chain's first state: each spin drawn from its field alone."""
    rng = np.random.default_rng(seed)
    p = 1.0 / (1.0 + np.exp(-2.0 * np.asarray(h, dtype=np.float64)))
    return np.where(rng.random(len(p)) < p, 1, -1).astype(np.int8)
