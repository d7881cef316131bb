"""gomove.experiment.runs: launching a training run, reading its folder, the experiments' rows.

Invariants checked:
- the history rule: row 0 is the start, rows 1.. the iterations; per-iteration
  seconds read rows 1.. only, the trainer's total counts a timed row 0 (MM's
  and SGD's start pass; the rankers' row 0 is untimed), and CPU time is there
  only when every iteration has it;
- on real tiny runs (MM and FBT), the history read back through the
  checkpoint agrees with the run's metrics.json: its total wall time is
  ``algorithm_seconds``, its iterations ``iterations``; both trainers time
  their row 0;
- a folder that is not a run, or lacks a file, fails with an error naming
  the folder and the file;
- ``launch`` trains a run in its own process and returns its metrics.json; a
  failing run raises RunFailed with its log;
- bench's games come from --data, $GOMOVE_DATA or ../shared/data from the
  current directory, else the embedded sample with a note saying why;
- ``bench extract`` prints a row for every stage, the full extraction's and the
  dataset build's against the per-core target;
- the experiments' rows load from gomove/configs/experiment (results_table's
  rows as they were as a Python list); an unknown name fails naming the
  known ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from synthetic import tiny_overrides

from gomove.bench.common import DATA_ENV, bench_config, games_path, load_games
from gomove.bench.extraction import bench_extract
from gomove.data.extractor import FeatureExtractor
from gomove.experiment.runs import (
    History,
    RunFailed,
    experiment_names,
    finished,
    launch,
    load_experiment,
    read_history,
    read_metrics,
    read_positions,
)
from gomove.features.config import FeatureConfig
from gomove.models.checkpoint import save_checkpoint
from gomove.models.mm import BradleyTerry
from gomove.samples import sample_path

MM_ROWS = [  # gomove.train.mm.loop: row 0 the timed start pass
    {"iter": 0, "seconds": 0.5, "cpu_seconds": 0.25},
    {"iter": 1, "seconds": 1.0, "cpu_seconds": 0.75},
    {"iter": 2, "seconds": 2.0, "cpu_seconds": 1.5},
]
RANKER_ROWS = [  # gomove.train.rankers.fit: row 0 untimed
    {"iter": 0, "positions": 0},
    {"iter": 1, "positions": 10, "seconds": 3.0, "cpu_seconds": 2.0},
]


def test_history_rule():
    mm = History(MM_ROWS)
    assert mm.start == MM_ROWS[0] and mm.iterations == MM_ROWS[1:]
    assert mm.seconds() == [1.0, 2.0]  # per iteration: the start left out
    assert mm.cpu_seconds() == [0.75, 1.5]
    assert mm.trainer_seconds() == (3.5, 2.5)  # the trainer's total: the start counts
    ranker = History(RANKER_ROWS)
    assert ranker.seconds() == [3.0]
    assert ranker.trainer_seconds() == (3.0, 2.0)
    # an iteration without CPU time: no CPU figure; a start timed without CPU counts its wall
    no_cpu = History([{"iter": 0, "seconds": 0.5}, {"iter": 1, "seconds": 1.0}])
    assert no_cpu.cpu_seconds() is None and no_cpu.trainer_seconds() == (1.5, None)
    wall_start = History([{"iter": 0, "seconds": 0.5}, {"iter": 1, "seconds": 1, "cpu_seconds": 1}])
    assert wall_start.trainer_seconds() == (1.5, 1.5)
    # only the start: no iteration, so no CPU figure (and no per-iteration seconds)
    start_only = History(MM_ROWS[:1])
    assert start_only.seconds() == [] and start_only.trainer_seconds() == (0.5, None)
    assert History([]).trainer_seconds() == (0.0, None)


def fake_run(run, history):
    """A finished run folder: metrics.json, positions.npz and a checkpoint (tactical
    features, a gamma-1 MM model) holding history."""
    run.mkdir(parents=True)
    (run / "metrics.json").write_text(json.dumps({"top1": 0.25, "iterations": 2}))
    np.savez(run / "positions.npz", rank=np.array([1, 3]), game=np.array([0, 0]))
    ex = FeatureExtractor(FeatureConfig(shapes=False))
    model = BradleyTerry(ex.registry.n_features)
    save_checkpoint(run / "model.pt", model, ex, {"model": {"name": "mm"}}, history)


def test_read_a_run(tmp_path):
    run = tmp_path / "run"
    fake_run(run, MM_ROWS)
    assert finished(run)
    assert read_metrics(run) == {"top1": 0.25, "iterations": 2}
    np.testing.assert_array_equal(read_positions(run)["rank"], [1, 3])
    history = read_history(run)
    assert history.rows == MM_ROWS
    assert len(history.iterations) == read_metrics(run)["iterations"]


def test_missing_run_says_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="no training run at .*nowhere.*does not exist"):
        read_metrics(tmp_path / "nowhere")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "metrics.json").write_text("{}")
    assert not finished(tmp_path / "half")
    with pytest.raises(FileNotFoundError, match="half has no model.pt: not a finished"):
        read_history(tmp_path / "half")
    with pytest.raises(FileNotFoundError, match="half has no positions.npz"):
        read_positions(tmp_path / "half")


@pytest.fixture(scope="module")
def launched(games, tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    """Tiny MM and FBT runs on random 9x9 games, each launched in a process of its own:
    {model: (run folder, the metrics launch returned)}."""
    root = tmp_path_factory.mktemp("launched")
    base = tiny_overrides(games, root)  # one cache: the second run reuses the extraction
    out = {}
    for name, extra in (
        ("mm", ["model.max_iters=1"]),
        ("fbt", ["model=fbt", "k=2", "model.epochs=1"]),
    ):
        out[name] = (
            root / name,
            launch([*base, *extra], root / name, env={"NUMBA_NUM_THREADS": "1"}),
        )
    return out


def test_launch_trains_in_its_own_process(launched):
    for run, metrics in launched.values():
        assert metrics == read_metrics(run) and metrics["iterations"] == 1
        assert finished(run) and (run / "train.log").stat().st_size > 0
        assert (run / ".hydra" / "config.yaml").exists()


def test_launch_failure_raises_with_the_log(tmp_path):
    with pytest.raises(RunFailed, match=r"(?s)bad failed \(exit 1\).*no_such_key") as e:
        launch(["no_such_key=1"], tmp_path / "bad")
    assert e.value.returncode == 1 and e.value.log_path == tmp_path / "bad" / "train.log"


def test_real_histories_agree_with_metrics(launched):
    """Through the checkpoint and by the rule, a real MM and FBT history gives the
    run's metrics.json algorithm_seconds (every row) and iterations (rows 1..)."""
    for run, metrics in launched.values():
        history = read_history(run)
        assert {"seconds", "cpu_seconds"} <= history.start.keys()  # both time their start
        assert len(history.iterations) == metrics["iterations"] == 1
        wall, cpu = history.trainer_seconds()
        assert wall == pytest.approx(metrics["algorithm_seconds"])
        assert wall == pytest.approx(history.start["seconds"] + sum(history.seconds()))
        assert cpu == pytest.approx(history.start["cpu_seconds"] + sum(history.cpu_seconds()))


def test_experiments_load():
    assert {"compare", "results_table"} <= set(experiment_names())
    rows = [(r.name, list(r.overrides)) for r in load_experiment("results_table").rows]
    assert rows == [  # the rows as they were as a Python list in scripts/results_table.py
        ("MM", ["model=mm"]),
        ("FBT k=5", ["model=fbt", "k=5"]),
        ("FBT k=10", ["model=fbt", "k=10"]),
        ("LFR k=5", ["model=lfr", "k=5"]),
        ("LFR k=10", ["model=lfr", "k=10"]),
        ("FBT k=10, S=5", ["model=fbt", "k=10", "sample=5"]),
        ("FBT k=10, S=10", ["model=fbt", "k=10", "sample=10"]),
        ("FBT k=10, S=20", ["model=fbt", "k=10", "sample=20"]),
        ("FBT k=10, S=30", ["model=fbt", "k=10", "sample=30"]),
        ("FBT k=10, padded", ["model=fbt", "k=10", "model.flat=false"]),
        ("FBT k=10, S=30, padded", ["model=fbt", "k=10", "sample=30", "model.flat=false"]),
    ]
    with pytest.raises(ValueError, match="unknown experiment 'nope'.*known experiments: .*compare"):
        load_experiment("nope")


def test_bench_data_folder(tmp_path, monkeypatch):
    """bench's games: --data, else $GOMOVE_DATA, else ../shared/data from the current
    directory (never from the package's place); the embedded sample, said, without it."""
    monkeypatch.delenv(DATA_ENV, raising=False)
    archive = str(bench_config().archive)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    path, why = games_path()
    assert path == sample_path("gnugo-train") and "../shared/data" in why
    shared = tmp_path / "shared" / "data"
    shared.mkdir(parents=True)
    (shared / archive).write_bytes(b"")
    assert games_path() == (str(Path("../shared/data") / archive), None)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv(DATA_ENV, str(elsewhere))
    assert games_path()[0] == sample_path("gnugo-train")  # the variable wins, lacking it
    (elsewhere / archive).write_bytes(b"")
    assert games_path() == (str(elsewhere / archive), None)
    assert games_path(str(shared)) == (str(shared / archive), None)  # a folder with it
    assert games_path("games.zip") == ("games.zip", None)  # any other path as it is


def test_bench_extract_rows():
    """bench extract on 4 sample games: one row per stage in order, each with its
    positions and rates; the full extraction (one process and every core) and the dataset
    build carry the per-core target."""
    path = sample_path("gnugo-train")
    games = load_games(path, 4, superko=True)
    rows = bench_extract(games, games, min_count=2, workers=2, path=path)
    stages = ["harvest", "parse", "read", "replay", "legal", "tactical", "shapes", "full",
              "encode", "full", "dataset"]  # fmt: skip
    assert [r["stage"] for r in rows] == stages
    assert all(r["bench"] == "extract" and r["positions"] > 0 for r in rows)
    assert all(r["positions_per_s"] > 0 and r["us_per_position"] > 0 for r in rows)
    target = bench_config().targets.extract_positions_per_s_per_core
    for r in rows:
        if r["stage"] in ("full", "dataset"):
            assert r["target_per_core"] == target and r["ok"] == (r["per_core"] >= target)
    assert [r["processes"] for r in rows[-3:]] == [1, 2, 2]
    assert rows[-1]["games"] == 4 and rows[-1]["positions"] == rows[-2]["positions"]
