"""Models: parameters and scoring of move-prediction models (no I/O, no logging).

Names, as in ``cfg.model.name`` and checkpoints: ``mm`` (gomove.models.mm.BradleyTerry),
``fbt`` and ``lfr`` (gomove.models.fbt.FactorizationBT: one scoring, two losses).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from gomove.models.fbt import FactorizationBT
from gomove.models.mm import BradleyTerry

# A model's scoring as the trainers and the evaluation call it:
# (feat LongTensor[B, M, G], mask BoolTensor[B, M]) -> log-probabilities Tensor[B, M].
LogProbsFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

MODEL_NAMES = ("mm", "fbt", "lfr")


def build_model(name: str, n_features: int, **kw: Any) -> torch.nn.Module:
    """A fresh model of that name; ``kw`` go to its constructor (k, init_std, ... for fbt/lfr)."""
    if name == "mm":
        return BradleyTerry(n_features, **kw)
    if name in ("fbt", "lfr"):
        return FactorizationBT(n_features, **kw)
    raise ValueError(f"unknown model {name!r}; available: {', '.join(MODEL_NAMES)}")


def model_from_state(name: str, state: dict[str, torch.Tensor]) -> torch.nn.Module:
    """Rebuild a model of that name from its ``state_dict()`` (sizes read from the tensors)."""
    if name == "mm":
        return BradleyTerry.from_state_dict(state)
    if name in ("fbt", "lfr"):
        return FactorizationBT.from_state_dict(state)
    raise ValueError(f"unknown model {name!r}; available: {', '.join(MODEL_NAMES)}")
