"""Config groups and one tiny end-to-end training run.

Invariants checked:
- every config group composes with the schema, and a misspelt key fails at once;
- train -> checkpoint -> gomove evaluate gives the same test metrics;
- the run directory holds metrics.json (the keys the papers' comparison needs),
  the plots, the gamma table and TensorBoard events;
- the same config gives the same model (seeded, deterministic).
"""

from __future__ import annotations

import json

import pytest
import torch
from hydra.errors import ConfigCompositionException
from synthetic import cfg_of, tiny

from gomove.evaluate.saved_model import evaluate_checkpoint
from gomove.models.checkpoint import load_checkpoint
from gomove.train.trainers import run


@pytest.mark.parametrize("data", ["sample", "tygem"])
@pytest.mark.parametrize("features", ["full", "tactical", "light"])
@pytest.mark.parametrize("model", ["mm"])
def test_groups_compose(data, features, model):
    cfg = cfg_of([f"data={data}", f"features={features}", f"model={model}"])
    assert cfg.data.name == data and cfg.features.name == features
    assert cfg.model.name == model
    assert cfg.features.superko == cfg.data.superko


def test_typo_fails_clearly():
    with pytest.raises(ConfigCompositionException, match="max_gams"):
        cfg_of(["data.max_gams=3"])


def test_train_then_evaluate(games, tmp_path):
    cfg = tiny(games, tmp_path)
    out = tmp_path / "run"
    metrics = run(cfg, out)
    saved = json.loads((out / "metrics.json").read_text())
    for key in (
        "top1",
        "topn",
        "log_evidence",
        "n_positions",
        "n_games",
        "train_seconds",
        "phase",
        "peak_rss_mb",
    ):
        assert key in saved
    assert saved["n_games"] == 3 and saved["n_positions"] == 180
    assert 0.0 <= saved["top1"] <= 1.0 and saved["log_evidence"] < 0
    for name in ("model.pt", "gammas.md", "cumulative_rank.png", "phase_log_evidence.png"):
        assert (out / name).exists(), name
    assert any((out / "tb").iterdir())
    state = load_checkpoint(out / "model.pt")
    assert state["extractor"].registry.n_features == saved["n_features"]
    again = evaluate_checkpoint(
        tiny(games, tmp_path, [f"checkpoint={out / 'model.pt'}"]), tmp_path / "eval"
    )
    assert again["top1"] == pytest.approx(metrics["top1"])
    assert again["log_evidence"] == pytest.approx(metrics["log_evidence"])


def test_same_config_same_model(games, tmp_path):
    cfg = tiny(games, tmp_path, ["model.flat=false"])
    run(cfg, tmp_path / "a")
    run(cfg, tmp_path / "b")
    a = load_checkpoint(tmp_path / "a" / "model.pt")["model"]["log_gamma"]
    b = load_checkpoint(tmp_path / "b" / "model.pt")["model"]["log_gamma"]
    torch.testing.assert_close(a, b, rtol=0, atol=0)
