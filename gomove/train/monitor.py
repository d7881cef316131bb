"""Per-iteration reporting shared by the trainers: validation, one log line, TensorBoard.

Terms:
- validate: a function scoring the model being trained on held-out data,
  ``validate(log_probs) -> {"top1": ..., "log_evidence": ...}``; the caller
  builds it (gomove.evaluate.measures.validator), so training does not depend
  on the evaluation layer above it.
- row: one history row (dict) with ``iter`` and the trainer's scalars.
- scalar: (row key, TensorBoard tag, log format); the format holds the label,
  e.g. ("log_likelihood", "train/log_likelihood", "log-lik {:.5f}").
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from gomove.models import LogProbsFn

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

Scalar = tuple[str, str, str]
Validate = Callable[[LogProbsFn], dict[str, float]]

VAL_SCALARS: tuple[Scalar, ...] = (
    ("val_top1", "val/top1", "val top1 {:.4f}"),
    ("val_log_evidence", "val/log_evidence", "val log-ev {:.4f}"),
)


def report_row(
    row: dict[str, Any],
    log_probs: LogProbsFn,
    validate: Validate | None,
    writer: SummaryWriter | None,
    scalars: Sequence[Scalar],
    log: logging.Logger,
    unit: str = "iter",
) -> None:
    """Add val_top1 and val_log_evidence to ``row`` when validate is given, log the
    row's scalars on one line and write them to TensorBoard at step row["iter"]."""
    if validate is not None:
        val = validate(log_probs)
        row["val_top1"] = val["top1"]
        row["val_log_evidence"] = val["log_evidence"]
    shown = [s for s in (*scalars, *VAL_SCALARS) if s[0] in row]
    log.info("%s %d  %s", unit, row["iter"], "  ".join(fmt.format(row[k]) for k, _, fmt in shown))
    if writer is not None:
        for key, tag, _ in shown:
            writer.add_scalar(tag, row[key], row["iter"])
