"""Batch: the padded tensors every trainer and the evaluation consume.

Shapes: B positions, M candidates (padded to the largest position of the
batch), G feature groups.
- feat: LongTensor[B, M, G], global feature indices (see features.registry);
  index 0 is the shared ``none`` index (a group absent from a candidate) and
  padding candidates are all zeros.
- mask: BoolTensor[B, M], True for real candidates (legal moves and pass).
- winner: LongTensor[B], the candidate the expert played.
- game: LongTensor[B], a game id unique within the dataset.
- move: LongTensor[B], move number in the game (0 = first move), for per-phase
  statistics.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class Batch:
    feat: torch.Tensor
    mask: torch.Tensor
    winner: torch.Tensor
    game: torch.Tensor
    move: torch.Tensor

    def to(self, device: torch.device | str) -> Batch:
        return Batch(*(t.to(device, non_blocking=True) for t in self.astuple()))

    def astuple(self) -> tuple[torch.Tensor, ...]:
        return (self.feat, self.mask, self.winner, self.game, self.move)

    def __len__(self) -> int:
        return self.winner.shape[0]
