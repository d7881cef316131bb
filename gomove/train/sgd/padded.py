"""The padded SGD engine: torch losses over padded Batches, autograd and torch.optim, any device.

The oracle of the flat engines (gomove.train.sgd.compiled, .tensor): the same
objective and optimizer, on Batches cut from the flat layout (a BatchLoader) or a
list of them; the losses are gomove.train.sgd.losses'.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import torch

from gomove.data.batch import Batch
from gomove.data.loader import BatchLoader
from gomove.features.hierarchy import Hierarchy
from gomove.models.fbt import FactorizationBT
from gomove.train.hierarchy_tensors import expand_batch
from gomove.train.schemas import SGDConfig
from gomove.train.sgd.losses import batch_loss


class PaddedSGD:
    """The padded path: torch losses over Batches, autograd and torch.optim, any device.

    Iterating gives one epoch of Batches; ``measure`` and ``step`` return
    (objective, sum of log P(expert move), positions) as CompiledSGD's do.
    """

    def __init__(
        self,
        model: FactorizationBT,
        batches: Iterable[Batch],
        n_positions: int,
        cfg: SGDConfig,
        device: torch.device,
        hierarchy: Hierarchy | None = None,
    ) -> None:
        """batches: as ``shuffled`` gives them; n_positions: ``positions_of`` them;
        hierarchy: every batch's teams hold their chains (expand_batch)."""
        self.model, self.cfg, self.device = model, cfg, device
        self.hierarchy = hierarchy
        self.batches, self.n_positions = batches, n_positions
        self.sample_gen = torch.Generator(device=device).manual_seed(cfg.seed)
        self.start_cfg = replace(cfg, sample=0)  # the sampled loss's objective is the full one
        params = [model.w, model.v]
        if cfg.optimizer == "adam":
            self.opt: torch.optim.Optimizer = torch.optim.Adam(params, lr=cfg.lr)
        else:
            self.opt = torch.optim.SGD(
                params, lr=cfg.lr, momentum=cfg.momentum, nesterov=cfg.momentum > 0
            )

    def __iter__(self):
        return iter(self.batches)

    def n_batches(self) -> int | None:
        """A list of batches' count; a loader's is not known ahead."""
        b = self.batches
        return None if isinstance(b, BatchLoader) else len(b.batches)

    def cut(self) -> None:
        """Padded batches are not cut within an epoch: their states are saved after one."""
        return None

    def _teams(self, batch: Batch) -> Batch:
        batch = batch.to(self.device)
        return batch if self.hierarchy is None else expand_batch(batch, self.hierarchy)

    def measure(self, batch: Batch) -> tuple[float, float, int]:
        with torch.no_grad():
            out = batch_loss(self.model, self._teams(batch), self.start_cfg, self.sample_gen)
        return float(out.objective), float(out.log_lik), out.n

    def step(self, batch: Batch, lr: float) -> tuple[float, float, int]:
        for group in self.opt.param_groups:
            group["lr"] = lr
        out = batch_loss(self.model, self._teams(batch), self.cfg, self.sample_gen)
        self.opt.zero_grad(set_to_none=True)
        out.loss.backward()
        self.opt.step()
        return float(out.objective), float(out.log_lik), out.n

    def state_dict(self) -> dict[str, Any]:
        """The optimizer, the sampling generator and the shuffle's place."""
        b = self.batches
        order = b.epoch if isinstance(b, BatchLoader) else b.rng.bit_generator.state
        return {
            "optimizer": self.opt.state_dict(),
            "sample_gen": self.sample_gen.get_state(),
            "order": order,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.opt.load_state_dict(state["optimizer"])
        self.sample_gen.set_state(state["sample_gen"])
        if isinstance(self.batches, BatchLoader):
            self.batches.epoch = state["order"]
        else:
            self.batches.rng.bit_generator.state = state["order"]
