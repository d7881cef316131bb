"""The model shipped inside the package (gomove.pretrained, docs/model-card.md)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from gomove import pretrained
from gomove.board.board import BLACK, WHITE, board_from_points, new_board, play
from gomove.board.coords import gtp_to_loc
from gomove.models.territory.crf import TerritoryCRF
from gomove.play.predict import Predictor
from gomove.playout.policy import PatternPolicy

CARD = json.loads((pretrained.HERE / "card.json").read_text())
BUDGET = 15 * 10**6  # bytes, model and policy together


def test_the_shipped_files_fit_the_budget_and_match_the_card():
    sizes = pretrained.MODEL.stat().st_size, pretrained.POLICY.stat().st_size
    assert sum(sizes) <= BUDGET
    assert sizes == (CARD["model"]["bytes"], CARD["policy"]["bytes"])


def test_the_shipped_model_gives_the_cards_answers():
    predictor = Predictor.default()
    assert predictor.name.startswith(f"the shipped {CARD['model']['kind']} model")
    for pos in CARD["positions"]:
        b, color = new_board(pos["size"]), BLACK
        for v in pos["moves"]:
            play(b, gtp_to_loc(v, pos["size"]), color)
            color = 3 - color
        top = predictor.predict(b, color).top(len(pos["top"]))
        assert [v for v, _ in top] == [v for v, _ in pos["top"]], pos["name"]
        assert [p for _, p in top] == pytest.approx([p for _, p in pos["top"]], abs=1e-5)


def test_the_shipped_policy_loads():
    policy = PatternPolicy.default()
    assert policy.pattern.size > 0


def gomove(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gomove.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=900)  # fmt: skip


@pytest.mark.parametrize("size", [9, 19])
def test_gtp_with_no_options_plays_with_the_shipped_model(size):
    done = gomove("gtp", "--sims", "60", stdin=f"boardsize {size}\ngenmove b\nquit\n")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (
        "model: the shipped" in done.stderr and "playouts: the shipped light policy" in done.stderr
    )
    answers = [b for b in done.stdout.split("\n\n") if b.strip()]
    vertex = re.fullmatch(r"= ([A-HJ-T][0-9]+)", answers[1].strip())
    assert vertex, answers
    col, row = vertex.group(1)[0], int(vertex.group(1)[1:])
    assert "ABCDEFGHJKLMNOPQRST".index(col) < size and 1 <= row <= size


def test_predict_with_no_model_uses_the_shipped_one(tmp_path):
    out = tmp_path / "p.png"
    done = gomove("predict", "--moves", "B Q16 W D4", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "the shipped" in done.stdout and out.stat().st_size > 0
    assert re.search(r"^\s+1\.\s+[A-T][0-9]+\s+0\.\d{4}$", done.stdout, re.M)


def test_the_shipped_territory_model_sees_who_walled_off_what():
    """The shipped CRF on a 19x19 board split by two walls: each side owns its own."""
    crf = TerritoryCRF.default()
    assert crf.features == "rmc16" and crf.independent and crf.meta["train_games"] > 1000
    assert crf.policy is None and crf.meta["policy"] is None  # rule playouts: no file
    size = 19
    points = np.zeros(size * size, np.int8)
    points[[r * size + 5 for r in range(size)]] = 1  # black wall on column F
    points[[r * size + 13 for r in range(size)]] = -1  # white wall on column O
    for to_move in (BLACK, WHITE):  # each wall's side is its own, whoever is to move (its
        # playouts let the mover invade a 5-line area now and then: not 0.9+)
        est = crf.predict(board_from_points(points, size, to_move), to_move, komi=6.5)
        assert est.black[:, :5].mean() > 0.85 and est.black[:, 14:].mean() < 0.15
