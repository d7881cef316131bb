"""Training on 2 processes (gloo, spawned as torchrun would launch them) against 1.

Invariants checked:
- MM on 2 ranks, each extracting and holding its share of the games, fits the
  gammas of 1 process to 1e-9 relative and gives the same test measures and
  positions.npz; metrics.json has world_size and rank_positions, which add up
  to the 1-process training positions; both ranks return the same metrics;
- the ranks' datasets partition the games: together, the 1-process dataset's
  positions with the same game ids;
- DistributedSGD on 2 ranks (full gradient and LFR) gives the model of one
  CompiledSGD fed the union of the ranks' parts as its batches (1e-10), the same
  model on both ranks;
- fbt trains end to end on 2 ranks (run), the same model as saved on each;
- a single process (no WORLD_SIZE) is World(): no process group.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from synthetic import cfg_of, tiny_overrides

from gomove.data.dataset import Dataset, build_dataset
from gomove.data.flat import FlatData
from gomove.models.checkpoint import load_checkpoint
from gomove.models.fbt import FactorizationBT
from gomove.reading.games import ReadConfig
from gomove.train.schemas import SGDConfig
from gomove.train.sgd.compiled import CompiledSGD
from gomove.train.sgd.distributed import DistributedSGD
from gomove.train.trainers import run
from gomove.train.world import World, init_world

WORLD = 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launched(rank: int, port: int) -> None:
    """The environment torchrun gives rank of WORLD processes on this machine."""
    os.environ.update(
        RANK=str(rank),
        WORLD_SIZE=str(WORLD),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(WORLD),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
    )


def _run_rank(rank: int, jobs: list[tuple[object, str, int, str]]) -> None:
    """Each job: run(cfg, out) as one of WORLD ranks; its metrics to result (per rank)."""
    for cfg, out, port, result in jobs:
        _launched(rank, port)
        metrics = run(cfg, out)
        Path(f"{result}.{rank}.json").write_text(json.dumps(metrics))


def _metrics(result: Path) -> list[dict]:
    return [json.loads(Path(f"{result}.{r}.json").read_text()) for r in range(WORLD)]


@pytest.fixture(scope="module")
def runs(games, tmp_path_factory):
    """mm (5 iterations) and fbt (2 epochs) runs on 1 process and on 2, caches apart;
    and mm on 2 processes with the data read in chunks (each rank's streaming engine)."""
    tmp = tmp_path_factory.mktemp("dist")
    one, two = tmp / "one", tmp / "two"
    mm = ["model.max_iters=5", "model.tol=0"]
    fbt = ["model=fbt", "k=3", "model.epochs=2", "data.batch_size=64", "device=cpu"]
    jobs = []
    for name, extra in (("mm", mm), ("fbt", fbt)):
        run(cfg_of([*tiny_overrides(games, one), *extra]), one / name)
        cfg = cfg_of([*tiny_overrides(games, two), *extra])
        jobs.append((cfg, str(two / name), free_port(), str(two / name)))
    cfg = cfg_of([*tiny_overrides(games, two), *mm, "data.chunk_positions=300"])
    jobs.append((cfg, str(two / "mm_chunked"), free_port(), str(two / "mm_chunked")))
    mp.spawn(_run_rank, args=(jobs,), nprocs=WORLD, join=True)
    return one, two


def test_mm_two_ranks_equal_one(runs):
    one, two = runs
    a = load_checkpoint(one / "mm" / "model.pt")["model"]["log_gamma"]
    b = load_checkpoint(two / "mm" / "model.pt")["model"]["log_gamma"]
    assert (a != 0).any()
    torch.testing.assert_close(b.exp(), a.exp(), rtol=1e-9, atol=0)
    m1 = json.loads((one / "mm" / "metrics.json").read_text())
    m2 = json.loads((two / "mm" / "metrics.json").read_text())
    assert m1["world_size"] == 1 and m1["rank_positions"] == [m1["train_positions"]]
    assert m2["world_size"] == 2 and len(m2["rank_positions"]) == 2
    for key in ("rank_data_seconds", "rank_peak_rss_mb"):  # bench.py scale reads them
        assert len(m1[key]) == 1 and len(m2[key]) == 2 and min(m2[key]) > 0, key
    assert min(m2["rank_positions"]) > 0
    assert sum(m2["rank_positions"]) == m1["train_positions"] == m2["train_positions"]
    assert m2["train_games"] == m1["train_games"]
    for key in ("n_positions", "n_games", "top1", "topn", "mean_rank"):
        assert m2[key] == m1[key], key
    for r1, r2 in zip(m1["phase"], m2["phase"], strict=True):
        assert r2 == pytest.approx(r1, rel=1e-9)
    for key in ("log_evidence", "rank_error", "mean_legal"):
        assert m2[key] == pytest.approx(m1[key], rel=1e-9), key
    # every rank returns the measures rank 0 wrote (its own times and memory)
    # the gathered lists agree
    own = ("train_seconds", "algorithm_seconds", "peak_rss_mb", "peak_anon_mb",
           "peak_anon_mb_by_stage")  # fmt: skip
    r0, r1 = ({k: v for k, v in m.items() if k not in own} for m in _metrics(two / "mm"))
    assert r0 == r1 == {k: v for k, v in m2.items() if k not in own}
    p1, p2 = np.load(one / "mm" / "positions.npz"), np.load(two / "mm" / "positions.npz")
    for key in ("rank", "n_legal", "game", "move", "radius"):
        np.testing.assert_array_equal(p2[key], p1[key])
    np.testing.assert_allclose(p2["log_p"], p1["log_p"], rtol=1e-9)


def test_mm_two_ranks_reading_chunks_equal_one_in_memory(runs):
    """torchrun over data read in chunks: each rank streams its share, the sums are
    summed over ranks, and the gammas are the one-process in-memory run's."""
    one, two = runs
    a = load_checkpoint(one / "mm" / "model.pt")["model"]["log_gamma"]
    b = load_checkpoint(two / "mm_chunked" / "model.pt")["model"]["log_gamma"]
    # the in-memory engine caches team strengths in float32, the streaming one
    # recomputes them in float64: a few 1e-8 apart after 5 iterations
    torch.testing.assert_close(b.exp(), a.exp(), rtol=1e-6, atol=0)
    m1 = json.loads((one / "mm" / "metrics.json").read_text())
    m2 = json.loads((two / "mm_chunked" / "metrics.json").read_text())
    assert m2["world_size"] == 2 and sum(m2["rank_positions"]) == m1["train_positions"]
    assert m2["top1"] == m1["top1"]


def test_mm_same_pattern_table(runs):
    """The table the 2-rank run cut (its checkpoint's) is the 1-process one."""
    one, two = runs
    t1 = load_checkpoint(one / "mm" / "model.pt")["extractor"].table
    t2 = load_checkpoint(two / "mm" / "model.pt")["extractor"].table
    for key in ("hashes", "radius", "count"):
        np.testing.assert_array_equal(getattr(t2, key), getattr(t1, key))


def test_fbt_two_ranks_end_to_end(runs):
    one, two = runs
    m1 = json.loads((one / "fbt" / "metrics.json").read_text())
    m2 = json.loads((two / "fbt" / "metrics.json").read_text())
    assert m2["world_size"] == 2 and sum(m2["rank_positions"]) == m1["train_positions"]
    assert m2["n_positions"] == m1["n_positions"]
    assert m2["iterations"] == 2 and np.isfinite(m2["log_evidence"])
    ranks = _metrics(two / "fbt")
    assert ranks[0]["log_evidence"] == ranks[1]["log_evidence"]


def test_shares_partition_the_games(games, tmp_path, extracted):
    """build_dataset(part=(r, 2)): the games i % 2 == r, global ids, nothing lost."""
    ds, ex = extracted
    path = Path(ds.meta["games"][0]).parent
    rc = ReadConfig(sizes=(9,))
    parts = [
        build_dataset(path, rc, ex, tmp_path, shard_games=3, workers=1, progress=False, part=p)
        for p in ((0, 2), (1, 2))
    ]
    assert sum(p.n_positions for p in parts) == ds.n_positions
    assert sum(p.n_games for p in parts) == ds.n_games
    whole = ds.flat()
    for r, p in enumerate(parts):
        ids = np.asarray(p.flat().game)
        assert (ids % 2 == r).all()
        flat = p.flat()
        mine = np.isin(_position_games(ds), np.unique(ids))
        np.testing.assert_array_equal(
            flat.winner, whole.winner[mine]
        )  # the same positions in the same order


def _position_games(ds: Dataset) -> np.ndarray:
    return np.asarray(ds.flat().game)


def _subset(data: FlatData, positions: np.ndarray) -> FlatData:
    starts, ends = data.pos_start[positions], data.pos_start[positions + 1]
    rows = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends, strict=True)])
    levels = [data.level(g)[rows] for g in range(len(data.sizes))]
    pos_start = np.concatenate([[0], np.cumsum(ends - starts)])
    return FlatData.from_levels(
        levels, data.offsets, data.sizes, pos_start, data.winner[positions], data.registry
    )


def _sgd_model(n_features: int, cfg: SGDConfig) -> FactorizationBT:
    gen = torch.Generator().manual_seed(cfg.seed)
    return FactorizationBT(n_features, cfg.k, cfg.init_std, generator=gen)


SGD_LR = 0.05


def _sgd_rank(rank: int, init: str, shares, n_features: int, cfg: SGDConfig, out: str) -> None:
    """Two epochs of DistributedSGD on this rank's share; its batches (global ids)
    and the final parameters to out."""
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=WORLD)
    ids = shares[rank]
    model = _sgd_model(n_features, cfg)
    steps = DistributedSGD(model, _subset(shares["data"], ids), cfg, World(rank, WORLD))
    batches = []
    for _ in range(2):
        for pos in steps:
            steps.step(pos, SGD_LR)
            batches.append(ids[pos])
    dist.destroy_process_group()
    np.savez(
        f"{out}.{rank}.npz",
        w=model.w.detach().numpy(),
        v=model.v.detach().numpy(),
        batches=np.array(batches, dtype=object),
    )


@pytest.mark.parametrize("name", ["fbt", "lfr"])
def test_sgd_two_ranks_equal_one_fed_the_global_batches(ds, tmp_path, name):
    data = ds.flat()
    n = data.n_positions
    rng = np.random.default_rng(3)
    order = rng.permutation(n)
    shares = {0: np.sort(order[: n // 3]), 1: np.sort(order[n // 3 :]), "data": data}
    cfg = SGDConfig(name=name, k=3, batch_size=48, lr=SGD_LR, schedule="constant")
    f = data.min_features + 2
    out = str(tmp_path / "rank")
    init = f"file://{tmp_path / 'init'}"
    mp.spawn(_sgd_rank, args=(init, shares, f, cfg, out), nprocs=WORLD, join=True)
    ranks = [np.load(f"{out}.{r}.npz", allow_pickle=True) for r in range(WORLD)]
    np.testing.assert_array_equal(ranks[0]["w"], ranks[1]["w"])
    np.testing.assert_array_equal(ranks[0]["v"], ranks[1]["v"])

    model = _sgd_model(f, cfg)
    steps = CompiledSGD(model, data, cfg)
    assert len(ranks[0]["batches"]) == 2 * -(-n // cfg.batch_size)
    for b0, b1 in zip(ranks[0]["batches"], ranks[1]["batches"], strict=True):
        steps.step(np.concatenate([b0, b1]).astype(np.int64), SGD_LR)
    np.testing.assert_allclose(ranks[0]["w"], model.w.detach().numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(ranks[0]["v"], model.v.detach().numpy(), rtol=0, atol=1e-10)
    assert np.abs(model.w.detach().numpy()).max() > 1e-3  # it moved


def test_single_process_world(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    world, device = init_world(torch.device("cpu"))
    assert world == World() and not world.distributed and world.part is None
    assert device == torch.device("cpu") and not dist.is_initialized()
