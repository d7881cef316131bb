"""``gomove train model=territory`` and ``gomove territory compare`` end to end on the
embedded GNU Go sample.

Invariants checked:
- the config composes (model=territory in the one tree of gomove train) and a misspelt
  key fails; ``gomove territory train`` is an alias that says so;
- a run on the sample's labelled games writes crf.pt (loadable), metrics.json with the
  measures at every move number, the plots and TensorBoard events;
- the same config gives the same model;
- compare measures several predictors on the same positions and writes its table.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from hydra.errors import ConfigCompositionException
from synthetic import cfg_of

from gomove.board.board import BLACK, board_from_points
from gomove.cli.territory import main as territory_main
from gomove.data.territory_labels import territory_dataset, territory_from_dead
from gomove.evaluate.territory_measures import (
    MOVES,
    OwnerScores,
    counted_score,
    crf_counter,
    crf_predictor,
)
from gomove.experiment.territory_compare import compare_methods, playout_predictor
from gomove.models.territory.crf import TerritoryCRF
from gomove.models.territory.judge import StringJudge
from gomove.samples import sample_path
from gomove.train.trainers import run


def territory_cfg(overrides: list[str]):
    return cfg_of(["model=territory", *overrides])


def tiny(tmp_path, extra: list[str] = ()) -> list[str]:
    return [
        "data=sample",
        "data.max_games=12",
        "data.max_test_games=4",
        f"data.cache_dir={tmp_path / 'cache'}",
        "progress=false",
        "model.epochs=1",
        "model.pl_epochs=1",
        "model.every=8",
        "model.eval_sweeps=20",
        "model.max_eval_positions=20",
        *extra,
    ]


def test_config_composes_and_typos_fail():
    cfg = territory_cfg(["data=tygem", "seed=4"])
    assert cfg.model.name == "territory" and cfg.model.features == "rmc16"
    assert cfg.model.seed == cfg.seed == 4
    with pytest.raises(ConfigCompositionException, match="epoch"):
        territory_cfg(["model.epoch=3"])


@pytest.mark.parametrize(
    "extra", [[], ["model.method=ml", "model.features=wide"]], ids=["default", "ml"]
)
def test_train_writes_a_model_and_its_measures(tmp_path, extra):
    out = tmp_path / "run"
    metrics = run(territory_cfg(tiny(tmp_path, extra)), out)
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["train"]["labelled"] > 0 and saved["test"]["labelled"] > 0
    crf_res = saved["results"]["crf"]
    assert set(crf_res["by_move"]) == {str(m) for m in MOVES}
    assert 0.5 < crf_res["all"]["accuracy"] <= 1.0  # better than a coin on GNU Go's games
    assert len(crf_res["calibration"]) == 10
    for name in ("crf.pt", "summary.txt", "calibration.png", "by_move.png", "train_state.pt"):
        assert (out / name).exists(), name
    assert any((out / "tb").iterdir())
    assert saved["attempts"] == 1 and saved["fit_seconds"] > 0 and "this_attempt" not in saved
    crf = TerritoryCRF.load(out / "crf.pt")
    assert crf.meta["train_games"] == metrics["train"]["labelled"]
    assert crf.judge is not None and crf.judge.playouts == 256  # the dead strings' judge
    again = run(territory_cfg(tiny(tmp_path, extra)), tmp_path / "again")
    for key in ("accuracy", "mse", "score_abs_err"):  # all but the timings
        assert again["results"]["crf"]["all"][key] == crf_res["all"][key]
    assert again["results"]["crf"]["calibration"] == crf_res["calibration"]
    back = TerritoryCRF.load(tmp_path / "again" / "crf.pt")
    torch.testing.assert_close(back.field, crf.field)
    np.testing.assert_array_equal(back.judge.weights, crf.judge.weights)
    # resumed after its last epoch: the same model, the cost over both attempts
    resumed = run(territory_cfg([*tiny(tmp_path, extra), "resume=true"]), out)
    assert resumed["attempts"] == 2 and resumed["spent_known"]
    assert resumed["fit_seconds"] >= resumed["this_attempt"]["fit_seconds"]
    assert resumed["results"]["crf"]["all"]["accuracy"] == crf_res["all"]["accuracy"]


def test_compare_measures_every_predictor_on_the_same_positions(tmp_path):
    data = territory_dataset(sample_path("gnugo-test"), tmp_path / "cache", max_games=4)
    crf = TerritoryCRF("stern")
    with torch.no_grad():
        crf.field.copy_(torch.tensor([0, 0, 0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0]))
        crf.coupling.fill_(0.4)
    crf.judge = StringJudge(np.array([50.0, 0, 0, 0, 0, 0, 0]), 4)  # every string dead
    results = compare_methods(
        {"crf": crf_predictor(crf, 20), "8 playouts": playout_predictor(8)},
        data,
        tmp_path / "cmp",
        limit=2,
        progress=False,
        counters={"crf": crf_counter(crf)},
    )
    assert results["crf"]["all"]["positions"] == results["8 playouts"]["all"]["positions"] > 0
    # the crf's count goes through its judge: every string dead leaves an empty board,
    # counted -komi, so its error is the labelled area score |sum of the owners|
    idx = data.at_move("last")[:2]
    want = np.mean([abs(float(data.owner[data.game[p]].sum())) for p in idx])
    last = results["crf"]["by_move"]["last"]
    assert last["counted_abs_err"] == pytest.approx(want) and last["ms_per_count"] > 0
    for res in results.values():
        assert np.isfinite(res["all"]["mse"]) and 0 <= res["all"]["accuracy"] <= 1
    table = (tmp_path / "cmp" / "results.md").read_text()
    assert "8 playouts" in table and "accuracy" in table
    assert (tmp_path / "cmp" / "calibration.png").exists()


def test_train_alias_runs_gomove_train(tmp_path, capsys, monkeypatch):
    """``gomove territory train territory.KEY=V`` runs ``gomove train model=territory
    model.KEY=V`` and says so on stderr."""
    monkeypatch.chdir(tmp_path)
    args = [a.replace("model.", "territory.") for a in tiny(tmp_path)]
    assert territory_main(["train", *args, f"hydra.run.dir={tmp_path / 'alias'}"]) == 0
    assert "alias: running gomove train model=territory" in capsys.readouterr().err
    assert TerritoryCRF.load(tmp_path / "alias" / "crf.pt").meta["features"] == "rmc16"


def test_cli_reports_bad_input_clearly(tmp_path, capsys):
    assert territory_main(["sideways"]) == 2
    with pytest.raises(SystemExit, match="not a territory model"):
        bad = tmp_path / "bad.pt"
        bad.write_bytes(b"nope")
        territory_main(["compare", "--crf", str(bad), "--data", sample_path("gnugo-test")])


def test_owner_scores_by_hand():
    """The measures on two hand-made positions: accuracy over owned points (a zero
    prediction is wrong), squared error with dame at 0, and the score within 2 points."""
    scores = OwnerScores()
    owner = np.array([1, 1, -1, 0], np.int8)  # area score 1 - komi 0.5 = 0.5
    scores.add(np.array([0.9, 0.0, -0.5, 0.2]), owner, score=0.5 + 2.0, komi=0.5, counted=0.5)
    scores.add(np.array([0.9, -0.1, -0.5, 0.2]), owner, score=0.5 - 2.5, komi=0.5, counted=3.5)
    out = scores.summary()
    assert out["accuracy"] == pytest.approx(4 / 6)
    sq = (0.01 + 1 + 0.25 + 0.04) + (0.01 + 1.21 + 0.25 + 0.04)
    assert out["mse"] == pytest.approx(sq / 8)
    assert out["score_abs_err"] == pytest.approx(2.25)
    assert out["score_within_2"] == pytest.approx(0.5)
    assert out["counted_abs_err"] == pytest.approx(1.5)
    assert out["counted_within_2"] == pytest.approx(0.5)


def test_counted_score_removes_the_strings_judged_dead():
    """A finished 5x5 game with a dead white string in black's area: the counted score
    with the map's judgement (the string dead though one of its stones looks alive)
    equals the labels' count with that string removed, and with every stone judged
    alive the string's points count for white."""
    rows = ["X X O . .", "X O O . .", "X X X X X", "O O O O O", ". . . . ."]
    size, komi = 5, 0.5
    points = np.array([{"X": 1, "O": -1, ".": 0}[c] for r in rows for c in r.split()], np.int8)
    expected = points.astype(float)
    expected[[2, 6, 7]] = [0.4, -0.2, -0.1]  # white C5, B4, C4: mean leans to black
    expected[[3, 4, 8, 9]] = 0.9  # black owns the corner's empty points
    dead = np.zeros(size * size, bool)
    dead[[2, 6, 7]] = True
    board = board_from_points(points, size, BLACK)
    want = territory_from_dead(board, komi, 0, 0, dead.reshape(size, size)).area - komi
    assert counted_score(points, 1, size, komi, expected) == want == 15 - 10 - komi
    alive = np.sign(points).astype(float)
    assert counted_score(points, 1, size, komi, alive) == 8 - 13 - komi
