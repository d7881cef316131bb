"""Prediction on one position (gomove.play.predict, gomove predict).

- the one-position extraction (FeatureExtractor.position) gives, position by
  position, exactly the rows the whole-game extraction gives;
- Predictor works for every model kind from one code path: probabilities over
  exactly the legal moves and pass, summing to 1, equal to the evaluation's
  log_probs on the same candidates;
- on a hand-made position a capture model ranks the obvious capture first;
- the CLI prints the top moves and the expert's rank and writes the PNG.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gamegen import random_sgf

from gomove.board.board import BLACK, WHITE, legal_moves, new_board
from gomove.board.coords import PASS, gtp_to_loc
from gomove.board.replay import board_at, play_moves
from gomove.cli.predict import main as predict_main
from gomove.cli.predict import parse_moves
from gomove.data.extractor import FeatureExtractor
from gomove.features.config import FeatureConfig
from gomove.play.predict import Predictor
from gomove.reading.sgf import parse_game


def test_position_rows_equal_game_rows():
    game = parse_game(random_sgf(9, 60, seed=7), "g.sgf")
    ex = FeatureExtractor(FeatureConfig(shapes=False))
    whole = ex.game(game)
    starts = np.concatenate([[0], np.cumsum(whole["n_cand"])])
    for p, move in enumerate(whole["move"]):
        board, color = board_at(game, int(move) + 1)
        locs, levels = ex.position(board, color)
        a, b = starts[p], starts[p + 1]
        assert np.array_equal(locs[:-1], whole["cand"][a:b][:-1].astype(np.int64))
        assert locs[-1] == PASS
        for g, name in enumerate(ex.registry.group_names):
            assert np.array_equal(levels[:, g], whole["columns"][name][a:b]), (p, name)


@pytest.mark.parametrize("kind", ["mm", "fbt", "light"])
def test_every_model_kind_predicts(runs, kind):
    pred = Predictor.from_checkpoint(runs[kind])
    board = new_board(9)
    to_move = play_moves(board, [(BLACK, gtp_to_loc(v, 9)) for v in ("E5", "C3")][:1])
    probs = pred.probs(board, to_move)
    out = np.empty(82, np.int64)
    n = legal_moves(board, to_move, True, out)
    assert set(probs) == {*map(int, out[:n]), PASS}
    assert sum(probs.values()) == pytest.approx(1.0)
    assert min(probs.values()) > 0
    # the same numbers as the model's log_probs on the candidates as a batch of one
    locs, feat = pred.features(board, to_move)
    lp = pred.model.log_probs(feat, torch.ones(feat.shape[:2], dtype=torch.bool))[0]
    ref = torch.softmax(lp.detach().double(), 0).numpy()
    assert np.allclose([probs[int(x)] for x in locs], ref)


def test_capture_ranked_first(capture_model):
    # white E5 has one liberty left (E6); black to move captures there
    board = new_board(9)
    moves = [(c, gtp_to_loc(v, 9)) for c, v in parse_moves("B D5 W E5 B F5 W A1 B E4")]
    to_move = play_moves(board, moves)
    assert to_move == WHITE
    to_move = play_moves(board, [(WHITE, gtp_to_loc("A2", 9))])
    pred = capture_model.predict(board, to_move)
    assert pred.top(1)[0][0] == "E6"
    assert pred.rank_of(gtp_to_loc("E6", 9)) == 1
    assert pred.rank_of(gtp_to_loc("E5", 9)) is None  # occupied: not a candidate


def test_predict_cli(runs, tmp_path, capsys):
    sgf = tmp_path / "g.sgf"
    sgf.write_bytes(random_sgf(9, 40, seed=3))
    png = tmp_path / "p.png"
    predict_main(["--model", str(runs["mm"]), str(sgf), "--move", "12", "--out", str(png)])
    out = capsys.readouterr().out
    assert "expert move" in out and "rank" in out
    assert png.stat().st_size > 10_000
    predict_main(["--model", str(runs["fbt"]), "--moves", "B E5 W C3", "--size", "9", "--top", "3"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("2 moves played; black to move")
    assert len(lines) == 4


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--moves", "B E5 B E5"], "illegal"),
        (["--moves", "B I5"], "not a vertex"),
        (["--moves", "B E55"], "off a 9x9"),
        (["nonexistent.sgf"], "no such file"),
    ],
)
def test_predict_cli_errors(runs, argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        predict_main(["--model", str(runs["mm"]), "--size", "9", *argv])
    assert message in str(e.value)
