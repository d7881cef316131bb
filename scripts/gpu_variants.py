"""Time candidate GPU kernels for the two hot spots the H200 profile found, on real data.

The profile of 2026-11-27 (docs/logs/gpu.md) put 85% of an FBT step's GPU time in
embedding_bag's backward, and half of an MM pass's in bincount. This script times
the alternatives on the same cache, each checked against the current form (the
largest difference printed beside its time), so that the engines take the fastest
correct one. A lab script: run on a lent GPU machine after `gomove bench gpu` built
the cache (same --data, --cache-dir, --gpu-games).

    python3 scripts/gpu_variants.py --data .devdata --cache-dir /tmp/gomove-cache \
        --gpu-games 5000 --out OUT/variants.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from gomove.bench.gpu import FBT, split_config
from gomove.data.device_flat import DeviceFlat
from gomove.train.move_models import prepare_data


def _timed(fn, repeat: int, device: torch.device):
    fn()  # warm
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeat):
        out = fn()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return out, (time.perf_counter() - t0) / repeat


def fbt_grads(flat: DeviceFlat, n_features: int, device, steps: int, emit) -> None:
    """The table's gradient of an FBT batch (batch 1,024, k=10) by six forms."""
    k, n = FBT["k"], FBT["batch_size"]
    gen = torch.Generator().manual_seed(0)
    table = torch.randn(n_features, 1 + k, generator=gen, dtype=torch.float64) * 0.1
    table[0] = 0.0
    table = table.to(device)
    pos = torch.randperm(flat.n_positions, generator=gen)[:n].to(device)
    rows, seg, first = flat.rows(pos)
    idx = flat.indices(rows)  # [R, G]
    r, g = idx.shape
    coef = torch.randn(r, generator=gen, dtype=torch.float64).to(device)

    def loss_of(s):  # a stand-in for the softmax's weights: the backward is what is timed
        e = s[:, 0] + 0.5 * (s[:, 1:] * s[:, 1:]).sum(1)
        return (coef * e).sum()

    def grad_s():
        s = F.embedding_bag(idx, table, mode="sum", padding_idx=0)
        s.requires_grad_(True)
        (gs,) = torch.autograd.grad(loss_of(s), s)
        return gs

    def bag():
        t = table.clone().requires_grad_(True)
        (gt,) = torch.autograd.grad(loss_of(F.embedding_bag(idx, t, mode="sum", padding_idx=0)), t)
        return gt

    def bag_nopad():
        t = table.clone().requires_grad_(True)
        (gt,) = torch.autograd.grad(loss_of(F.embedding_bag(idx, t, mode="sum")), t)
        return gt

    def embed_sum():
        t = table.clone().requires_grad_(True)
        (gt,) = torch.autograd.grad(loss_of(F.embedding(idx, t, padding_idx=0).sum(1)), t)
        return gt

    flat_idx = idx.reshape(-1)
    row_of = torch.arange(r, device=device).repeat_interleave(g)

    def index_add():
        gs = grad_s()
        out = torch.zeros_like(table)
        out.index_add_(0, flat_idx, gs[row_of])
        out[0] = 0.0
        return out

    def index_add_nz():
        gs = grad_s()
        keep = flat_idx > 0
        out = torch.zeros_like(table)
        out.index_add_(0, flat_idx[keep], gs[row_of[keep]])
        return out

    def sorted_segments():
        gs = grad_s()
        keep = flat_idx > 0
        fi, ro = flat_idx[keep], row_of[keep]
        key, order = torch.sort(fi, stable=True)
        uniq, counts = torch.unique_consecutive(key, return_counts=True)
        out = torch.zeros_like(table)
        out[uniq] = torch.segment_reduce(gs[ro[order]], "sum", lengths=counts, axis=0)
        return out

    ref = None
    forms = {
        "embedding_bag padding_idx (current)": bag,
        "embedding_bag": bag_nopad,
        "embedding + sum": embed_sum,
        "index_add_": index_add,
        "index_add_ nonzero": index_add_nz,
        "sort + segment_reduce": sorted_segments,
    }
    for name, fn in forms.items():
        out, sec = _timed(fn, steps, device)
        ref = out if ref is None else ref
        emit({"phase": "fbt_grad", "form": name, "rows": r, "groups": g,
              "ms": round(sec * 1e3, 3),
              "max_abs_diff": float((out - ref).abs().max())})  # fmt: skip


def mm_sums(flat: DeviceFlat, sizes: list[int], device, repeat: int, emit) -> None:
    """One chunk's P(candidate) summed by each group's level, by six forms."""
    chunk = min(flat.n_candidates, 262144 * 250)
    gen = torch.Generator().manual_seed(0)
    p = torch.rand(chunk, generator=gen, dtype=torch.float64).to(device)
    sl = slice(0, chunk)
    for g, size in enumerate(sizes):
        lev = flat.group_levels(g, sl)
        zeros = float((lev == 0).double().mean())
        top = float(torch.bincount(lev).max()) / chunk
        ref = None
        for name, fn in _mm_forms(lev, p, size + 1).items():
            out, sec = _timed(fn, repeat, device)
            ref = out if ref is None else ref
            diff = (out[1:] - ref[1:]).abs().max() / ref[1:].abs().max().clamp(min=1e-300)
            emit({"phase": "mm_sum", "group": g, "bins": size + 1, "share_absent": round(zeros, 4),
                  "share_top_bin": round(top, 4), "candidates": chunk, "form": name,
                  "ms": round(sec * 1e3, 3), "max_rel_diff": float(diff)})  # fmt: skip


def _mm_forms(lev: torch.Tensor, p: torch.Tensor, nb: int) -> dict:
    """p summed by lev (nb bins) in six forms, by name."""
    spread = torch.arange(len(lev), device=lev.device) & 1023
    order = torch.argsort(lev, stable=True)  # cached: not timed
    counts = torch.bincount(lev, minlength=nb)

    def bincount():
        return torch.bincount(lev, p, minlength=nb)

    def bincount_spread():
        lv = torch.where(lev == 0, nb + spread, lev)
        return torch.bincount(lv, p, minlength=nb + 1024)[:nb]

    def bincount_nz():
        keep = lev > 0
        return torch.bincount(lev[keep], p[keep], minlength=nb)

    def index_add():
        return torch.zeros(nb, dtype=p.dtype, device=p.device).index_add_(0, lev, p)

    def bincount_f32():
        return torch.bincount(lev, p.float(), minlength=nb).double()

    def sorted_segments():
        return torch.segment_reduce(p[order], "sum", lengths=counts)

    return {
        "bincount (current)": bincount,
        "bincount, zeros spread": bincount_spread,
        "bincount, zeros dropped": bincount_nz,
        "index_add_": index_add,
        "bincount float32": bincount_f32,
        "sorted + segment_reduce (order cached)": sorted_segments,
    }


def main() -> None:
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--data", required=True)
    a.add_argument("--cache-dir", default="cache")
    a.add_argument("--gpu-games", type=int, default=5000)
    a.add_argument("--test-games", type=int, default=300)
    a.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a.add_argument("--repeat", type=int, default=20)
    a.add_argument("--out")
    args = a.parse_args()
    out = Path(args.out) if args.out else None
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("")

    def emit(row: dict) -> None:
        line = json.dumps(row)
        print(line, flush=True)
        if out:
            with open(out, "a") as f:
                f.write(line + "\n")

    cfg = split_config(Path(args.data).resolve(), args.cache_dir, args.gpu_games, args.test_games)
    data = prepare_data(cfg)
    device = torch.device(args.device)
    flat = DeviceFlat(data.train.flat(), device)
    reg = data.train.registry
    emit({"phase": "machine", "device": str(device),
          "name": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
          "candidates": flat.n_candidates, "features": reg.n_features})  # fmt: skip
    fbt_grads(flat, reg.n_features, device, args.repeat, emit)
    mm_sums(flat, [int(s) for s in reg.sizes], device, max(args.repeat // 4, 2), emit)


if __name__ == "__main__":
    main()
