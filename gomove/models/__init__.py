"""Models: parameters and scoring of move-prediction models (no I/O, no logging).

``MoveModel`` is what the rest of the package asks of a model, whatever it is:
the trainers and the evaluation score candidates through ``log_probs``,
checkpoints save ``hparams`` and rebuild the model with ``from_state_dict``,
gamma tables list ``level_strength`` and ``level_notes``, and a playout policy
takes ``log_gammas``. Which model a name (``cfg.model.name``, a checkpoint's
``model_name``) means is decided in one place, gomove.models.checkpoint.MODEL_CLASSES,
which ``load_checkpoint`` uses without importing any training code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, Self

import torch

# A model's scoring as the trainers and the evaluation call it:
# (feat LongTensor[B, M, G], mask BoolTensor[B, M]) -> log-probabilities Tensor[B, M].
LogProbsFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


class MoveModel(Protocol):
    """The interface of every model class (gomove.models.mm.BradleyTerry, fbt.FactorizationBT).

    ``floor`` (a float64 scalar buffer, 0 unless calibrated) mixes ``log_probs`` with the
    uniform choice over the legal moves (gomove.models.calibration)."""

    floor: torch.Tensor

    @property
    def n_features(self) -> int: ...

    def log_probs(self, feat: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Log-probability of every candidate, -inf on padding. [B, M, G], [B, M] -> [B, M]."""
        ...

    def hparams(self) -> dict[str, Any]:
        """Constructor arguments a checkpoint records (``model_args``) besides the sizes."""
        ...

    def level_strength(self) -> torch.Tensor:
        """float64[F] on the CPU: each level's log-strength on its own (Coulom's log gamma,
        FBT's w): the gamma table's column, and where a warm start begins."""
        ...

    def level_notes(self) -> dict[str, torch.Tensor]:
        """Further per-level columns of the gamma table, {title: float64[F]} (may be empty)."""
        ...

    def log_gammas(self) -> torch.Tensor | None:
        """float64[F] log gamma of every level when a candidate's strength is the product of
        its levels' gammas (Coulom's model), which a pattern playout policy needs; else None."""
        ...

    @classmethod
    def from_state_dict(cls, state: dict[str, torch.Tensor]) -> Self:
        """Rebuild a model from ``state_dict()`` output (sizes read from the tensors)."""
        ...
