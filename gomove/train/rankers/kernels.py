"""Numba kernels of the comparison paper's rankers over the flat layout (gomove.data.flat).

Wistuba, Schaefer and Platzner 2012 ("Comparison of Bayesian Move Prediction
Systems for Computer Go"), section III: probabilistic ranking (PR), Bayesian
Approximation Ranking (BAR, Weng and Lin's update, Algorithm 1) and Loopy
Bayesian Ranking (LBR, Stern, Herbrich and Graepel's Thurstone-Mosteller
ranking extended to pattern teams, Fig. 3). BAR and LBR are online: positions
are visited in order and each one's update is the prior of the next (assumed
density filtering), so the kernels are serial over positions and vectorized
over the candidates of one.

Terms:
- member: a global feature index in a candidate's team. ``team_members``
  reads them from the flat level arrays: the groups with ``use8``/``usew``
  set, level l > 0 of the group at offset o giving o + l - 1; with
  ``zero_member`` an absent used group (level 0) gives the ``none`` index 0,
  a parameter of its own (the single-pattern variant: a candidate matching no
  shape still has a one-member team, "no shape"). With a hierarchy
  (features.shapes=all, ``up`` non-empty) each member's ancestors follow it
  (gomove.features.hierarchy: the chain of the largest matched pattern).
- mu, sigma2: float64[F], each feature's Gaussian strength N(mu, sigma2),
  updated in place.
- hits: positions whose expert move had the strictly highest team mean just
  before the update (the online prediction rate, a training curve).

Stern's hierarchical Gaussian model (``model.hierarchy=true``; the talk in
seeds 003, "Hierarchical Gaussian Model of Move Values": "use all patterns that
match, not just the biggest; evidence from a larger pattern should dominate the
small pattern at the same location; big patterns are seen less frequently"; its
slides' figures did not survive, so the graph below is this module's reading of
them). The factor graph of one position, as lbr_position runs it:

- a root pattern r (no harvested parent): u_r ~ N(mu_r, sigma2_r), prior
  N(prior_mu, prior_sigma2) (a broad prior); every other feature likewise;
- a pattern p with parent q: u_p = u_q + d_p, d_p ~ N(0, hierarchy_sigma2), its
  own part; the variables the filter keeps are the d's (mu, sigma2 of the feature
  p), so the value of p is the sum of the d's up its chain;
- a candidate's team: its tactical features and its largest pattern's value u_p,
  that is every d of the chain as a member (``team_members`` with ``up``):
  x_t ~ N(sum of members, beta2) (sum and noise factors);
- ordering factors x_w > x_q for the expert's team w and every other q.

The sum factor over the chain is exact for u_p = u_q + d_p (a sum of Gaussians),
so message passing over this graph is LBR's over teams with more members: a
position's evidence reaches a pattern's own part and every ancestor's, split by
their variances. A rarely seen pattern keeps d_p near 0 and so its parent's
value; an often seen one moves d_p away. Between positions the posterior of each
d is kept as an independent Gaussian (assumed density filtering, as LBR): the
correlation between a parent and a child that one position creates is dropped.
With ``features.shapes=all`` and hierarchy off, the graph is the same with every
d's prior N(0, prior_sigma2): all sizes, no shrinkage towards the parent.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from gomove.data.fields import Records, narrow_level, record, wide_level

SQRT2 = math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class Positions(NamedTuple):
    """The training positions (flat.FlatData's arrays of the same names)."""

    pos_start: np.ndarray  # int64[P + 1] position p's candidates: pos_start[p]:pos_start[p + 1]
    winner: np.ndarray  # int64[P] the expert move's index within its position


class TeamLevels(NamedTuple):
    """The candidates' levels and which groups make a team (fit.Members; module docstring)."""

    records: Records  # every candidate's record (flat.FlatData, fields.record)
    fields8: np.ndarray  # int64[G8, 4] each narrow group's field (fields.narrow_level)
    offs8: np.ndarray  # int64[G8] the narrow groups' registry offsets
    use8: np.ndarray  # bool[G8] the narrow groups in a team
    fieldsw: np.ndarray  # int64[Gw, 4] each wide group's field (fields.wide_level)
    offsw: np.ndarray  # int64[Gw] the wide groups' registry offsets
    usew: np.ndarray  # bool[Gw] the wide groups in a team
    zero_member: bool  # an absent used group gives member 0 (the single-pattern variant)
    up: np.ndarray  # int64[F] each feature's parent (features.hierarchy), or int64[0]: none
    extra: int  # the most ancestors a member brings (the longest chain less one)


class TeamBuffers(NamedTuple):
    """One position's teams as _gather_teams leaves them (allocated once per pass)."""

    mem: np.ndarray  # int64[max_cands * groups] the members, team t's at mem[mstart[t]:]
    mstart: np.ndarray  # int64[max_cands + 1] where each team's members start
    tmu: np.ndarray  # float64[max_cands] each team's mean (sum of its members' mu)
    ts2: np.ndarray  # float64[max_cands] each team's variance (sum of their sigma2)


class EPSettings(NamedTuple):
    """LBR's message passing on one position (RankerConfig)."""

    beta2: float  # performance noise beta^2
    max_iters: int  # iterations at most
    tol: float  # stop once no member's mean moves by more than tol of its sd


@njit(cache=True)
def new_team_buffers(max_cands: int, width: int) -> TeamBuffers:
    return TeamBuffers(
        np.empty(max_cands * width, dtype=np.int64),
        np.empty(max_cands + 1, dtype=np.int64),
        np.empty(max_cands),
        np.empty(max_cands),
    )


@njit(cache=True, inline="always")
def _with_chain(f, up, out, n):
    """out[n] = f and then its ancestors when up is non-empty; return the new end."""
    out[n] = f
    n += 1
    if up.shape[0] > 0:
        f = up[f]
        while f != 0:
            out[n] = f
            n += 1
            f = up[f]
    return n


@njit(cache=True, inline="always")
def team_width(teams: TeamLevels) -> int:
    """The most members a team can have."""
    return teams.offs8.shape[0] + teams.offsw.shape[0] + teams.extra


@njit(cache=True, inline="always")
def team_members(c, teams: TeamLevels, out, start):
    """Write candidate c's members into out[start:]; return the new end."""
    r, fields8, offs8, use8, fieldsw, offsw, usew, zero_member, up, _ = teams
    rec = record(r, c)
    n = start
    for g in range(offs8.shape[0]):
        if use8[g]:
            lv = narrow_level(r, rec, fields8[g])
            if lv > 0:
                n = _with_chain(offs8[g] + lv - 1, up, out, n)
            elif zero_member:
                out[n] = 0
                n += 1
    for g in range(offsw.shape[0]):
        if usew[g]:
            lv = wide_level(rec, fieldsw[g])
            if lv > 0:
                n = _with_chain(offsw[g] + lv - 1, up, out, n)
            elif zero_member:
                out[n] = 0
                n += 1
    return n


@njit(cache=True)
def pr_counts(positions: Positions, teams: TeamLevels, n_features):
    """PR's counts (Wistuba et al. 2012, III-D): wins W[F], the positions whose expert
    move's team holds the feature, and appearances A[F], the teams holding it."""
    pos_start, winner = positions
    wins = np.zeros(n_features)
    appear = np.zeros(n_features)
    buf = np.empty(team_width(teams), dtype=np.int64)
    for p in range(winner.shape[0]):
        lo = pos_start[p]
        for c in range(lo, pos_start[p + 1]):
            n = team_members(c, teams, buf, 0)
            for k in range(n):
                appear[buf[k]] += 1.0
                if c == lo + winner[p]:
                    wins[buf[k]] += 1.0
    return wins, appear


@njit(cache=True)
def _gather_teams(lo, hi, teams: TeamLevels, mu, sigma2, buf: TeamBuffers):
    """Members of candidates lo..hi-1 into buf.mem (team t's at mem[mstart[t]:mstart[t + 1]]),
    team means tmu[t] and variances ts2[t]; return the number of teams."""
    mem, mstart, tmu, ts2 = buf
    k = hi - lo
    n = 0
    for t in range(k):
        mstart[t] = n
        n = team_members(lo + t, teams, mem, n)
        m = 0.0
        s = 0.0
        for e in range(mstart[t], n):
            m += mu[mem[e]]
            s += sigma2[mem[e]]
        tmu[t] = m
        ts2[t] = s
    mstart[k] = n
    return k


@njit(cache=True)
def _hit(tmu, k, w):
    """Whether team w's mean is strictly above every other team's (pessimistic ties)."""
    for t in range(k):
        if t != w and tmu[t] >= tmu[w]:
            return False
    return True


@njit(cache=True)
def bar_pass(mu, sigma2, order, positions: Positions, teams: TeamLevels, beta2, kappa, max_cands):
    """BAR (Wistuba et al. 2012, Algorithm 1) on the positions order lists, in that
    order; return hits.

    The likelihood L_Go: the expert's team (index 1 in the paper) beats each other
    team. Team sums come first, from the strengths before this position; then the
    expert's members are updated, then every other team's in candidate order, each
    member's variance as it stands (a feature in several teams is updated once per
    team, the paper's loop as written). kappa: the floor epsilon of the variance
    factor.
    """
    pos_start, winner = positions
    buf = new_team_buffers(max_cands, team_width(teams))
    mem, mstart, tmu, ts2 = buf
    omega = np.empty(max_cands)
    delta = np.empty(max_cands)
    hits = 0
    for p in order:
        lo = pos_start[p]
        k = _gather_teams(lo, pos_start[p + 1], teams, mu, sigma2, buf)
        w = winner[p]
        if _hit(tmu, k, w):
            hits += 1
        s2w = ts2[w]
        sw = math.sqrt(s2w)
        om_w = 0.0
        de_w = 0.0
        for q in range(k):
            if q == w:
                continue
            c = math.sqrt(s2w + ts2[q] + 2.0 * beta2)
            p_wq = 1.0 / (1.0 + math.exp((tmu[q] - tmu[w]) / c))  # P(w beats q)
            p_qw = 1.0 - p_wq
            om_w += s2w * p_qw / c
            de_w += (sw / c) * (s2w / (c * c)) * p_wq * p_qw
            omega[q] = -ts2[q] * p_qw / c
            delta[q] = (math.sqrt(ts2[q]) / c) * (ts2[q] / (c * c)) * p_qw * p_wq
        omega[w] = om_w
        delta[w] = de_w
        for r in range(k):
            t = w if r == 0 else (r - 1 if r <= w else r)  # the expert's team first
            if ts2[t] <= 0.0:
                continue
            for e in range(mstart[t], mstart[t + 1]):
                f = mem[e]
                share = sigma2[f] / ts2[t]
                mu[f] += share * omega[t]
                sigma2[f] *= max(1.0 - share * delta[t], kappa)
    return hits


@njit(cache=True)
def trunc_vw(t):
    """v(t) = phi(t) / Phi(t) and w(t) = v (v + t) of a Gaussian truncated to x > -t:
    the moment matching of x_1 - x_m > 0 (Herbrich et al. 2007, TrueSkill). Stable for
    very negative t (asymptotic series), w kept in [0, 1)."""
    if t < -30.0:
        v = -t / (1.0 - 1.0 / (t * t) + 3.0 / (t * t * t * t))
    else:
        cdf = 0.5 * math.erfc(-t / SQRT2)
        v = INV_SQRT_2PI * math.exp(-0.5 * t * t) / cdf
    w = v * (v + t)
    if w < 0.0:
        w = 0.0
    elif w > 1.0 - 1e-12:
        w = 1.0 - 1e-12
    return v, w


class LBRScratch(NamedTuple):
    """lbr_position's working arrays, allocated once per pass (new_lbr_scratch)."""

    local: np.ndarray  # int64[F] a feature's index among the position's features, -1 if absent
    pats: np.ndarray  # int64[E] the position's distinct features
    edge_pat: np.ndarray  # int64[E] the local feature of each (team, member) edge
    pi0: np.ndarray  # float64[E] each local feature's prior (precision, precision-mean)
    tau0: np.ndarray
    pi_l: np.ndarray  # float64[E] each local feature's current marginal
    tau_l: np.ndarray
    pi_e: np.ndarray  # float64[E] each edge's message from its team to the member
    tau_e: np.ndarray
    cav_m: np.ndarray  # float64[E] each edge's cavity mean and variance
    cav_v: np.ndarray
    perf_m: np.ndarray  # float64[T] each team's performance mean and variance
    perf_v: np.ndarray
    pi_win: np.ndarray  # float64[T] ordering factor q's message to the winner
    tau_win: np.ndarray
    pi_los: np.ndarray  # float64[T] ordering factor q's message to loser q
    tau_los: np.ndarray


@njit(cache=True)
def new_lbr_scratch(n_features: int, n_mem: int, max_cands: int) -> LBRScratch:
    return LBRScratch(
        np.full(n_features, -1, dtype=np.int64),
        np.empty(n_mem, dtype=np.int64),
        np.empty(n_mem, dtype=np.int64),
        np.empty(n_mem),
        np.empty(n_mem),
        np.empty(n_mem),
        np.empty(n_mem),
        np.empty(n_mem),
        np.empty(n_mem),
        np.empty(n_mem),
        np.empty(n_mem),
        np.empty(max_cands),
        np.empty(max_cands),
        np.empty(max_cands),
        np.empty(max_cands),
        np.empty(max_cands),
        np.empty(max_cands),
    )


@njit(cache=True)
def lbr_position(mu, sigma2, buf: TeamBuffers, k, w, ep: EPSettings, scratch: LBRScratch):
    """EP on one position's factor graph (Wistuba et al. 2012, Fig. 3); update mu, sigma2.

    Graph: feature strengths theta_f ~ N(mu_f, sigma2_f) (prior factors), team t's
    performance x_t ~ N(sum of its members' theta, beta2) (sum and noise factors),
    and x_w > x_q for the expert's team w and every other q (ordering factors,
    approximated by truncated-Gaussian moment matching). Messages in natural
    parameters (precision pi, precision-mean tau). One iteration: each team's
    performance message from its members' cavities; one sweep of the ordering
    factors (x_w's marginal updated after each); each team's messages back to its
    members, the marginals updated team by team. Stops when no member's mean moved
    by more than tol times its standard deviation, or after max_iters (ep). Returns the
    iterations done. buf: the position's k teams (_gather_teams), w the expert's.
    scratch: an LBRScratch (new_lbr_scratch); its local[F] must be -1 everywhere on
    entry and is left so.
    """
    mem = buf.mem
    mstart = buf.mstart
    beta2, max_iters, tol = ep
    (local, pats, edge_pat, pi0, tau0, pi_l, tau_l, pi_e, tau_e, cav_m, cav_v,
     perf_m, perf_v, pi_win, tau_win, pi_los, tau_los) = scratch  # fmt: skip
    n_edges = mstart[k]
    n_pat = 0
    for e in range(n_edges):
        f = mem[e]
        if local[f] < 0:
            local[f] = n_pat
            pats[n_pat] = f
            pi0[n_pat] = 1.0 / sigma2[f]
            tau0[n_pat] = mu[f] / sigma2[f]
            pi_l[n_pat] = pi0[n_pat]
            tau_l[n_pat] = tau0[n_pat]
            n_pat += 1
        edge_pat[e] = local[f]
        pi_e[e] = 0.0
        tau_e[e] = 0.0
    for t in range(k):
        pi_win[t] = 0.0
        tau_win[t] = 0.0
        pi_los[t] = 0.0
        tau_los[t] = 0.0
    it = 0
    while it < max_iters:
        it += 1
        # performance messages: x_t ~ N(sum of member cavities, + beta2)
        for t in range(k):
            m = 0.0
            v = beta2
            for e in range(mstart[t], mstart[t + 1]):
                lp = edge_pat[e]
                pc = max(pi_l[lp] - pi_e[e], pi0[lp])
                m += (tau_l[lp] - tau_e[e]) / pc
                v += 1.0 / pc
            perf_m[t] = m
            perf_v[t] = v
        # ordering factors h_q: x_w > x_q, one sweep
        p_w = 1.0 / perf_v[w]
        t_w = perf_m[w] / perf_v[w]
        for q in range(k):
            p_w += pi_win[q]
            t_w += tau_win[q]
        for q in range(k):
            if q == w:
                continue
            pcw = p_w - pi_win[q]
            tcw = t_w - tau_win[q]
            if pcw < 1e-300:
                pcw = 1e-300
            vw = 1.0 / pcw
            mw = tcw * vw
            vq = perf_v[q]
            mq = perf_m[q]
            var = vw + vq
            sd = math.sqrt(var)
            v, ww = trunc_vw((mw - mq) / sd)
            new_vw = vw * (1.0 - vw / var * ww)
            new_mw = mw + vw / sd * v
            new_vq = vq * (1.0 - vq / var * ww)
            new_mq = mq - vq / sd * v
            npw = max(1.0 / new_vw - pcw, 0.0)
            ntw = new_mw / new_vw - tcw
            p_w = pcw + npw
            t_w = tcw + ntw
            pi_win[q] = npw
            tau_win[q] = ntw
            pi_los[q] = max(1.0 / new_vq - 1.0 / vq, 0.0)
            tau_los[q] = new_mq / new_vq - mq / vq
        # messages back to the members, team by team
        moved = 0.0
        for t in range(k):
            if t == w:
                pu = p_w - 1.0 / perf_v[w]
                tu = t_w - perf_m[w] / perf_v[w]
            else:
                pu = pi_los[t]
                tu = tau_los[t]
            if pu <= 0.0:
                continue
            up_v = 1.0 / pu + beta2
            up_m = tu / pu
            s_m = 0.0
            s_v = 0.0
            for e in range(mstart[t], mstart[t + 1]):
                lp = edge_pat[e]
                pc = max(pi_l[lp] - pi_e[e], pi0[lp])
                cav_m[e] = (tau_l[lp] - tau_e[e]) / pc
                cav_v[e] = 1.0 / pc
                s_m += cav_m[e]
                s_v += cav_v[e]
            for e in range(mstart[t], mstart[t + 1]):
                lp = edge_pat[e]
                var = up_v + s_v - cav_v[e]
                npi = 1.0 / var
                ntau = (up_m - (s_m - cav_m[e])) * npi
                old_m = tau_l[lp] / pi_l[lp]
                pi_l[lp] += npi - pi_e[e]
                tau_l[lp] += ntau - tau_e[e]
                if pi_l[lp] < pi0[lp]:
                    pi_l[lp] = pi0[lp]
                pi_e[e] = npi
                tau_e[e] = ntau
                d = abs(tau_l[lp] / pi_l[lp] - old_m) * math.sqrt(pi_l[lp])
                if d > moved:
                    moved = d
        if moved < tol:
            break
    for lp in range(n_pat):
        f = pats[lp]
        mu[f] = tau_l[lp] / pi_l[lp]
        sigma2[f] = 1.0 / pi_l[lp]
        local[f] = -1
    return it


@njit(cache=True)
def lbr_pass(mu, sigma2, order, positions: Positions, teams: TeamLevels, ep: EPSettings, max_cands):
    """LBR on the positions order lists, in that order, each position's EP posterior the
    prior of the next (assumed density filtering); return (hits, EP iterations summed)."""
    pos_start, winner = positions
    width = team_width(teams)
    n_mem = max_cands * width
    buf = new_team_buffers(max_cands, width)
    tmu = buf.tmu
    scratch = new_lbr_scratch(mu.shape[0], n_mem, max_cands)
    hits = 0
    iters = 0
    for p in order:
        k = _gather_teams(pos_start[p], pos_start[p + 1], teams, mu, sigma2, buf)
        w = winner[p]
        if _hit(tmu, k, w):
            hits += 1
        if k < 2:
            continue
        iters += lbr_position(mu, sigma2, buf, k, w, ep, scratch)
    return hits, iters
