"""Resuming after a crash: train states (gomove.train.resume), resume=true, harvest parts.

Invariants checked:
- MM (cyclic and greedy; numba, torch and padded engines; warm-started over data read
  in chunks, stopped in either stage) and SGD (flat, read in chunks and
  padded, on batches or a shuffling BatchLoader; full, sampled, LFR, SGD with
  momentum after an MM init) stopped by
  an exception after some iteration and resumed from the train state give
  bitwise the model and history (times apart) of an uninterrupted run; SGD over
  data read in chunks likewise from a state saved at a chunk's end within an epoch
  (and only there);
- a resumed run that had already finished trains no more;
- a train state saved under another config is refused, naming the key;
  IGNORED keys may differ; resume=true without a state starts fresh;
- a training subprocess killed by SIGKILL mid-run and rerun with
  resume=true gives the uninterrupted run's model exactly (mm and fbt; fbt over data
  read in chunks killed within an epoch, save_minutes=0);
- a harvest stopped after some chunks replays only the games of the others
  and gives the same pattern table as one uninterrupted harvest.
"""

from __future__ import annotations

import copy
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import torch
from synthetic import cfg_of, flat_of, make_data, make_groups, random_log_gamma, tiny_overrides

import gomove.data.harvest as harvest_module
import gomove.train.mm.fit as mm_fit
from gomove.data.harvest import CHUNK_GAMES, harvest
from gomove.data.loader import BatchLoader
from gomove.features.config import FeatureConfig
from gomove.models.checkpoint import load_checkpoint
from gomove.reading.games import ReadConfig, iter_games
from gomove.train.context import TrainContext
from gomove.train.mm.compiled import NumbaMM
from gomove.train.mm.fit import train_mm
from gomove.train.mm.tensor import TorchMM
from gomove.train.mm.trail import Trail
from gomove.train.resume import TRAIN_STATE, Resume, Spent
from gomove.train.schemas import MMConfig, SGDConfig
from gomove.train.sgd.loop import train_sgd
from gomove.train.trainers import run

ROOT = Path(__file__).resolve().parents[1]
GROUPS = make_groups([5, 30, 3, 12])
N_FEATURES = 51


class Crash(Exception):
    """Stands for the process dying between two iterations."""


def crashing(after: int):
    """A validate callback raising Crash at its call after+1 (row ``after`` is saved)."""
    calls = []

    def validate(_log_probs):
        calls.append(1)
        if len(calls) > after + 1:
            raise Crash
        return {"top1": 0.0, "log_evidence": 0.0}

    return validate


def untimed(history):
    """The rows without times and validation (the crashed runs validate, the others not)."""
    return [
        {k: v for k, v in row.items() if "seconds" not in k and not k.startswith("val_")}
        for row in history
    ]


@pytest.fixture(scope="module")
def synthetic():
    data = make_data(random_log_gamma(N_FEATURES, 1), GROUPS, 6, 40, 12, 2)
    return data, flat_of(data, GROUPS)


@pytest.mark.parametrize("schedule", ["cyclic", "greedy", "lazy"])
@pytest.mark.parametrize("engine", ["numba", "numba-sparse", "torch", "padded"])
def test_mm_resume_equals_uninterrupted(synthetic, tmp_path, schedule, engine):
    data, flat = synthetic
    engines = {
        "numba": NumbaMM,
        "numba-sparse": partial(NumbaMM, sparse_density=1.0),  # every group's entries kept
        "torch": TorchMM,
    }

    def source():
        return engines[engine](flat) if engine != "padded" else data

    cfg = MMConfig(max_iters=5, tol=0.0, schedule=schedule)
    want, want_hist = train_mm(cfg, source(), TrainContext(N_FEATURES, GROUPS, progress=False))
    ck = Resume(tmp_path / "state.pt", {"run": 1}, resume=True)
    with pytest.raises(Crash):
        train_mm(
            cfg,
            source(),
            TrainContext(N_FEATURES, GROUPS, validate=crashing(2), progress=False, checkpoint=ck),
        )
    assert torch.load(ck.path, weights_only=False)["state"]["iter"] == 2
    got, got_hist = train_mm(
        cfg, source(), TrainContext(N_FEATURES, GROUPS, progress=False, checkpoint=ck)
    )
    assert torch.equal(got.log_gamma, want.log_gamma)
    assert untimed(got_hist) == untimed(want_hist)
    # finished: resuming again trains no more and returns the same
    again, again_hist = train_mm(
        cfg, source(), TrainContext(N_FEATURES, GROUPS, progress=False, checkpoint=ck)
    )
    assert torch.equal(again.log_gamma, want.log_gamma) and len(again_hist) == len(want_hist)


def test_mm_lazy_resumes_between_partial_sweeps(synthetic, tmp_path):
    """The lazy schedule stopped after a partial sweep (its plan of the next sweep made
    from the last group's bound, not its measured gain) resumes to the uninterrupted
    run's gammas and history."""
    _, flat = synthetic
    cfg = MMConfig(max_iters=100, tol=1e-3, schedule="lazy")
    ctx = TrainContext(N_FEATURES, GROUPS, progress=False)
    want, want_hist = train_mm(cfg, NumbaMM(flat), ctx)
    sizes = [len(row["updates"]) for row in want_hist[1:]]
    assert sizes[5] < len(GROUPS) and sizes[6] < len(GROUPS)  # skipping on both sides
    ck = Resume(tmp_path / "state.pt", {"run": 1}, resume=True)
    with pytest.raises(Crash):
        train_mm(cfg, NumbaMM(flat), replace(ctx, validate=crashing(6), checkpoint=ck))
    got, got_hist = train_mm(cfg, NumbaMM(flat), replace(ctx, checkpoint=ck))
    assert torch.equal(got.log_gamma, want.log_gamma)
    assert untimed(got_hist) == untimed(want_hist)


@pytest.mark.parametrize("schedule", ["cyclic", "greedy", "lazy"])
def test_mm_state_of_an_older_gomove(synthetic, tmp_path, schedule):
    """A train state saved before the greedy schedule kept its bounds (no "bounds",
    no "next", no "plan"): a cyclic run resumes as if uninterrupted, a greedy or lazy
    one is refused with a clear error."""
    data, flat = synthetic
    cfg = MMConfig(max_iters=4, tol=0.0, schedule=schedule)
    want, want_hist = train_mm(cfg, NumbaMM(flat), TrainContext(N_FEATURES, GROUPS, progress=False))
    ck = Resume(tmp_path / "state.pt", {"run": 1}, resume=True)
    with pytest.raises(Crash):
        train_mm(
            cfg,
            NumbaMM(flat),
            TrainContext(N_FEATURES, GROUPS, validate=crashing(2), progress=False, checkpoint=ck),
        )
    state = ck.load()
    del state["bounds"], state["next"], state["plan"]
    ck.save(state)
    if schedule != "cyclic":
        with pytest.raises(ValueError, match="older gomove"):
            train_mm(
                cfg, NumbaMM(flat), TrainContext(N_FEATURES, GROUPS, progress=False, checkpoint=ck)
            )
        return
    got, got_hist = train_mm(
        cfg, NumbaMM(flat), TrainContext(N_FEATURES, GROUPS, progress=False, checkpoint=ck)
    )
    assert torch.equal(got.log_gamma, want.log_gamma)
    assert untimed(got_hist) == untimed(want_hist)


def chunked(flat, n):
    """flat read in chunks of n positions (gomove.data.chunks)."""
    out = copy.copy(flat)
    out.chunk_positions = n
    return out


def test_mm_state_keeps_a_trail_only_for_an_engine_with_a_cache(synthetic, tmp_path):
    """The stream over data read in chunks caches nothing: its states hold no trail
    of updates (they would grow by the gammas of every update), and a state of an
    older gomove that holds one resumes alike; the in-memory engine's trail is kept."""
    _, flat = synthetic
    cfg = MMConfig(max_iters=4, tol=0.0)
    want, _ = train_mm(cfg, chunked(flat, 30), TrainContext(N_FEATURES, GROUPS, progress=False))
    for source, trail in ((lambda: NumbaMM(flat), True), (lambda: chunked(flat, 30), False)):
        ck = Resume(tmp_path / f"{trail}.pt", {"run": 1}, resume=True)
        with pytest.raises(Crash):
            ctx = TrainContext(N_FEATURES, GROUPS, validate=crashing(2), checkpoint=ck)
            train_mm(cfg, source(), replace(ctx, progress=False))
        saved = torch.load(ck.path, weights_only=False)
        assert bool(saved["state"]["trail"]) == trail
    # an older state of the stream, with a trail that does not lead to its gammas: unused
    saved["state"]["trail"] = [(0, saved["state"]["log_gamma"][1:6] + 1.0)]
    torch.save(saved, ck.path)
    got, _ = train_mm(cfg, chunked(flat, 30), TrainContext(N_FEATURES, GROUPS, progress=False,
                                                            checkpoint=ck))  # fmt: skip
    assert torch.equal(got.log_gamma, want.log_gamma)


def test_mm_trail_lives_beside_the_state(synthetic, tmp_path):
    """An in-memory engine's trail of updates is appended to a file beside the train
    state, which names it with its length (the state stays a few F floats); a run
    stopped after appending an iteration's updates but before saving them resumes
    from the saved length to the uninterrupted run's gammas and history."""
    _, flat = synthetic
    cfg = MMConfig(max_iters=5, tol=0.0)
    ctx = TrainContext(N_FEATURES, GROUPS, progress=False)
    want, want_hist = train_mm(cfg, NumbaMM(flat), ctx)
    ck = Resume(tmp_path / "state.pt", {"run": 1}, resume=True)
    with pytest.raises(Crash):  # in the report of iteration 4: its updates appended, unsaved
        train_mm(cfg, NumbaMM(flat), replace(ctx, validate=crashing(3), checkpoint=ck))
    saved = torch.load(ck.path, weights_only=False)["state"]["trail"]
    file = ck.side_file("trail")
    assert saved["file"] == file.name and saved["entries"] == 3 * len(GROUPS)
    assert file.stat().st_size > saved["bytes"]  # iteration 3's, never saved
    got, got_hist = train_mm(cfg, NumbaMM(flat), replace(ctx, checkpoint=ck))
    assert torch.equal(got.log_gamma, want.log_gamma)
    assert untimed(got_hist) == untimed(want_hist)
    assert file.stat().st_size == torch.load(ck.path, weights_only=False)["state"]["trail"]["bytes"]


def test_trail_file_round_trip_and_damage(tmp_path):
    """A Trail's file gives back its updates up to the saved length, cuts off what was
    appended after it, takes an older state's list (appending it anew), and refuses a
    trail that is missing, short or not where the state says."""
    rng = np.random.default_rng(0)
    ups = [(g, rng.random(n)) for g, n in ((0, 5), (2, 3), (1, 7))]
    a = Trail(tmp_path / "s.trail")
    a.start()
    for g, v in ups[:2]:
        a.append(g, v)
    saved = a.saved()
    a.append(*ups[2])  # after the save: a killed run's
    b = Trail(tmp_path / "s.trail")
    got = list(b.resume(saved))
    assert [g for g, _ in got] == [0, 2] and all(
        np.array_equal(v, w) for (_, v), (_, w) in zip(got, ups, strict=False)
    )
    assert (tmp_path / "s.trail").stat().st_size == saved["bytes"] == b.nbytes
    b.append(*ups[2])
    again = list(Trail(tmp_path / "s.trail").resume(b.saved()))
    assert [g for g, _ in again] == [0, 2, 1] and np.array_equal(again[2][1], ups[2][1])
    old = list(Trail(tmp_path / "o.trail").resume([(g, list(v)) for g, v in ups]))
    assert [g for g, _ in old] == [0, 2, 1]
    assert list(Trail(tmp_path / "o.trail").resume(Trail(tmp_path / "o.trail").saved())) == []
    with pytest.raises(ValueError, match="not here"):
        list(Trail(tmp_path / "other.trail").resume(saved))
    (tmp_path / "s.trail").write_bytes(b"")
    with pytest.raises(ValueError, match="missing or short"):
        list(Trail(tmp_path / "s.trail").resume(saved))
    mem = Trail(None)
    mem.append(*ups[0])
    assert mem.saved()[0][0] == 0 and np.array_equal(mem.saved()[0][1], ups[0][1])


@pytest.mark.parametrize("crash_in", ["warm", "main"])
def test_mm_warm_start_resumes(synthetic, tmp_path, monkeypatch, crash_in):
    """MM over data read in chunks, warm-started on the first 100 positions: a run
    stopped in either stage resumes to the uninterrupted run's gammas and history,
    and a finished warm stage is not fitted again."""
    _, flat = synthetic
    cfg = MMConfig(max_iters=5, tol=0.0, warm_positions=100)
    ctx = TrainContext(N_FEATURES, GROUPS, progress=False)
    want, want_hist = train_mm(cfg, chunked(flat, 30), ctx)
    ck = Resume(tmp_path / "state.pt", {"run": 1}, resume=True)
    fits = []
    real = mm_fit.fit_gammas
    resumed = False

    def crash_at_2(row, _log_gamma):
        if row["iter"] == 2:
            raise Crash

    def fit(*args, **kw):
        fits.append(kw.get("start") is None)  # True: the warm stage's fit
        if crash_in == "warm" and len(fits) == 1 and not resumed:
            kw["report"] = crash_at_2
        return real(*args, **kw)

    monkeypatch.setattr(mm_fit, "fit_gammas", fit)
    with pytest.raises(Crash):
        crash = crashing(2) if crash_in == "main" else None
        train_mm(cfg, chunked(flat, 30), replace(ctx, validate=crash, checkpoint=ck))
    fits.clear()
    resumed = True
    got, got_hist = train_mm(cfg, chunked(flat, 30), replace(ctx, checkpoint=ck))
    assert fits == ([False] if crash_in == "main" else [True, False])
    assert torch.equal(got.log_gamma, want.log_gamma)
    # the warm stage's trail went with its loop state; the main stage streams: none
    assert not ck.side_file("warm.trail").exists() and not ck.side_file("trail").exists()
    warm = [h[0].pop("warm") for h in (got_hist, want_hist)]
    assert untimed(got_hist) == untimed(want_hist)
    assert untimed([warm[0]]) == untimed([warm[1]])


@pytest.mark.parametrize(
    "extra",
    [{}, {"sample": 3}, {"name": "lfr"}, {"optimizer": "sgd", "init": "mm"}],
    ids=["full", "sampled", "lfr", "sgd-mm-init"],
)
@pytest.mark.parametrize("layout", ["flat", "chunked", "padded"])
def test_sgd_resume_equals_uninterrupted(synthetic, tmp_path, extra, layout):
    data, flat = synthetic
    source = {"flat": flat, "chunked": chunked(flat, 50), "padded": data}[layout]
    cfg = SGDConfig(epochs=4, batch_size=16, k=3, **extra)
    want, want_hist = train_sgd(cfg, source, TrainContext(N_FEATURES, GROUPS, progress=False))
    ck = Resume(tmp_path / "state.pt", resume=True)
    with pytest.raises(Crash):
        ctx = TrainContext(N_FEATURES, GROUPS, validate=crashing(2), checkpoint=ck)
        train_sgd(cfg, source, replace(ctx, progress=False))
    got, got_hist = train_sgd(
        cfg, source, TrainContext(N_FEATURES, GROUPS, progress=False, checkpoint=ck)
    )
    assert torch.equal(got.w, want.w) and torch.equal(got.v, want.v)
    assert untimed(got_hist) == untimed(want_hist)


class DyingWithin(Resume):
    """A train state saved at every chunk's end (within_seconds 0) whose process dies
    just after its ``n``-th save within an epoch."""

    def __init__(self, path: Path, n: int | None) -> None:
        super().__init__(path, resume=True, within_seconds=0.0)
        self.left, self.within = n, 0

    def save(self, state):
        super().save(state)
        if state["within"] is not None:
            self.within += 1
            if self.within == self.left:
                raise Crash


@pytest.mark.parametrize(
    "extra", [{}, {"sample": 3}, {"name": "lfr"}], ids=["full", "sampled", "lfr"]
)
@pytest.mark.parametrize("n,epoch,done", [(1, 0, 1), (6, 1, 2), (11, 2, 3)])
@pytest.mark.parametrize("engine", ["numba", "torch"])
def test_sgd_resumes_within_an_epoch(synthetic, tmp_path, extra, n, epoch, done, engine, caplog):
    """Data read in chunks: a state saved at a chunk's end within a pass (the start's
    measuring pass, epoch 1, epoch 2) continues to the uninterrupted run's model and
    history bit for bit."""
    _, flat = synthetic
    source = chunked(flat, 50)  # 5 chunks: 4 cuts a pass
    cfg = SGDConfig(epochs=3, batch_size=16, k=3, engine=engine, **extra)
    want, want_hist = train_sgd(cfg, source, TrainContext(N_FEATURES, GROUPS, progress=False))
    dying = DyingWithin(tmp_path / "state.pt", n)
    with pytest.raises(Crash):
        train_sgd(cfg, source, TrainContext(N_FEATURES, GROUPS, progress=False, checkpoint=dying))
    saved = torch.load(dying.path, weights_only=False)["state"]
    assert saved["within"]["cut"]["done"] == done and len(saved["history"]) == epoch
    caplog.set_level(logging.INFO)
    again = DyingWithin(tmp_path / "state.pt", None)  # saves at every cut, dies at none
    got, got_hist = train_sgd(
        cfg, source, TrainContext(N_FEATURES, GROUPS, progress=False, checkpoint=again)
    )
    assert f"resumed in epoch {epoch} after {done} of its chunks" in caplog.text
    assert torch.equal(got.w, want.w) and torch.equal(got.v, want.v)
    assert untimed(got_hist) == untimed(want_hist)


def test_sgd_saves_within_an_epoch_only_at_chunk_ends(synthetic, tmp_path):
    """Data in memory (one chunk) or padded batches: states after each epoch only."""
    data, flat = synthetic
    for i, source in enumerate((flat, data)):
        ck = DyingWithin(tmp_path / f"state{i}.pt", None)
        cfg = SGDConfig(epochs=2, batch_size=16, k=3)
        train_sgd(cfg, source, TrainContext(N_FEATURES, GROUPS, progress=False, checkpoint=ck))
        assert ck.within == 0


def test_sgd_resume_on_a_batch_loader(ds, tmp_path):
    """The padded path over shards: the loader's epoch (its shuffle) is restored too."""
    loader = BatchLoader(ds, batch_size=64)
    n = ds.registry.n_features
    cfg = SGDConfig(epochs=3, batch_size=32, k=2, sample=2)
    want, _ = train_sgd(cfg, loader, TrainContext(n, [], progress=False))
    ck = Resume(tmp_path / "state.pt", resume=True)
    with pytest.raises(Crash):
        train_sgd(
            cfg, loader, TrainContext(n, [], validate=crashing(1), progress=False, checkpoint=ck)
        )
    got, _ = train_sgd(cfg, loader, TrainContext(n, [], progress=False, checkpoint=ck))
    assert torch.equal(got.w, want.w) and torch.equal(got.v, want.v)


def test_other_config_refused(tmp_path):
    path = tmp_path / "state.pt"
    Resume(path, {"model": {"lr": 0.1}, "progress": True}).save({"iter": 3})
    with pytest.raises(ValueError, match=r"model\.lr: saved 0\.1, now 0\.2"):
        Resume(path, {"model": {"lr": 0.2}, "progress": True}, resume=True).load()
    # how the run is watched may change; without resume the state is not read
    same = Resume(path, {"model": {"lr": 0.1}, "progress": False, "resume": True}, resume=True)
    assert same.load() == {"iter": 3}
    assert Resume(path, {"model": {"lr": 0.2}}).load() is None


def test_mm_refuses_state_of_other_config(synthetic, tmp_path):
    data, flat = synthetic
    ck = Resume(tmp_path / "state.pt", {"model": {"schedule": "cyclic"}}, resume=True)
    train_mm(
        MMConfig(max_iters=1),
        NumbaMM(flat),
        TrainContext(N_FEATURES, GROUPS, progress=False, checkpoint=ck),
    )
    other = Resume(ck.path, {"model": {"schedule": "greedy"}}, resume=True)
    with pytest.raises(ValueError, match="model.schedule"):
        train_mm(
            MMConfig(max_iters=1, schedule="greedy"),
            NumbaMM(flat),
            TrainContext(N_FEATURES, GROUPS, progress=False, checkpoint=other),
        )


def test_resume_without_state_starts_fresh(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="gomove.train.resume"):
        assert Resume(tmp_path / "none.pt", resume=True).load() is None
    assert "starting fresh" in caplog.text


# --- a real kill -------------------------------------------------------------------


def kill_mid_run(overrides: list[str], run_dir: Path, min_updates: int = 2, until=None):
    """Start gomove.cli.train, SIGKILL it once its train state has been replaced
    min_updates times after appearing and (``until``, of the state: checked with the
    process stopped, SIGSTOP) is what the test needs; returns the last saved state."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "gomove.cli.train", *overrides, f"hydra.run.dir={run_dir}"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = run_dir / TRAIN_STATE
    seen: set[int] = set()
    deadline = time.monotonic() + 60
    try:
        while proc.poll() is None:
            assert time.monotonic() < deadline, "the training subprocess made no progress"
            if state.exists() and state.stat().st_mtime_ns not in seen:
                seen.add(state.stat().st_mtime_ns)
                if len(seen) > min_updates:
                    os.kill(proc.pid, signal.SIGSTOP)  # the state file stays as it is
                    saved = torch.load(state, weights_only=False)["state"]
                    if until is None or until(saved):
                        break
                    os.kill(proc.pid, signal.SIGCONT)
            time.sleep(0.005)
        assert proc.poll() is None, "the run finished before it could be killed: make it longer"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not (run_dir / "model.pt").exists()
    return torch.load(state, weights_only=False)["state"]


@pytest.mark.parametrize(
    "model,within",
    [
        (["model.max_iters=40", "model.tol=0"], False),
        (["model=fbt", "k=4", "model.epochs=30", "model.batch_size=8"], False),
        # read in chunks, saved at every chunk's end: killed within an epoch
        (
            [
                "model=fbt",
                "k=4",
                "model.epochs=6",
                "model.batch_size=8",
                "data.chunk_positions=60",
                "save_minutes=0",
            ],
            True,
        ),
    ],  # fmt: skip
    ids=["mm", "fbt", "fbt-within"],
)
def test_killed_run_resumes_to_the_same_model(games, tmp_path, model, within):
    overrides = [*tiny_overrides(games, tmp_path), *model]
    want = run(cfg_of(overrides), tmp_path / "whole")  # also fills the data cache
    killed = tmp_path / "killed"
    until = (lambda s: s["within"] is not None and len(s["history"]) > 1) if within else None
    state = kill_mid_run(overrides, killed, until=until)
    stopped = state["history"][-1]["iter"]
    assert 0 <= stopped < want["iterations"]
    assert (state.get("within") is not None) == within
    got = run(cfg_of([*overrides, "resume=true"]), killed)
    a = load_checkpoint(tmp_path / "whole" / "model.pt")
    b = load_checkpoint(killed / "model.pt")
    for key, value in a["model"].items():
        assert torch.equal(b["model"][key], value), key
    assert got["iterations"] == want["iterations"] and got["top1"] == want["top1"]
    assert untimed(b["history"]) == untimed(a["history"])
    # the resumed run's cost is both attempts', the killed one's up to its last save
    assert want["attempts"] == 1 and "this_attempt" not in want
    assert got["attempts"] == 2 and got["spent_known"]
    assert got["train_seconds"] > got["this_attempt"]["train_seconds"]
    assert got["peak_anon_mb"] >= got["this_attempt"]["peak_anon_mb"]
    assert got["first_data_seconds"] > 0
    # each attempt's peak by stage (the resumed one's data stage opened the caches)
    for m in (want, got):
        stages = m["peak_anon_mb_by_stage"]
        assert set(stages) == {"data", "train", "test"} and min(stages.values()) > 0
        assert max(stages.values()) <= (m.get("this_attempt") or m)["peak_anon_mb"]


def test_a_state_carries_what_the_run_has_spent(tmp_path, caplog):
    """Each save records the attempts so far: training seconds added up, the first
    attempt's data seconds, the largest memory; a state without it says so."""
    path = tmp_path / "state.pt"
    first = Resume(path, {"run": 1}, data_seconds=30.0, peak_anon_mb=lambda: 500.0)
    first.save({"iter": 0})
    saved = torch.load(path, weights_only=False)["spent"]
    assert saved["attempts"] == 1 and saved["data_seconds"] == 30.0
    assert saved["peak_anon_mb"] == 500.0 and saved["train_seconds"] >= 0
    second = Resume(path, {"run": 1}, resume=True, data_seconds=2.0, peak_anon_mb=lambda: 400.0)
    assert second.load() == {"iter": 0}
    assert second.earlier == Spent(**saved)
    now = second.spent()
    assert now.attempts == 2 and now.data_seconds == 30.0 and now.peak_anon_mb == 500.0
    assert now.train_seconds >= saved["train_seconds"] and now.known
    assert Spent().plus(5.0, 1.0, None).plus(7.0, 2.0, 3.0) == Spent(2, 12.0, 1.0, 3.0)
    # a state written before states carried their cost
    older = torch.load(path, weights_only=False)
    del older["spent"]
    torch.save(older, path)
    third = Resume(path, {"run": 1}, resume=True)
    with caplog.at_level(logging.WARNING):
        assert third.load() == {"iter": 0}
    assert "does not say what its earlier attempts cost" in caplog.text
    assert third.spent().attempts == 2 and not third.spent().known


def test_whole_cost_is_the_attempt_alone_or_the_sum_over_attempts(tmp_path):
    path = tmp_path / "state.pt"
    fresh = Resume(path, {"run": 1}, data_seconds=30.0)
    assert fresh.whole_cost(10.0, 30.0, 500.0) == {
        "train_seconds": 10.0, "peak_anon_mb": 500.0, "attempts": 1
    }  # fmt: skip
    torch.save({"version": 1, "config": {"run": 1}, "state": {},
                "spent": asdict(Spent(2, 100.0, 30.0, 800.0))}, path)  # fmt: skip
    again = Resume(path, {"run": 1}, resume=True)
    again.load()
    cost = again.whole_cost(10.0, 2.0, 600.0, seconds_key="fit_seconds")
    assert cost == {
        "fit_seconds": 110.0, "peak_anon_mb": 800.0, "attempts": 3,
        "this_attempt": {"fit_seconds": 10.0, "peak_anon_mb": 600.0},
        "first_data_seconds": 30.0, "spent_known": True,
    }  # fmt: skip


def test_run_refuses_state_of_other_config(games, tmp_path):
    overrides = [*tiny_overrides(games, tmp_path), "model.max_iters=1"]
    run(cfg_of(overrides), tmp_path / "run")
    assert (tmp_path / "run" / TRAIN_STATE).exists()  # kept after the run
    with pytest.raises(ValueError, match="model.schedule: saved 'auto', now 'greedy'"):
        run(cfg_of([*overrides, "model.schedule=greedy", "resume=true"]), tmp_path / "run")


# --- harvest -----------------------------------------------------------------------


def test_killed_harvest_reuses_its_chunks(games, tmp_path, monkeypatch):
    train, _ = games
    rc = ReadConfig(sizes=(9,))
    cfg = FeatureConfig(min_count=2, max_radius=6, bloom_bits=1 << 16)
    all_games = list(iter_games(train, rc)) * 6  # 60 games: chunks of 25, 25, 10
    want = harvest(all_games, cfg, progress=False)

    replayed = []
    real = harvest_module.played_hashes

    def counting(game, t):
        replayed.append(1)
        return real(game, t)

    monkeypatch.setattr(harvest_module, "played_hashes", counting)

    def dying(n):  # the games, then the process dies
        yield from all_games[:n]
        raise Crash

    parts = tmp_path / "parts"
    with pytest.raises(Crash):
        harvest(dying(CHUNK_GAMES + 7), cfg, workers=1, progress=False, parts=parts)
    assert sorted(p.name for p in parts.iterdir()) == ["chunk-00000.npz"]
    replayed.clear()
    got = harvest(all_games, cfg, workers=1, progress=False, parts=parts)
    assert len(replayed) == len(all_games) - CHUNK_GAMES  # the first chunk was read
    for field in ("hashes", "radius", "count", "stones"):
        assert (getattr(got, field) == getattr(want, field)).all(), field
    assert len(list(parts.iterdir())) == 3
