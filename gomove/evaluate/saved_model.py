"""``gomove evaluate``: a saved model scored on data.test as a training run scores it.

``evaluate_checkpoint(cfg, out_dir)`` reads ``checkpoint=PATH`` (a model.pt or a packed
.npz), extracts data.test with the checkpoint's own features (cached), and writes
metrics.json, summary.txt and the papers' plots (gomove.evaluate.report) into out_dir.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig

from gomove.data.dataset import build_dataset
from gomove.data.loader import scoring_batches
from gomove.data.sources import paths, read_config
from gomove.evaluate.measures import evaluate
from gomove.evaluate.report import format_table, write_report
from gomove.models.checkpoint import load_checkpoint
from gomove.models.device import resolve_device


def evaluate_checkpoint(cfg: DictConfig, out_dir: str | Path) -> dict[str, Any]:
    """Score cfg.data.test with a saved model; write metrics.json and plots to out_dir."""
    if not cfg.checkpoint:
        raise ValueError("give the model to evaluate: checkpoint=PATH/model.pt")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    device = resolve_device(cfg.device)
    state = load_checkpoint(cfg.checkpoint)
    ex = state["extractor"]
    model = state["module"].to(device)
    d = cfg.data
    ds = build_dataset(
        paths(d.test),
        read_config(d, d.max_test_games),
        ex,
        d.cache_dir,
        kind="test",
        shard_games=d.shard_games,
        workers=d.workers,
        progress=cfg.progress,
    )
    radius = torch.from_numpy(ex.shape_radius())
    metrics = evaluate(
        model.log_probs,
        scoring_batches(ds, d.batch_size, device),
        shape_radius=radius,
        device=device,
    )
    metrics.update({"model": state["model_name"], "checkpoint": str(cfg.checkpoint)})
    write_report(metrics, out)
    print(format_table(metrics))
    return metrics
