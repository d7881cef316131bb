"""Coulom's mm files both ways (export.mm_format; gomove export mm, gammas; gomove import mm).

Invariants checked:
- the competition file follows mm's grammar (an independent reader, written
  from mm's README): ``! N``, the feature count, ``<n> <name>`` lines summing
  to N, ``!``, then per position ``#``, the winner's team, every participant's
  team (the winner's included); indices in [0, N), at most one per feature;
  and it holds exactly the dataset's teams (global index - 1, none left out);
- export then import (a run's gammas -> mm's output format -> a checkpoint)
  gives the same model, the same scores and the same features;
- bad input (a missing path, a malformed or short gammas file) ends in one
  ``error:`` line and exit status 2, never a traceback;
- scripts/compare_mm_worker.py, gomove's side of the comparison with mm.cpp,
  trains without ever importing torch, to train_mm's gammas;
- with g++ and mm.cpp present (Pachi's sources: GOMOVE_PACHI_SRC, or
  ../pachi, ../ext/pachi), mm.cpp's cyclic sweeps give gomove's gammas on the
  same file, and its own schedule's gammas import and score like any model.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from synthetic import tiny

from gomove.cli import export as export_cli
from gomove.cli import import_ as import_cli
from gomove.data.flat import FlatData
from gomove.export.mm_format import read_gammas, write_gammas
from gomove.export.models import export_mm, import_mm
from gomove.export.source import extractor_of
from gomove.models.checkpoint import load_checkpoint
from gomove.models.mm import BradleyTerry
from gomove.train.context import TrainContext
from gomove.train.mm.compiled import NumbaMM
from gomove.train.mm.fit import train_mm
from gomove.train.schemas import MMConfig
from gomove.train.trainers import run

ROOT = Path(__file__).resolve().parents[1]


def read_competition(path: Path) -> tuple[list[tuple[str, int]], list[list[tuple[int, ...]]]]:
    """An independent reader of mm's input (its README): the features and, per
    position, [winner team, participant teams...]; asserts the grammar."""
    lines = path.read_text().split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    first = lines[0].split()
    assert first[0] == "!" and len(first) == 2
    n_gammas = int(first[1])
    n_features = int(lines[1])
    features = []
    for line in lines[2 : 2 + n_features]:
        n, name = line.split()
        features.append((name, int(n)))
    assert sum(n for _, n in features) == n_gammas
    assert lines[2 + n_features] == "!"
    bounds = np.cumsum([0] + [n for _, n in features])
    positions: list[list[tuple[int, ...]]] = []
    for line in lines[3 + n_features :]:
        if line == "#":
            positions.append([])
            continue
        team = tuple(int(x) for x in line.split())
        assert all(0 <= i < n_gammas for i in team)
        owners = [int(np.searchsorted(bounds, i, side="right")) - 1 for i in team]
        assert len(set(owners)) == len(owners), f"two gammas of one feature: {line}"
        positions[-1].append(team)
    assert all(len(p) >= 2 for p in positions)  # a winner and at least one participant
    return features, positions


def teams_of(data: FlatData) -> list[list[tuple[int, ...]]]:
    """Per position: the winner's team, then every candidate's, as mm indices."""
    cols = [data.level(g).astype(np.int64) for g in range(len(data.sizes))]
    out = []
    for p in range(data.n_positions):
        lo, hi = int(data.pos_start[p]), int(data.pos_start[p + 1])
        teams = [
            tuple(o + int(c[i]) - 2 for o, c in zip(data.offsets, cols, strict=True) if c[i] > 0)
            for i in range(lo, hi)
        ]
        out.append([teams[int(data.winner[p])], *teams])
    return out


def test_competition_file_holds_the_datasets_teams(ds, tmp_path):
    """Export a real extracted dataset; the independent reader gets mm's grammar and
    exactly the dataset's teams, features named after the registry's groups."""
    out = tmp_path / "in.dat"
    summary = export_mm(ds.path, out)
    features, positions = read_competition(out)
    reg = ds.registry
    assert features == [(g.name, len(g)) for g in reg.groups if len(g)]
    data = ds.flat()
    assert positions == teams_of(data)
    assert summary["positions"] == ds.n_positions == len(positions)
    assert summary["gammas"] == reg.n_features - 1


def test_read_gammas_reports_bad_files(tmp_path):
    """Gaps, junk, non-positive gammas and a wrong count name the file and line."""
    p = tmp_path / "g.txt"
    for text, match in [
        ("  0 1.5\n  2 1.0\n", "index 2, expected 1"),
        ("  0 abc\n", "g.txt:1"),
        ("  0 1.5\n  1 -2\n", "not a positive"),
        ("", "no gammas"),
    ]:
        p.write_text(text)
        with pytest.raises(ValueError, match=match):
            read_gammas(p)
    p.write_text("  0 1.5\n  1 2.0     3 4 5\n")  # mm-with-freq.dat's extra columns
    np.testing.assert_array_equal(read_gammas(p, 2), [1.5, 2.0])
    with pytest.raises(ValueError, match="registry has 3"):
        read_gammas(p, 3)


@pytest.fixture(scope="module")
def tiny_run(games, tmp_path_factory) -> Path:
    """A tiny mm run (9x9 games, shapes of radius 3..6) and its folder."""
    tmp = tmp_path_factory.mktemp("run")
    run(tiny(games, tmp, ["model.max_iters=4"]), tmp / "run")
    return tmp / "run"


def test_gammas_export_import_round_trip(tiny_run, tmp_path, capsys):
    """gomove export gammas then gomove import mm: the same log-gammas (every digit
    kept), the same features and the same scores on the run's training positions."""
    gammas = tmp_path / "g.txt"
    assert export_cli.main(["gammas", str(tiny_run), str(gammas)]) == 0
    out = tmp_path / "imported.pt"
    assert import_cli.main(["mm", str(gammas), "--registry", str(tiny_run), "--out", str(out)]) == 0
    a, b = load_checkpoint(tiny_run / "model.pt"), load_checkpoint(out)
    assert b["model_name"] == "mm"
    np.testing.assert_allclose(
        b["module"].log_gamma.numpy(), a["module"].log_gamma.numpy(), rtol=0, atol=1e-15
    )
    assert b["extractor"].registry == a["extractor"].registry
    feat = torch.randint(0, a["module"].n_features, (4, 30, 9))
    mask = torch.ones(4, 30, dtype=torch.bool)
    torch.testing.assert_close(
        b["module"].log_probs(feat, mask), a["module"].log_probs(feat, mask), rtol=0, atol=1e-12
    )


def test_import_with_a_dataset_as_registry(ds, tmp_path):
    """A dataset folder is a registry source too: its shape names give the pattern
    table back, so the imported model's registry is the dataset's."""
    reg = ds.registry
    lg = np.concatenate([[0.0], np.linspace(-1, 1, reg.n_features - 1)])
    write_gammas(tmp_path / "g.txt", lg)
    import_mm(tmp_path / "g.txt", ds.path, tmp_path / "m.pt")
    state = load_checkpoint(tmp_path / "m.pt")
    assert state["extractor"].registry == reg == extractor_of(ds.path).registry
    np.testing.assert_allclose(state["module"].log_gamma.numpy(), lg, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize(
    "argv, match",
    [
        (["export", "mm", "/no/such/dataset", "x.dat"], "no such file"),
        (["export", "gammas", "/tmp", "x.txt"], "not a run folder"),
        (["export", "pachi", "/no/run", "out"], "no such file|not a run"),
        (["import", "mm", "/no/gammas.txt", "--registry", "/no/ds", "--out", "m.pt"], "no such"),
    ],
)
def test_bad_input_is_one_error_line(argv, match, tmp_path):
    """Missing inputs end with exit status 2 and one error line, no traceback."""
    module = "gomove.cli.export" if argv[0] == "export" else "gomove.cli.import_"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run(
        [sys.executable, "-m", module, *argv[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    assert p.stderr.startswith("error:") and len(p.stderr.strip().splitlines()) == 1
    assert re.search(match, p.stderr), p.stderr


def test_import_refuses_gammas_of_another_registry(tiny_run, tmp_path, capsys):
    """A gammas file of the wrong length: exit 2, the counts in the message."""
    (tmp_path / "g.txt").write_text("  0 1.0\n  1 2.0\n")
    argv = ["mm", str(tmp_path / "g.txt"), "--registry", str(tiny_run), "--out", "m.pt"]
    assert import_cli.main(argv) == 2
    assert "2 gammas, but the registry has" in capsys.readouterr().err


# --- against mm.cpp itself -------------------------------------------------------------


def pachi_source() -> Path | None:
    """Pachi's source tree (for mm.cpp): GOMOVE_PACHI_SRC, ../pachi or ../ext/pachi."""
    env = os.environ.get("GOMOVE_PACHI_SRC")
    for p in [Path(env)] if env else [ROOT.parent / "pachi", ROOT.parent / "ext" / "pachi"]:
        if (p / "pattern" / "training" / "mm" / "mm.cpp").is_file():
            return p
    return None


def test_compare_worker_trains_without_torch(ds, tmp_path):
    """scripts/compare_mm_worker.py trains in a process that never imports torch (its
    peak memory is what the comparison with mm.cpp reports) and gives train_mm's
    gammas and history on the same data."""
    gammas, hist = tmp_path / "g.txt", tmp_path / "h.json"
    cmd = [sys.executable, str(ROOT / "scripts" / "compare_mm_worker.py")]
    cmd += ["--dataset", str(ds.path), "--gammas", str(gammas), "--history", str(hist)]
    cmd += ["--sweeps", "3", "--order", "file"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(hist.read_text())
    assert got["torch"] is False and got["rss"] > 0
    data = ds.flat()
    cfg = MMConfig(max_iters=3, tol=-math.inf, order="file")
    model, history = train_mm(
        cfg,
        NumbaMM(data),
        TrainContext(ds.registry.n_features, data.group_spans(), "cpu", progress=False),
    )
    assert [r["log_posterior"] for r in got["rows"]] == [r["log_posterior"] for r in history]
    assert [r["updates"] for r in got["rows"]] == [r["updates"] for r in history]
    want = torch.exp(model.log_gamma[1:]).numpy()
    np.testing.assert_allclose(read_gammas(gammas), want, rtol=1e-15, atol=0)


@pytest.fixture(scope="module")
def mm_driver(tmp_path_factory) -> Path:
    """scripts/mm_driver.cpp built around Pachi's mm.cpp; skips without g++ or the source."""
    src = pachi_source()
    if shutil.which("g++") is None or src is None:
        pytest.skip("needs g++ and Pachi's sources (GOMOVE_PACHI_SRC) for mm.cpp")
    exe = tmp_path_factory.mktemp("mm") / "mm_driver"
    mm_dir = src / "pattern" / "training" / "mm"
    cmd = ["g++", "-O2", "-o", str(exe), "-I", str(mm_dir), str(ROOT / "scripts" / "mm_driver.cpp")]
    subprocess.run(cmd, check=True, capture_output=True)
    return exe


def run_driver(exe: Path, args: list[str], dat: Path, out: Path) -> str:
    with open(dat, "rb") as fin, open(out, "wb") as fout:
        p = subprocess.run([str(exe), *args], stdin=fin, stdout=fout, stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr.decode()
    return p.stderr.decode()


def test_mm_cpp_cyclic_sweeps_equal_gomoves(ds, mm_driver, tmp_path):
    """10 cyclic sweeps of mm.cpp on the exported file and 10 cyclic iterations of
    gomove's MM (same prior, same group order) give the same gammas."""
    dat = tmp_path / "in.dat"
    export_mm(ds.path, dat)
    run_driver(mm_driver, ["cyclic", "10"], dat, tmp_path / "mm.txt")
    theirs = read_gammas(tmp_path / "mm.txt", ds.registry.n_features - 1)
    data = ds.flat()
    cfg = MMConfig(max_iters=10, tol=float("-inf"), order="file")  # mm.cpp sweeps in file order
    model, _ = train_mm(
        cfg,
        NumbaMM(data, team_dtype="float64"),
        TrainContext(ds.registry.n_features, data.group_spans(), "cpu", progress=False),
    )
    ours = torch.exp(model.log_gamma[1:]).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)


def test_mm_cpp_own_schedule_imports_and_scores(ds, mm_driver, tmp_path):
    """mm.cpp's own schedule to its convergence, imported: a model that scores the
    dataset at least as well as 3 cyclic iterations of gomove (so the gammas landed
    on the right features), with finite log-probabilities."""
    dat = tmp_path / "in.dat"
    export_mm(ds.path, dat)
    run_driver(mm_driver, ["coulom"], dat, tmp_path / "mm.txt")
    import_mm(tmp_path / "mm.txt", ds.path, tmp_path / "m.pt")
    imported = load_checkpoint(tmp_path / "m.pt")["module"]
    data = ds.flat()
    cfg = MMConfig(max_iters=3, tol=float("-inf"))
    model, _ = train_mm(
        cfg,
        NumbaMM(data),
        TrainContext(ds.registry.n_features, data.group_spans(), "cpu", progress=False),
    )
    engine = NumbaMM(data)
    theirs = engine.collect(imported.log_gamma.numpy(), ()).log_likelihood
    ours = NumbaMM(data).collect(model.log_gamma.numpy(), ()).log_likelihood
    assert np.isfinite(theirs) and theirs >= ours - 1e-9
    assert isinstance(imported, BradleyTerry)
