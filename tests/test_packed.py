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
