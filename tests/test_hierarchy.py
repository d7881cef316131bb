"""features.shapes=all: every pattern of a candidate's chain in its team.

Invariants checked, on the random 9x9 games of conftest (patterns of radius 3..5):
- Hierarchy.of lifts the table's parents to global indices; sum_down is each
  feature's sum over its chain (walked one step at a time), sum_up its transpose,
  the torch twins equal them, uncollapse inverts collapse;
- MM: the engine under ChainPasses trains exactly what fit_gammas trains over
  padded batches whose teams hold every chain member, one column per radius (the
  oracle, built by walking the chains in Python); the log-posterior never falls;
- FBT/LFR: the compiled step's loss and raw gradient equal autograd through a raw
  model on teams expanded with the chain; TorchSGD and the padded path train the
  same model as CompiledSGD;
- the rankers' teams hold the chain; the models returned (collapsed) score the
  largest-only teams as the raw models score the chain's teams;
- hierarchical LBR starts a child at its parent's value with the smaller variance;
- a temperature folded into MM's or FBT's parameters scales its strengths.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from gomove.data.batch import Batch
from gomove.data.loader import flat_batch
from gomove.features.hierarchy import Hierarchy, chain_sum_row
from gomove.models.fbt import FactorizationBT
from gomove.models.mm import BradleyTerry
from gomove.models.rankers import GaussianRanking
from gomove.train.calibrate import calibrate, calibrated, model_strength, tempered
from gomove.train.context import TrainContext
from gomove.train.hierarchy_tensors import TorchChain, collapse, expand_batch, uncollapse
from gomove.train.mm.compiled import NumbaMM
from gomove.train.mm.fit import train_mm
from gomove.train.mm.loop import fit_gammas
from gomove.train.mm.padded import PaddedMM
from gomove.train.mm.stream import StreamMM
from gomove.train.rankers.fit import Members, fit_ranker, gaussian_prior
from gomove.train.rankers.kernels import team_members, team_width
from gomove.train.schemas import MMConfig, RankerConfig, SGDConfig
from gomove.train.sgd.compiled import CompiledSGD
from gomove.train.sgd.loop import train_sgd

CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def hier(extracted) -> Hierarchy:
    ds, ex = extracted
    return Hierarchy.of(ex.registry, ex.table)


def walked_sum(h: Hierarchy, x: np.ndarray) -> np.ndarray:
    """The reference: every feature's sum over its chain, walked one parent at a time."""
    out = np.zeros_like(x, dtype=np.float64)
    for f in range(len(x)):
        for q in h.chain(f):
            out[f] += x[q]
    out[0] = x[0]
    return out


def radius_batch(ds, h: Hierarchy) -> tuple[Batch, list]:
    """All positions as one padded batch whose teams hold every pattern of the chain,
    one column per group of h.groups (a radius each for the shapes): the oracle's."""
    flat = ds.flat()
    b = flat_batch(flat, np.arange(flat.n_positions))
    feat = b.feat.numpy()
    out = np.zeros(feat.shape[:2] + (len(h.groups),), dtype=np.int64)
    starts = [(o, o + s) for _, o, s in h.groups]
    for i, col in enumerate(h.group_column):
        if col != h.column:
            out[..., i] = feat[..., col]
    shape = feat[..., h.column]
    for idx in zip(*np.nonzero(shape), strict=True):
        for q in h.chain(int(shape[idx])):
            i = next(i for i, (lo, hi) in enumerate(starts) if lo <= q < hi)
            assert out[idx + (i,)] == 0  # one pattern a radius
            out[idx + (i,)] = q
    return replace(b, feat=torch.from_numpy(out)), list(h.groups)


def test_hierarchy_of_table(extracted, hier):
    ds, ex = extracted
    table, reg = ex.table, ex.registry
    o = int(reg.offsets[reg.group_index("shape")])
    assert (hier.up > 0).sum() > 10  # the fixture has chains
    for i, p in enumerate(table.parents):
        assert hier.up[o + i] == (o + p - 1 if p else 0)
        if p:
            assert table.radius[p - 1] < table.radius[i]
    assert (hier.up[:o] == 0).all() and (hier.up[o + len(table) :] == 0).all()
    # the radius groups tile the shape group, one radius each
    spans = [g for g in hier.groups if g.name.startswith("shape:")]
    assert spans[0].offset == o and sum(g.size for g in spans) == len(table)
    for g in spans:
        assert len(set(table.radius[g.offset - o : g.offset - o + g.size])) == 1
    assert hier.longest == max(len(hier.chain(f)) for f in range(hier.n_features))


def test_sums_equal_walked_chains(hier):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(hier.n_features, 3))
    np.testing.assert_allclose(hier.sum_down(x), walked_sum(hier, x), atol=1e-12)
    g = rng.normal(size=(hier.n_features, 3))
    # sum_up is the transpose: <sum_down x, g> = <x, sum_up g>
    assert np.isclose((hier.sum_down(x) * g).sum(), (x * hier.sum_up(g)).sum())
    chain = TorchChain(hier, CPU)
    np.testing.assert_allclose(chain.sum_down(torch.from_numpy(x)).numpy(), hier.sum_down(x))
    np.testing.assert_allclose(chain.sum_up(torch.from_numpy(g)).numpy(), hier.sum_up(g))
    np.testing.assert_allclose(hier.sum_down(x[:, 0]), hier.sum_down(x)[:, 0])
    # sum_up over the rows a batch touched (and their chains): the full sum's bits
    sparse = np.zeros_like(g)
    touched = rng.choice(hier.n_features, size=max(1, hier.n_features // 5), replace=False)
    sparse[touched] = g[touched]
    mark = np.zeros(hier.n_features, np.uint8)
    mark[touched] = 1
    got = sparse.copy()
    hier.sum_up_marked(got, mark)
    np.testing.assert_array_equal(got, hier.sum_up(sparse))
    assert not mark.any()  # cleared for the next batch
    # the lazy sums a batch reads (chain_sum_row): the rows asked for, and the stale rows
    # of their chains, the serial sums' bits; fresh rows are not summed again
    out = np.zeros_like(x)
    fresh = np.zeros(hier.n_features, np.int64)
    chain = np.zeros(hier.longest, np.int64)
    for version, table in ((1, x), (2, g)):
        asked = rng.choice(np.arange(hier.lo, hier.hi), size=max(1, (hier.hi - hier.lo) // 3))
        for f in asked:
            chain_sum_row(table, out, hier.up, fresh, version, chain, int(f))
        summed = np.flatnonzero(fresh == version)
        assert set(asked) <= set(summed)
        assert all(fresh[hier.up[f]] == version for f in summed if hier.up[f])
        np.testing.assert_array_equal(out[summed], hier.sum_down(table)[summed])


def test_collapse_scores_the_chain_teams(extracted, hier):
    """The collapsed model on largest-only teams = the raw model on the chain's teams."""
    ds, _ = extracted
    b = flat_batch(ds.flat(), np.arange(ds.flat().n_positions))
    chained = expand_batch(b, hier)
    gen = torch.Generator().manual_seed(1)
    f = hier.n_features
    fbt = FactorizationBT(f, k=3, init_std=0.3, dtype=torch.float64, generator=gen)
    with torch.no_grad():
        fbt.w.normal_(generator=gen)
    lg = torch.randn(f, generator=gen, dtype=torch.float64)
    lg[0] = 0.0
    for raw in (fbt, BradleyTerry(f, lg)):
        want = raw.log_probs(chained.feat, chained.mask)
        got = collapse(raw, hier).log_probs(b.feat, b.mask)
        torch.testing.assert_close(got[b.mask], want[b.mask])
        back = uncollapse(collapse(raw, hier), hier)
        for p, q in zip(back.state_dict().values(), raw.state_dict().values(), strict=True):
            torch.testing.assert_close(p, q)


def streamed(flat, chunk_positions: int) -> StreamMM:
    """The streaming engine over flat read in chunks (data larger than memory)."""
    flat.chunk_positions = chunk_positions
    return StreamMM(flat)


@pytest.mark.parametrize(
    "prior_wins, engine", [(1.0, "numba"), (3.0, "numba"), (1.0, "stream")]
)  # fmt: skip
def test_mm_equals_the_chain_oracle(extracted, hier, prior_wins, engine):
    ds, ex = extracted
    f = ex.registry.n_features
    cfg = MMConfig(max_iters=3, tol=0.0, prior_wins=prior_wins)
    batch, groups = radius_batch(ds, hier)
    oracle, hist = fit_gammas(PaddedMM([batch], CPU, groups), f, groups, cfg, progress=False)
    model, history = train_mm(
        cfg,
        NumbaMM(ds.flat(), team_dtype="float64") if engine == "numba" else streamed(ds.flat(), 11),
        TrainContext(f, ex.registry.group_spans(), CPU, progress=False, hierarchy=hier),
    )
    np.testing.assert_allclose(model.log_gamma.numpy(), hier.sum_down(oracle), atol=1e-9)
    np.testing.assert_allclose(
        [h["log_posterior"] for h in history], [h["log_posterior"] for h in hist], atol=1e-10
    )
    # every update is an exact MM step on the chain's teams: the posterior never falls
    lp = [h["log_posterior"] for h in history]
    assert all(b >= a - 1e-12 for a, b in zip(lp, lp[1:], strict=False))
    assert len(history[1]["updates"]) == len(hier.groups)  # one update a radius


@pytest.mark.parametrize("name", ["fbt", "lfr"])
def test_sgd_gradient_equals_autograd_on_chain_teams(extracted, hier, name):
    ds, ex = extracted
    flat = ds.flat()
    f = ex.registry.n_features
    gen = torch.Generator().manual_seed(2)
    model = FactorizationBT(f, k=4, init_std=0.3, dtype=torch.float64, generator=gen)
    with torch.no_grad():
        model.w.normal_(generator=gen)
    cfg = SGDConfig(name=name, k=4, batch_size=16, lambda_w=0.0, lambda_v=0.0)
    steps = CompiledSGD(model, flat, cfg, hier)
    pos = np.arange(0, flat.n_positions, 3)
    ll, loss = steps.loss_grad(pos)
    grad_table = steps.grad.copy()

    raw = FactorizationBT(f, k=4, dtype=torch.float64)
    raw.load_state_dict(model.state_dict())
    b = expand_batch(flat_batch(flat, pos), hier)
    logp = raw.log_probs(b.feat, b.mask)
    want_ll = logp[torch.arange(len(pos)), b.winner].sum()
    assert np.isclose(ll, float(want_ll.detach()))
    if name == "fbt":
        (-want_ll / len(pos)).backward()
        # the table gradient, carried to w and v as update_params does
        gw = grad_table[:, 0]
        gv = grad_table[:, 1:] - gw[:, None] * model.v.detach().numpy()
        np.testing.assert_allclose(gw[1:], raw.w.grad.numpy()[1:], atol=1e-10)
        np.testing.assert_allclose(gv[1:], raw.v.grad.numpy()[1:], atol=1e-10)


@pytest.mark.parametrize("engine", ["torch", "padded"])
def test_sgd_engines_train_alike(extracted, hier, engine):
    ds, ex = extracted
    cfg = SGDConfig(name="fbt", k=3, epochs=2, batch_size=64, lambda_w=1e-4, lambda_v=1e-4)
    flat = ds.flat()
    ctx = TrainContext.of(ex.registry, CPU, progress=False, hierarchy=hier)
    numba, _ = train_sgd(cfg, flat, ctx)
    if engine == "torch":
        other, _ = train_sgd(
            replace(cfg, engine="torch"),
            flat,
            ctx,
        )
        tol = 1e-5
    else:  # the padded path sees other batches: the same objective, not the same steps
        batches = [flat_batch(flat, np.arange(flat.n_positions))]
        other, _ = train_sgd(
            replace(cfg, batch_size=flat.n_positions),
            batches,
            ctx,
        )
        full, _ = train_sgd(
            replace(cfg, batch_size=flat.n_positions),
            flat,
            ctx,
        )
        numba, tol = full, 1e-4
    torch.testing.assert_close(other.w.detach(), numba.w.detach(), atol=tol, rtol=0)
    torch.testing.assert_close(other.v.detach(), numba.v.detach(), atol=tol, rtol=0)


def test_ranker_teams_hold_the_chain(extracted, hier):
    ds, _ = extracted
    flat = ds.flat()
    plain, chained = Members(flat, False), Members(flat, False, hierarchy=hier)
    _, t0 = plain.args()
    _, t1 = chained.args()
    b0 = np.empty(team_width(t0), dtype=np.int64)
    b1 = np.empty(team_width(t1), dtype=np.int64)
    seen_chain = False
    for c in range(flat.n_candidates):
        n0, n1 = team_members(c, t0, b0, 0), team_members(c, t1, b1, 0)
        want = [q for m in b0[:n0] for q in hier.chain(int(m))]
        assert sorted(b1[:n1].tolist()) == sorted(want)
        seen_chain |= n1 > n0
    assert seen_chain


@pytest.mark.parametrize("name", ["pr", "bar", "lbr"])
def test_rankers_return_the_collapsed_model(extracted, hier, name):
    ds, ex = extracted
    flat, f = ds.flat(), ex.registry.n_features
    cfg = RankerConfig(name=name, calibrate_positions=200)
    model, _ = fit_ranker(
        cfg, flat, TrainContext(f, ex.registry.group_spans(), CPU, hierarchy=hier)
    )
    plain, _ = fit_ranker(cfg, flat, TrainContext(f, ex.registry.group_spans(), CPU))
    assert not torch.equal(model.theta, plain.theta)  # the chain changed the teams
    child = np.flatnonzero(hier.up)
    # a child's value includes its parent's: the collapsed theta differs from the raw own part
    assert np.abs(model.theta.numpy()[child]).max() > 0


def test_hierarchical_lbr_prior(extracted, hier):
    ds, ex = extracted
    flat, f = ds.flat(), ex.registry.n_features
    groups = ex.registry.group_spans()
    with pytest.raises(ValueError, match="hierarchy"):
        fit_ranker(RankerConfig(name="lbr", hierarchy=True), flat, TrainContext(f, groups, CPU))
    with pytest.raises(ValueError, match="hierarchy"):
        RankerConfig(name="pr", hierarchy=True).validate()
    cfg = RankerConfig(name="lbr", hierarchy=True, hierarchy_sigma2=0.1, prior_mu=0.5)
    mu, s2 = gaussian_prior(cfg, f, hier)
    prior = GaussianRanking(f, mu, s2)
    value = collapse(prior, hier)
    # before any game: every pattern at its root's prior mean, its variance the root's
    # plus hierarchy_sigma2 for every step down the chain (Stern's hierarchical prior)
    for q in np.flatnonzero(hier.up):
        chain = hier.chain(int(q))
        assert float(value.theta[q]) == 0.5
        assert np.isclose(float(value.sigma2[q]), 1.0 + 0.1 * (len(chain) - 1))
    plain_mu, plain_s2 = gaussian_prior(replace(cfg, hierarchy=False), f, hier)
    assert torch.equal(plain_mu, mu) and float(plain_s2.min()) == 1.0
    # trained, the hierarchical model differs from the all-sizes one
    a, _ = fit_ranker(
        replace(cfg, calibrate_positions=200), flat, TrainContext(f, groups, CPU, hierarchy=hier)
    )
    b, _ = fit_ranker(
        replace(cfg, hierarchy=False, calibrate_positions=200),
        flat,
        TrainContext(f, groups, CPU, hierarchy=hier),
    )
    assert not torch.allclose(a.theta, b.theta)


def test_tempered_models_scale_their_strengths(extracted, hier):
    """tempered(model, tau) scores softmax(tau * strength); calibrate's tau is the best one."""
    ds, ex = extracted
    b = flat_batch(ds.flat(), np.arange(ds.flat().n_positions))
    gen = torch.Generator().manual_seed(3)
    f = ex.registry.n_features
    fbt = FactorizationBT(f, k=3, init_std=0.3, dtype=torch.float64, generator=gen)
    lg = torch.randn(f, generator=gen, dtype=torch.float64)
    lg[0] = 0.0
    for m in (fbt, BradleyTerry(f, lg)):
        s = model_strength(m)(b.feat)
        want = torch.log_softmax((0.7 * s).masked_fill(~b.mask, -torch.inf), 1)
        got = tempered(m, 0.7).log_probs(b.feat, b.mask)
        torch.testing.assert_close(got[b.mask], want[b.mask])
        cal, tau, floor = calibrate(m, [b])
        assert floor == 0.0  # by the likelihood: a temperature alone

        def ll(model) -> float:
            lp = model.log_probs(b.feat, b.mask)
            return float(lp[torch.arange(len(b)), b.winner].sum().detach())

        assert ll(cal) >= max(ll(tempered(m, tau * 1.05)), ll(tempered(m, tau / 1.05)))
    with pytest.raises(ValueError, match="temperature"):
        tempered(fbt, 0.0)


def test_calibrate_config_needs_validation(extracted):
    ds, ex = extracted
    b = flat_batch(ds.flat(), np.arange(ds.flat().n_positions))
    lg = torch.randn(ex.registry.n_features, dtype=torch.float64, generator=torch.Generator())
    lg[0] = 0.0
    m = BradleyTerry(ex.registry.n_features, lg)
    hist = [{"iter": 0}]
    ctx = TrainContext.of(ex.registry, CPU)
    assert calibrated(m, hist, MMConfig(), ctx)[0] is m  # off: untouched
    with pytest.raises(ValueError, match="data.val"):
        calibrated(m, hist, MMConfig(calibrate=True), ctx)
    out, h = calibrated(m, hist, MMConfig(calibrate=True), replace(ctx, val_data=[b]))
    assert h[-1]["temperature"] > 0 and not torch.equal(out.log_gamma, m.log_gamma)
