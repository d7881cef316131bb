"""FBT and LFR on several processes (gomove.train.world): a global batch, gradients all-reduced."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch

from gomove.data.flat import FlatData
from gomove.features.hierarchy import Hierarchy
from gomove.models.fbt import FactorizationBT
from gomove.train.schemas import SGDConfig
from gomove.train.sgd.compiled import CompiledSGD
from gomove.train.world import World


class DistributedSGD(CompiledSGD):
    """CompiledSGD where a step's mini-batch is spread over the ranks (each takes its
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

    def __init__(
        self,
        model: FactorizationBT,
        data: FlatData,
        cfg: SGDConfig,
        world: World,
        hierarchy: Hierarchy | None = None,
    ):
        super().__init__(model, data, cfg, hierarchy)
        self.world = world
        # each rank its own order and draws (one seed would draw alike on every rank)
        self.order_rng = np.random.default_rng([cfg.seed, 0, world.rank])
        self.sample_rng = np.random.default_rng([cfg.seed, 1, world.rank])
        (total,) = world.sum(data.n_positions)
        self.n_total = int(total)
        self.steps_per_epoch = max(1, -(-self.n_total // cfg.batch_size))

    def n_batches(self) -> int:
        return self.steps_per_epoch

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
