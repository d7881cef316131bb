"""Factorization Bradley-Terry (FBT), its sampled gradient, LFR, and their training runs.

Invariants checked:
- the O(k |team|) strength equals the explicit double sum over team members,
  and the ``none`` index contributes nothing and gets no gradient;
- autograd's gradient of the mean log-loss equals the closed form (reference);
- the sampled gradient is unbiased: its mean over many draws is the full one;
- LFR's pairwise loss equals a loop over pairs;
- trained on data drawn from a known FBT model, FBT beats a model without
  interactions on held-out log-likelihood and comes close to the truth;
- the same config gives the same model; w from MM reproduces MM's probabilities;
- ``python train.py model=fbt k=5`` / ``sample=10`` / ``model=lfr`` compose as
  written, and a tiny run of fbt and lfr (flat and padded engines) writes
  metrics.json, the gamma table, TensorBoard scalars and a checkpoint that
  ``evaluate_checkpoint`` scores identically and that a 0-epoch run with
  ``model.init_checkpoint`` reproduces.
"""

from __future__ import annotations

import json
import math

import pytest
import reference as ref
import torch
from synthetic import (
    cfg_of,
    make_data,
    make_groups,
    random_fbt,
    random_log_gamma,
    tiny_overrides,
)
from torch.testing import assert_close

from gomove.data.batch import Batch
from gomove.evaluate.saved_model import evaluate_checkpoint
from gomove.models.checkpoint import load_checkpoint
from gomove.models.fbt import FactorizationBT, team_strength
from gomove.models.mm import BradleyTerry
from gomove.train.context import TrainContext
from gomove.train.schemas import AUTO_STEPS, SGDConfig, auto_batch_size
from gomove.train.sgd.loop import init_from_mm, lr_factor, train_sgd
from gomove.train.sgd.losses import fbt_loss, lfr_loss, sampled_fbt_grad_loss, table_strength
from gomove.train.trainers import run, trainer_of

F64 = torch.float64


def problem(seed: int, sizes=(3, 4, 2, 5), k: int = 3, batch_size: int = 7, max_cands: int = 9):
    groups = make_groups(list(sizes))
    n_features = 1 + sum(sizes)
    model = random_fbt(n_features, k, seed)
    data = make_data(random_log_gamma(n_features, seed), groups, 1, batch_size, max_cands, seed)
    return model, data[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_strength_equals_double_sum(seed):
    """team_strength = sum w + 1/2 sum_{f != g} <v_f, v_g>, member by member."""
    model, batch = problem(seed)
    e = model.team_strength(batch.feat)
    w, v = model.w.tolist(), model.v.tolist()
    want = [[ref.fbt_strength(w, v, team) for team in cands] for cands in batch.feat.tolist()]
    assert_close(e, torch.tensor(want, dtype=F64))


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_team_strength_gradient(device):
    """The training's team strength (table_strength: the model's forward, a hand-written
    backward, compiled loop on CPU, index_add_ on CUDA) equals the model's and passes
    gradcheck w.r.t. rows 1.., with index 0 (a zero row, by contract) among the
    members; row 0 itself gets no gradient."""
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA")
    gen = torch.Generator().manual_seed(0)
    rows = torch.randn(8, 4, generator=gen, dtype=F64).to(device).requires_grad_()
    feat = torch.randint(0, 9, (3, 5, 3), generator=gen).to(device)
    zero = torch.zeros(1, 4, dtype=F64, device=device)
    assert torch.autograd.gradcheck(lambda t: table_strength(torch.cat([zero, t]), feat), (rows,))
    table = torch.randn(9, 4, generator=gen, dtype=F64).to(device).requires_grad_()
    assert torch.equal(table_strength(table, feat), team_strength(table, feat))
    table_strength(table, feat).sum().backward()
    assert bool((table.grad[0] == 0).all())


def test_none_index_contributes_nothing():
    """Whatever w[0] and v[0] hold, the strengths are unchanged and their gradient is 0."""
    model, batch = problem(3)
    before = model.team_strength(batch.feat).detach()
    with torch.no_grad():
        model.w[0] = 5.0
        model.v[0] = 3.0
    assert_close(model.team_strength(batch.feat), before)
    fbt_loss(model, batch.feat, batch.mask, batch.winner, 0.1, 0.1).loss.backward()
    assert model.w.grad[0] == 0.0 and bool((model.v.grad[0] == 0).all())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_autograd_equals_closed_form_gradient(seed):
    """Autograd of the mean log-loss = -h(winner) + sum_m P(m) h(m) (reference), with
    dE/dw_f = count of f in the team and dE/dv_{f,q} = sum_{t in team, t != f} v_{t,q}.

    The poster writes h(v_{s,q}) = 1/2 sum_{t != s} v_{t,q}, but its
    E = sum w + 1/2 sum_{f != g} <v_f, v_g> sums over *ordered* pairs, so each
    unordered pair counts twice and the derivative has no 1/2: the poster's h
    is half the true gradient of its own E (consistent only with a 1/2 on the
    unordered-pair sum). We use the exact derivative; the test pins it.
    """
    model, batch = problem(seed)
    out = fbt_loss(model, batch.feat, batch.mask, batch.winner)
    out.loss.backward()
    loss, gw, gv = ref.fbt_log_loss_grad(model.w.tolist(), model.v.tolist(), [batch])
    assert_close(float(out.loss.detach()), loss)
    gw_t, gv_t = torch.tensor(gw, dtype=F64), torch.tensor(gv, dtype=F64)
    gw_t[0], gv_t[0] = 0.0, 0.0  # the reference never sees index 0; the model pins it
    assert_close(model.w.grad, gw_t)
    assert_close(model.v.grad, gv_t)
    # -log-likelihood from the Loss record agrees too
    assert_close(-float(out.log_lik) / len(batch), loss)


def test_l2_term():
    """The L2 term is lambda_w/2 ||w||^2 + lambda_v/2 ||v||^2, added once per batch."""
    model, batch = problem(4)
    base = fbt_loss(model, batch.feat, batch.mask, batch.winner).loss
    reg = fbt_loss(model, batch.feat, batch.mask, batch.winner, 0.3, 0.7).loss
    want = 0.15 * (model.w**2).sum() + 0.35 * (model.v**2).sum()
    assert_close(reg - base, want)


def flat_grad(model: FactorizationBT) -> torch.Tensor:
    return torch.cat([model.w.grad.reshape(-1), model.v.grad.reshape(-1)])


def test_sampled_gradient_is_unbiased():
    """The mean of N sampled-gradient estimates (S = 3) is within 4 standard
    errors (their empirical spread / sqrt(N)) of the full gradient, every
    coordinate; the reported objective is the full loss."""
    model, batch = problem(5, batch_size=5, max_cands=7)
    args = (model, batch.feat, batch.mask, batch.winner)
    full = fbt_loss(*args, 0.01, 0.02)
    full.loss.backward()
    g = flat_grad(model)
    gen = torch.Generator().manual_seed(0)
    draws = []
    for _ in range(2000):
        model.zero_grad()
        out = sampled_fbt_grad_loss(*args, 3, gen, 0.01, 0.02)
        out.loss.backward()
        draws.append(flat_grad(model))
    assert_close(out.objective, full.objective)
    d = torch.stack(draws)
    se = d.std(0) / math.sqrt(len(d))
    err = (d.mean(0) - g).abs()
    assert bool((err <= 4 * se + 1e-12).all()), float((err / (se + 1e-12)).max())
    assert float(se.max()) < 0.05  # the check has teeth


@pytest.mark.parametrize("seed", [0, 1])
def test_lfr_loss_equals_loop(seed):
    """lfr_loss = mean over positions of the mean over pairs (winner, other) of
    -log sigmoid(E_winner - E_other); one-candidate positions add 0."""
    model, batch = problem(seed)
    out = lfr_loss(model, batch.feat, batch.mask, batch.winner)
    assert_close(
        float(out.loss.detach()), ref.lfr_loss(model.w.tolist(), model.v.tolist(), [batch])
    )


def fbt_data(truth: FactorizationBT, n_batches: int, batch_size: int, m: int, seed: int):
    """Positions of m random full teams (one level per group), the winner drawn
    from the true FBT softmax."""
    gen = torch.Generator().manual_seed(seed)
    sizes = [5, 5, 5, 5]
    offsets = [1 + 5 * g for g in range(4)]
    out = []
    for _ in range(n_batches):
        feat = torch.stack(
            [
                torch.randint(0, s, (batch_size, m), generator=gen) + o
                for s, o in zip(sizes, offsets, strict=True)
            ],
            dim=2,
        )
        mask = torch.ones(batch_size, m, dtype=torch.bool)
        with torch.no_grad():
            p = torch.softmax(truth.team_strength(feat), 1)
        winner = torch.multinomial(p, 1, generator=gen)[:, 0]
        zeros = torch.zeros(batch_size, dtype=torch.long)
        out.append(Batch(feat, mask, winner, zeros, zeros))
    return out


def mean_log_lik(model, data) -> float:
    with torch.no_grad():
        return sum(float(fbt_loss(model, b.feat, b.mask, b.winner).log_lik) for b in data) / sum(
            len(b) for b in data
        )


def test_training_recovers_interactions():
    """On data from a known FBT model (k = 2, strong interactions), SGD-trained FBT
    beats a model without interactions (k = 0, Bradley-Terry) on held-out
    log-likelihood, and comes within 0.02 nats per position of the true model."""
    truth = random_fbt(21, 2, seed=11, scale=0.8)
    train = fbt_data(truth, 20, 200, 10, seed=1)
    test = fbt_data(truth, 10, 200, 10, seed=2)
    cfg = SGDConfig(k=2, lr=0.05, epochs=15, batch_size=200, lambda_w=0, lambda_v=0, init_std=0.1)
    fbt, hist = train_sgd(cfg, train, TrainContext(21, [], "cpu", progress=False))
    bt, _ = train_sgd(
        SGDConfig(**{**vars(cfg), "k": 0}), train, TrainContext(21, [], "cpu", progress=False)
    )
    ll_truth, ll_fbt, ll_bt = (mean_log_lik(m, test) for m in (truth, fbt, bt))
    assert hist[-1]["log_likelihood"] > hist[0]["log_likelihood"]
    assert ll_fbt > ll_bt + 0.05, (ll_truth, ll_fbt, ll_bt)
    assert ll_fbt > ll_truth - 0.02, (ll_truth, ll_fbt, ll_bt)


@pytest.mark.parametrize("extra", [{}, {"sample": 4}, {"name": "lfr"}, {"optimizer": "sgd"}])
def test_same_config_same_model(extra):
    """Seeded: two runs of the same config give bitwise the same parameters."""
    groups = make_groups([3, 4, 2, 5])
    data = make_data(random_log_gamma(15, 0), groups, 4, 16, 9, seed=0)
    cfg = SGDConfig(k=3, epochs=2, batch_size=8, **extra)
    a, ha = train_sgd(cfg, data, TrainContext(15, [], "cpu", progress=False))
    b, hb = train_sgd(cfg, data, TrainContext(15, [], "cpu", progress=False))
    assert_close(a.v, b.v, rtol=0, atol=0)
    assert_close(a.w, b.w, rtol=0, atol=0)
    assert [h["loss"] for h in ha] == [h["loss"] for h in hb]


def test_init_from_mm_reproduces_mm():
    """With v = 0 and w = MM's log-gammas, FBT's probabilities are MM's; init 'mm'
    starts at the MM log-likelihood."""
    groups = make_groups([3, 4, 2, 5])
    lg = random_log_gamma(15, 6)
    data = make_data(lg, groups, 2, 16, 9, seed=6)
    fbt = init_from_mm(FactorizationBT(15, 4, init_std=0.0, dtype=F64), lg)
    mm = BradleyTerry(15, lg)
    for b in data:
        assert_close(fbt.log_probs(b.feat, b.mask), mm.log_probs(b.feat, b.mask))
    cfg = SGDConfig(k=2, epochs=0, init="mm", mm_iters=2, init_std=0.0)
    _, hist = train_sgd(cfg, data, TrainContext(15, groups, "cpu", progress=False))
    assert hist[0]["log_likelihood"] > -math.log(9)  # better than uniform over <= 9


def test_config_checks_and_schedules():
    """Bad names fail clearly; the schedules start at lr and end where they say."""
    with pytest.raises(ValueError, match="fbt only"):
        SGDConfig(name="lfr", sample=10).validate()
    with pytest.raises(ValueError, match="optimizer"):
        SGDConfig(optimizer="adagrad").validate()
    with pytest.raises(ValueError, match="unknown model"):
        trainer_of("fm")
    cos = SGDConfig(schedule="cosine", epochs=4)
    assert lr_factor(cos, 0) == 1.0 and lr_factor(cos, 2) == pytest.approx(0.5)
    assert lr_factor(cos, 4) == pytest.approx(0.0)
    step = SGDConfig(schedule="step", lr_step=2, lr_gamma=0.5)
    assert [lr_factor(step, e) for e in (0, 1.9, 2, 4.5)] == [1, 1, 0.5, 0.25]


@pytest.mark.parametrize(
    "overrides, name, k, sample",
    [
        (["model=fbt", "k=5"], "fbt", 5, 0),
        (["model=fbt", "k=10"], "fbt", 10, 0),
        (["model=fbt", "sample=10"], "fbt", 10, 10),
        (["model=fbt", "model.k=7", "k=3"], "fbt", 7, 0),
        (["model=lfr", "k=5"], "lfr", 5, 0),
    ],
)
def test_fbt_groups_compose(overrides, name, k, sample):
    """``python train.py model=fbt k=5`` works as written: the top-level k and
    sample reach the model group (an explicit model.k wins)."""
    cfg = cfg_of(overrides)
    assert (cfg.model.name, cfg.model.k, cfg.model.sample) == (name, k, sample)
    assert cfg.data.train  # the ${sample:NAME} resolver is not shadowed by `sample`


def test_fbt_typo_fails_clearly():
    from hydra.errors import ConfigCompositionException

    with pytest.raises(ConfigCompositionException, match="lamda_w"):
        cfg_of(["model=fbt", "model.lamda_w=0.1"])
    with pytest.raises(ConfigCompositionException, match="max_iterz"):
        cfg_of(["model=mm", "model.max_iterz=3"])


@pytest.mark.parametrize(
    "model, extra", [("fbt", []), ("lfr", []), ("fbt", ["model.flat=false", "sample=3"])]
)
def test_train_then_evaluate(games, tmp_path, model, extra):  # noqa: F811
    """A tiny run (the compiled engine, and the padded one) writes metrics.json,
    gammas.md (with |v|) and a checkpoint that rebuilds the model (same k) and
    scores the test set identically."""
    common = [
        *tiny_overrides(games, tmp_path),
        f"model={model}",
        "k=4",
        "model.epochs=2",
        "model.batch_size=64",
        *extra,
    ]
    out = tmp_path / "run"
    metrics = run(cfg_of(common), out)
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["model"] == model and saved["iterations"] == 2
    assert 0.0 <= saved["top1"] <= 1.0 and saved["log_evidence"] < 0
    assert "|v|" in (out / "gammas.md").read_text()
    state = load_checkpoint(out / "model.pt")
    assert state["model_name"] == model and state["model_args"] == {"k": 4}
    assert state["module"].k == 4
    assert [h["iter"] for h in state["history"]] == [0, 1, 2]
    again = evaluate_checkpoint(cfg_of([*common, f"checkpoint={out / 'model.pt'}"]), tmp_path / "e")
    assert again["top1"] == metrics["top1"]
    assert again["log_evidence"] == pytest.approx(metrics["log_evidence"], abs=1e-12)
    # a run of 0 epochs from that checkpoint starts (and ends) at the same w and v
    warm = [*common, f"model.init_checkpoint={out / 'model.pt'}", "model.epochs=0"]
    run(cfg_of(warm), tmp_path / "warm")
    warm_state = load_checkpoint(tmp_path / "warm" / "model.pt")["model"]
    for name in ("w", "v"):
        assert_close(warm_state[name], state["model"][name], rtol=0, atol=0)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(out / "tb"))
    events.Reload()
    for tag in ("train/loss", "train/log_likelihood", "time/seconds_per_epoch"):
        assert tag in events.Tags()["scalars"], tag


def test_auto_batch_size_scales_with_the_data():
    """batch_size=None: the largest power of two in [128, 1024] that keeps at least
    AUTO_STEPS steps an epoch (the sample keeps 128, 1,000 Tygem games take 1,024)."""
    assert SGDConfig().batch_size is None
    assert auto_batch_size(12_825) == 128  # the embedded sample
    assert auto_batch_size(219_176) == 1024  # 1,000 Tygem games
    assert auto_batch_size(108_000) == 512
    assert auto_batch_size(5_927_448) == 1024  # all training games: capped
    assert auto_batch_size(0) == 128
    for n in (1, 5_000, 51_199, 51_200, 102_400, 204_800, 10**7):
        b = auto_batch_size(n)
        assert b in (128, 256, 512, 1024)
        assert b == 128 or n // b >= AUTO_STEPS  # enough steps an epoch
        assert b == 1024 or n // (2 * b) < AUTO_STEPS  # the largest such
    resolved = SGDConfig(l2_positions=None).for_positions(219_176)
    assert resolved.batch_size == 1024 and resolved.lambda_w == SGDConfig().lambda_w
    assert SGDConfig(batch_size=64).for_positions(10**6).batch_size == 64  # given: kept
    with pytest.raises(ValueError, match="batch_size"):
        SGDConfig(batch_size=0).validate()
