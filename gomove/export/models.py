"""Models to and from other programs' files: the mm import, a run's exports.

Terms: an imported model is an ``mm`` checkpoint (gomove.models.checkpoint)
whose gammas come from ``mm``'s output and whose features (config, pattern
table, registry) come from the dataset or run the competition file was
written from, so it is evaluated like any trained model
(``gomove evaluate checkpoint=...``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gomove.export.mm_format import log_gammas_of, read_gammas, write_competition, write_gammas
from gomove.export.pachi import write_pachi
from gomove.export.shrink import prune_shapes
from gomove.export.source import SourceError, extractor_of, load_run, training_dataset
from gomove.models.checkpoint import save_checkpoint
from gomove.models.mm import BradleyTerry
from gomove.models.packed import write_packed


def export_mm(source: str | Path, out: str | Path, progress: bool = False) -> dict[str, int]:
    """A dataset's (or a run's training dataset's) positions as mm's competition file."""
    ds = training_dataset(source, progress=progress)
    data = ds.flat()
    write_competition(out, data, ds.registry)
    return {
        "positions": data.n_positions,
        "candidates": data.n_candidates,
        "gammas": ds.registry.n_features - 1,
        "features": int(np.sum(ds.registry.sizes > 0)),
    }


def mm_log_gamma(state: dict[str, Any], path: str | Path) -> np.ndarray:
    """The log-gammas of a loaded run, which must be an mm model."""
    log_gamma = state["module"].log_gammas()
    if log_gamma is None:
        raise SourceError(f"{path}: a {state['model_name']} model is no product of gammas")
    return log_gamma.numpy()


def export_gammas(run: str | Path, out: str | Path) -> None:
    """A run's gammas in mm's output format (the other half of the round trip)."""
    state = load_run(run)
    write_gammas(out, mm_log_gamma(state, run))


def import_mm(gammas: str | Path, registry: str | Path, out: str | Path) -> int:
    """mm's gammas for the features of a dataset, run or checkpoint -> an mm checkpoint;
    returns the number of gammas."""
    ex = extractor_of(registry)
    reg = ex.registry
    g = read_gammas(gammas, reg.n_features - 1)
    model = BradleyTerry(reg.n_features, torch.from_numpy(log_gammas_of(g)))
    cfg = {"model": {"name": "mm"}, "imported": {"gammas": str(gammas), "from": str(registry)}}
    save_checkpoint(out, model, ex, cfg, history=[])
    return len(g)


def export_pachi(
    run: str | Path,
    out_dir: str | Path,
    base_gamma: str | Path | None = None,
    spatial_only: bool = False,
) -> dict[str, object]:
    """A run's mm model as Pachi's patterns_mm.spat and patterns_mm.gamma (spatial_only:
    with Pachi's own tactical gammas from base_gamma)."""
    state = load_run(run)
    ex = state["extractor"]
    if ex.table is None:
        raise SourceError(f"{run}: the model has no shape patterns")
    log_gamma = mm_log_gamma(state, run)
    return write_pachi(out_dir, ex.registry, ex.table, log_gamma, base_gamma, spatial_only)


def export_packed(
    run: str | Path,
    out: str | Path,
    note: str = "",
    min_count: int | None = None,
    param_dtype: str = "float32",
) -> dict[str, object]:
    """A run's model as a packed checkpoint (gomove.models.packed): what scoring needs,
    with a source record of the run's data, settings and test figures; note: one line on
    where it came from, which messages show; min_count: prune the shape patterns seen
    fewer times (gomove.export.shrink); param_dtype: float32, or float16 for half the
    parameter bytes."""
    state = load_run(run)
    harvested = None if state.get("patterns") is None else len(state["patterns"]["hashes"])
    if min_count is not None:
        state = prune_shapes(state, min_count)
    cfg = state.get("config") or {}
    data = cfg.get("data", {})
    metrics_file = Path(run) / "metrics.json" if Path(run).is_dir() else None
    test: dict[str, Any] = {}
    if metrics_file is not None and metrics_file.is_file():
        m = json.loads(metrics_file.read_text())
        test = {k: m[k] for k in ("n_games", "n_positions", "top1", "log_evidence") if k in m}
    last = state["history"][-1] if state["history"] else {}
    source = {
        "model": state["model_name"],
        "note": note,
        "model_args": state.get("model_args", {}),
        "seed": cfg.get("seed"),
        "train": [Path(p).name for p in data.get("train", [])],
        "max_games": data.get("max_games"),
        "validation": {k: v for k, v in last.items() if k.startswith("val_")},
        "test": test,
    }
    if min_count is not None or param_dtype != "float32":
        # the figures above are the run's, before its model was made smaller
        source["shrunk"] = {
            "param_dtype": param_dtype,
            "min_count": min_count,
            "patterns": {"harvested": harvested, "kept": len(state["patterns"]["hashes"])}
            if harvested is not None
            else None,
        }
    write_packed(out, state, source, param_dtype)
    return {"packed": str(out), "bytes": Path(out).stat().st_size, "source": source}
