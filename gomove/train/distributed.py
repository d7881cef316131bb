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
- all-reduce: the sum over ranks, left on every rank. MM all-reduces its
  statistics (``DistributedMM``), FBT/LFR their flat gradient
  (``DistributedFlatSGD``), so both fit the model one process fits on all the
  positions, up to the order of summation.

Backend: gloo on the CPU, NCCL on CUDA (one GPU per local rank).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from gomove.models.fbt import FactorizationBT
from gomove.train.config import SGDConfig
from gomove.train.fbt_flat import FlatSGD
from gomove.train.flat import FlatData
from gomove.train.mm import MMPasses, PassStats


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


class DistributedMM(MMPasses):
    """An MM engine over this rank's positions whose passes return the statistics of
    all ranks' positions: wins, denominators and log-likelihood summed in float64 (the
    MM update is a function of these sums, so every rank makes the same update and
    the gammas are those of one process up to the order of summation)."""

    def __init__(self, local: MMPasses, world: World) -> None:
        self.local, self.world = local, world
        self.n_positions = 0  # all ranks' (known after the first pass)

    def collect(self, log_gamma: torch.Tensor, columns: Sequence[int]) -> PassStats:
        s = self.local.collect(log_gamma, columns)
        f = s.wins.shape[0]
        flat = torch.cat(
            [
                s.wins.double(),
                s.denom.double(),
                torch.tensor([s.log_likelihood, s.n_positions], dtype=torch.float64).to(s.wins),
            ]
        )
        self.world.all_reduce(flat)
        self.n_positions = int(flat[-1])
        return PassStats(flat[:f], flat[f : 2 * f], float(flat[-2]), self.n_positions)


def distributed_mm(engine: MMPasses, world: World) -> MMPasses:
    """engine itself on one process, else its all-reducing wrapper."""
    return DistributedMM(engine, world) if world.distributed else engine


class DistributedFlatSGD(FlatSGD):
    """FlatSGD where a step's mini-batch is spread over the ranks (each takes its
    positions' part) and the gradient is that of the whole batch's mean loss.

    A global batch: an epoch has ceil(N / batch_size) steps, N the positions of
    all ranks; each rank cuts its own seeded permutation into that many nearly
    equal parts, so the step's batch is the union of the ranks' parts, about
    batch_size positions. Each rank's gradient of its part's mean loss is weighted
    by its share of the batch's positions and the weighted gradients summed over
    ranks: the gradient one process computes on the whole batch, so every rank
    takes the same optimizer step (the same model on every rank; the
    objective and log-likelihood are summed likewise).
    """

    def __init__(self, model: FactorizationBT, data: FlatData, cfg: SGDConfig, world: World):
        super().__init__(model, data, cfg)
        self.world = world
        # each rank its own order and draws (one seed would draw alike on every rank)
        self.order_rng = np.random.default_rng([cfg.seed, 0, world.rank])
        self.sample_rng = np.random.default_rng([cfg.seed, 1, world.rank])
        (total,) = world.sum(data.n_positions)
        self.n_total = int(total)
        self.steps_per_epoch = max(1, -(-self.n_total // cfg.batch_size))

    def __iter__(self) -> Iterator[np.ndarray]:
        order = self.order_rng.permutation(self.data.n_positions)
        yield from np.array_split(order, self.steps_per_epoch)

    def _reduce(self, ll: float, loss: float, n: int, backward: bool) -> tuple[float, float, int]:
        """Sums over ranks of (log-likelihood, loss, positions); with backward, self.grad
        becomes the gradient of the global batch's mean loss (class docstring)."""
        stats = torch.tensor([ll, loss, n], dtype=torch.float64)
        if backward:
            grad = torch.from_numpy(self.grad)  # a view: reduced in place
            grad *= n
            flat = torch.cat([grad.reshape(-1), stats])
            self.world.all_reduce(flat)
            total = float(flat[-1])
            # an empty global batch (tiny batch_size) keeps a zero gradient
            grad.copy_(flat[:-3].reshape(grad.shape) / max(total, 1.0))
            stats = flat[-3:]
        else:
            self.world.all_reduce(stats)
        ll, loss, total = stats.tolist()
        return ll, loss, int(total)


def gather_arrays(world: World, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every rank's arrays concatenated in rank order, key by key, on every rank."""
    parts = world.all_gather(arrays)
    return {k: np.concatenate([a[k] for a in parts]) for k in arrays}
