"""BatchLoader: padded Batches from a Dataset's shards, streamed shard by shard.

Every iteration walks the shards in order (or shuffled, seeded per epoch) and
cuts each into batches of positions; only the shards being read are held in
memory unless ``in_memory`` keeps them all (compact: ~3.5 KB per 19x19 position).
Padding: M is the largest candidate count of the batch; padded candidates have
every feature index 0 and mask False.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch

from gomove.data.batch import Batch
from gomove.data.dataset import Dataset
from gomove.data.shards import Shard
from gomove.features.registry import NONE_INDEX, feature_index


def shard_batch(
    shard: Shard, rows: np.ndarray, offsets: np.ndarray, groups: tuple[str, ...]
) -> Batch:
    """The positions rows of a shard as one padded Batch (CPU tensors)."""
    start = shard.pos_start[rows]
    n = shard.pos_start[rows + 1] - start
    m = int(n.max()) if len(n) else 1
    ar = np.arange(m)
    valid = ar[None, :] < n[:, None]
    idx = np.where(valid, start[:, None] + ar[None, :], 0)
    feat = np.empty((len(rows), m, len(groups)), dtype=np.int64)
    for g, name in enumerate(groups):
        lev = shard.columns[name][idx].astype(np.int64)
        feat[:, :, g] = np.where(valid & (lev > 0), feature_index(offsets[g], lev), NONE_INDEX)
    return Batch(
        torch.from_numpy(feat),
        torch.from_numpy(valid),
        torch.from_numpy(shard.winner[rows].astype(np.int64)),
        torch.from_numpy(shard.game[rows].astype(np.int64)),
        torch.from_numpy(shard.move[rows].astype(np.int64)),
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
        in_memory: bool = False,
        max_positions: int | None = None,
    ):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.device = torch.device(device)
        self.in_memory = in_memory
        self.max_positions = max_positions
        self.epoch = 0
        self._cache: dict[int, Shard] = {}
        self.groups = dataset.registry.group_names
        self.offsets = dataset.registry.offsets

    def _shard(self, i: int) -> Shard:
        if i in self._cache:
            return self._cache[i]
        s = self.dataset.load(i)
        if self.in_memory:
            self._cache[i] = s
        return s

    def __len__(self) -> int:
        n = self.dataset.n_positions
        if self.max_positions is not None:
            n = min(n, self.max_positions)
        return n

    def __iter__(self) -> Iterator[Batch]:
        rng = np.random.default_rng([self.seed, self.epoch])
        self.epoch += 1
        order = np.arange(len(self.dataset.shards))
        if self.shuffle:
            rng.shuffle(order)
        left = len(self)
        for i in order:
            if left <= 0:
                return
            shard = self._shard(int(i))
            rows = np.arange(min(shard.n_positions, left))
            left -= len(rows)
            if self.shuffle:
                rng.shuffle(rows)
            for lo in range(0, len(rows), self.batch_size):
                batch = shard_batch(
                    shard, rows[lo : lo + self.batch_size], self.offsets, self.groups
                )
                yield batch.to(self.device) if self.device.type != "cpu" else batch
