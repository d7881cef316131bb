"""The warm-up (gomove.play.warmup): each part once, a stamp, and the engines' first start."""

from __future__ import annotations

from gomove.play import warmup
from gomove.playout.policy import PatternPolicy


def test_the_stamp_lives_with_numbas_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert warmup.stamp_path().parent == tmp_path


def test_warm_runs_every_step_and_stamps(tmp_path, monkeypatch, capture_model):
    monkeypatch.setattr(warmup, "stamp_path", lambda: tmp_path / "stamp")
    assert not warmup.is_warm()
    said: list[str] = []
    warmup.warm(capture_model, PatternPolicy.neutral(), said.append)
    steps = [m for m in said if "compiling" in m]
    assert len(steps) == 7 and steps[0].startswith("gomove warmup: [1/7]")
    assert said[-1].startswith("gomove warmup: done") and warmup.is_warm()
    monkeypatch.setenv("GOMOVE_WARMUP", "1")
    assert warmup.start_warmup("gomove gtp") is None  # warm: nothing to do


def test_a_first_start_warms_in_the_background(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(warmup, "stamp_path", lambda: tmp_path / "stamp")
    monkeypatch.setenv("GOMOVE_WARMUP", "0")
    assert warmup.start_warmup("gomove gtp") is None  # turned off
    monkeypatch.setenv("GOMOVE_WARMUP", "1")
    monkeypatch.setattr(warmup, "default_models", lambda: (None, PatternPolicy.neutral()))
    thread = warmup.start_warmup("gomove gtp")
    assert thread is not None
    thread.join(timeout=600)
    err = capsys.readouterr().err
    assert "gomove gtp: first start" in err and "gomove warmup: done" in err
    assert warmup.is_warm()
