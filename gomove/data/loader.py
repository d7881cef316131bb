"""BatchLoader: padded Batches cut from a dataset's flat layout.

Every iteration visits the positions in order (or in a permutation seeded per
epoch) and pads each batch to its largest position: padded candidates have every
feature index 0 and mask False. The layout is memory-mapped, so a loader holds
only the batch it builds; the pages it reads stay in the page cache for the next
epoch and for other processes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import torch

from gomove.data.batch import Batch
from gomove.data.dataset import Dataset
from gomove.data.device_flat import DeviceBatches, DeviceFlat
from gomove.data.flat import FlatData


def flat_batch(flat: FlatData, positions: np.ndarray) -> Batch:
    """The positions of flat as one padded Batch (CPU tensors): game and move from
    flat, or, for data without them, each position's index as its game and move 0."""
    positions = np.asarray(positions, dtype=np.int64)
    feat, mask = flat.padded(positions)
    if flat.game is None or flat.move is None:
        game, move = positions.copy(), np.zeros(len(positions), dtype=np.int64)
    else:
        game = np.asarray(flat.game[positions], dtype=np.int64)
        move = np.asarray(flat.move[positions], dtype=np.int64)
    return Batch(
        torch.from_numpy(feat),
        torch.from_numpy(mask),
        torch.from_numpy(flat.winner[positions]),
        torch.from_numpy(game),
        torch.from_numpy(move),
    )


class BatchLoader:
    """Re-iterable source of Batches over a Dataset."""

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int = 512,
        shuffle: bool = False,
        seed: int = 0,
        device: torch.device | str = "cpu",
        max_positions: int | None = None,
    ):
        self.dataset = dataset
        self.flat = dataset.flat()
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.device = torch.device(device)
        self.max_positions = max_positions
        self.epoch = 0

    def __len__(self) -> int:
        n = self.dataset.n_positions
        if self.max_positions is not None:
            n = min(n, self.max_positions)
        return n

    def __iter__(self) -> Iterator[Batch]:
        rng = np.random.default_rng([self.seed, self.epoch])
        self.epoch += 1
        order = np.arange(len(self), dtype=np.int64)
        if self.shuffle:
            rng.shuffle(order)
        for lo in range(0, len(order), self.batch_size):
            batch = flat_batch(self.flat, order[lo : lo + self.batch_size])
            yield batch.to(self.device) if self.device.type != "cpu" else batch


def scoring_batches(
    dataset: Dataset, batch_size: int, device: torch.device | str = "cpu"
) -> Iterable[Batch]:
    """The dataset's positions in order as padded Batches for scoring on device: cut on
    the host on the CPU (BatchLoader), on the device elsewhere (DeviceBatches: the
    compact layout copied once, no batch crosses the bus)."""
    device = torch.device(device)
    if device.type == "cpu":
        return BatchLoader(dataset, batch_size=batch_size)
    return DeviceBatches(DeviceFlat(dataset.flat(), device), batch_size)
