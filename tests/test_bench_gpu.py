"""gomove bench gpu tried as before a GPU is lent: its torch rows on the CPU, over the
embedded sample copied under the month archives' names; scripts/device_train.sh likewise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gomove.bench.gpu import TEST_MONTH, TRAIN_MONTHS, bench_gpu
from gomove.cli.bench import main

SAMPLES = Path(__file__).resolve().parents[1] / "gomove" / "samples"


def _months(folder: Path) -> Path:
    folder.mkdir()
    for m in TRAIN_MONTHS:
        shutil.copy(SAMPLES / "gnugo-train.zip", folder / f"tygem-9d-{m}.zip")
    shutil.copy(SAMPLES / "gnugo-test.zip", folder / f"tygem-9d-{TEST_MONTH}.zip")
    return folder


def test_rows_in_order_and_accuracy_alone(tmp_path):
    """Every row, CUDA's (here the CPU's torch) MM row before numba's, the two engines
    equal, the accuracy row last and in the file; then --accuracy-only on the built
    cache: the data and accuracy rows alone, the same model's top-1."""
    data, cache, out = _months(tmp_path / "data"), tmp_path / "cache", tmp_path / "gpu.jsonl"
    args = dict(max_games=12, test_games=4, cpu_steps=3, fbt_epochs=2, device="cpu")
    rows = bench_gpu(data, str(cache), out=out, **args)
    phases = [(r["phase"], r.get("engine")) for r in rows]
    assert phases == [
        ("machine", None), ("data", None), ("mm", "torch"), ("mm", "numba"),
        ("mm_equal", None), ("fbt", "numba"), ("fbt_equal", None), ("fbt", "torch"),
        ("score", None), ("memory", None), ("fbt_accuracy", None),
    ]  # fmt: skip
    assert [json.loads(line) for line in out.read_text().splitlines()] == rows
    by = {p: r for (p, _), r in zip(phases, rows, strict=True)}
    assert by["data"]["games"] == 12
    assert by["mm_equal"]["max_abs_log_gamma_diff"] < 1e-6
    assert by["fbt_equal"]["max_abs_w_diff"] == 0.0 == by["fbt_equal"]["max_abs_v_diff"]
    assert len(by["fbt_accuracy"]["epoch_seconds"]) == 2
    again = bench_gpu(data, str(cache), out=tmp_path / "again.jsonl", speed=False, **args)
    assert [r["phase"] for r in again] == ["machine", "data", "fbt_accuracy"]
    assert again[-1]["test_top1"] == by["fbt_accuracy"]["test_top1"]


def test_accuracy_only_needs_epochs(capsys):
    """--accuracy-only with one epoch would measure nothing: a clear error instead."""
    with pytest.raises(SystemExit):
        main(["gpu", "--accuracy-only"])
    assert "--fbt-epochs" in capsys.readouterr().err


def test_profile_only_writes_the_profile(tmp_path):
    """--profile-only: the data rows, then profile.txt beside --out with both engines'
    unprofiled wall times and operator tables (the torch rows on the CPU here)."""
    data, out = _months(tmp_path / "data"), tmp_path / "out" / "gpu.jsonl"
    cache = str(tmp_path / "c")
    main(["gpu", "--profile-only", "--data", str(data), "--cache-dir", cache, "--gpu-games",
          "12", "--test-games", "4", "--gpu-device", "cpu", "--out", str(out)])  # fmt: skip
    phases = [json.loads(line)["phase"] for line in out.read_text().splitlines()]
    assert phases == ["machine", "data"]
    text = (out.parent / "profile.txt").read_text()
    assert "== mm, 1 iteration" in text and "== fbt torch" in text
    assert "wall unprofiled" in text and "self_cpu_time_total" in text


def test_device_train_script_links_the_months_and_resumes(tmp_path):
    """scripts/device_train.sh in a checkout without ../shared: the carried months
    stand in for the data (a link), the run's results land in OUT, and the same command
    again resumes the finished run instead of training anew."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    script = repo / "scripts" / "device_train.sh"
    shutil.copy(Path(__file__).resolve().parents[1] / "scripts" / "device_train.sh", script)
    _months(repo / ".devdata")
    shutil.copy(SAMPLES / "gnugo-test.zip", repo / ".devdata" / "tygem-9d-2006-05.zip")
    env = {**os.environ, "OUT": str(tmp_path / "out"), "RUN": str(tmp_path / "run")}
    args = ["bash", str(script), "model=mm", "model.max_iters=2", "data.max_games=12",
            "data.max_val_games=4", "data.max_test_games=4", "data.workers=1"]  # fmt: skip
    first = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    assert (tmp_path / "shared" / "data").resolve() == (repo / ".devdata").resolve()
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["train_games"] == 12 and metrics["n_games"] == 4
    again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0
    assert "resumed after iteration 2" in again.stdout + again.stderr
