"""SGD runs that keep their best validation epoch (model.keep_best).

Invariants checked:
- keep_best="top1" returns the parameters the model had at the epoch (the start
  included) with the highest validation top-1, the earliest of equal ones, and
  names it in the last history row as kept_iter; "log_evidence" goes by that
  measure instead; None returns the last epoch, as before;
- a run stopped after its best epoch and resumed keeps that epoch (the best
  parameters travel in the train state);
- keep_best without validation data, with an unknown measure, or under torchrun (where
  rank 0 alone validates) is refused;
- keep_best (as calibrate) without data.val fails when the config is read, before any
  extraction;
- end to end, metrics.json names the kept epoch.
"""

from __future__ import annotations

import json

import pytest
import torch
from synthetic import cfg_of, flat_of, make_data, make_groups, random_log_gamma, tiny_overrides

from gomove.evaluate.measures import validator
from gomove.train.context import TrainContext
from gomove.train.resume import Resume
from gomove.train.schemas import SGDConfig
from gomove.train.sgd.loop import train_sgd
from gomove.train.trainers import model_config, run
from gomove.train.world import World

GROUPS = make_groups([5, 30, 3, 12])
N_FEATURES = 51
TOP1 = [0.1, 0.3, 0.5, 0.5, 0.2]  # epochs 0..4: the best twice, the first at 2
LOG_EV = [-3.0, -1.0, -2.0, -2.5, -2.9]  # best at 1


class Crash(Exception):
    """Stands for the process dying between two epochs."""


@pytest.fixture(scope="module")
def data():
    truth = random_log_gamma(N_FEATURES, 1)
    train = make_data(truth, GROUPS, 6, 40, 12, 2)
    val = make_data(truth, GROUPS, 2, 40, 12, 3)
    return flat_of(train, GROUPS), validator(val)


def scripted(real, first: int = 0, crash_at: int | None = None):
    """A validate returning TOP1/LOG_EV for the epochs from ``first`` on (the real
    validation runs too, its figures replaced), copying the model's parameters at each
    call; raising Crash at epoch ``crash_at``, before that epoch is saved."""
    seen: list[dict[str, torch.Tensor]] = []

    def validate(log_probs):
        epoch = first + len(seen)
        if epoch == crash_at:
            raise Crash
        real(log_probs)
        model = log_probs.__self__
        seen.append({k: v.detach().clone() for k, v in model.state_dict().items()})
        return {"top1": TOP1[epoch], "log_evidence": LOG_EV[epoch]}

    validate.seen = seen
    return validate


def same(model, params) -> bool:
    return torch.equal(model.w, params["w"]) and torch.equal(model.v, params["v"])


@pytest.mark.parametrize("measure, want", [("top1", 2), ("log_evidence", 1), (None, 4)])
def test_keeps_the_best_epoch(data, measure, want):
    flat, real = data
    validate = scripted(real)
    cfg = SGDConfig(epochs=4, batch_size=16, k=3, lr=0.05, keep_best=measure)
    model, history = train_sgd(
        cfg, flat, TrainContext(N_FEATURES, [], validate=validate, progress=False)
    )
    assert len(validate.seen) == 5
    assert same(model, validate.seen[want])
    assert not same(model, validate.seen[4 if want != 4 else 3])
    assert history[-1].get("kept_iter") == (None if measure is None else want)


def test_resumed_run_keeps_the_best_before_the_stop(data, tmp_path):
    flat, real = data
    cfg = SGDConfig(epochs=4, batch_size=16, k=3, lr=0.05, keep_best="top1")
    want, want_hist = train_sgd(
        cfg, flat, TrainContext(N_FEATURES, [], validate=scripted(real), progress=False)
    )
    ck = Resume(tmp_path / "state.pt", resume=True)
    with pytest.raises(Crash):
        train_sgd(
            cfg,
            flat,
            TrainContext(
                N_FEATURES, [], validate=scripted(real, crash_at=4), progress=False, checkpoint=ck
            ),
        )
    got, got_hist = train_sgd(
        cfg,
        flat,
        TrainContext(
            N_FEATURES, [], validate=scripted(real, first=4), progress=False, checkpoint=ck
        ),
    )
    assert torch.equal(got.w, want.w) and torch.equal(got.v, want.v)
    assert got_hist[-1]["kept_iter"] == want_hist[-1]["kept_iter"] == 2


def test_refused_without_validation_or_measure(data):
    flat, real = data
    with pytest.raises(ValueError, match="data.val"):
        train_sgd(
            SGDConfig(epochs=1, keep_best="top1"),
            flat,
            TrainContext(N_FEATURES, [], progress=False),
        )
    with pytest.raises(ValueError, match="keep_best"):
        SGDConfig(keep_best="top5").validate()
    with pytest.raises(ValueError, match="torchrun"):  # rank 0 alone validates
        train_sgd(
            SGDConfig(epochs=1, keep_best="top1"),
            flat,
            TrainContext(
                N_FEATURES, [], validate=real, progress=False, world=World(rank=0, size=2)
            ),
        )


def test_metrics_name_the_kept_epoch(games, tmp_path):
    train, _ = games
    cfg = cfg_of([*tiny_overrides(games, tmp_path), "model=fbt", "k=2", "model.epochs=3",
                  f"data.val={train}", "model.keep_best=log_evidence"])  # fmt: skip
    metrics = run(cfg, tmp_path / "run")
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert saved["kept_iter"] == metrics["kept_iter"]
    assert 0 <= saved["kept_iter"] <= 3


@pytest.mark.parametrize(
    "override, why",
    [("model.keep_best=log_evidence", "keep_best"), ("model.calibrate=true", "temperature")],
)
def test_config_without_validation_fails_before_the_data(override, why):
    cfg = cfg_of(["model=fbt", override])  # the embedded sample: data.val is null
    assert cfg.data.val is None
    with pytest.raises(ValueError, match=f"{why}.*set data.val"):
        model_config(cfg)
    assert model_config(cfg_of(["model=fbt", override, "data.val=${sample:gnugo-test.zip}"]))
