"""Training on several processes or machines with torch.distributed, as launched by torchrun.

Terms:
- world: the processes of one run (``World``): ``size`` ranks, this process is
  ``rank``, ``local_size`` of them on this machine. ``torchrun
  --nproc-per-node N`` (and ``--nnodes``) sets RANK, WORLD_SIZE and
  LOCAL_WORLD_SIZE; without them, or with WORLD_SIZE 1, the world is this one
  process and no process group exists: a plain run behaves as before.
- share: a rank's part of the data, games i with i % size == rank
  (gomove.data.dataset.build_dataset ``part``): each rank extracts and holds
  only its own positions.
- shared harvest: each rank counts the shapes of its share of the training
  games, every pattern from its first sighting (no Bloom filter: a pattern seen
  once on two ranks is seen twice), the counts summed across ranks and only
  then cut at min_count (``harvest_shared``): the 1-process table, hashes,
  radii and counts (up to the Bloom filter's rare overcount there), each
  pattern's stone configuration from the lowest rank that saw it.
- all-reduce: the sum over ranks, left on every rank. MM all-reduces its
  statistics (``DistributedMM``), FBT/LFR their flat gradient
  (``DistributedSGD``), so both fit the model one process fits on all the
  positions, up to the order of summation.

Backend: gloo on the CPU, NCCL on CUDA (one GPU per local rank).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from gomove.data.dataset import harvest_source, share
from gomove.data.harvest import count_arrays, count_patterns, stone_states, table_of
from gomove.features.config import FeatureConfig
from gomove.features.pattern_table import PatternTable
from gomove.reading.games import ReadConfig, ReadStats, iter_games


@dataclass(frozen=True)
class World:
    """The processes of a run (module docstring); the default is a single process."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0
    local_size: int = 1
    device: torch.device = torch.device("cpu")  # where collectives put their tensors

    @property
    def distributed(self) -> bool:
        return self.size > 1

    @property
    def main(self) -> bool:
        """Rank 0, the one that writes the run's outputs."""
        return self.rank == 0

    @property
    def part(self) -> tuple[int, int] | None:
        """This rank's share of the games (rank, size), None when it holds them all."""
        return (self.rank, self.size) if self.distributed else None

    def all_reduce(self, t: torch.Tensor) -> torch.Tensor:
        """t summed over ranks, in place (on any device: through self.device)."""
        if not self.distributed:
            return t
        buf = t.to(self.device)
        dist.all_reduce(buf)
        if buf is not t:
            t.copy_(buf)
        return t

    def sum(self, *values: float) -> list[float]:
        """Numbers summed over ranks in float64."""
        t = torch.tensor(values, dtype=torch.float64)
        return self.all_reduce(t).tolist()

    def all_gather(self, obj: Any) -> list[Any]:
        """Every rank's obj, in rank order, on every rank (pickled)."""
        if not self.distributed:
            return [obj]
        out: list[Any] = [None] * self.size
        dist.all_gather_object(out, obj)
        return out

    def broadcast(self, obj: Any) -> Any:
        """Rank 0's obj on every rank."""
        if not self.distributed:
            return obj
        box = [obj if self.main else None]
        dist.broadcast_object_list(box, src=0, device=self.device)
        return box[0]

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()


def init_world(device: torch.device) -> tuple[World, torch.device]:
    """The world torchrun launched this process in, its process group initialised
    (gloo on the CPU, NCCL on CUDA), and the device of this rank: on CUDA, the GPU
    of its local rank. Without torchrun (or WORLD_SIZE 1): World() and device."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World(), device
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    local_size = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    if device.type == "cuda":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    comm = device if device.type == "cuda" else torch.device("cpu")
    return World(rank, size, local_rank, local_size, comm), device


def close_world(world: World) -> None:
    """Leave the process group (after a last barrier: nobody leaves while others write)."""
    if world.distributed and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


class RankPrefix(logging.Filter):
    """Prefixes every log message with ``[rank r/size]``."""

    def __init__(self, world: World) -> None:
        super().__init__()
        self.prefix = f"[rank {world.rank}/{world.size}] "

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(self.prefix):
            record.msg = self.prefix + str(record.msg)
        return True


def prefix_logs(world: World) -> None:
    """Prefix the root handlers' messages with the rank (a no-op on one process)."""
    if not world.distributed:
        return
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RankPrefix) for f in handler.filters):
            handler.addFilter(RankPrefix(world))


def gather_arrays(world: World, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every rank's arrays concatenated in rank order, key by key, on every rank."""
    parts = world.all_gather(arrays)
    return {k: np.concatenate([a[k] for a in parts]) for k in arrays}


def harvest_shared(
    games: Iterable[Any],
    cfg: FeatureConfig,
    world: World,
    workers: int = 1,
    progress: bool = True,
    total: int | None = None,
) -> PatternTable:
    """The pattern table of all ranks' games, each rank counting its own (module
    docstring), the same table on every rank.

    The counts are summed by the rank owning a hash (hash % size), which cuts
    them at min_count: no rank holds every pattern seen, only the kept ones.
    """
    counts, stones, t, *_ = count_patterns(games, cfg, workers, progress, total, bloom=False)
    keys, count, rad_idx = count_arrays(counts)
    owner = (keys % np.uint64(world.size)).astype(np.int64)
    mine: list[tuple[np.ndarray, ...]] = []
    for dst in range(world.size):
        sel = owner == dst
        part = (keys[sel], count[sel], rad_idx[sel])
        if not world.distributed:
            mine = [part]
            break
        box: list[Any] | None = [None] * world.size if world.rank == dst else None
        dist.gather_object(part, box, dst=dst)
        if box is not None:
            mine = box
    k = np.concatenate([p[0] for p in mine])
    uniq, inv = np.unique(k, return_inverse=True)
    total_count = np.zeros(len(uniq), dtype=np.int64)
    np.add.at(total_count, inv, np.concatenate([p[1] for p in mine]))
    rad = np.zeros(len(uniq), dtype=np.int64)
    rad[inv] = np.concatenate([p[2] for p in mine])
    keep = total_count >= cfg.min_count
    kept = world.all_gather((uniq[keep], total_count[keep], rad[keep]))
    keys_k, count_k, rad_k = (np.concatenate([p[i] for p in kept]) for i in range(3))
    # stone configurations: each rank draws the kept patterns it saw; the lowest rank wins
    seen = np.isin(keys_k, keys)
    drawn = world.all_gather((keys_k[seen], stone_states(stones, t, keys_k[seen], rad_k[seen])))
    width = int(t.ends[-1])
    states = np.zeros((len(keys_k), width), dtype=np.uint8)
    index = {int(h): i for i, h in enumerate(keys_k)}
    for hashes, st in reversed(drawn):
        rows = np.array([index[int(h)] for h in hashes], dtype=np.int64)
        states[rows] = st
    return table_of(keys_k, count_k, rad_k, states, t, cfg)


def harvest_cached_shared(
    paths: Any,
    read_cfg: ReadConfig,
    feat_cfg: FeatureConfig,
    cache_dir: str | Path,
    workers: int = 1,
    progress: bool = True,
    *,
    world: World,
) -> PatternTable:
    """gomove.data.dataset.harvest_cached on several ranks: the table rank 0 has cached,
    or ``harvest_shared`` over the ranks' shares, then cached by rank 0."""
    path, harvest_read = harvest_source(paths, read_cfg, feat_cfg, cache_dir)
    if world.broadcast(path.exists()):
        return world.broadcast(PatternTable.load(path) if world.main else None)
    games = (g for _, g in share(iter_games(paths, harvest_read, ReadStats()), world.part))
    total = harvest_read.max_games and -(-harvest_read.max_games // world.size)
    table = harvest_shared(games, feat_cfg, world, workers, progress, total)
    if world.main:
        table.save(path)
    return table
