"""Packed checkpoints: a trained model in few bytes, for shipping inside the package.

A run's ``model.pt`` keeps everything a run knows (its history, its config, the
registry's level names, the pattern table in int64). A packed checkpoint
(``.npz``: numpy's compressed zip, no pickle, so loading it runs no code) keeps
only what scoring needs, in the narrowest exact types:

- ``meta``: JSON (model name and hyperparameters, feature config, the table's
  scalars, the registry's ``spec_hash`` to check the rebuilt one against, and a
  ``source`` dict that says where the model came from);
- ``param.NAME``: each parameter of the state dict, float32 (the models score in
  float32 or float64; float32 keeps a log-gamma to 1e-7 relative), or float16 when
  written so (half the bytes, a log-gamma to 5e-4 relative; read back as float32);
- ``hashes`` uint64, ``radius`` uint8, ``count`` uint32 and ``stones`` (each
  point state 0..3 in 2 bits, four to a byte) of the pattern table.

``read_checkpoint`` (gomove.models.checkpoint) reads both kinds by their suffix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gomove.atomic import atomic_save_npz

PACKED_VERSION = 1
PACKED_SUFFIX = ".npz"


def is_packed(path: str | Path) -> bool:
    return Path(path).suffix == PACKED_SUFFIX


def pack_stones(stones: np.ndarray) -> np.ndarray:
    """uint8[P, N] of point states 0..3 -> uint8[P, ceil(N / 4)], four states a byte."""
    if stones.size and int(stones.max()) > 3:
        raise ValueError(f"a point state above 3 ({int(stones.max())}) cannot be packed")
    p, n = stones.shape
    padded = np.zeros((p, -(-n // 4) * 4), np.uint8)
    padded[:, :n] = stones
    q = padded.reshape(p, -1, 4)
    return q[..., 0] | (q[..., 1] << 2) | (q[..., 2] << 4) | (q[..., 3] << 6)


def unpack_stones(packed: np.ndarray, n: int) -> np.ndarray:
    """The inverse of pack_stones for N = n points."""
    shifts = np.array([0, 2, 4, 6], np.uint8)
    out = (packed[..., None] >> shifts) & np.uint8(3)
    return out.reshape(packed.shape[0], -1)[:, :n].copy()


PARAM_DTYPES = ("float32", "float16")


def write_packed(
    path: str | Path, state: dict[str, Any], source: dict[str, Any], param_dtype: str = "float32"
) -> None:
    """Pack a checkpoint dict (``read_checkpoint``'s, before its extractor is used) into
    path; source (JSON-able) says where it came from (the run, its data, its figures);
    param_dtype: the parameters' type in the file (PARAM_DTYPES)."""
    if param_dtype not in PARAM_DTYPES:
        raise ValueError(f"param_dtype {param_dtype!r}: one of {PARAM_DTYPES}")
    p = state["patterns"]
    meta: dict[str, Any] = {
        "version": PACKED_VERSION,
        "model_name": state["model_name"],
        "model_args": state.get("model_args", {}),
        "features": state["features"],
        "registry_hash": state["extractor"].registry.spec_hash(),
        "n_features": state["extractor"].registry.n_features,
        "source": source,
    }
    arrays: dict[str, np.ndarray] = {}
    for name, t in state["model"].items():
        a = t.detach().cpu().numpy().astype(np.float32)
        if param_dtype == "float16":
            if np.any(np.abs(a[np.isfinite(a)]) > np.finfo(np.float16).max):
                raise ValueError(f"parameter {name!r} has values beyond float16's range")
            a = a.astype(np.float16)
        arrays[f"param.{name}"] = a
    if p is not None:
        meta["table"] = {k: int(p[k]) for k in ("min_radius", "max_radius", "min_count")}
        if int(np.max(p["count"], initial=0)) > np.iinfo(np.uint32).max:
            raise ValueError("a pattern count does not fit in uint32")
        arrays |= {
            "hashes": np.asarray(p["hashes"], np.uint64),
            "radius": np.asarray(p["radius"], np.uint8),
            "count": np.asarray(p["count"], np.uint32),
        }
        stones = p.get("stones")
        if stones is not None:
            meta["table"]["points"] = int(stones.shape[1])
            arrays["stones"] = pack_stones(np.asarray(stones, np.uint8))
    arrays["meta"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), np.uint8)
    atomic_save_npz(path, compress=True, **arrays)


def read_packed(path: str | Path) -> dict[str, Any]:
    """A packed checkpoint as read_checkpoint's dict (``registry`` None: the registry is
    rebuilt from the features and checked against ``registry_hash``)."""
    with np.load(path, allow_pickle=False) as z:
        try:
            meta = json.loads(z["meta"].tobytes().decode())
        except (KeyError, ValueError) as e:
            raise ValueError(f"{path}: not a packed gomove model ({e})") from None
        if meta.get("version") != PACKED_VERSION:
            raise ValueError(
                f"{path}: packed model version {meta.get('version')}, expected {PACKED_VERSION}"
            )
        model = {
            k.removeprefix("param."): torch.from_numpy(z[k].astype(np.float32))
            for k in z.files
            if k.startswith("param.")
        }
        patterns = None
        if "table" in meta:
            t = meta["table"]
            stones = None
            if "stones" in z.files:
                stones = unpack_stones(z["stones"], int(t["points"]))
            patterns = {
                "hashes": z["hashes"],
                "radius": z["radius"].astype(np.int64),
                "count": z["count"].astype(np.int64),
                "min_radius": t["min_radius"],
                "max_radius": t["max_radius"],
                "min_count": t["min_count"],
                "stones": stones,
            }
    return {
        "version": meta["version"],
        "model_name": meta["model_name"],
        "model": model,
        "model_args": meta["model_args"],
        "registry": None,
        "registry_hash": meta["registry_hash"],
        "features": meta["features"],
        "patterns": patterns,
        "config": None,
        "history": [],
        "source": meta["source"],
    }
