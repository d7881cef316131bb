"""The comparison paper's rankers: PR, BAR and LBR (gomove.train.rankers).

Invariants checked:
- PR's strengths are the hand-counted win rates W_f / A_f, from the numba
  counts, the tensor counts over padded batches and the reference alike;
- one BAR update on a 3-team position equals Algorithm 1 worked out by hand,
  and the kernel equals the reference (Algorithm 1 as printed) over many
  positions whose teams share features;
- LBR's EP on two one-feature teams is the closed-form two-player TrueSkill
  update (and the ``trueskill`` package's, when installed); on 3-team graphs,
  with and without a shared feature (a loop), and over several positions
  (assumed-density filtering) it reaches the fixed point of a slow flooding
  reference;
- the truncated-Gaussian moments v, w match their definitions, and their
  asymptotic form far in the tail;
- BAR and LBR keep every variance positive and finite, every mean finite, on
  adversarial positions: one candidate, hundreds of candidates, identical
  teams, huge and tiny prior variances;
- the fitted temperature maximizes the log-likelihood (a grid cannot beat it);
- FlatData.from_batches and loader.flat_batch invert each other;
- the single-pattern variant trains and scores the shape column alone, and
  fails clearly without shapes; bad configs fail clearly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from reference import ref_bar, ref_ep_position, ref_pr
from synthetic import flat_of, make_data, make_groups, padded, random_log_gamma

from gomove.data.flat import FlatData
from gomove.data.loader import BatchLoader, flat_batch
from gomove.models.rankers import GaussianRanking, WinRateRanking
from gomove.train.calibrate import fit_temperature
from gomove.train.context import TrainContext
from gomove.train.rankers.fit import (
    Members,
    fit_ranker,
    pr_counts_torch,
    win_rates,
)
from gomove.train.rankers.kernels import EPSettings, bar_pass, lbr_pass, pr_counts, trunc_vw
from gomove.train.schemas import RankerConfig

CPU = torch.device("cpu")


def flat_teams(positions, n_features: int) -> FlatData:
    """Positions (teams as lists of features 1..F-1, winner) as FlatData: one group
    of one level per feature, so any set of features can form a team."""
    n_groups = n_features - 1
    levels = [[] for _ in range(n_groups)]
    starts, winners = [0], []
    for teams, winner in positions:
        for team in teams:
            for g in range(n_groups):
                levels[g].append(1 if g + 1 in team else 0)
        starts.append(starts[-1] + len(teams))
        winners.append(winner)
    return FlatData.from_levels(
        [np.array(lv, dtype=np.int64) for lv in levels],
        list(range(1, n_features)),
        [1] * n_groups,
        np.array(starts),
        np.array(winners),
    )


def run_bar(positions, mu, sigma2, beta2=1.0, kappa=1e-4, with_hits=False):
    data = flat_teams(positions, len(mu))
    mu, sigma2 = np.array(mu, dtype=float), np.array(sigma2, dtype=float)
    args = Members(data, single=False).args()
    hits = bar_pass(mu, sigma2, np.arange(data.n_positions), *args, beta2, kappa, data.max_cands)
    return (mu, sigma2, hits) if with_hits else (mu, sigma2)


def run_lbr(positions, mu, sigma2, beta2=1.0, iters=2000, tol=0.0):
    data = flat_teams(positions, len(mu))
    mu, sigma2 = np.array(mu, dtype=float), np.array(sigma2, dtype=float)
    args = Members(data, single=False).args()
    ep = EPSettings(beta2, iters, tol)
    lbr_pass(mu, sigma2, np.arange(data.n_positions), *args, ep, data.max_cands)
    return mu, sigma2


def random_positions(seed: int, n: int, n_features: int, max_teams: int, max_size: int):
    rnd = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rnd.integers(2, max_teams + 1))
        teams = [
            sorted(rnd.choice(np.arange(1, n_features), rnd.integers(1, max_size + 1), False))
            for _ in range(k)
        ]
        out.append(([[int(f) for f in t] for t in teams], int(rnd.integers(k))))
    return out


# --- PR -----------------------------------------------------------------------------


def test_pr_equals_hand_counted_win_rates():
    """Two positions; counted by hand: feature 1 is in 2 teams and both won (1.0),
    feature 2 in 3 teams, one won (1/3), feature 3 likewise (1/3), feature 4 in one
    losing team (0); the none index 0 is never a member (0)."""
    positions = [([[1, 2], [2, 3], [4]], 0), ([[3], [1, 3], [2]], 1)]
    want = [0.0, 1.0, 1 / 3, 1 / 3, 0.0]
    data = flat_teams(positions, 5)
    wins, appear = pr_counts(*Members(data, single=False).args(), 5)
    assert wins.tolist() == [0, 2, 1, 1, 0] and appear.tolist() == [0, 2, 3, 3, 1]
    np.testing.assert_allclose(win_rates(wins, appear), want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(ref_pr(positions, 5), want, rtol=0, atol=1e-15)
    batch = flat_batch(data, np.arange(2))
    w_t, a_t = pr_counts_torch([batch], 5, [], CPU)
    assert w_t.tolist() == wins.tolist() and a_t.tolist() == appear.tolist()


def test_pr_counts_numba_equal_tensor_form_on_random_data():
    groups = make_groups([3, 5, 4])
    batches = make_data(random_log_gamma(13, 1), groups, 4, 32, 12, seed=2)
    data = flat_of(batches, groups)
    for single in (False, True):
        members = Members(data, single, names=["g0", "shape", "g2"])
        wins, appear = pr_counts(*members.args(), 13)
        cols = [1] if single else []
        w_t, a_t = pr_counts_torch(batches, 13, cols, CPU)
        np.testing.assert_array_equal(w_t.numpy(), wins)
        np.testing.assert_array_equal(a_t.numpy(), appear)


# --- BAR ----------------------------------------------------------------------------


def test_one_bar_update_equals_algorithm_1_by_hand():
    """Teams T1 = {1, 2} (the expert's), T2 = {3}, T3 = {4}; beta^2 = 1.

    Team sums: mu_1 = 1.0 + 0.5 = 1.5, s_1 = 2 + 1 = 3; mu_2 = 0.2, s_2 = 3;
    mu_3 = -0.3, s_3 = 0.5. c_12 = sqrt(3 + 3 + 2) = sqrt(8), c_13 = sqrt(5.5).
    p_12 = 1 / (1 + exp(-1.3 / c_12)), p_13 = 1 / (1 + exp(-1.8 / c_13)), p_q1 = 1 - p_1q.
    Omega_1 = s_1 p_21 / c_12 + s_1 p_31 / c_13;
    Delta_1 = sqrt(s_1) s_1 / c_12^3 p_12 p_21 + sqrt(s_1) s_1 / c_13^3 p_13 p_31;
    Omega_2 = -s_2 p_21 / c_12, Delta_2 = sqrt(s_2) s_2 / c_12^3 p_21 p_12;
    Omega_3 = -s_3 p_31 / c_13, Delta_3 = sqrt(s_3) s_3 / c_13^3 p_31 p_13;
    member f of team i: mu_f += sigma2_f / s_i Omega_i,
    sigma2_f *= max(1 - sigma2_f / s_i Delta_i, 1e-4).
    """
    mu0 = [0.0, 1.0, 0.5, 0.2, -0.3]
    s20 = [1.0, 2.0, 1.0, 3.0, 0.5]
    c12, c13 = math.sqrt(8.0), math.sqrt(5.5)
    p12, p13 = 1 / (1 + math.exp(-1.3 / c12)), 1 / (1 + math.exp(-1.8 / c13))
    p21, p31 = 1 - p12, 1 - p13
    om1 = 3 * p21 / c12 + 3 * p31 / c13
    de1 = math.sqrt(3) * 3 / c12**3 * p12 * p21 + math.sqrt(3) * 3 / c13**3 * p13 * p31
    om2, de2 = -3 * p21 / c12, math.sqrt(3) * 3 / c12**3 * p21 * p12
    om3, de3 = -0.5 * p31 / c13, math.sqrt(0.5) * 0.5 / c13**3 * p31 * p13
    want_mu = [0.0, 1.0 + 2 / 3 * om1, 0.5 + 1 / 3 * om1, 0.2 + om2, -0.3 + om3]
    want_s2 = [1.0, 2 * (1 - 2 / 3 * de1), 1 - 1 / 3 * de1, 3 * (1 - de2), 0.5 * (1 - de3)]
    mu, s2 = run_bar([([[1, 2], [3], [4]], 0)], mu0, s20)
    np.testing.assert_allclose(mu, want_mu, rtol=1e-13)
    np.testing.assert_allclose(s2, want_s2, rtol=1e-13)
    # the numbers themselves, for the record
    np.testing.assert_allclose(mu, [0.0, 1.544056, 0.772028, -0.210556, -0.367588], atol=1e-6)
    np.testing.assert_allclose(s2, [1.0, 1.811061, 0.952765, 2.836555, 0.497033], atol=1e-6)
    # the expert's team comes first whatever its place among the candidates
    mu_b, s2_b = run_bar([([[3], [4], [1, 2]], 2)], mu0, s20)
    np.testing.assert_allclose(mu_b, mu, rtol=1e-13)
    np.testing.assert_allclose(s2_b, s2, rtol=1e-13)


def test_bar_kernel_equals_reference_with_shared_features():
    positions = random_positions(3, 40, 8, max_teams=6, max_size=3)
    mu0, s20 = [0.0] * 8, [1.0 + 0.1 * f for f in range(8)]
    mu, s2, hits = run_bar(positions, mu0, s20, beta2=2.0, kappa=1e-3, with_hits=True)
    rmu, rs2 = list(mu0), list(s20)
    assert hits == ref_bar(positions, rmu, rs2, 2.0, 1e-3) > 0  # the online prediction rate
    np.testing.assert_allclose(mu, rmu, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s2, rs2, rtol=1e-12)


# --- LBR ----------------------------------------------------------------------------


def test_ep_two_teams_equals_two_player_trueskill():
    """Teams {1} beats {2}: c^2 = 2 beta^2 + s_w + s_l, t = (mu_w - mu_l) / c,
    mu_w += s_w / c v(t), s_w *= 1 - s_w / c^2 w(t); the loser's with the sign of
    its mean update flipped (Herbrich et al. 2007)."""
    beta2, mu0, s20 = 1.0, [0.0, 0.3, -0.1], [1.0, 1.44, 0.49]
    mu, s2 = run_lbr([([[1], [2]], 0)], mu0, s20, beta2=beta2)
    c = math.sqrt(2 * beta2 + 1.44 + 0.49)
    t = 0.4 / c
    pdf = math.exp(-t * t / 2) / math.sqrt(2 * math.pi)
    v = pdf / (0.5 * math.erfc(-t / math.sqrt(2)))
    w = v * (v + t)
    np.testing.assert_allclose(mu[1:], [0.3 + 1.44 / c * v, -0.1 - 0.49 / c * v], rtol=1e-12)
    np.testing.assert_allclose(
        s2[1:], [1.44 * (1 - 1.44 / c**2 * w), 0.49 * (1 - 0.49 / c**2 * w)], rtol=1e-12
    )
    assert mu[0] == 0.0 and s2[0] == 1.0  # not in the game


def test_ep_two_teams_equals_the_trueskill_package():
    ts = pytest.importorskip("trueskill")
    env = ts.TrueSkill(mu=0.0, sigma=1.0, beta=0.8, tau=0.0, draw_probability=0.0)
    for mw, sw, ml, sl in ((0.3, 1.2, -0.1, 0.7), (-2.0, 0.5, 1.5, 2.0), (0.0, 3.0, 0.0, 3.0)):
        win, lose = ts.rate_1vs1(env.create_rating(mw, sw), env.create_rating(ml, sl), env=env)
        mu, s2 = run_lbr([([[2], [1]], 1)], [0.0, mw, ml], [1.0, sw**2, sl**2], beta2=0.64)
        # the package approximates the normal cdf to about 1e-7
        np.testing.assert_allclose(mu[1:], [win.mu, lose.mu], rtol=1e-6)
        np.testing.assert_allclose(np.sqrt(s2[1:]), [win.sigma, lose.sigma], rtol=1e-6)


@pytest.mark.parametrize(
    "teams, winner",
    [
        ([[1, 2], [3], [4]], 0),  # a tree but for the expert's shared performance
        ([[1, 2], [2, 3], [4]], 0),  # feature 2 in two teams: a loop
        ([[3], [1, 2, 3], [2, 4]], 1),  # the expert's team shares with both others
    ],
)
def test_lbr_three_teams_equal_the_flooding_reference(teams, winner):
    mu0 = [0.0, 0.4, -0.2, 0.1, 0.3]
    s20 = [1.0, 1.0, 0.5, 2.0, 1.5]
    mu, s2 = run_lbr([(teams, winner)], mu0, s20, beta2=0.7)
    ref = ref_ep_position(teams, winner, mu0, s20, 0.7)
    for f, (m, v) in ref.items():
        assert mu[f] == pytest.approx(m, rel=1e-8, abs=1e-10)
        assert s2[f] == pytest.approx(v, rel=1e-8)


def test_lbr_filtering_over_positions_equals_the_reference():
    """Assumed-density filtering: each position's posterior is the next one's prior."""
    positions = random_positions(5, 12, 7, max_teams=5, max_size=3)
    mu0, s20 = [0.0] * 7, [1.0] * 7
    mu, s2 = run_lbr(positions, mu0, s20, beta2=1.0)
    rmu, rs2 = list(mu0), list(s20)
    for teams, winner in positions:
        for f, (m, v) in ref_ep_position(teams, winner, rmu, rs2, 1.0).items():
            rmu[f], rs2[f] = m, v
    np.testing.assert_allclose(mu, rmu, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(s2, rs2, rtol=1e-7)


@pytest.mark.parametrize("name", ["bar", "lbr"])
def test_shuffled_order_is_the_filter_over_the_permutation(ds, name):
    """model.shuffle: the filter visits the positions in the seeded permutation (the
    same model as the kernel over that order), the same seed the same model, another
    seed or game order another one."""
    reg = ds.registry
    flat = ds.flat()

    def fit(**kw):
        cfg = RankerConfig(name=name, **kw)
        model, _ = fit_ranker(cfg, flat, TrainContext(reg.n_features, reg.group_spans(), CPU))
        return model.theta

    shuffled = fit(shuffle=True, seed=3)
    assert torch.equal(shuffled, fit(shuffle=True, seed=3))
    assert not torch.equal(shuffled, fit(shuffle=True, seed=4))
    assert not torch.equal(shuffled, fit(shuffle=False))
    cfg = RankerConfig(name=name)
    mu = np.full(reg.n_features, cfg.prior_mu)
    s2 = np.full(reg.n_features, cfg.prior_sigma2)
    mu[0] = 0.0
    order = np.random.default_rng(3).permutation(flat.n_positions)
    args = Members(flat, single=False).args()
    if name == "bar":
        bar_pass(mu, s2, order, *args, cfg.beta2, cfg.kappa, flat.max_cands)
    else:
        ep = EPSettings(cfg.beta2, cfg.ep_iters, cfg.ep_tol)
        lbr_pass(mu, s2, order, *args, ep, flat.max_cands)
    np.testing.assert_array_equal(shuffled.numpy(), mu)


def test_truncated_gaussian_moments():
    for t in np.linspace(-29, 12, 83):
        v, w = trunc_vw(t)
        pdf = math.exp(-t * t / 2) / math.sqrt(2 * math.pi)
        want = pdf / (0.5 * math.erfc(-t / math.sqrt(2)))
        assert v == pytest.approx(want, rel=1e-12)
        assert 0 <= w < 1
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    for t in (-31.0, -50.0, -1e3, -1e6):
        x = mpmath.mpf(t)
        want = mpmath.npdf(x) / mpmath.ncdf(x)
        v, w = trunc_vw(t)
        assert v == pytest.approx(float(want), rel=1e-7)
        assert 0 <= w < 1
        assert w == pytest.approx(float(want * (want + x)), rel=1e-3)


@pytest.mark.parametrize("name", ["bar", "lbr"])
@pytest.mark.parametrize("sigma2", [1e-12, 1.0, 1e12])
def test_variances_stay_positive_and_finite(name, sigma2):
    rnd = np.random.default_rng(0)
    many = [
        [int(f)] + [int(g) for g in rnd.choice(np.arange(2, 9), 2, False)]
        for f in rnd.integers(1, 9, 400)
    ]
    cases = [
        [([[1, 2]], 0)],  # one candidate
        [(many, 7)],  # hundreds of candidates
        [([[1, 2, 3]] * 50, 3)] * 3,  # identical teams, the expert's among them
        [([[1], [1]], 0), ([[2], [2, 3]], 1), ([[3]] * 2, 1)],
        random_positions(9, 30, 9, max_teams=40, max_size=4),
    ]
    for positions in cases:
        mu0, s20 = [0.0] * 9, [sigma2] * 9
        run = run_bar if name == "bar" else run_lbr
        mu, s2 = run(positions, mu0, s20, iters=50) if name == "lbr" else run(positions, mu0, s20)
        assert np.isfinite(mu).all() and np.isfinite(s2).all()
        assert (s2 > 0).all()
        assert (s2 <= sigma2 * (1 + 1e-9)).all()  # evidence never adds uncertainty


# --- calibration, layout, the fit -----------------------------------------------------


def test_fitted_temperature_is_the_maximum():
    groups = make_groups([3, 5, 4])
    true = random_log_gamma(13, 4)
    batches = make_data(true, groups, 3, 40, 10, seed=5)
    model = WinRateRanking(13, 0.5 * true + 0.3 * random_log_gamma(13, 6))
    tau = fit_temperature(model.team_strength, batches)
    assert 0.5 < tau < 8  # about 2: the strengths are half the true log-gammas, plus noise

    def ll(t: float) -> float:
        model.temperature.fill_(t)
        b = padded(batches)
        lp = model.log_probs(b.feat, b.mask)
        return float(lp[torch.arange(len(b)), b.winner].sum())

    best = ll(tau)
    assert all(best >= ll(t) - 1e-9 for t in np.geomspace(tau / 10, tau * 10, 201))
    assert best > ll(tau * 1.01) and best > ll(tau / 1.01)


def test_flat_from_batches_and_back():
    groups = make_groups([3, 300, 4])
    batches = make_data(random_log_gamma(308, 7), groups, 3, 16, 9, seed=8)
    data = FlatData.from_batches(batches, groups)
    want = flat_of(batches, groups)
    for name in ("words", "combos", "pos_start"):
        np.testing.assert_array_equal(getattr(data, name), getattr(want, name))
    np.testing.assert_array_equal(data.winner, want.winner)
    again = flat_batch(data, np.arange(data.n_positions))
    whole = padded(batches)
    m = again.feat.shape[1]
    assert torch.equal(again.feat, whole.feat[:, :m]) and torch.equal(again.mask, whole.mask[:, :m])
    assert torch.equal(again.winner, whole.winner)


@pytest.mark.parametrize("name", ["pr", "bar", "lbr"])
def test_fit_on_padded_batches_equals_flat(ds, name):
    """PR counts padded batches in tensor form, BAR and LBR convert them: the same model."""
    reg = ds.registry
    cfg = RankerConfig(name=name)
    flat, hist = fit_ranker(cfg, ds.flat(), TrainContext(reg.n_features, reg.group_spans(), CPU))
    pad, _ = fit_ranker(
        cfg, BatchLoader(ds, batch_size=32), TrainContext(reg.n_features, reg.group_spans(), CPU)
    )
    torch.testing.assert_close(pad.theta, flat.theta, rtol=1e-12, atol=1e-12)
    assert hist[-1]["positions"] == ds.n_positions and 0 < hist[-1]["temperature"]


def test_single_pattern_variant(ds):
    """model.single: a team is the shape level alone (level 0: the "no shape" index 0);
    the tactical levels keep their prior, the scores ignore their columns."""
    reg = ds.registry
    shape = reg.group_index("shape")
    cfg = RankerConfig(name="lbr", single=True, prior_sigma2=2.0)
    model, _ = fit_ranker(cfg, ds.flat(), TrainContext(reg.n_features, reg.group_spans(), CPU))
    assert isinstance(model, GaussianRanking) and model.columns.tolist() == [shape]
    assert model.hparams() == {"single": True} and model.log_gammas() is None
    off = reg.offsets[shape]
    tactical = torch.ones(reg.n_features, dtype=torch.bool)
    tactical[0] = False
    tactical[off : off + len(reg.groups[shape])] = False
    assert (model.sigma2[tactical] == 2.0).all() and (model.mu[tactical] == 0).all()
    assert model.sigma2[0] < 2.0  # "no shape" learned
    batch = next(iter(BatchLoader(ds, batch_size=8)))
    other = batch.feat.clone()
    keep = torch.zeros(other.shape[2], dtype=torch.bool)
    keep[shape] = True
    other[:, :, ~keep] = 0
    torch.testing.assert_close(
        model.log_probs(other, batch.mask), model.log_probs(batch.feat, batch.mask)
    )


def test_bad_input_fails_clearly():
    groups = make_groups([3, 5, 4])
    data = flat_of(make_data(random_log_gamma(13, 1), groups, 1, 8, 5, 0), groups)
    with pytest.raises(ValueError, match="needs shape patterns"):
        fit_ranker(RankerConfig(name="lbr", single=True), data, TrainContext(13, groups, CPU))
    for bad, msg in (
        ({"name": "mm"}, "name must be one of"),
        ({"passes": 0}, "passes"),
        ({"beta2": 0.0}, "beta2"),
        ({"kappa": 2.0}, "kappa"),
        ({"ep_iters": 0}, "ep_iters"),
    ):
        with pytest.raises(ValueError, match=msg):
            RankerConfig(**({"name": "bar"} | bad)).validate()
