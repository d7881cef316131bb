"""MM's engines over the flat layout (compiled and tensor, cached strengths) against the padded one.

Invariants checked:
- collect() of NumbaMM and TorchMM equals collect_stats() over padded batches of
  the same dataset, for single groups, several groups and after partial gamma
  changes (the cache);
- train_mm on either engine gives the same gammas and history as on batches;
- on synthetic positions with a wide (uint16) group: numba engine == torch
  engine == padded oracle, pass after pass, after one, several or no group
  changes, and in training (cyclic and greedy);
- the numba pass that applies a change (fused) equals dense_scale + a plain
  pass bitwise;
- float32 team strengths (the default) train to the float64 gammas within 1e-5;
- the streaming engine (no kept strengths, data read in chunks) equals the oracle too,
  and MM's warm start on the first positions reaches the same fixed point.
"""

from __future__ import annotations

import logging
from functools import partial

import numpy as np
import pytest
import torch
from numba import get_num_threads
from synthetic import flat_of, make_data, make_groups, random_log_gamma

from gomove.data.loader import BatchLoader
from gomove.train.context import TrainContext
from gomove.train.mm.compiled import NumbaMM
from gomove.train.mm.fit import train_mm
from gomove.train.mm.kernels import (
    Change,
    Group,
    Positions,
    Strengths,
    dense_scale,
    mm_pass,
    parts_wave,
)
from gomove.train.mm.padded import collect_stats
from gomove.train.mm.stream import StreamMM
from gomove.train.mm.tensor import TorchMM
from gomove.train.schemas import MMConfig

CPU = torch.device("cpu")
# the oracle comparisons hold float64 strengths; float32's own test is below
# numba-sparse: every group's candidates of level > 0 listed (sparse passes only),
# numba-dense: none; numba: those of the default density
ENGINES = {
    "numba": partial(NumbaMM, team_dtype="float64"),
    "numba-sparse": partial(NumbaMM, team_dtype="float64", sparse_density=1.0),
    "numba-dense": partial(NumbaMM, team_dtype="float64", sparse_density=-1.0),
    "torch": TorchMM,
    "stream": lambda data, chunk_positions=None, **kw: stream_engine(data, 7),
}


def stream_engine(data, chunk_positions: int) -> StreamMM:
    """The streaming engine over data read in chunks of chunk_positions positions."""
    data.chunk_positions = chunk_positions
    return StreamMM(data)


def groups_of(reg):
    return reg.group_spans()


@pytest.mark.parametrize("engine", list(ENGINES))
def test_collect_equals_streaming(ds, engine):
    flat = ENGINES[engine](ds.flat(), chunk_positions=37)
    loader = BatchLoader(ds, batch_size=29)
    g = torch.Generator().manual_seed(0)
    lg = torch.randn(ds.registry.n_features, generator=g, dtype=torch.float64)
    lg[0] = 0
    n_groups = len(ds.registry.groups)
    for step, cols in enumerate([(0,), (n_groups - 1,), tuple(range(n_groups)), (2, 4)]):
        if step == 2:  # change a few gammas: the cache must follow
            lg = lg.clone()
            lg[[3, 7, int(ds.registry.offsets[-1])]] += torch.tensor(
                [0.5, -1.0, 2.0], dtype=torch.float64
            )
        want = collect_stats(lg, loader, cols, CPU)
        got = flat.collect(lg.numpy(), cols)
        assert got.n_positions == want.n_positions == ds.n_positions
        assert got.log_likelihood == pytest.approx(want.log_likelihood, rel=1e-12)
        for c in cols:
            o, s = groups_of(ds.registry)[c][1:]
            torch.testing.assert_close(got.wins[o : o + s], want.wins[o : o + s])
            torch.testing.assert_close(got.denom[o : o + s], want.denom[o : o + s])


def test_chunks_capped(ds):
    """NumbaMM keeps partial sums per chunk and level: the chunks are capped in
    number (their size grows), with the same statistics."""
    flat = ds.flat()
    small = NumbaMM(flat, chunk_positions=1, team_dtype="float64", max_chunks=10**9)
    capped = NumbaMM(flat, chunk_positions=1, team_dtype="float64", max_chunks=5)
    assert len(small.chunk_pos) - 1 == ds.n_positions
    assert len(capped.chunk_pos) - 1 <= 5 and capped.chunk_pos[-1] == ds.n_positions
    g = torch.Generator().manual_seed(1)
    lg = torch.randn(ds.registry.n_features, generator=g, dtype=torch.float64)
    lg[0] = 0
    cols = tuple(range(len(ds.registry.groups)))
    a, b = small.collect(lg.numpy(), cols), capped.collect(lg.numpy(), cols)
    assert b.log_likelihood == pytest.approx(a.log_likelihood, rel=1e-12)
    torch.testing.assert_close(b.denom, a.denom, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(b.wins, a.wins)


def test_waves_of_chunks_give_the_same_bits(ds):
    """A pass whose chunks' partial sums would take more than part_bytes runs them
    in waves (kernels.parts_wave): the same additions in the same order, so the same
    statistics bit for bit, dense and sparse groups, and the same model after MM."""
    flat = ds.flat()
    reg = ds.registry
    whole = NumbaMM(flat, chunk_positions=7, team_dtype="float64")
    waves = NumbaMM(flat, chunk_positions=7, team_dtype="float64", part_bytes=1)
    n_chunks = len(whole.chunk_pos) - 1
    assert n_chunks > 2 * get_num_threads() and whole.sparse
    assert whole._wave(1000) == n_chunks and waves._wave(1000) == get_num_threads()
    g = torch.Generator().manual_seed(2)
    lg = torch.randn(reg.n_features, generator=g, dtype=torch.float64).numpy()
    lg[0] = 0
    cols = tuple(range(len(reg.groups)))
    for engine in (whole, waves):
        engine.advance(lg)  # sums e kept: the sparse groups' own passes
    a, b = whole.collect(lg, cols), waves.collect(lg, cols)
    assert a.log_likelihood == b.log_likelihood
    assert np.array_equal(a.wins, b.wins) and np.array_equal(a.denom, b.denom)
    cfg = MMConfig(max_iters=3, tol=0.0)
    ctx = TrainContext(reg.n_features, groups_of(reg), "cpu", progress=False)
    m1, h1 = train_mm(cfg, NumbaMM(flat, chunk_positions=7), ctx)
    m2, h2 = train_mm(cfg, NumbaMM(flat, chunk_positions=7, part_bytes=1), ctx)
    assert torch.equal(m1.log_gamma, m2.log_gamma)
    assert [r["log_posterior"] for r in h1] == [r["log_posterior"] for r in h2]


def test_parts_wave():
    """All the chunks where their sums fit, else as many as fit, never fewer than the
    threads nor more than the chunks; small groups count their lanes."""
    t = get_num_threads()
    assert parts_wave(32, 10**5, 1 << 30) == 32
    assert parts_wave(32, 4_888_022, 256 << 20) == max(t, 6)
    assert parts_wave(32, 4_888_022, 1) == min(32, t)
    assert parts_wave(3, 10**9, 1) == min(3, t)
    assert parts_wave(32, 100, 8 * 100 * 10) == max(t, 2)  # 4 lanes of 100 levels


@pytest.mark.parametrize("engine", list(ENGINES))
def test_training_identical(ds, engine):
    reg = ds.registry
    cfg = MMConfig(max_iters=3, tol=0.0)
    m1, h1 = train_mm(
        cfg,
        BatchLoader(ds, batch_size=64),
        TrainContext(reg.n_features, groups_of(reg), "cpu", progress=False),
    )
    m2, h2 = train_mm(
        cfg,
        ENGINES[engine](ds.flat()),
        TrainContext(reg.n_features, groups_of(reg), "cpu", progress=False),
    )
    torch.testing.assert_close(m1.log_gamma, m2.log_gamma)
    assert [r["log_posterior"] for r in h1] == pytest.approx([r["log_posterior"] for r in h2])


def change(lg: torch.Tensor, groups, which, gen) -> torch.Tensor:
    """lg with the gammas of the groups ``which`` moved at random."""
    lg = lg.clone()
    for g in which:
        _, o, s = groups[g]
        lg[o : o + s] += 0.5 * torch.randn(s, generator=gen, dtype=torch.float64)
    return lg


@pytest.mark.parametrize("seed", [0, 1])
def test_engines_equal_padded_oracle(seed):
    """On the same positions (one group of >= 256 levels, a wide group), NumbaMM,
    TorchMM (its absent levels dropped or kept) and collect_stats over padded
    batches (the oracle) give the same statistics pass after pass, whether one group
    changed since the last pass (NumbaMM applies that change within the pass),
    several, or none."""
    sizes = [3, 4, 2, 300]
    groups = make_groups(sizes)
    n_features = 1 + sum(sizes)
    batches = make_data(random_log_gamma(n_features, seed), groups, 3, 20, 9, seed)
    flat = flat_of(batches, groups)
    assert flat.layout.wide == (3,)
    numba = [ENGINES[k](flat, chunk_positions=7) for k in ("numba-sparse", "numba-dense")]
    # TorchMM both ways: each group's level 0 dropped before its bincount, or kept
    dropped, kept = TorchMM(flat, chunk_positions=5), TorchMM(flat, chunk_positions=5)
    dropped.sparse, kept.sparse = [True] * len(sizes), [False] * len(sizes)
    engines = [*numba, dropped, kept]
    gen = torch.Generator().manual_seed(seed)
    lg = torch.zeros(n_features, dtype=torch.float64)
    schedule = [((0,), ()), ((1,), (0,)), ((3,), (1,)), ((0, 1, 2, 3), (3,)), ((2,), (0, 2))]
    schedule += [((), ()), ((1, 3), (2,)), ((0,), ())]
    for cols, changed in schedule:
        lg = change(lg, groups, changed, gen)
        want = collect_stats(lg, batches, cols, CPU)
        got = [e.collect(lg.numpy(), cols) for e in engines]
        for stats in got:
            assert stats.n_positions == want.n_positions == flat.n_positions
            torch.testing.assert_close(stats.log_likelihood, want.log_likelihood)
            for c in cols:
                _, o, s = groups[c]
                torch.testing.assert_close(stats.wins[o : o + s], want.wins[o : o + s])
                torch.testing.assert_close(stats.denom[o : o + s], want.denom[o : o + s])
        for stats in got[1:]:
            torch.testing.assert_close(got[0].wins, stats.wins)
            torch.testing.assert_close(got[0].denom, stats.denom)


@pytest.mark.parametrize("schedule", ["cyclic", "greedy"])
def test_engines_train_alike(schedule):
    """train_mm on NumbaMM, TorchMM and padded batches of the same positions: the same
    gammas, log-posteriors and updates, whichever schedule."""
    sizes = [3, 4, 2, 300]
    groups = make_groups(sizes)
    n_features = 1 + sum(sizes)
    batches = make_data(random_log_gamma(n_features, 5), groups, 4, 25, 9, 5)
    flat = flat_of(batches, groups)
    cfg = MMConfig(max_iters=3, tol=0.0, schedule=schedule)
    runs = [
        train_mm(cfg, data, TrainContext(n_features, groups, "cpu", progress=False))
        for data in (batches, *(ENGINES[k](flat) for k in ENGINES if k != "torch"), TorchMM(flat))
    ]
    (m0, h0), *others = runs
    for m, h in others:
        torch.testing.assert_close(m.log_gamma, m0.log_gamma)
        assert [r["log_posterior"] for r in h] == pytest.approx([r["log_posterior"] for r in h0])
        assert [r["updates"] for r in h] == [r["updates"] for r in h0]


def test_fused_pass_is_scale_then_pass():
    """mm_pass with a change to apply gives bitwise the strengths, sums and position
    sums of dense_scale followed by a plain pass, over strided level columns."""
    sizes = [3, 4, 2, 300]
    groups = make_groups(sizes)
    batches = make_data(random_log_gamma(1 + sum(sizes), 2), groups, 2, 30, 9, 2)
    flat = flat_of(batches, groups)
    rng = np.random.default_rng(0)
    team = rng.random(flat.n_candidates) + 0.5
    factor = rng.random(sizes[3] + 1) + 0.5
    chunks = np.array([0, 7, 20, flat.n_positions], dtype=np.int64)
    pos = Positions(flat.pos_start, flat.expert_candidates(), chunks)
    lev, scale_lev = Group(*flat.field(1)), Group(*flat.field(3))
    a, e_a = team.copy(), np.zeros(flat.n_positions)
    dense_scale(Strengths(a, e_a), pos, scale_lev, factor)
    unchanged = Change(lev, np.ones(1), False)
    want = mm_pass(Strengths(a, np.zeros(0)), pos, lev, sizes[1] + 1, unchanged, 3)
    b, e_b = team.copy(), np.zeros(flat.n_positions)
    got = mm_pass(Strengths(b, e_b), pos, lev, sizes[1] + 1, Change(scale_lev, factor, True), 3)
    assert np.array_equal(a, b) and got[0] == want[0] and np.array_equal(got[1], want[1])
    assert np.array_equal(e_a, e_b)


def test_float32_strengths_train_like_float64(ds):
    """The default float32 strengths: the same gammas as float64 ones to 1e-5 relative
    and the same log-posteriors to 1e-7, after 8 iterations of either schedule."""
    reg = ds.registry
    flat = ds.flat()
    for schedule in ("cyclic", "greedy"):
        cfg = MMConfig(max_iters=8, tol=0.0, schedule=schedule)
        (m32, h32), (m64, h64) = (
            train_mm(
                cfg,
                NumbaMM(flat, team_dtype=t),
                TrainContext(reg.n_features, groups_of(reg), "cpu", progress=False),
            )
            for t in ("float32", "float64")
        )
        assert NumbaMM(flat).team.dtype == np.float32
        torch.testing.assert_close(m32.log_gamma, m64.log_gamma, rtol=0, atol=1e-5)
        lp32, lp64 = ([r["log_posterior"] for r in h] for h in (h32, h64))
        assert lp32 == pytest.approx(lp64, rel=1e-7)
        assert [r["updates"] for r in h32] == [r["updates"] for r in h64]


def test_torch_engine_holds_the_compact_layout(ds):
    """TorchMM holds the levels as stored plus one float64 a candidate (the record's
    bytes and 8 at most, no widened per-group copies) and gives numba's statistics."""
    flat = ds.flat()
    engine = TorchMM(flat, chunk_positions=50)
    per_position = 40  # pos_start, winner, game, move, the experts' rows
    dictionary = 8 * flat.combos.size  # the combinations, once (int64 on the device)
    per_candidate = engine.nbytes() - per_position * flat.n_positions - dictionary
    assert per_candidate / flat.n_candidates <= flat.words.nbytes / flat.n_candidates + 8.01
    lg = np.random.default_rng(1).normal(size=ds.registry.n_features) * 0.3
    cols = list(range(len(flat.sizes)))
    a = engine.collect(lg, cols)
    b = NumbaMM(flat, team_dtype="float64").collect(lg, cols)
    np.testing.assert_allclose(a.denom, b.denom, rtol=1e-10)
    assert a.log_likelihood == pytest.approx(b.log_likelihood, rel=1e-12)


@pytest.mark.gpu
def test_cuda_mm_equals_numba(ds):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA")
    reg = ds.registry
    cfg = MMConfig(max_iters=3, tol=0.0)
    flat = ds.flat()
    runs = [
        train_mm(cfg, e, TrainContext(reg.n_features, groups_of(reg), d, progress=False))
        for e, d in ((NumbaMM(flat, team_dtype="float64"), CPU), (TorchMM(flat, "cuda"), "cuda"))
    ]
    (a, ha), (b, hb) = runs
    torch.testing.assert_close(b.log_gamma.cpu(), a.log_gamma.cpu(), rtol=1e-6, atol=1e-9)
    assert hb[-1]["log_likelihood"] == pytest.approx(ha[-1]["log_likelihood"], rel=1e-9)


def test_warm_start_reaches_the_same_fixed_point(ds, caplog):
    """Data read in chunks (the streaming engine) with a warm start on its first third:
    the stage is recorded (each iteration logged), and MM converges to the maximum of a
    cold start."""
    reg = ds.registry
    ctx = TrainContext(reg.n_features, groups_of(reg), "cpu", progress=False)
    cold, cold_hist = train_mm(MMConfig(max_iters=300, tol=1e-7), ds.flat(), ctx)
    flat = ds.flat()
    flat.chunk_positions = 37
    third = flat.n_positions // 3
    cfg = MMConfig(max_iters=300, tol=1e-7, warm_positions=third)
    caplog.set_level(logging.INFO, logger="gomove.train.mm.fit")
    warm, hist = train_mm(cfg, flat, ctx)
    assert hist[0]["warm"]["positions"] == third and hist[0]["warm"]["iterations"] > 0
    logged = [r for r in caplog.messages if r.startswith("MM warm start: iter ")]
    assert len(logged) == hist[0]["warm"]["iterations"] + 1  # row 0 too
    # the same maximum of the log-posterior; gammas along its flat directions converge slowly
    assert hist[-1]["log_posterior"] == pytest.approx(cold_hist[-1]["log_posterior"], rel=1e-7)
    torch.testing.assert_close(warm.log_gamma, cold.log_gamma, rtol=0, atol=0.1)
