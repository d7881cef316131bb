"""Smaller models for shipping: rare shape patterns pruned from a checkpoint.

A model's size is mostly its shape patterns (a hash, a radius, a count and a stone
configuration each, and one parameter row). ``prune_shapes`` keeps the patterns seen
at least ``min_count`` times in the training games and the parameter rows of their
levels; a candidate whose largest pattern was pruned then matches the next smaller
pattern the table keeps, as it would in a harvest at that min_count, and is scored
with that pattern's trained parameters (the model is not retrained: what that costs in
accuracy is measured, docs/model-card.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from gomove.data.extractor import FeatureExtractor
from gomove.features.config import FeatureConfig
from gomove.features.pattern_table import PatternTable
from gomove.features.registry import SHAPE_GROUP


def prune_shapes(state: dict[str, Any], min_count: int) -> dict[str, Any]:
    """The checkpoint dict (read_checkpoint's) without the shape patterns seen fewer than
    min_count times: the table's rows, every parameter's rows of their levels (the
    parameters indexed by global feature; scalars kept), the extractor rebuilt on the
    smaller table."""
    if state.get("patterns") is None:
        raise ValueError("the model has no shape patterns to prune")
    table = PatternTable.from_dict(state["patterns"])
    if min_count <= table.min_count:
        return state
    registry = state["extractor"].registry
    span = registry.group_spans()[registry.group_index(SHAPE_GROUP)]
    common = table.count >= min_count
    keep = np.flatnonzero(common)
    kept = np.ones(registry.n_features, bool)  # by global feature: every other group's
    kept[span.offset : span.offset + span.size] = common
    rows = torch.from_numpy(np.flatnonzero(kept))
    model = {}
    for name, t in state["model"].items():
        if t.dim() == 0:  # a scalar (a floor, a temperature): the same for every feature
            model[name] = t.clone()
            continue
        if t.shape[0] != registry.n_features:
            raise ValueError(
                f"parameter {name!r} of shape {tuple(t.shape)} is not indexed by feature: "
                f"cannot prune a {state['model_name']} model's shapes"
            )
        model[name] = t.index_select(0, rows).clone()
    small = PatternTable(
        table.hashes[keep],
        table.radius[keep],
        table.count[keep],
        table.min_radius,
        table.max_radius,
        int(min_count),
        None if table.stones is None else table.stones[keep],
    )
    ex = FeatureExtractor(FeatureConfig(**state["features"]), small)
    if ex.registry.n_features != len(rows):
        raise ValueError("the pruned registry does not match the pruned parameters")
    return state | {
        "model": model,
        "patterns": small.to_dict(),
        "extractor": ex,
        "registry": ex.registry.to_dict() if state.get("registry") is not None else None,
        "registry_hash": ex.registry.spec_hash(),
    }
