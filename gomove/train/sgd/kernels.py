"""Numba kernels of the SGD steps of FBT and LFR: over flat candidates
(gomove.train.sgd.compiled), and the padded engine's backward (``scatter_team_grad``,
gomove.train.sgd.losses).

Kept apart from compiled.py: gomove/__init__.py keys the numba cache on every
module that holds kernels, so only edits here recompile them.

Terms (as in compiled.py):
- table: float64[F, 1 + k], row r = (w_r - ||v_r||^2 / 2, v_r), row 0 (``none``)
  zero, so that a team's strength is E = s_0 + 1/2 ||s_1..k||^2 with s the sum
  of its members' rows (gomove.models.fbt.FactorizationBT.strength_table).
- records (flat.FlatData.records, fields.record): every candidate's levels in one
  record (one stream of memory per position); fields8, fieldsw: each narrow and wide
  group's field (fields.narrow_level, fields.wide_level); offs8, offsw: int64[G8],
  [Gw], the groups' registry offsets. Level l > 0 of a group at offset o is
  the global feature registry.feature_index(o, l); level 0 is absent.
- pos_start: int64[P + 1], position p's candidates are pos_start[p]:pos_start[p + 1];
  winner: int64[P], the expert move's index within its position.
- mode: FULL (FBT, softmax log-loss, exact gradient), SAMPLED (FBT, the
  poster's sampled gradient estimate), LFR (pairwise loss).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from gomove.data.fields import Records, narrow_level, record, record_level, wide_level
from gomove.features.hierarchy import chain_sum_row
from gomove.features.registry import feature_index

FULL, SAMPLED, LFR = 0, 1, 2


class FlatLevels(NamedTuple):
    """The flat layout's arrays the kernels read (flat.FlatData's of the same names; the
    terms above)."""

    records: Records  # every candidate's record (fields.record)
    fields8: np.ndarray  # int64[G8, 4] each narrow group's field (fields.narrow_level)
    offs8: np.ndarray  # int64[G8] the narrow groups' registry offsets
    fieldsw: np.ndarray  # int64[Gw, 4] each wide group's field (fields.wide_level)
    offsw: np.ndarray  # int64[Gw] the wide groups' registry offsets
    pos_start: np.ndarray  # int64[P + 1] position p's candidates: pos_start[p]:pos_start[p + 1]
    winner: np.ndarray  # int64[P] the expert move's index within its position


class MiniBatch(NamedTuple):
    """The positions of one step and the sampled gradient's draws (batch_grad)."""

    pos: np.ndarray  # int64[B] position ids
    unif: np.ndarray  # float64[B, S] uniforms in [0, 1), each row sorted ([B, 0]: none)


class GradScratch(NamedTuple):
    """batch_grad's working arrays, M the largest candidate count of a position."""

    s_buf: np.ndarray  # float64[>= M, 1 + k] each candidate's team sum s
    e_buf: np.ndarray  # float64[>= M] each candidate's team strength E
    x_buf: np.ndarray  # float64[>= M] exp(E - max E), or their running sums (SAMPLED)


class Params(NamedTuple):
    """The model's parameters, updated in place, and the table batch_grad reads."""

    w: np.ndarray  # [F] the linear weights
    v: np.ndarray  # [F, k] the latent factors
    table: np.ndarray  # float64[F, 1 + k] (w - ||v||^2 / 2, v) (fill_table)


class Moments(NamedTuple):
    """The optimizer's state: Adam's moments, or SGD's momentum buffers in a_* (b_* unused)."""

    a_w: np.ndarray  # like w: Adam's first moment, SGD's momentum buffer
    b_w: np.ndarray  # like w: Adam's second moment
    a_v: np.ndarray  # like v
    b_v: np.ndarray  # like v


class StepSettings(NamedTuple):
    """One optimizer step's settings (update_rows)."""

    adam: bool  # Adam, else SGD
    lr: float  # learning rate
    h1: float  # Adam's beta1, SGD's momentum
    h2: float  # Adam's beta2 (SGD: unused)
    eps: float  # Adam's epsilon (SGD: unused)
    step: int  # the step number, from 1
    lambda_w: float  # L2 weight of w
    lambda_v: float  # L2 weight of v


@njit(cache=True, inline="always")
def _add_row(table, offset, lv, s, i, width) -> None:
    """s[i] += the row of table of level lv of the group at offset (lv 0: nothing)."""
    if lv != 0:
        r = feature_index(offset, lv)
        for q in range(len(width)):
            s[i, q] += table[r, q]


@njit(cache=True, inline="always")
def _team(table, lv: FlatLevels, c, s, i, width) -> float:
    """s[i] = sum of candidate c's rows of table; returns E = s_0 + 1/2 sum_q>0 s_q^2.

    (Rows of s by index, not as views: a view costs a reference count per call.)
    """
    r = lv.records
    offs8 = lv.offs8
    offsw = lv.offsw
    d = len(width)
    for q in range(d):
        s[i, q] = 0.0
    rec = record(r, c)
    for g in range(offs8.shape[0]):
        _add_row(table, offs8[g], narrow_level(r, rec, lv.fields8[g]), s, i, width)
    for g in range(offsw.shape[0]):
        _add_row(table, offsw[g], wide_level(rec, lv.fieldsw[g]), s, i, width)
    e = s[i, 0]
    for q in range(1, d):
        e += 0.5 * s[i, q] * s[i, q]
    return e


@njit(cache=True, inline="always")
def _scatter_row(grad, mark, offset, lv, s, i, coef, width) -> None:
    """grad[r] += coef * (1, s[i, 1..k]) for the row r of level lv at offset (lv 0: none);
    mark[r] = 1 when mark is not empty (the rows the hierarchy's sum_up must visit)."""
    if lv != 0:
        r = feature_index(offset, lv)
        if mark.shape[0] > 0:
            mark[r] = 1
        grad[r, 0] += coef
        for q in range(1, len(width)):
            grad[r, q] += coef * s[i, q]


@njit(cache=True, inline="always")
def _scatter(grad, mark, lv: FlatLevels, c, s, i, coef, width) -> None:
    """grad[r] += coef * dE/ds = coef * (1, s[i, 1..k]) for every member r of candidate c."""
    r = lv.records
    offs8 = lv.offs8
    offsw = lv.offsw
    rec = record(r, c)
    for g in range(offs8.shape[0]):
        _scatter_row(grad, mark, offs8[g], narrow_level(r, rec, lv.fields8[g]), s, i, coef, width)
    for g in range(offsw.shape[0]):
        _scatter_row(grad, mark, offsw[g], wide_level(rec, lv.fieldsw[g]), s, i, coef, width)


@njit(cache=True)
def fresh_reads(
    table, read, up, fresh, version, chain, lv: FlatLevels, pos, field, offset
) -> None:  # fmt: skip
    """The rows of read (the table summed down the pattern chains) that the positions pos
    read through the shape group (field, at offset), computed where stale
    (features.hierarchy.chain_sum_row): every parameter moves every step, but a batch
    reads a small share of millions of shapes."""
    r = lv.records
    for b in range(pos.shape[0]):
        p = pos[b]
        for c in range(lv.pos_start[p], lv.pos_start[p + 1]):
            level = record_level(r, record(r, c), field)
            if level != 0:
                chain_sum_row(table, read, up, fresh, version, chain, feature_index(offset, level))


@njit(cache=True, _nrt=False)
def batch_grad(
    table, lv: FlatLevels, batch: MiniBatch, mode, backward, grad, clear, mark,
    scratch: GradScratch, width,
):  # fmt: skip
    """Loss of the positions ``batch.pos`` (int64[B]) and, when ``backward``, the gradient
    of their mean w.r.t. table, added into grad, zeroed first when ``clear`` (update_rows
    leaves it zero); mark (uint8[F], or empty for none): 1 at every row it adds to, so
    that the hierarchy's sum_up visits those alone (Hierarchy.sum_up_marked).

    Returns (sum of log P(expert move) under the softmax, sum of the loss):
    FULL and SAMPLED: loss = -log P(expert move); LFR: the mean over the other
    candidates o of -log sigmoid(E_winner - E_o) (0 with no other candidate).
    Gradients, per position, scaled by 1 / B, with c(m) the coefficient of
    candidate m's dE/ds = (1, s_1..k):
    - FULL: c(m) = P(m) - [m = winner], the exact gradient of -log P(winner);
    - SAMPLED: S = unif.shape[1] draws m_i from P (inverse CDF at unif[b, i]
      in [0, 1), each row sorted ascending), c(m_i) += 1 / S, c(winner) -= 1:
      the poster's unbiased estimate, at most 1 + S candidates scattered;
    - LFR: c(o) = sigmoid(E_o - E_winner) / (M - 1), c(winner) = -sum_o c(o).
    Serial, in a fixed order: the same inputs give the same bits. width: a tuple
    of 1 + k zeros, whose length is a compile-time constant: the loops over the
    table's columns then unroll, twice as fast as over a run-time width (one
    compilation per k). Compiled without reference counting (it allocates nothing):
    _team and _scatter read lv's fields once per candidate, two atomic counts each
    with it (the epoch at 0.88-0.90 of its speed).
    """
    pos_start = lv.pos_start
    winner = lv.winner
    pos, unif = batch
    s_buf, e_buf, x_buf = scratch
    if backward and clear:
        grad[:] = 0.0
    n = pos.shape[0]
    if n == 0:
        return 0.0, 0.0
    inv_n = 1.0 / n
    n_samples = unif.shape[1]
    ll_sum = 0.0
    loss_sum = 0.0
    for b in range(n):
        p = pos[b]
        lo = pos_start[p]
        m = pos_start[p + 1] - lo
        w = winner[p]
        top = -np.inf
        for i in range(m):
            e = _team(table, lv, lo + i, s_buf, i, width)
            e_buf[i] = e
            if e > top:
                top = e
        z = 0.0
        for i in range(m):
            x = math.exp(e_buf[i] - top)
            z += x
            # SAMPLED keeps the cumulative sums for the inverse CDF
            x_buf[i] = z if mode == SAMPLED else x
        ll = e_buf[w] - top - math.log(z)
        ll_sum += ll
        if mode != LFR:
            loss_sum -= ll
            if not backward:
                continue
            if mode == FULL:
                for i in range(m):
                    coef = x_buf[i] / z
                    if i == w:
                        coef -= 1.0
                    if coef != 0.0:
                        _scatter(grad, mark, lv, lo + i, s_buf, i, coef * inv_n, width)
                continue
            # one merged pass over the cumulative sums: draw j picks the first i
            # with x_buf[i] > unif[b, j] z; equal picks (adjacent, the uniforms
            # being sorted) and the winner's -1 scatter once
            c = inv_n / n_samples
            i = 0
            j = 0
            win_done = False
            while j < n_samples:
                t = unif[b, j] * z
                while i < m - 1 and x_buf[i] <= t:
                    i += 1
                count = 1
                j += 1
                while j < n_samples and unif[b, j] * z < x_buf[i]:
                    count += 1
                    j += 1
                coef = count * c
                if i == w:
                    coef -= inv_n
                    win_done = True
                _scatter(grad, mark, lv, lo + i, s_buf, i, coef, width)
            if not win_done:
                _scatter(grad, mark, lv, lo + w, s_buf, w, -inv_n, width)
            continue
        if m < 2:
            continue
        ew = e_buf[w]
        tot = 0.0
        csum = 0.0
        for i in range(m):
            if i == w:
                continue
            dlt = e_buf[i] - ew
            # softplus(dlt) = -log sigmoid(-dlt), and its derivative sigmoid(dlt), stably
            if dlt > 0.0:
                tot += dlt + math.log1p(math.exp(-dlt))
                sig = 1.0 / (1.0 + math.exp(-dlt))
            else:
                ex = math.exp(dlt)
                tot += math.log1p(ex)
                sig = ex / (1.0 + ex)
            if backward:
                coef = sig / (m - 1) * inv_n
                csum += coef
                _scatter(grad, mark, lv, lo + i, s_buf, i, coef, width)
        loss_sum += tot / (m - 1)
        if backward:
            _scatter(grad, mark, lv, lo + w, s_buf, w, -csum, width)
    return ll_sum, loss_sum


@njit(cache=True, error_model="numpy")
def _adam(p, g, m, s, hp: StepSettings) -> None:
    """torch.optim.Adam's update (no weight decay, no amsgrad) of 1-D p with gradient g,
    moments m and s (hp: lr, h1 = beta1, h2 = beta2, eps, step).

    error_model="numpy": no zero-division checks, so the loop vectorizes (4x).
    """
    lr = hp.lr
    beta1 = hp.h1
    beta2 = hp.h2
    eps = hp.eps
    step = hp.step
    bc1 = 1.0 - beta1**step
    bc2_sqrt = math.sqrt(1.0 - beta2**step)
    for i in range(p.shape[0]):
        gi = g[i]
        mi = m[i] + (1.0 - beta1) * (gi - m[i])  # torch: exp_avg.lerp_(grad, 1 - beta1)
        si = beta2 * s[i] + (1.0 - beta2) * gi * gi
        m[i] = mi
        s[i] = si
        p[i] = p[i] - lr / bc1 * mi / (math.sqrt(si) / bc2_sqrt + eps)


@njit(cache=True)
def _sgd(p, g, buf, lr, momentum, step) -> None:
    """torch.optim.SGD's update of 1-D p: Nesterov momentum when momentum > 0, the
    buffer starting at the first gradient; plain SGD at momentum 0."""
    for i in range(p.shape[0]):
        gi = g[i]
        if momentum > 0.0:
            buf[i] = gi if step == 1 else momentum * buf[i] + gi
            gi = gi + momentum * buf[i]
        p[i] = p[i] - lr * gi


@njit(cache=True)
def fill_table(w, v, table, width) -> None:
    """table[r] = (w_r - ||v_r||^2 / 2, v_r) from the stored parameters; row 0 zero."""
    _fill_rows(w, v, table, 0, w.shape[0], width)


ROW_BLOCK = 4096  # update_rows' rows a block, the unit of its threads' work


@njit(cache=True, parallel=True)
def update_rows(
    params: Params, grad: np.ndarray, moments: Moments, hp: StepSettings, width,
) -> float:  # fmt: skip
    """One optimizer step of w[F] and v[F, k] from the table gradient grad, the table
    refreshed and grad cleared, on every core (numba's threads).

    Chain rule through table = (w - ||v||^2 / 2, v): dL/dw_r = grad[r, 0], dL/dv_r =
    grad[r, 1:] - grad[r, 0] v_r; the L2 term lambda_w/2 ||w||^2 + lambda_v/2 ||v||^2
    adds lambda_w w_r and lambda_v v_r; row 0 (``none``): no gradient, no L2 (the
    model's score zeroes it). hp.adam: Adam with moments a_*, b_* and h1, h2 = beta1,
    beta2; else SGD with momentum buffer a_* and h1 = momentum (b_*, h2 unused).
    Dense: every parameter, every step, as torch.optim does; once a model has
    millions of rows this costs more than the batch's gradient, hence the threads.
    Blocks of ROW_BLOCK rows in parallel, each element's arithmetic its own, so the
    same bits whatever the thread count; grad is left zero, so that the next
    batch_grad need not clear it. Returns the L2 term at the parameters before the
    step, the blocks' sums added in block order.
    """
    w, v, table = params
    a_w, b_w, a_v, b_v = moments
    f, k = v.shape
    vf, avf, bvf = v.reshape(-1), a_v.reshape(-1), b_v.reshape(-1)
    n_blocks = (f + ROW_BLOCK - 1) // ROW_BLOCK
    sums = np.zeros((n_blocks, 2))
    for blk in prange(n_blocks):
        lo = blk * ROW_BLOCK
        hi = min(lo + ROW_BLOCK, f)
        n = hi - lo
        gw = np.empty(n)
        gv = np.empty((n, k))
        sums[blk, 0], sums[blk, 1] = _block_grads(
            w, v, grad, gw, gv, hp.lambda_w, hp.lambda_v, lo, hi, width
        )
        gvf = gv.reshape(-1)
        if hp.adam:
            _adam(w[lo:hi], gw, a_w[lo:hi], b_w[lo:hi], hp)
            _adam(vf[lo * k : hi * k], gvf, avf[lo * k : hi * k], bvf[lo * k : hi * k], hp)
        else:
            _sgd(w[lo:hi], gw, a_w[lo:hi], hp.lr, hp.h1, hp.step)
            _sgd(vf[lo * k : hi * k], gvf, avf[lo * k : hi * k], hp.lr, hp.h1, hp.step)
        _fill_rows(w, v, table, lo, hi, width)
        grad[lo:hi] = 0.0
    l2w = 0.0
    l2v = 0.0
    for blk in range(n_blocks):
        l2w += sums[blk, 0]
        l2v += sums[blk, 1]
    return 0.5 * (hp.lambda_w * l2w + hp.lambda_v * l2v)


@njit(cache=True)
def _block_grads(w, v, grad, gw, gv, lambda_w, lambda_v, lo, hi, width) -> tuple[float, float]:
    """The parameters' gradients (update_rows) of rows lo..hi-1 into gw[: hi - lo],
    gv[: hi - lo]; returns the block's sums of w^2 and v^2 (row 0 apart)."""
    k = len(width) - 1
    l2w = 0.0
    l2v = 0.0
    for r in range(lo, hi):
        i = r - lo
        if r == 0:
            gw[i] = 0.0
            for q in range(k):
                gv[i, q] = 0.0
            continue
        g0 = grad[r, 0]
        wr = np.float64(w[r])
        l2w += wr * wr
        gw[i] = g0 + lambda_w * wr
        for q in range(k):
            vq = np.float64(v[r, q])
            l2v += vq * vq
            gv[i, q] = grad[r, 1 + q] - g0 * vq + lambda_v * vq
    return l2w, l2v


@njit(cache=True)
def _fill_rows(w, v, table, lo, hi, width) -> None:
    """fill_table's rows lo..hi-1 (update_rows fills each block's)."""
    k = len(width) - 1
    for r in range(lo, hi):
        if r == 0:
            for q in range(k + 1):
                table[0, q] = 0.0
            continue
        norm = 0.0
        for q in range(k):
            vq = np.float64(v[r, q])
            table[r, 1 + q] = vq
            norm += vq * vq
        table[r, 0] = np.float64(w[r]) - 0.5 * norm


@njit(cache=True)
def scatter_team_grad(out: np.ndarray, bags: np.ndarray, s: np.ndarray, grad: np.ndarray) -> None:
    """Gradient of sum_n grad[n] E_n w.r.t. the table, E_n = s[n, 0] + 1/2 sum_q s[n, q]^2.

    out[r] += grad[n] * (1, s[n, 1], ..., s[n, k]) for every member r = bags[n, j]
    of every team n; index 0 (none) and teams with zero gradient (padding)
    skipped. out: [F, 1 + k], bags: int64[N, G], s: [N, 1 + k], grad: [N].
    Serial, so the sums are added in a fixed order (reproducible); ~5x faster
    than torch's index_add_ of the repeated rows on one CPU thread.
    """
    n_teams, n_members = bags.shape
    d = s.shape[1]
    for n in range(n_teams):
        g = grad[n]
        if g == 0.0:
            continue
        for j in range(n_members):
            r = bags[n, j]
            if r != 0:
                out[r, 0] += g
                for c in range(1, d):
                    out[r, c] += g * s[n, c]
