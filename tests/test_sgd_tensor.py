"""The torch FBT/LFR engine over the flat layout (gomove.train.sgd.tensor) and the data it
holds on the device (gomove.data.device_flat).

Invariants checked:
- DeviceFlat decodes every group's levels of any rows as FlatData.level does (narrow
  groups through the dictionary, wide groups of 9 to 25 bits), and cuts padded Batches
  equal to the host's (gomove.data.loader.flat_batch);
- TorchSGD equals CompiledSGD (the numba engine, itself checked against autograd in
  test_sgd_compiled) step for step: FULL, SAMPLED (the same draws from the same
  uniforms) and LFR, Adam and SGD, float64 and float32 models: objective,
  log-likelihood and parameters after several steps;
- train_sgd with model.engine=torch gives the numba engine's model and history over
  whole epochs, init "mm" included, resumes to the same model, and on CUDA (-m gpu)
  the same model within 1e-6.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from synthetic import flat_of, make_data, make_groups, random_fbt, random_log_gamma
from torch.testing import assert_close

from gomove.data.device_flat import DeviceBatches, DeviceFlat
from gomove.data.flat import FlatData
from gomove.data.loader import flat_batch
from gomove.models.fbt import FactorizationBT
from gomove.train.context import TrainContext
from gomove.train.resume import Resume
from gomove.train.sgd.compiled import CompiledSGD
from gomove.train.sgd.loop import SGDConfig, train_sgd
from gomove.train.sgd.tensor import TorchSGD, _scatter_rows

SIZES = (3, 4, 2, 300)


def problem(seed: int, n_batches: int = 3, batch_size: int = 8, k: int = 3, sizes=SIZES):
    groups = make_groups(list(sizes))
    n_features = 1 + sum(sizes)
    batches = make_data(random_log_gamma(n_features, seed), groups, n_batches, batch_size, 9, seed)
    return n_features, flat_of(batches, groups)


@pytest.mark.parametrize("top", [5, 300, 70_000, 1 << 24])
def test_device_levels_equal_flat(top):
    """Every group decoded from the device tensors equals FlatData.level, any rows."""
    rng = np.random.default_rng(top)
    sizes = [3, 200, 7, top]
    c = 500
    levels = [rng.integers(0, s + 1, c) for s in sizes]
    levels[3][:3] = top  # the largest level
    offsets = np.cumsum([1, *sizes[:-1]])
    flat = FlatData.from_levels(levels, offsets, sizes, np.arange(c + 1), np.zeros(c, np.int64))
    dev = DeviceFlat(flat)
    rows = torch.from_numpy(rng.permutation(c)[:77])
    for g in range(len(sizes)):
        assert_close(
            dev.group_levels(g, rows),
            torch.from_numpy(flat.level(g)[rows.numpy()].astype(np.int64)),
        )
        assert_close(
            dev.group_levels(g, slice(10, 40)),
            torch.from_numpy(flat.level(g)[10:40].astype(np.int64)),
        )
    idx = dev.indices(rows)
    for g, o in enumerate(offsets):
        lv = flat.level(g)[rows.numpy()].astype(np.int64)
        np.testing.assert_array_equal(idx[:, g].numpy(), np.where(lv > 0, o + lv - 1, 0))


def test_device_batches_equal_host_batches(ds):
    flat = ds.flat()
    dev = DeviceFlat(flat)
    pos = np.array([5, 0, 17, 3, flat.n_positions - 1])
    a, b = flat_batch(flat, pos), dev.batch(torch.from_numpy(pos))
    for x, y in zip(a.astuple(), b.astuple(), strict=True):
        assert torch.equal(x, y)
    assert sum(len(b) for b in DeviceBatches(dev, 64)) == flat.n_positions


def _pair(n_features, flat, cfg, dtype):
    models = []
    for _ in range(2):
        m = random_fbt(n_features, cfg.k, 7, scale=0.3)
        models.append(m if dtype == torch.float64 else m.to(dtype))
    return models, CompiledSGD(models[0], flat, cfg), TorchSGD(models[1], flat, cfg)


@pytest.mark.parametrize(
    ("name", "sample", "optimizer"),
    [
        ("fbt", 0, "adam"),
        ("fbt", 4, "adam"),
        ("lfr", 0, "adam"),
        ("fbt", 0, "sgd"),
        ("fbt", 3, "sgd"),
    ],
)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_steps_equal_numba(name, sample, optimizer, dtype):
    n_features, flat = problem(3)
    cfg = SGDConfig(name=name, k=3, sample=sample, optimizer=optimizer, batch_size=5,
                    lambda_w=0.01, lambda_v=0.02, seed=4)  # fmt: skip
    (a, b), numba, tor = _pair(n_features, flat, cfg, dtype)
    tol = {"rtol": 1e-10, "atol": 1e-12} if dtype == torch.float64 else {"rtol": 1e-5, "atol": 1e-6}
    for step in range(3):
        batches = list(zip(numba, tor, strict=True))
        assert all(np.array_equal(x, y) for x, y in batches)  # the same epoch order
        for pos, _ in batches:
            assert tor.measure(pos) == pytest.approx(numba.measure(pos), rel=1e-9)
            unif = np.random.default_rng(step).random((len(pos), max(sample, 1)))
            got = tor.step(pos, 0.05, unif if sample else None)
            want = numba.step(pos, 0.05, unif if sample else None)
            assert got == pytest.approx(want, rel=1e-8)
            assert_close(b.w.detach(), a.w.detach(), **tol)
            assert_close(b.v.detach(), a.v.detach(), **tol)
    assert tor.n_steps == numba.n_steps > 0


def test_scatter_rows_equals_a_loop():
    """The table's gradient from the team sums' equals adding each row's gradient into
    every member's table row by a plain loop, row 0 (absent) left at zero."""
    gen = torch.Generator().manual_seed(3)
    idx = torch.randint(0, 6, (40, 3), generator=gen)
    grad_s = torch.randn(40, 4, generator=gen, dtype=torch.float64)
    want = torch.zeros(6, 4, dtype=torch.float64)
    for r in range(40):
        for g in range(3):
            if idx[r, g] > 0:
                want[idx[r, g]] += grad_s[r]
    got = _scatter_rows(idx, grad_s, (6, 4))
    assert_close(got, want)
    assert (got[0] == 0).all()


def test_sampled_draws_come_from_the_engine_generator():
    """Without given uniforms both engines draw the same ones from their seeded generator."""
    n_features, flat = problem(5)
    cfg = SGDConfig(k=2, sample=5, batch_size=6, seed=9)
    (a, b), numba, tor = _pair(n_features, flat, cfg, torch.float64)
    for pos, _ in zip(numba, tor, strict=True):
        assert tor.step(pos, 0.1) == pytest.approx(numba.step(pos, 0.1), rel=1e-9)
    assert_close(b.v.detach(), a.v.detach(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("init", ["random", "mm"])
def test_train_sgd_torch_equals_numba(ds, init):
    flat = ds.flat()
    cfg = SGDConfig(k=4, epochs=2, batch_size=64, init=init, mm_iters=2, seed=1)
    a, ha = train_sgd(cfg, flat, TrainContext.of(ds.registry, "cpu", progress=False))
    b, hb = train_sgd(
        SGDConfig(**{**vars(cfg), "engine": "torch"}),
        flat,
        TrainContext.of(ds.registry, "cpu", progress=False),
    )
    assert_close(b.w, a.w, rtol=1e-5, atol=1e-6)
    assert_close(b.v, a.v, rtol=1e-5, atol=1e-6)
    for ra, rb in zip(ha, hb, strict=True):
        assert rb["loss"] == pytest.approx(ra["loss"], rel=1e-6)
        assert rb["log_likelihood"] == pytest.approx(ra["log_likelihood"], rel=1e-6)


def test_torch_engine_resumes(ds, tmp_path):
    flat = ds.flat()
    f = ds.registry.n_features
    cfg = SGDConfig(k=3, epochs=3, batch_size=64, engine="torch", seed=2, schedule="constant")
    whole, _ = train_sgd(cfg, flat, TrainContext.of(ds.registry, "cpu", progress=False))
    ck = Resume(tmp_path / "state.pt")
    train_sgd(
        SGDConfig(**{**vars(cfg), "epochs": 1}),
        flat,
        TrainContext.of(ds.registry, "cpu", progress=False, checkpoint=ck),
    )
    resumed, hist = train_sgd(
        cfg,
        flat,
        TrainContext(
            f, [], "cpu", progress=False, checkpoint=Resume(tmp_path / "state.pt", resume=True)
        ),
    )
    assert [h["iter"] for h in hist] == [0, 1, 2, 3]
    assert torch.equal(resumed.w, whole.w) and torch.equal(resumed.v, whole.v)


@pytest.mark.gpu
def test_cuda_equals_numba(ds):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA")
    flat = ds.flat()
    cfg = SGDConfig(k=4, epochs=2, batch_size=64, sample=0, seed=3)
    a, ha = train_sgd(cfg, flat, TrainContext.of(ds.registry, "cpu", progress=False))
    b, hb = train_sgd(cfg, flat, TrainContext.of(ds.registry, "cuda", progress=False))
    assert isinstance(b, FactorizationBT) and b.w.device.type == "cuda"
    assert_close(b.w.cpu(), a.w, rtol=1e-6, atol=1e-6)
    assert hb[-1]["loss"] == pytest.approx(ha[-1]["loss"], rel=1e-6)
