"""FlatTeams (cached strengths) against the streaming MM statistics.

Invariants checked:
- collect() equals collect_stats() over padded batches of the same dataset, for
  single groups, several groups and after partial gamma changes (the cache);
- train_mm on FlatTeams gives the same gammas and history as on batches.
"""

from __future__ import annotations

import pytest
import torch

from gomove.data.loader import BatchLoader
from gomove.train.flat import FlatTeams
from gomove.train.mm import MMConfig, collect_stats, train_mm

CPU = torch.device("cpu")


def groups_of(reg):
    return reg.group_spans()


@pytest.mark.parametrize("engine", ["numba", "torch"])
def test_collect_equals_streaming(ds, engine):
    flat = FlatTeams.from_dataset(ds, chunk_positions=37, engine=engine)
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
        got = flat.collect(lg, cols)
        assert got.n_positions == want.n_positions == ds.n_positions
        assert got.log_likelihood == pytest.approx(want.log_likelihood, rel=1e-12)
        for c in cols:
            o, s = groups_of(ds.registry)[c][1:]
            torch.testing.assert_close(got.wins[o : o + s], want.wins[o : o + s])
            torch.testing.assert_close(got.denom[o : o + s], want.denom[o : o + s])


@pytest.mark.parametrize("engine", ["numba", "torch"])
def test_training_identical(ds, engine):
    reg = ds.registry
    cfg = MMConfig(max_iters=3, tol=0.0)
    m1, h1 = train_mm(
        BatchLoader(ds, batch_size=64),
        reg.n_features,
        groups_of(reg),
        cfg,
        device="cpu",
        progress=False,
    )
    m2, h2 = train_mm(
        FlatTeams.from_dataset(ds),
        reg.n_features,
        groups_of(reg),
        cfg,
        device="cpu",
        progress=False,
    )
    torch.testing.assert_close(m1.log_gamma, m2.log_gamma)
    assert [r["log_posterior"] for r in h1] == pytest.approx([r["log_posterior"] for r in h2])
