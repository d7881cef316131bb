"""``gomove train model=balance``: simulation balancing of a playout policy on labelled positions.

The run: the labelled positions (``model.labels``, a labels.jsonl of ``gomove balance
label``) split by game (a share ``model.val`` held out, by a hash of each game's path,
stable across runs) -> the policy to start from (``model.policy``, else the shipped
light policy) -> ``balance`` (gomove.train.balance.fit) -> the playouts' squared error
on both sides of the split before and after every epoch. Writes into the run
directory: ``policy.npz`` (after every epoch), ``metrics.json`` and ``error.png``.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from omegaconf import DictConfig, OmegaConf

from gomove.atomic import atomic_write_json
from gomove.data.value_labels import read_labels
from gomove.playout.policy import PatternPolicy
from gomove.train.balance.fit import balance, playout_error, positions_of
from gomove.train.context import Trainer

EVAL_SEED = 12345  # the playouts that measure the error are the same every epoch


def held_out(sgf: str, share: float) -> bool:
    """A game's side of the split, by a hash of its path (stable across runs)."""
    return zlib.crc32(sgf.encode()) % 10_000 < share * 10_000


def run_balance(cfg: DictConfig, out_dir: str | Path, trainer: Trainer) -> dict[str, Any]:
    """The whole of ``gomove train model=balance``: returns the metrics it writes."""
    bcfg = trainer.model_config(cfg)
    try:
        labels = read_labels(bcfg.labels)
        policy = PatternPolicy.default() if bcfg.policy is None else PatternPolicy.load(bcfg.policy)
    except (OSError, ValueError) as e:
        raise SystemExit(f"gomove train model=balance: {e}") from None
    val_labels = [x for x in labels if held_out(x.sgf, bcfg.val)]
    train_labels = [x for x in labels if not held_out(x.sgf, bcfg.val)]
    if not train_labels:
        raise SystemExit(f"gomove train model=balance: {bcfg.labels}: no training positions")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    train, val = positions_of(train_labels), positions_of(val_labels)
    print(f"{len(train)} training and {len(val)} held-out positions")
    metrics: dict[str, Any] = {"config": OmegaConf.to_container(cfg, resolve=True), "epochs": []}
    n_eval = bcfg.eval_playouts

    def measure(epoch: int, p: PatternPolicy) -> None:
        row = {"epoch": epoch, "train_mse": playout_error(p, train, n_eval, bcfg.komi, EVAL_SEED)}
        if val:
            row["val_mse"] = playout_error(p, val, n_eval, bcfg.komi, EVAL_SEED)
        metrics["epochs"].append(row)
        print(json.dumps(row))
        if epoch > 0:
            p.save(out / "policy.npz")
        atomic_write_json(out / "metrics.json", metrics)

    measure(0, policy)
    balance(policy, train, bcfg, progress=cfg.progress, on_epoch=measure)
    plot_error(metrics["epochs"], out / "error.png")
    print(f"{out / 'policy.npz'}; metrics in {out / 'metrics.json'}, {out / 'error.png'}")
    return metrics


def plot_error(epochs: list[dict[str, Any]], path: Path) -> None:
    """The playouts' mean squared error on both sides of the split, epoch by epoch."""
    fig = Figure(figsize=(5, 3.5))
    ax = fig.subplots()
    x = [m["epoch"] for m in epochs]
    for key, label in (("train_mse", "training positions"), ("val_mse", "held-out positions")):
        if key in epochs[0]:
            ax.plot(x, [m[key] for m in epochs], marker="o", label=label)
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean (V* - V)^2 of the playouts")
    ax.set_title("simulation balancing")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
