"""scripts/learning_curve.py's driver, with train.py replaced by a stand-in: the rows'
overrides, the order of the runs, finished runs skipped, unfinished ones resumed, and
each size's dataset caches removed once no later row of the size reads them."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "learning_curve.py"


def load_script():
    spec = importlib.util.spec_from_file_location("learning_curve", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_overrides_in_memory_and_in_chunks(tmp_path):
    lc = load_script()
    cfg = lc.load_experiment("learning_curve")
    mm = next(r for r in cfg.rows if r.name == "MM")
    small = lc.overrides_of(list(mm.overrides), 5000, cfg, tmp_path, [])
    assert "data.max_games=5000" in small and "data.chunk_positions=null" in small
    large = lc.overrides_of(list(mm.overrides), max(cfg.sizes), cfg, tmp_path, ["x=1"])
    assert "data.max_games=null" in large and "data.chunk_positions=null" not in large
    assert f"model.warm_positions={cfg.warm_positions}" in large and large[-1] == "x=1"
    names = [lc.features_of(r) for r in cfg.rows]
    # rows that share a dataset are next to each other: each cache is one run of rows
    runs = [n for i, n in enumerate(names) if i == 0 or names[i - 1] != n]
    assert len(runs) == len(set(runs)) == 2


def test_run_skips_resumes_and_removes_caches(tmp_path, monkeypatch):
    lc = load_script()
    cfg = lc.load_experiment("learning_curve")
    out = tmp_path / "curve"
    done = out / "5000" / lc.row_folder("MM")
    done.mkdir(parents=True)
    (done / "metrics.json").write_text("{}")
    np.savez(done / "positions.npz", rank=np.zeros(1))
    killed = out / "5000" / lc.row_folder("FBT k=10")
    killed.mkdir(parents=True)
    (killed / lc.TRAIN_STATE).write_bytes(b"state")
    calls = []

    def fake_launch(overrides, run, log_path, cwd):
        cache = Path(next(o for o in overrides if o.startswith("data.cache_dir="))[15:])
        cache.mkdir(parents=True, exist_ok=True)
        calls.append((run.parent.name, run.name, "resume=true" in overrides, cache.name,
                      sorted(p.name for p in run.parent.glob("cache-*"))))  # fmt: skip
        run.mkdir(parents=True, exist_ok=True)
        (run / "metrics.json").write_text(json.dumps({"top1": 0.4, "log_evidence": -2.5}))
        np.savez(run / "positions.npz", rank=np.zeros(1))
        return {"top1": 0.4, "log_evidence": -2.5}

    monkeypatch.setattr(lc, "launch", fake_launch)
    args = argparse.Namespace(out=str(out), sizes=[5000], rows=None, keep_data=False, extra=[])
    lc.run(args)
    default, every = lc.features_of(cfg.rows[0]), lc.features_of(cfg.rows[2])
    assert calls == [
        ("5000", lc.row_folder("FBT k=10"), True, default, [default]),  # MM was finished
        # the default features' dataset is gone before the next one is built
        ("5000", lc.row_folder("MM, all sizes"), False, every, [every]),
        ("5000", lc.row_folder("FBT k=10, all sizes"), False, every, [every]),
    ]
    assert not list((out / "5000").glob("cache-*"))
    assert (killed / lc.WALL).exists()


def test_table_takes_a_resumed_runs_figures_from_wall(tmp_path, capsys):
    """A run over several attempts: the table shows wall.json's figures of all of them
    (training, data, memory), marked, with the note saying how they were read; a run in
    one attempt shows its metrics.json's."""
    lc = load_script()
    out = tmp_path / "curve"
    metrics = {
        "train_games": 5000, "train_positions": 10, "top1": 0.4, "log_evidence": -2.5,
        "train_seconds": 60.0, "rank_data_seconds": [30.0], "peak_anon_mb": 1024,
    }  # fmt: skip
    for row, wall in [("MM", {"load": [1.0, 2.0]}),
                      ("FBT k=10", {"load": [1.0, 2.0], "train_s": 600.0, "data_s": 120.0,
                                    "note": "two attempts, from their logs"})]:  # fmt: skip
        run = out / "5000" / lc.row_folder(row)
        run.mkdir(parents=True)
        (run / "metrics.json").write_text(json.dumps(metrics))
        np.savez(run / "positions.npz", rank=np.zeros(1))
        (run / lc.WALL).write_text(json.dumps(wall))
    lc.table(argparse.Namespace(out=str(out), json=None, kept=str(tmp_path / "none.json")))
    text = capsys.readouterr().out
    mm = next(line for line in text.splitlines() if line.startswith("| MM |"))
    fbt = next(line for line in text.splitlines() if line.startswith("| FBT k=10 * |"))
    assert "| 1.0 min |" in mm and "| 0.5 min |" in mm
    assert "| 10.0 min |" in fbt and "| 2.0 min |" in fbt
    assert "FBT k=10 at 5,000 games: two attempts, from their logs" in text


def test_table_reads_a_resumed_runs_cost_from_its_metrics(tmp_path, capsys):
    """A run resumed by the current code carries all its attempts' cost in metrics.json
    (attempts, train_seconds, first_data_seconds): marked and noted without a wall.json."""
    lc = load_script()
    out = tmp_path / "curve"
    metrics = {
        "train_games": 5000, "train_positions": 10, "top1": 0.4, "log_evidence": -2.5,
        "train_seconds": 900.0, "rank_data_seconds": [3.0], "first_data_seconds": 240.0,
        "peak_anon_mb": 2048, "attempts": 3, "spent_known": True,
    }  # fmt: skip
    run = out / "5000" / lc.row_folder("MM")
    run.mkdir(parents=True)
    (run / "metrics.json").write_text(json.dumps(metrics))
    np.savez(run / "positions.npz", rank=np.zeros(1))
    lc.table(argparse.Namespace(out=str(out), json=None, kept=str(tmp_path / "none.json")))
    text = capsys.readouterr().out
    mm = next(line for line in text.splitlines() if line.startswith("| MM * |"))
    assert "| 15.0 min |" in mm and "| 4.0 min |" in mm and "| 2.0 GB |" in mm
    assert "MM at 5,000 games: resumed; training and peak memory over its 3 attempts" in text


def test_kept_rows_and_finished_runs(tmp_path, capsys):
    """The rows kept in the repository show beside the finished runs, a run in place of
    the kept row of its model and size, in the experiment's order; keep writes them all
    back; the repository's kept rows have every field the table prints."""
    lc = load_script()
    kept_rows = json.loads(lc.KEPT.read_text())
    assert kept_rows and all(
        {"row", "games", "positions", "shapes", "top1", "log_evidence", "train_s",
         "algorithm_s", "data_s", "peak_anon_mb", "load", "note"} <= set(r) for r in kept_rows
    )  # fmt: skip
    old = {"row": "MM", "games": 5000, "positions": 10, "shapes": 1, "top1": 0.3,
           "log_evidence": -2.7, "train_s": 60.0, "algorithm_s": 30.0, "data_s": 6.0,
           "peak_anon_mb": 1024, "load": [1.0, 1.0], "note": None}  # fmt: skip
    kept = tmp_path / "kept.json"
    kept.write_text(json.dumps([old | {"games": 10000, "top1": 0.31}, old]))
    out = tmp_path / "curve"
    run = out / "5000" / lc.row_folder("FBT k=10")
    run.mkdir(parents=True)
    metrics = {"train_games": 5000, "train_positions": 10, "top1": 0.42, "log_evidence": -2.4,
               "train_seconds": 60.0, "rank_data_seconds": [3.0], "peak_anon_mb": 512}  # fmt: skip
    (run / "metrics.json").write_text(json.dumps(metrics))
    np.savez(run / "positions.npz", rank=np.zeros(1))
    got = lc.rows_of(out, kept)
    assert [(r["row"], r["games"], r["top1"]) for r in got] == [
        ("MM", 5000, 0.3),
        ("FBT k=10", 5000, 0.42),
        ("MM", 10000, 0.31),
    ]
    lc.keep(argparse.Namespace(out=str(out), kept=str(kept)))
    assert json.loads(kept.read_text()) == got
    (run / "metrics.json").write_text(json.dumps(metrics | {"top1": 0.43}))  # rerun
    assert lc.rows_of(out, kept)[1]["top1"] == 0.43
    lc.table(argparse.Namespace(out=str(out), json=None, kept=str(kept)))
    assert "| MM | 10,000 | 10 | 1 | 31.00% |" in capsys.readouterr().out
