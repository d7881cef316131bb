"""Packed checkpoints (gomove.models.packed) and the commands' model options."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from gomove.board.board import BLACK, new_board, play
from gomove.board.coords import gtp_to_loc
from gomove.cli import export as export_cli
from gomove.cli.model_args import NONE, load_model, load_policy
from gomove.models.checkpoint import load_checkpoint
from gomove.models.packed import pack_stones, unpack_stones
from gomove.play.predict import Predictor


def test_stones_pack_four_to_a_byte_and_back():
    rng = np.random.default_rng(0)
    for n in (1, 4, 7, 72):
        stones = rng.integers(0, 4, size=(50, n), dtype=np.uint8)
        packed = pack_stones(stones)
        assert packed.shape == (50, -(-n // 4))
        assert np.array_equal(unpack_stones(packed, n), stones)
    with pytest.raises(ValueError, match="above 3"):
        pack_stones(np.array([[4]], np.uint8))


def position():
    b = new_board(9)
    color = BLACK
    for v in ("E5", "C3", "G7", "C7", "G3", "E3", "D4"):
        play(b, gtp_to_loc(v, 9), color)
        color = 3 - color
    return b, color


@pytest.mark.parametrize("kind", ["mm", "fbt"])
def test_a_packed_model_predicts_as_its_run(runs, tmp_path, kind, capsys):
    out = tmp_path / f"{kind}.npz"
    assert export_cli.main(["packed", str(runs[kind].parent), str(out), "--note", "tiny"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["bytes"] == out.stat().st_size and summary["source"]["note"] == "tiny"
    full, packed = load_checkpoint(runs[kind]), load_checkpoint(out)
    assert packed["model_name"] == kind and packed["model_args"] == full["model_args"]
    assert packed["extractor"].registry == full["extractor"].registry
    t, u = full["extractor"].table, packed["extractor"].table
    assert np.array_equal(t.hashes, u.hashes) and np.array_equal(t.stones, u.stones)
    assert np.array_equal(t.count, u.count) and np.array_equal(t.radius, u.radius)
    for name, p in full["model"].items():
        assert torch.allclose(packed["model"][name].double(), p.double(), rtol=1e-6, atol=1e-7)
    board, color = position()
    la, pa = Predictor.from_checkpoint(runs[kind]).log_probs(board, color)
    lb, pb = Predictor.from_checkpoint(out).log_probs(board, color)
    assert np.array_equal(la, lb) and np.allclose(pa, pb, atol=1e-5)


def test_a_packed_file_that_is_not_one_is_refused(tmp_path):
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.zeros(3))
    with pytest.raises(ValueError, match="not a packed gomove model"):
        load_checkpoint(bad)
    with pytest.raises(FileNotFoundError, match="no such model file"):
        load_checkpoint(tmp_path / "missing.npz")


def test_none_turns_a_model_off(runs):
    assert load_model(NONE) is None and load_policy(NONE) is None
    assert load_model(str(runs["mm"])).name.startswith("mm (")
    assert load_policy(str(runs["policy"])) is not None


def test_float16_parameters_halve_their_bytes_and_keep_the_predictions(runs, tmp_path, capsys):
    a, b = tmp_path / "f32.npz", tmp_path / "f16.npz"
    assert export_cli.main(["packed", str(runs["mm"].parent), str(a)]) == 0
    assert export_cli.main(["packed", str(runs["mm"].parent), str(b), "--float16"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["source"]["shrunk"]["param_dtype"] == "float16"
    with np.load(a) as za, np.load(b) as zb:
        assert zb["param.log_gamma"].dtype == np.float16
        assert zb["param.log_gamma"].nbytes * 2 == za["param.log_gamma"].nbytes
    full, half = load_checkpoint(a), load_checkpoint(b)
    g, h = full["model"]["log_gamma"], half["model"]["log_gamma"]
    assert h.dtype == torch.float32
    assert torch.allclose(h, g, rtol=1e-3, atol=1e-3) and not torch.equal(h, g)
    board, color = position()
    la, pa = Predictor.from_checkpoint(a).log_probs(board, color)
    lb, pb = Predictor.from_checkpoint(b).log_probs(board, color)
    assert np.array_equal(la, lb) and np.allclose(np.exp(pa), np.exp(pb), atol=1e-3)


@pytest.mark.parametrize("kind", ["mm", "fbt"])
def test_pruned_shapes_keep_the_others_parameters_and_fall_back(runs, tmp_path, kind, capsys):
    full = load_checkpoint(runs[kind])
    count = full["extractor"].table.count
    min_count = int(np.median(count)) + 1  # prunes about half
    out = tmp_path / "pruned.npz"
    assert (
        export_cli.main(["packed", str(runs[kind].parent), str(out), "--min-count", str(min_count)])
        == 0
    )
    kept = json.loads(capsys.readouterr().out)["source"]["shrunk"]["patterns"]
    assert kept == {"harvested": len(count), "kept": int(np.sum(count >= min_count))}
    assert 0 < kept["kept"] < kept["harvested"]
    small = load_checkpoint(out)
    t, u = full["extractor"].table, small["extractor"].table
    assert u.min_count == min_count and np.all(u.count >= min_count)
    assert np.array_equal(u.hashes, t.hashes[t.count >= min_count])
    # the reference: every kept feature's parameters found by its name in the full model
    names, small_names = full["extractor"].registry.names(), small["extractor"].registry.names()
    where = {n: i for i, n in enumerate(names)}
    rows = [where[n] for n in small_names]
    for name, p in small["model"].items():
        f = full["model"][name].float()  # a packed file keeps float32
        assert torch.equal(p, f if f.dim() == 0 else f[rows])
    # a candidate keeps its pattern when it survived, else gets a smaller kept one (or none)
    board, color = position()
    locs_a, lev_a = full["extractor"].position(board, color)
    locs_b, lev_b = small["extractor"].position(board, color)
    assert np.array_equal(locs_a, locs_b)
    g = full["extractor"].registry.group_index("shape")
    for a, b in zip(lev_a[:, g], lev_b[:, g], strict=True):
        if not a:  # no pattern of the full table: none of its part either
            assert not b
        elif t.count[a - 1] >= min_count:
            assert u.hashes[b - 1] == t.hashes[a - 1]
        elif b:
            assert u.radius[b - 1] < t.radius[a - 1]
    # and the pruned model scores them as the full model does those features
    _, lp = Predictor.from_checkpoint(out).log_probs(board, color)
    feat = np.asarray(rows)[small["extractor"].registry.global_indices(lev_b)]
    with torch.no_grad():
        ref = (
            full["module"]
            .float()
            .log_probs(torch.from_numpy(feat)[None], torch.ones(1, len(feat), dtype=torch.bool))[0]
        )
    assert np.allclose(lp, ref.double().numpy(), atol=1e-6)


def test_pruning_a_model_without_shapes_is_refused(runs, tmp_path, capsys):
    out = tmp_path / "x.npz"
    assert export_cli.main(["packed", str(runs["light"].parent), str(out), "--min-count", "5"]) == 2
    assert "no shape patterns" in capsys.readouterr().err
