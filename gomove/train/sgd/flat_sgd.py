"""What the two SGD engines over flat data share (``compiled``: numba on the CPU;
``tensor``: torch on any device): the checks of a model against its data, the batch
size, which gradient a run takes, the epoch order, and the step count and generators
that a resumed run continues from. Each engine adds its own steps and optimizer state.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gomove.data.chunks import chunk_bounds, in_chunks
from gomove.data.flat import FlatData
from gomove.models.fbt import FactorizationBT
from gomove.train.schemas import SGDConfig, auto_batch_size

# the gradient a run takes: the full softmax's, the sampled estimate of it, LFR's
FULL, SAMPLED, LFR = "full", "sampled", "lfr"


@dataclass(frozen=True)
class PassCut:
    """A pass over chunked data stopped at a chunk's end: its chunk order and how many of
    them it has done (a train state saved within an epoch carries it)."""

    chunks: np.ndarray
    done: int

    def to_dict(self) -> dict[str, Any]:
        return {"chunks": self.chunks.tolist(), "done": self.done}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PassCut:
        return cls(np.asarray(d["chunks"], dtype=np.int64), int(d["done"]))


class FlatSGD(ABC):
    """The settings and the schedule of one SGD run over FlatData; iterating gives one
    epoch of mini-batches (position ids, in an order drawn from the seed)."""

    def __init__(self, model: FactorizationBT, data: FlatData, cfg: SGDConfig) -> None:
        if model.n_features < data.min_features:
            raise ValueError(
                f"the data index {data.min_features} features, the model has {model.n_features}"
            )
        if cfg.batch_size is None:  # as train_sgd resolves it
            cfg = replace(cfg, batch_size=auto_batch_size(data.n_positions))
        self.model, self.cfg = model, cfg
        self.data = data
        self.n_positions = data.n_positions
        self.gradient = LFR if cfg.name == "lfr" else SAMPLED if cfg.sample else FULL
        self.n_samples = cfg.sample if self.gradient == SAMPLED else 0
        self.order_rng = np.random.default_rng([cfg.seed, 0])
        self.sample_rng = np.random.default_rng([cfg.seed, 1])
        self.n_steps = 0
        self._l2: tuple[int, float] | None = None  # (n_steps, L2 term) of the last measure
        self._cut: PassCut | None = None  # where the last batch yielded ended a chunk
        self._continue: PassCut | None = None  # a pass to finish (continue_pass)

    def __iter__(self) -> Iterator[np.ndarray]:
        """An epoch's mini-batches: the positions in a random order; with the data read in
        chunks (data.chunk_positions), the chunks in a random order, each chunk's
        positions shuffled and cut into batches while the next chunk is prefetched
        (gomove.data.chunks), so an epoch reads the data once, front to back by chunk.
        After the last batch of a chunk but the pass's last, ``cut`` says where the pass
        stands, and a pass continued from it (``continue_pass``) yields the batches the
        whole pass would have yielded after it."""
        b = self.cfg.batch_size
        self._cut = None
        if self.data.chunk_positions is None:
            order = self.order_rng.permutation(self.n_positions)
            for lo in range(0, len(order), b):
                yield order[lo : lo + b]
            return
        bounds = chunk_bounds(self.n_positions, self.data.chunk_positions)
        if self._continue is not None:
            chunks, done = self._continue.chunks, self._continue.done
            self._continue = None
        else:
            chunks, done = self.order_rng.permutation(len(bounds) - 1), 0
        for i, (lo, hi) in enumerate(in_chunks(self.data, chunks[done:]), start=done + 1):
            order = lo + self.order_rng.permutation(hi - lo)
            for s in range(0, len(order), b):
                ends_chunk = s + b >= len(order) and i < len(chunks)
                self._cut = PassCut(chunks, i) if ends_chunk else None
                yield order[s : s + b]
        self._cut = None

    def n_batches(self) -> int:
        """The mini-batches the next pass yields (a progress bar's total): a whole pass's,
        or the rest of one continued (``continue_pass``)."""
        b = self.cfg.batch_size
        sizes = np.diff(chunk_bounds(self.n_positions, self.data.chunk_positions))
        if self._continue is not None:
            sizes = sizes[self._continue.chunks[self._continue.done :]]
        return int((-(-sizes // b)).sum())

    def cut(self) -> PassCut | None:
        """Where the pass stands when the batch just yielded ended a chunk (the order
        generator then holds the next chunk's draws), else None."""
        return self._cut

    def continue_pass(self, cut: PassCut) -> None:
        """Make the next iteration the rest of a pass saved at ``cut`` (load_state_dict
        first: the order generator's state is the one saved with it)."""
        if self.data.chunk_positions is None:
            raise ValueError("a pass cut at a chunk's end continues on data read in chunks")
        self._continue = cut

    def state_dict(self) -> dict[str, Any]:
        """What continues training besides the model's parameters: the optimizer's
        moments and step count, both generators."""
        return {
            "moments": self._moments(),
            "n_steps": self.n_steps,
            "order_rng": self.order_rng.bit_generator.state,
            "sample_rng": self.sample_rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from state_dict(), the model's parameters already loaded (what the
        steps read is rebuilt from them, as every step leaves it)."""
        self._load_moments(state["moments"])
        self.n_steps = state["n_steps"]
        self.order_rng.bit_generator.state = state["order_rng"]
        self.sample_rng.bit_generator.state = state["sample_rng"]
        self._rebuild()
        self._l2 = None

    @abstractmethod
    def _moments(self) -> list[np.ndarray]:
        """The optimizer's state as host arrays (copies)."""

    @abstractmethod
    def _load_moments(self, saved: list[np.ndarray]) -> None:
        """Set the optimizer's state from _moments()."""

    @abstractmethod
    def _rebuild(self) -> None:
        """What the steps read, from the model's parameters."""
