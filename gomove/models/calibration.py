"""How far a model's move probabilities are from the frequencies they predict, and the
probability floor that can bring the top of the scale back to them.

Calibration bins every legal candidate's predicted probability in CAL_BINS equal bins
of [0, 1]; per bin the share of its candidates the expert played should match their
mean probability (the evaluation's ``calibration`` measure, docs/concepts.md). A
temperature (gomove.train.calibrate) scales every strength alike; a strong model can
still be too sure of its top moves while about right in the middle, which no
temperature fixes. The floor mixes the softmax with the uniform choice over the legal
moves, p' = (1 - floor) p + floor / n_legal: it takes the same share off every
probability, most in absolute terms from the highest, and adds a tiny equal amount to
each, so rankings do not change.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

CAL_BINS = 10  # calibration bins over [0, 1]
CAL_MIN = 1000  # candidates a bin needs for calibration_gap


def floored(lp: torch.Tensor, mask: torch.Tensor, floor: float) -> torch.Tensor:
    """log((1 - floor) exp(lp) + floor / n_legal) on the real candidates, -inf on padding.

    lp: log-probabilities [B, M] (a log-softmax over mask), mask: BoolTensor[B, M];
    floor in [0, 1). floor 0 returns lp itself."""
    if not 0.0 <= floor < 1.0:
        raise ValueError(f"a probability floor must be in [0, 1), not {floor}")
    if floor == 0.0:
        return lp
    n = mask.sum(1, keepdim=True).clamp(min=1).to(lp.dtype)
    out = torch.logaddexp(lp + math.log1p(-floor), math.log(floor) - torch.log(n))
    return out.masked_fill(~mask, float("-inf"))


def calibration_parts(lp: torch.Tensor, mask: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Per position, its legal candidates by bin of predicted probability and the sum of
    their probabilities: (uint16[B, CAL_BINS], float32[B, CAL_BINS]); lp: [B, M]."""
    b = lp.shape[0]
    p = torch.exp(lp).masked_fill(~mask, 0.0)
    bins = torch.clamp((p * CAL_BINS).long(), max=CAL_BINS - 1)
    slot = (torch.arange(b, device=lp.device)[:, None] * CAL_BINS + bins)[mask]
    n = torch.bincount(slot, minlength=b * CAL_BINS).reshape(b, CAL_BINS)
    total = torch.bincount(slot, weights=p[mask], minlength=b * CAL_BINS).reshape(b, CAL_BINS)
    return n.cpu().numpy().astype(np.uint16), total.cpu().numpy().astype(np.float32)


def calibration(
    cal_n: np.ndarray, cal_p: np.ndarray, log_p: np.ndarray
) -> tuple[list[dict[str, Any]], float | None]:
    """The calibration bins from the positions' parts and the experts' log-probabilities:
    per bin [lo, hi) the candidates n, their mean predicted probability and the share the
    expert played (None for an empty bin); and the largest |observed - predicted| over
    bins of at least CAL_MIN candidates (None when none has)."""
    n = cal_n.sum(0, dtype=np.int64)
    total = cal_p.sum(0, dtype=np.float64)
    expert_bin = np.minimum((np.exp(log_p) * CAL_BINS).astype(np.int64), CAL_BINS - 1)
    hits = np.bincount(expert_bin, minlength=CAL_BINS)
    rows, gaps = [], []
    for k in range(CAL_BINS):
        seen = int(n[k])
        pred = float(total[k] / seen) if seen else None
        obs = float(hits[k] / seen) if seen else None
        rows.append({"lo": k / CAL_BINS, "hi": (k + 1) / CAL_BINS, "n": seen,
                     "predicted": pred, "observed": obs})  # fmt: skip
        if seen >= CAL_MIN:
            gaps.append(abs(obs - pred))
    return rows, (max(gaps) if gaps else None)


def with_floor(model: torch.nn.Module, state: dict[str, torch.Tensor]) -> Any:
    """model with the floor of its saved state dict (0 in one saved before the floor)."""
    model.floor.fill_(float(state.get("floor", 0.0)))
    return model
