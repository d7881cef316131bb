"""Ownership maps (gomove/play/ownership.py).

Invariants checked:
- probabilities lie in [0, 1] and P(black) + P(white) <= 1 at every point;
- inside a living group's true eye the owner is certain (1 for its colour);
- the map equals the owner counts of ``run_playouts`` with the same seed, and
  the mean score equals the mean of its scores;
- ``board_at`` gives the board of sgfmill's replay before the asked move and
  the right colour to move, and rejects a move out of range;
- the PNG and the command line write a real PNG file;
- the territory CRF's map (crf_ownership) is the CRF's estimate, with no dame, and
  gives each side the points its walls enclose; ``gomove ownership --method crf``
  draws it; a missing or bad --territory, or the shipped one absent, is a one-line
  exit naming the command.
"""

from __future__ import annotations

import numpy as np
import pytest
from board_ascii import board_from
from gamegen import random_sgf

from gomove import pretrained
from gomove.board.board import BLACK, WHITE, copy_board
from gomove.board.replay import board_at
from gomove.board.scoring import default_max_moves
from gomove.cli.model_args import load_territory
from gomove.cli.ownership import main
from gomove.models.territory.crf import TerritoryCRF
from gomove.play.boardplot import stones
from gomove.play.ownership import CRF, PLAYOUTS, crf_ownership, ownership, plot_ownership
from gomove.playout.driver import play_game, run_playouts, start_state
from gomove.playout.policy import PatternPolicy
from gomove.playout.rng import seed_state
from gomove.reading.sgf import parse_game

TWO_GROUPS = """
    . . . . . O . O .
    . . . . . O O O O
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    X X X X . . . . .
    . X . X . . . . .
"""


def test_map_on_living_groups():
    b = board_from(TWO_GROUPS)
    own = ownership(b, BLACK, n=64, komi=7.0, seed=2)
    assert own.size == 9 and own.n == 64
    assert ((own.black >= 0) & (own.black <= 1) & (own.black + own.white <= 1 + 1e-12)).all()
    assert own.black[0, 2] == 1.0 and own.white[0, 2] == 0.0  # C1, black's eye
    assert own.white[8, 6] == 1.0 and own.black[8, 6] == 0.0  # G9, white's eye
    scores, counts = run_playouts(b, BLACK, 7.0, 64, 2)
    np.testing.assert_array_equal(own.black, counts[BLACK] / 64)
    np.testing.assert_array_equal(own.white, counts[WHITE] / 64)
    assert own.mean_score == pytest.approx(scores.mean())
    assert own.expected_territory() == pytest.approx(float((own.black - own.white).sum()))
    with pytest.raises(ValueError):
        ownership(b, BLACK, n=0)


def test_board_at_matches_sgfmill():
    from sgfmill import boards

    game = parse_game(random_sgf(9, 25, seed=3), "g.sgf")
    for move in (1, 10, 26, None):
        b, to_move = board_at(game, move)
        stop = len(game.moves) if move is None else move - 1
        sb = boards.Board(9)
        for color, m in game.moves[:stop]:
            if m is not None:
                sb.play(*m, "b" if color == BLACK else "w")
        want = np.zeros((9, 9), np.int8)
        for color, (r, c) in sb.list_occupied_points():
            want[r, c] = BLACK if color == "b" else WHITE
        np.testing.assert_array_equal(stones(b), want)
        if stop < len(game.moves):
            assert to_move == game.moves[stop][0]
        else:
            assert to_move != game.moves[-1][0]
    with pytest.raises(ValueError, match="move must be"):
        board_at(game, 40)


def test_png_and_cli(tmp_path):
    b = board_from(TWO_GROUPS)
    path = plot_ownership(b, ownership(b, WHITE, n=16), tmp_path / "own.png", title="t")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sgf = tmp_path / "g.sgf"
    sgf.write_bytes(random_sgf(9, 30, seed=5))
    out = tmp_path / "cli.png"
    main([str(sgf), "--move", "20", "--playouts", "32", "--out", str(out)])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_map_with_pattern_policy():
    """With a pattern policy, the map is the owners of that policy's games: equal to
    counting the owners of n single games played here with the documented seeds
    (seed_state(seed, g)) and the policy's player; and the policy matters (a
    non-neutral one gives another map than uniform playouts)."""
    b = board_from(TWO_GROUPS)
    rs = np.random.default_rng(3)
    neutral = PatternPolicy.neutral()
    policy = PatternPolicy(
        np.exp(rs.normal(0.0, 2.0, neutral.pattern.shape)),
        *(neutral.of(g) for g in ("capture", "extension", "self_atari", "contiguity", "pass")),
    )
    own = ownership(b, BLACK, n=32, seed=4, policy=policy)
    player = policy.player()
    black = np.zeros((9, 9))
    owner, no_moves = np.zeros(81, np.int8), np.zeros(0, np.int32)
    for g in range(32):
        game = copy_board(b)
        rng = np.array([seed_state(np.uint64(4), g)], np.uint64)
        state = start_state(player, game)
        play_game(game, BLACK, 7.5, rng, default_max_moves(9), player, state, owner, no_moves)
        black += (owner == BLACK).reshape(9, 9)
    np.testing.assert_array_equal(own.black, black / 32)
    assert own.black[0, 2] == 1.0 and own.white[8, 6] == 1.0
    uniform = ownership(b, BLACK, n=32, seed=4)
    assert not np.array_equal(own.black, uniform.black)


# Black walls off the bottom five rows, White the top three; a lone white stone on E1
# inside Black's side.
WALLS = """
    . . . . . . . . .
    . . . . . . . . .
    O O O O O O O O O
    . . . . . . . . .
    X X X X X X X X X
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . O . . . .
"""


@pytest.mark.parametrize("to_move", [BLACK, WHITE])
def test_crf_map_gives_each_side_what_its_wall_encloses(territory_path, to_move):
    crf = TerritoryCRF.load(territory_path)
    b = board_from(WALLS)
    own = crf_ownership(b, to_move, 0.5, crf, sweeps=200, seed=1)
    est = crf.predict(b, to_move, 0.5, sweeps=200, seed=1)
    np.testing.assert_array_equal(own.black, est.black)
    np.testing.assert_allclose(own.white, 1.0 - own.black)  # the CRF has no dame
    assert own.mean_score == est.mean_score and own.score_stdev == est.score_stdev
    assert own.score_stderr == pytest.approx(est.score_stdev / np.sqrt(200))
    assert (own.n, own.to_move, own.method) == (200, to_move, CRF)
    assert own.describe() == "CRF, 200 sweeps"
    assert own.black[:5].mean() > 0.9 and own.black[0, 4] > 0.8  # rows 1-5 and E1: black's
    assert own.black[6:].mean() < 0.1  # rows 7-9: white's
    assert own.mean_score > 0  # 45 points to 27, row 6 either's
    plain = ownership(b, to_move, n=4)
    assert (plain.method, plain.describe()) == (PLAYOUTS, "4 playouts")


def test_cli_draws_the_crf_map(tmp_path, territory_path, capsys):
    sgf = tmp_path / "g.sgf"
    sgf.write_bytes(random_sgf(9, 30, seed=5))
    out = tmp_path / "crf.png"
    main([str(sgf), "--move", "20", "--method", "crf", "--territory", str(territory_path),
          "--sweeps", "20", "--out", str(out)])  # fmt: skip
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    said = capsys.readouterr().out
    assert "CRF, 20 sweeps (the territory CRF" in said and "mean dame share 0.000" in said
    out.unlink()
    main([str(sgf), "--territory", str(territory_path), "--sweeps", "5", "--out", str(out)])
    assert out.is_file() and "CRF, 5 sweeps" in capsys.readouterr().out  # --territory: crf


def test_cli_bad_territory_is_a_one_line_error(tmp_path, territory_path, monkeypatch):
    sgf = tmp_path / "g.sgf"
    sgf.write_bytes(random_sgf(9, 30, seed=5))
    (tmp_path / "bad.pt").write_text("not a model\n")
    monkeypatch.setattr(pretrained, "TERRITORY", tmp_path / "absent.pt")
    cases = [
        (["--territory", str(tmp_path / "none.pt")], "No such file"),
        (["--territory", str(tmp_path / "bad.pt")], "not a territory model"),
        (["--method", "crf"], "no shipped model"),  # the shipped one absent
        (["--method", "playouts", "--territory", str(territory_path)], "crf method"),
    ]
    for extra, why in cases:
        with pytest.raises(SystemExit) as e:
            main([str(sgf), *extra, "--out", str(tmp_path / "x.png")])
        msg = str(e.value.code)
        assert msg.startswith("gomove ownership: ") and why in msg and "\n" not in msg, msg
    assert not (tmp_path / "x.png").exists()


def test_load_territory_defaults_to_the_shipped_model(territory_path, monkeypatch):
    monkeypatch.setattr(pretrained, "TERRITORY", territory_path)
    crf = load_territory(None)
    assert crf.features == "stern" and crf.field[3].item() == 1.0
