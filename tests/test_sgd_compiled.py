"""The compiled FBT/LFR engine (gomove.train.sgd.compiled) against autograd and torch.optim.

Invariants checked:
- the kernel's loss, log-likelihood and gradient (chain rule and L2 included)
  equal autograd of fbt_loss / lfr_loss on the same positions (float64), with
  a group of >= 256 levels (the wide level array) and one-candidate positions;
- the sampled estimator is, for given uniforms, the gradient of the surrogate
  mean E(draws) - E(winner) with the draws found by inverse CDF; and it is
  unbiased: its mean over many draws is the full gradient within 4 standard
  errors, and a deliberately wrong sampler fails that check;
- Adam and SGD (Nesterov) steps equal torch.optim's on the same batches; the dense
  step over many row blocks equals a numpy transcription bit for bit, whatever
  the thread count;
- train_sgd on FlatData is reproducible (bitwise, same seed) and lowers
  the loss; init "mm" goes through MM's numba engine over the same arrays;
- FlatData.from_dataset holds what the padded loader yields, and the
  same model scores both alike;
- ``model=fbt`` / ``model=lfr`` select the compiled engine (``model.flat``).
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
import torch
from synthetic import (
    cfg_of,
    flat_of,
    make_data,
    make_groups,
    padded,
    random_fbt,
    random_log_gamma,
)
from torch.testing import assert_close

from gomove.data.flat import FlatData
from gomove.data.loader import BatchLoader
from gomove.models.fbt import FactorizationBT
from gomove.train.context import TrainContext
from gomove.train.sgd import kernels
from gomove.train.sgd.compiled import CompiledSGD
from gomove.train.sgd.kernels import Moments, Params, StepSettings
from gomove.train.sgd.loop import SGDConfig, train_sgd
from gomove.train.sgd.losses import fbt_loss, lfr_loss
from gomove.train.trainers import model_config

SIZES = (3, 4, 2, 300)  # the last group is held in the wide (uint16) array


def problem(seed: int, n_batches: int = 1, batch_size: int = 7, k: int = 3):
    groups = make_groups(list(SIZES))
    n_features = 1 + sum(SIZES)
    lg = random_log_gamma(n_features, seed)
    batches = make_data(lg, groups, n_batches, batch_size, 9, seed)
    return groups, n_features, batches, flat_of(batches, groups)


def grads_by_sgd_step(model: FactorizationBT, flat: FlatData, cfg: SGDConfig, pos, unif=None):
    """One flat step of plain SGD at lr 1: the parameters move by minus their gradient."""
    w0, v0 = model.w.detach().clone(), model.v.detach().clone()
    engine = CompiledSGD(
        model, flat, SGDConfig(**{**vars(cfg), "optimizer": "sgd", "momentum": 0.0})
    )
    objective, log_lik, n = engine.step(pos, 1.0, unif)
    return objective, log_lik, n, w0 - model.w.detach(), v0 - model.v.detach()


@pytest.mark.parametrize("name", ["fbt", "lfr"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_loss_and_gradient_equal_autograd(name, seed):
    """Objective (mean loss + L2), sum of log P(expert) and dL/dw, dL/dv equal
    autograd's on the same positions, in a shuffled order; the none row is untouched."""
    groups, n_features, batches, flat = problem(seed, n_batches=2)
    batch = padded(batches)
    assert len(flat.layout.wide) == 1  # a wide group beside the narrow ones
    pos = np.random.default_rng(seed).permutation(flat.n_positions)
    cfg = SGDConfig(name=name, k=3, lambda_w=0.01, lambda_v=0.02)
    ref = random_fbt(n_features, 3, seed)
    loss_fn = lfr_loss if name == "lfr" else fbt_loss
    want = loss_fn(ref, batch.feat, batch.mask, batch.winner, 0.01, 0.02)
    want.loss.backward()
    model = random_fbt(n_features, 3, seed)
    objective, log_lik, n, gw, gv = grads_by_sgd_step(model, flat, cfg, pos)
    assert n == len(batch)
    assert_close(objective, float(want.objective))
    assert_close(log_lik, float(want.log_lik))
    assert_close(gw, ref.w.grad)
    assert_close(gv, ref.v.grad)
    assert gw[0] == 0 and bool((gv[0] == 0).all())


def test_sampled_gradient_equals_surrogate():
    """For given uniforms, the sampled step's gradient is autograd's of the surrogate
    1/S sum_i E(m_i) - E(winner) (+ L2), m_i the inverse-CDF draws from P, found
    here by searchsorted; the uniforms' order does not matter."""
    groups, n_features, batches, flat = problem(7, n_batches=2)
    batch = padded(batches)
    n, s = len(batch), 6
    unif = np.random.default_rng(7).random((n, s))
    ref = random_fbt(n_features, 3, 7)
    with torch.no_grad():
        p = ref.log_probs(batch.feat, batch.mask).exp().numpy()
    picks = torch.tensor(
        np.array(
            [
                np.minimum(
                    np.searchsorted(np.cumsum(p[b]), unif[b] * p[b].sum(), side="right"),
                    int(batch.mask[b].sum()) - 1,
                )
                for b in range(n)
            ]
        )
    )
    rows = torch.arange(n)
    e_pick = ref.team_strength(batch.feat[rows.unsqueeze(1), picks])
    e_win = ref.team_strength(batch.feat[rows, batch.winner])
    loss = (e_pick.mean(1) - e_win).mean() + ref.l2(0.01, 0.02)
    loss.backward()
    cfg = SGDConfig(k=3, sample=s, lambda_w=0.01, lambda_v=0.02)
    for order in (unif, unif[:, ::-1]):
        model = random_fbt(n_features, 3, 7)
        _, _, _, gw, gv = grads_by_sgd_step(model, flat, cfg, np.arange(n), order.copy())
        assert_close(gw, ref.w.grad)
        assert_close(gv, ref.v.grad)


def table_grads(engine: CompiledSGD, pos, unif_fn, n_draws: int) -> np.ndarray:
    out = []
    for _ in range(n_draws):
        engine.loss_grad(pos, unif_fn())
        out.append(engine.grad.ravel().copy())
    return np.stack(out)


def test_sampled_estimator_is_unbiased():
    """Mean of N sampled table gradients (S = 3) is within 4 standard errors of the
    full one in every coordinate; uniforms squared (a sampler biased towards the
    first candidates) fail the same check; the objective is the full loss."""
    groups, n_features, batches, flat = problem(5, batch_size=5)
    pos = np.arange(flat.n_positions)
    model = random_fbt(n_features, 3, 5)
    full = CompiledSGD(model, flat, SGDConfig(k=3))
    full_ll, _ = full.loss_grad(pos)
    g = full.grad.ravel().copy()
    sampled = CompiledSGD(model, flat, SGDConfig(k=3, sample=3))
    rng = np.random.default_rng(0)
    ll, loss = sampled.loss_grad(pos, rng.random((len(pos), 3)))
    assert ll == full_ll and loss == -full_ll

    def z_max(unif_fn) -> tuple[float, float]:
        d = table_grads(sampled, pos, unif_fn, 3000)
        se = d.std(0) / math.sqrt(len(d))
        return float((np.abs(d.mean(0) - g) / (se + 1e-12)).max()), float(se.max())

    z, se = z_max(lambda: rng.random((len(pos), 3)))
    assert z <= 4.0, z
    assert se < 0.02  # the check has teeth
    z_wrong, _ = z_max(lambda: rng.random((len(pos), 3)) ** 2)
    assert z_wrong > 8.0, z_wrong


@pytest.mark.parametrize(
    "extra",
    [{}, {"name": "lfr"}, {"optimizer": "sgd"}, {"optimizer": "sgd", "momentum": 0.0}],
)
def test_steps_equal_torch_optim(extra):
    """Three steps on fixed mini-batches give the parameters that autograd and
    torch.optim (Adam / Nesterov SGD / plain SGD) give, L2 included."""
    groups, n_features, batches, flat = problem(3, n_batches=3)
    cfg = SGDConfig(k=3, lr=0.05, lambda_w=0.01, lambda_v=0.02, **extra)
    model = random_fbt(n_features, 3, 3)
    ref = random_fbt(n_features, 3, 3)
    engine = CompiledSGD(model, flat, cfg)
    if cfg.optimizer == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam([ref.w, ref.v], lr=cfg.lr)
    else:
        opt = torch.optim.SGD(
            [ref.w, ref.v], lr=cfg.lr, momentum=cfg.momentum, nesterov=cfg.momentum > 0
        )
    loss_fn = lfr_loss if cfg.name == "lfr" else fbt_loss
    start = 0
    for b in batches:
        pos = np.arange(start, start + len(b))
        start += len(b)
        objective, _, _ = engine.step(pos, cfg.lr)
        out = loss_fn(ref, b.feat, b.mask, b.winner, cfg.lambda_w, cfg.lambda_v)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        assert_close(objective, float(out.objective))
    assert_close(model.w, ref.w)
    assert_close(model.v, ref.v)


@pytest.mark.parametrize(
    "extra", [{}, {"sample": 4}, {"name": "lfr"}, {"optimizer": "sgd"}, {"k": 0}]
)
def test_flat_training_reproducible(extra):
    """Two runs of one config give bitwise the same parameters and history, and
    the training loss goes down."""
    groups, n_features, batches, flat = problem(0, n_batches=4, batch_size=16)
    cfg = SGDConfig(**{"k": 3, "epochs": 3, "batch_size": 8, "lr": 0.05, **extra})
    a, ha = train_sgd(cfg, flat, TrainContext(n_features, [], "cpu", progress=False))
    b, hb = train_sgd(cfg, flat, TrainContext(n_features, [], "cpu", progress=False))
    assert_close(a.w, b.w, rtol=0, atol=0)
    assert_close(a.v, b.v, rtol=0, atol=0)
    assert [h["loss"] for h in ha] == [h["loss"] for h in hb]
    assert ha[-1]["loss"] < ha[0]["loss"]
    c, _ = train_sgd(
        SGDConfig(**{**vars(cfg), "seed": 1}),
        flat,
        TrainContext(n_features, [], "cpu", progress=False),
    )
    assert not torch.equal(a.w, c.w)


def test_from_dataset_equals_loader(ds):  # noqa: F811
    """from_dataset holds every position's candidates as the padded loader does
    (global indices), and a model's loss over both agrees; init "mm" works flat."""
    flat = ds.flat()
    reg = ds.registry
    assert flat.n_positions == ds.n_positions and flat.n_candidates == ds.n_candidates
    assert flat.min_features <= reg.n_features
    levels = [flat.level(g) for g in range(len(reg.groups))]
    p = 0
    for batch in BatchLoader(ds, batch_size=50):
        for j in range(len(batch)):
            lo, hi = flat.pos_start[p], flat.pos_start[p + 1]
            feat = np.stack(
                [
                    np.where(lv[lo:hi] > 0, lv[lo:hi].astype(np.int64) + o - 1, 0)
                    for lv, o in zip(levels, reg.offsets, strict=True)
                ],
                axis=1,
            )
            np.testing.assert_array_equal(feat, batch.feat[j, : hi - lo].numpy())
            assert flat.winner[p] == int(batch.winner[j])
            p += 1
    model = random_fbt(reg.n_features, 4, 0, scale=0.3)
    engine = CompiledSGD(model, flat, SGDConfig(k=4))
    ll, _ = engine.loss_grad(np.arange(flat.n_positions), backward=False)
    want = sum(
        float(fbt_loss(model, b.feat, b.mask, b.winner).log_lik) for b in BatchLoader(ds, 64)
    )
    assert ll == pytest.approx(want, rel=1e-10)
    cfg = SGDConfig(k=2, epochs=0, init="mm", mm_iters=2, init_std=0.0)
    _, h_flat = train_sgd(cfg, flat, TrainContext.of(reg, "cpu", progress=False))
    _, h_pad = train_sgd(cfg, BatchLoader(ds, 64), TrainContext.of(reg, "cpu", progress=False))
    assert h_flat[0]["log_likelihood"] == pytest.approx(h_pad[0]["log_likelihood"], rel=1e-5)


@pytest.mark.parametrize(
    "overrides, flat",
    [
        (["model=fbt"], True),
        (["model=fbt", "sample=10"], True),
        (["model=lfr"], True),
        (["model=fbt", "model.flat=false"], False),
    ],
)
def test_config_selects_engine(overrides, flat):
    """``model.flat`` is on for fbt and lfr unless overridden, and passes the schema."""
    cfg = cfg_of(overrides)
    assert cfg.model.flat is flat
    assert model_config(cfg).flat is flat


def test_l2_scaled_with_positions():
    """l2_positions: the L2 weights are scaled by l2_positions / N, so a run with
    l2_positions = N trains exactly as one without, and 2N as doubled weights."""
    cfg = SGDConfig(k=3, lambda_w=0.01, lambda_v=0.02, l2_positions=50)
    assert cfg.l2_for(100) == SGDConfig(k=3, lambda_w=0.005, lambda_v=0.01)
    plain = SGDConfig(k=3, lambda_w=0.01, lambda_v=0.02)
    assert plain.l2_for(100) is plain
    with pytest.raises(ValueError, match="l2_positions"):
        SGDConfig(l2_positions=0).validate()
    groups, n_features, batches, flat = problem(0, n_batches=4, batch_size=16)
    n = flat.n_positions
    base = {"k": 3, "epochs": 2, "batch_size": 8, "lr": 0.05, "lambda_w": 0.1, "lambda_v": 0.2}
    runs = {
        "same": SGDConfig(**base, l2_positions=n),
        "plain": SGDConfig(**base),
        "double": SGDConfig(**{**base, "lambda_w": 0.2, "lambda_v": 0.4}),
        "scaled": SGDConfig(**base, l2_positions=2 * n),
    }
    models = {
        k: train_sgd(c, flat, TrainContext(n_features, [], "cpu", progress=False))[0]
        for k, c in runs.items()
    }
    assert_close(models["same"].w, models["plain"].w, rtol=0, atol=0)
    assert_close(models["scaled"].w, models["double"].w, rtol=0, atol=0)
    assert_close(models["scaled"].v, models["double"].v, rtol=0, atol=0)
    assert not torch.equal(models["scaled"].w, models["plain"].w)
    # the padded path scales alike
    pad = {k: train_sgd(runs[k], batches, TrainContext(n_features, [], "cpu", progress=False))[0]
           for k in ("scaled", "double")}  # fmt: skip
    assert_close(pad["scaled"].w, pad["double"].w, rtol=0, atol=0)


def reference_step(w, v, grad, moments, hp):
    """A plain numpy transcription of one dense step (kernels.update_rows' docstring):
    the chain rule through the table, the L2 gradient, Adam or Nesterov SGD, the table
    from the new parameters; on copies, with the L2 term at the old parameters."""
    w, v = w.copy(), v.copy()
    a_w, b_w, a_v, b_v = (m.copy() for m in moments)
    w64, v64 = w.astype(np.float64), v.astype(np.float64)
    g0 = grad[:, 0]
    gw = g0 + hp.lambda_w * w64
    gv = grad[:, 1:] - g0[:, None] * v64 + hp.lambda_v * v64
    gw[0], gv[0] = 0.0, 0.0  # row 0 (none): no gradient, no L2
    l2 = 0.5 * (hp.lambda_w * (w64[1:] ** 2).sum() + hp.lambda_v * (v64[1:] ** 2).sum())

    # float32 parameters and moments read as float64 (numpy would keep float32 for
    # a Python float times a float32 array), the results rounded when stored
    def adam(p, g, m, s):
        bc1, bc2_sqrt = 1.0 - hp.h1**hp.step, math.sqrt(1.0 - hp.h2**hp.step)
        m64, s64 = m.astype(np.float64), s.astype(np.float64)
        mi = m64 + (1.0 - hp.h1) * (g - m64)
        si = hp.h2 * s64 + (1.0 - hp.h2) * g * g
        m[...], s[...] = mi, si
        return p.astype(np.float64) - hp.lr / bc1 * mi / (np.sqrt(si) / bc2_sqrt + hp.eps)

    def sgd(p, g, buf):
        if hp.h1 > 0.0:
            buf[...] = g if hp.step == 1 else hp.h1 * buf.astype(np.float64) + g
            g = g + hp.h1 * buf.astype(np.float64)
        return p.astype(np.float64) - hp.lr * g

    if hp.adam:
        w[...], v[...] = adam(w, gw, a_w, b_w), adam(v, gv, a_v, b_v)
    else:
        w[...], v[...] = sgd(w, gw, a_w), sgd(v, gv, a_v)
    v64 = v.astype(np.float64)
    table = np.concatenate([(w.astype(np.float64) - 0.5 * (v64**2).sum(1))[:, None], v64], 1)
    table[0] = 0.0
    return w, v, (a_w, b_w, a_v, b_v), table, l2


@pytest.mark.parametrize("adam,momentum", [(True, 0.9), (False, 0.9), (False, 0.0)])
def test_dense_step_over_blocks_equals_a_plain_reference_at_any_thread_count(adam, momentum):
    """update_rows over several ROW_BLOCK blocks (the last one short), three steps:
    the parameters, moments and table of the numpy transcription bit for bit, on one
    thread and on two; the gradient left zero; the L2 term as one sum gives it."""
    f, k = 2 * kernels.ROW_BLOCK + 123, 4
    rng = np.random.default_rng(5)
    w0 = rng.normal(0, 0.1, f).astype(np.float32)
    v0 = rng.normal(0, 0.1, (f, k)).astype(np.float32)
    grads = [rng.normal(0, 1e-2, (f, 1 + k)) for _ in range(3)]
    results = []
    for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
        w, v, table = w0.copy(), v0.copy(), np.zeros((f, 1 + k))
        moments = Moments(*(np.zeros_like(a) for a in (w, w, v, v)))
        rw, rv, rm = w0.copy(), v0.copy(), tuple(moments)
        before = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            for step, g in enumerate(grads, start=1):
                hp = StepSettings(adam, 0.03, 0.9 if adam else momentum, 0.999, 1e-8, step,
                                  0.01, 0.02)  # fmt: skip
                rw, rv, rm, rtable, rl2 = reference_step(rw, rv, g, rm, hp)
                grad = g.copy()
                l2 = kernels.update_rows(Params(w, v, table), grad, moments, hp, (0,) * (1 + k))
                assert not grad.any()
                assert l2 == pytest.approx(rl2, rel=1e-12)
                np.testing.assert_array_equal(w, rw)
                np.testing.assert_array_equal(v, rv)
                np.testing.assert_array_equal(table, rtable)
                for got, want in zip(moments, rm, strict=True):
                    np.testing.assert_array_equal(got, want)
        finally:
            numba.set_num_threads(before)
        results.append((w, v, table))
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)
