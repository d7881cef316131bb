"""gomove.experiment.compare: the comparison paper's tables and figures from finished runs.

Invariants checked:
- the cumulative rank distribution counts ranks <= n;
- the bootstrap differences to PR equal a slow loop over the same draws of
  games (paired), the point estimate is the plain difference, and PR's own
  difference is exactly 0;
- from run folders holding metrics.json, positions.npz and a checkpoint
  (save_checkpoint, with a history; no training), ``compare`` writes Table I,
  the log-evidence, time and memory tables and every figure (5, 6, 7, 8 per
  size, 10); the time is the trainer's, its start row included where timed;
- the systems of gomove/configs/experiment/compare.yaml are the comparison's
  (names, labels and overrides, in order); an unknown system fails before any
  run; ``NAME+small`` adds the small features;
- a finished run whose saved model settings differ from today's is found out
  (so it is trained again rather than reused).
"""

from __future__ import annotations

import json
from functools import cache

import numpy as np
import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from gomove.data.extractor import FeatureExtractor
from gomove.experiment.compare import (
    Plan,
    baseline,
    bootstrap_differences,
    compare,
    cumulative,
    run_dir,
    system,
    systems,
)
from gomove.experiment.runs import changed_settings
from gomove.features.config import FeatureConfig
from gomove.models.checkpoint import save_checkpoint
from gomove.models.mm import BradleyTerry
from gomove.train.trainers import register


@cache
def tactical() -> FeatureExtractor:
    """The features of the fake runs' checkpoints."""
    return FeatureExtractor(FeatureConfig(shapes=False))


def test_cumulative():
    rank = np.array([1, 1, 2, 5, 40])
    c = cumulative(rank, max_rank=5)
    np.testing.assert_allclose(c, [0.4, 0.6, 0.6, 0.6, 0.8])


def test_bootstrap_equals_a_slow_loop():
    rng = np.random.default_rng(1)
    game = np.repeat(np.arange(7), rng.integers(1, 9, 7))
    ranks = {n: rng.integers(1, 40, len(game)) for n in ("pr", "a", "b")}
    got = bootstrap_differences(ranks, game, "pr", n_boot=50, seed=3)
    # the same draws, by a loop over them
    draws = np.random.default_rng(3).multinomial(7, np.full(7, 1 / 7), size=50)
    for name in ranks:
        boot = []
        for counts in draws:
            idx = np.concatenate(
                [np.flatnonzero(game == g).repeat(c) for g, c in enumerate(counts)]
            )
            boot.append(cumulative(ranks[name][idx]) - cumulative(ranks["pr"][idx]))
        diff, lo, hi = got[name]
        np.testing.assert_allclose(diff, cumulative(ranks[name]) - cumulative(ranks["pr"]))
        np.testing.assert_allclose(lo, np.percentile(boot, 2.5, axis=0))
        np.testing.assert_allclose(hi, np.percentile(boot, 97.5, axis=0))
    assert not got["pr"][0].any() and not got["pr"][1].any()


def fake_run(plan: Plan, name: str, size: int, rng) -> None:
    """A finished run folder: metrics.json, positions.npz, a checkpoint with a history."""
    out = run_dir(plan, name, size)
    out.mkdir(parents=True)
    n = 300
    game = np.repeat(np.arange(10), 30)
    rank = rng.integers(1, 60, n)
    (out / "metrics.json").write_text(
        json.dumps(
            {
                "top1": float(np.mean(rank == 1)),
                "log_evidence": -3.0,
                "train_games": size,
                "train_positions": 200 * size,
                "train_seconds": 2.0,
                "peak_rss_mb": 1000.0,
                "n_positions": n,
            }
        )
    )
    np.savez(
        out / "positions.npz",
        rank=rank,
        n_legal=np.full(n, 200),
        game=game,
        move=np.tile(np.arange(0, 300, 10), 10),
        radius=rng.integers(0, 11, n),
        log_p=np.full(n, -3.0),
    )
    hist = [{"seconds": 0.5}, {"seconds": 1.0}]
    if name == "bar":  # a trainer that records CPU time: that is the figure then
        hist = [
            {"iter": 0},
            {"seconds": 1.0, "cpu_seconds": 0.25},
            {"seconds": 1.0, "cpu_seconds": 0.5},
        ]
    ex = tactical()
    model = BradleyTerry(ex.registry.n_features)
    save_checkpoint(out / "model.pt", model, ex, {"model": {"name": "mm"}}, hist)


def test_compare_writes_tables_and_figures(tmp_path):
    plan = Plan(out=tmp_path, systems=["mm", "pr", "bar"], sizes=[10, 20], bootstrap=20)
    rng = np.random.default_rng(0)
    for name in plan.systems:
        for size in plan.sizes:
            fake_run(plan, name, size, rng)
    table = compare(plan)
    assert table["mm"][20]["seconds_per_game"] == pytest.approx(1.5 / 20)  # wall: no CPU
    assert table["bar"][20]["seconds_per_game"] == pytest.approx(0.75 / 20)
    assert table["bar"][20]["seconds_are_cpu"] and not table["mm"][20]["seconds_are_cpu"]
    md = (tmp_path / "comparison.md").read_text()
    assert "Table I" in md and "Log-evidence" in md and "Bayesian Approximation Ranking" in md
    assert "| Minorization-Maximization | 0.1500* | 0.0750* |" in md
    for size in plan.sizes:
        for fig in (
            "fig5_cumulative",
            "fig6_difference_to_pr",
            "fig7_rank_error",
            "fig8_pattern_size",
        ):
            assert (tmp_path / f"{fig}_{size}.png").stat().st_size > 0
            assert f"{fig}_{size}.png" in md
    assert (tmp_path / "fig10_time_per_game.png").exists()
    assert json.loads((tmp_path / "comparison.json").read_text())["pr"]["10"]["train_games"] == 10


def test_systems():
    # the comparison's rows as they were when they were Python lists (compare.SYSTEMS)
    assert {n: (s.label, s.overrides) for n, s in systems().items()} == {
        "mm": ("Minorization-Maximization", ["model=mm"]),
        "lbr": ("Loopy Bayesian Ranking", ["model=lbr"]),
        "bar": ("Bayesian Approximation Ranking", ["model=bar"]),
        "pr": ("Probabilistic Ranking", ["model=pr"]),
        "fbt": ("Factorization Bradley-Terry", ["model=fbt"]),
        "lfr": ("Latent Factor Ranking", ["model=lfr"]),
    }
    assert list(systems()) == ["mm", "lbr", "bar", "pr", "fbt", "lfr"]
    assert baseline() == "pr"
    assert system("lbr").overrides == ["model=lbr"]
    small = system("bar+small")
    assert small.overrides == ["model=bar", "features.small=true"]
    assert small.label == "Bayesian Approximation Ranking + small features"
    with pytest.raises(ValueError, match="unknown system 'nope'"):
        compare(Plan(out=None, systems=["nope"], sizes=[1]))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown experiment 'nope'.*compare"):
        system("mm", experiment="nope")


def test_changed_settings_find_a_changed_default(tmp_path):
    overrides = [*system("lbr").overrides, "data=sample", "data.max_games=30", "hydra.run.dir=x"]
    register()
    with initialize_config_module(config_module="gomove.configs", version_base="1.3"):
        cfg = compose("config", overrides[:-1])
    run = tmp_path / "run"
    (run / ".hydra").mkdir(parents=True)
    OmegaConf.save(cfg, run / ".hydra" / "config.yaml")
    assert changed_settings(run, overrides) == []
    cfg.model.shuffle = not cfg.model.shuffle  # as if trained before a default changed
    cfg.model.ep_iters += 1
    OmegaConf.save(cfg, run / ".hydra" / "config.yaml")
    assert changed_settings(run, overrides) == ["ep_iters", "shuffle"]
    assert changed_settings(tmp_path / "never-run", overrides) == []
