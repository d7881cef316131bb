"""Per-iteration reporting shared by the trainers: validation, one log line, TensorBoard.

Terms:
- row: one history row (dict) with ``iter`` and the trainer's scalars.
- scalar: (row key, TensorBoard tag, log format); the format holds the label,
  e.g. ("log_likelihood", "train/log_likelihood", "log-lik {:.5f}").
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from gomove.data.batch import Batch
from gomove.evaluate import LogProbsFn, evaluate

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

Scalar = tuple[str, str, str]

VAL_SCALARS: tuple[Scalar, ...] = (
    ("val_top1", "val/top1", "val top1 {:.4f}"),
    ("val_log_evidence", "val/log_evidence", "val log-ev {:.4f}"),
)


def report_row(
    row: dict[str, Any],
    log_probs: LogProbsFn,
    val_data: Iterable[Batch] | None,
    device: torch.device,
    writer: SummaryWriter | None,
    scalars: Sequence[Scalar],
    log: logging.Logger,
    unit: str = "iter",
) -> None:
    """Add val_top1 and val_log_evidence to ``row`` when val_data is given, log the
    row's scalars on one line and write them to TensorBoard at step row["iter"]."""
    if val_data is not None:
        val = evaluate(log_probs, val_data, device=device)
        row["val_top1"] = val["top1"]
        row["val_log_evidence"] = val["log_evidence"]
    shown = [s for s in (*scalars, *VAL_SCALARS) if s[0] in row]
    log.info("%s %d  %s", unit, row["iter"], "  ".join(fmt.format(row[k]) for k, _, fmt in shown))
    if writer is not None:
        for key, tag, _ in shown:
            writer.add_scalar(tag, row[key], row["iter"])
