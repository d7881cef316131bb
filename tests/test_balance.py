"""Simulation balancing (gomove.train.balance, ``gomove train model=balance``, gomove balance).

- the score function the kernel adds up equals the finite-difference gradient
  of a playout's log-probability, computed from draw.policy_gamma (the
  distribution the playouts draw from) one parameter at a time;
- balance_games' outcomes are run_playouts' under the same seeds;
- LevelParams round-trips a policy's gammas;
- balancing towards "Black wins" raises the playouts' P(Black wins), towards
  "White wins" lowers it, and reduces the squared error it minimizes;
- positions are sampled reproducibly, labels resume and bad label lines are errors;
- the CLI labels with a tiny model and trains (``gomove balance train``, an alias that
  says so of ``gomove train model=balance``, whose run gives the same numbers), writing
  policy, metrics and plot;
- another engine labels over GTP: sent the moves before the position, its answer read.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from gamegen import random_sgf
from synthetic import cfg_of, recorded_game

from gomove.board.board import BLACK, KO, LAST, SIZE, W, copy_board, play
from gomove.board.coords import PASS
from gomove.board.replay import board_at
from gomove.board.scoring import default_max_moves
from gomove.cli.balance import main as balance_main
from gomove.data.value_labels import read_labels
from gomove.features.light_gammas import LightGammas
from gomove.play.labelling import analyze_value, label_positions, sample_positions
from gomove.playout.driver import run_playouts
from gomove.playout.pattern.draw import policy_gamma
from gomove.playout.policy import PatternPolicy
from gomove.reading.games import load_game
from gomove.train.balance.fit import LevelParams, balance, playout_error, playout_values
from gomove.train.balance.gradient import (
    Games,
    Reinforce,
    add_score_function,
    balance_games,
    zero_gradient,
)
from gomove.train.schemas import BalanceConfig
from gomove.train.trainers import run


def some_policy(seed: int = 0) -> PatternPolicy:
    """Gammas away from 1 everywhere, so every parameter matters."""
    rng = np.random.default_rng(seed)
    g = LightGammas.neutral()
    return PatternPolicy(
        np.exp(rng.normal(0, 1, g.pattern.shape)),
        *(np.concatenate([[1.0], np.exp(rng.normal(0, 1, len(g.of(k)) - 1))])
          for k in ("capture", "extension", "self_atari", "contiguity", "pass")),
    )  # fmt: skip


@pytest.fixture(scope="module")
def sgf_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("sb")
    for i in range(6):
        (root / f"g{i}.sgf").write_bytes(random_sgf(9, 50, seed=100 + i))
    return root


def mid_position(sgf_dir, i: int = 0, move: int = 30):
    return board_at(load_game(sgf_dir / f"g{i}.sgf"), move)


def log_probability(policy: PatternPolicy, b, color: int, moves: list[int]) -> float:
    """log P(moves) under policy, the slow way: every point's policy_gamma at every move."""
    t = policy.tables()
    b = copy_board(b)
    size, w = int(b.info[SIZE]), int(b.info[W])
    total_log = 0.0
    for mv in moves:
        if mv != PASS:
            last, ko = int(b.info[LAST]), int(b.info[KO])
            gam = {
                p: policy_gamma(b, p, color, last, ko, t)
                for p in ((r + 1) * w + c + 1 for r in range(size) for c in range(size))
            }
            total_log += math.log(gam[mv] / sum(gam.values()))
        play(b, mv, color)
        color = 3 - color
    return total_log


def test_score_function_is_the_gradient_of_the_log_probability(sgf_dir):
    policy = some_policy()
    b, color = mid_position(sgf_dir)
    moves = recorded_game(policy.player(), b, color, seed=3)[0][:25]
    assert len([m for m in moves if m != PASS]) >= 20
    g = zero_gradient(policy.tables())
    add_score_function(copy_board(b), color, np.array(moves, np.int32), len(moves),
                       policy.tables(), g, 1.0)  # fmt: skip
    params = LevelParams(policy)
    groups = dict(zip(("pattern", "capture", "extension", "self_atari", "contiguity"),
                      params.groups(), strict=True))  # fmt: skip
    grads = dict(zip(groups, g, strict=True))
    # every pattern level the playout chose from that moved the sum, and each other group
    checked = [
        ("pattern", int(k)) for k in np.flatnonzero(np.abs(grads["pattern"][1:]) > 1e-3)[:6] + 1
    ]
    checked += [(name, k) for name in ("capture", "extension", "self_atari", "contiguity")
                for k in range(1, len(groups[name]))]  # fmt: skip
    assert len(checked) >= 10
    eps = 1e-5
    for name, k in checked:
        base = groups[name][k]
        groups[name][k] = base + eps
        up = log_probability(params.gammas(), b, color, moves)
        groups[name][k] = base - eps
        down = log_probability(params.gammas(), b, color, moves)
        groups[name][k] = base
        numeric = (up - down) / (2 * eps)
        assert grads[name][k] == pytest.approx(numeric, abs=1e-5, rel=1e-4), (name, k)


def test_balance_games_outcomes_are_run_playouts(sgf_dir):
    policy = some_policy(1)
    b, color = mid_position(sgf_dir, 1)
    scores, _ = run_playouts(b, color, 7.5, 40, seed=9, policy=policy.player())
    wins = np.zeros(40)
    g = zero_gradient(policy.tables())
    games = Games(40, np.uint64(9), default_max_moves(9), 7.5)
    balance_games(b, color, games, policy.player(), wins, Reinforce(g, 0.0, 0.0))
    assert wins.tolist() == (scores > 0).astype(float).tolist()
    assert all((a == 0).all() for a in g)  # weight 0: no gradient


def test_level_params_round_trip():
    policy = some_policy(2)
    back = LevelParams(policy).gammas()
    for a, c in zip(policy.tables(), back.tables(), strict=True):
        np.testing.assert_allclose(a, c, rtol=1e-12)


def test_step_leaves_level_zero_and_clips():
    params = LevelParams(some_policy(3))
    before = [p.copy() for p in params.groups()]
    g = tuple(np.full(len(p), 5.0) for p in params.groups())
    params.step(g, 1.0, 0.1)
    for p, q in zip(params.groups(), before, strict=True):
        assert p[0] == q[0]
        np.testing.assert_allclose(p[1:] - q[1:], 0.1)


@pytest.mark.parametrize("target", [1.0, 0.0])
def test_balancing_moves_the_playouts_towards_the_labels(sgf_dir, target):
    policy = some_policy(4)
    positions = [(*mid_position(sgf_dir, i, 20), target) for i in range(4)]
    before = playout_values(policy, positions, 400, 7.5, 1).mean()
    cfg = BalanceConfig(value_playouts=32, grad_playouts=32, lr=10.0, clip=0.5, epochs=12)
    after_policy = balance(policy, positions, cfg, progress=False)
    after = playout_values(after_policy, positions, 400, 7.5, 1).mean()
    assert (after - before) * (2 * target - 1) > 0.05, (before, after)  # 4 standard errors
    err = playout_error(after_policy, positions, 400, 7.5, 1)
    assert err < playout_error(policy, positions, 400, 7.5, 1)


def test_balance_is_reproducible(sgf_dir):
    positions = [(*mid_position(sgf_dir, i, 20), 0.7) for i in range(2)]
    cfg = BalanceConfig(value_playouts=8, grad_playouts=8, epochs=1, seed=5)
    a = balance(some_policy(), positions, cfg, progress=False)
    b = balance(some_policy(), positions, cfg, progress=False)
    np.testing.assert_array_equal(a.pattern, b.pattern)


def test_config_errors():
    for bad in (BalanceConfig(value_playouts=0), BalanceConfig(lr=0), BalanceConfig(epochs=-1)):
        with pytest.raises(ValueError):
            bad.validate()


def test_sample_positions(sgf_dir, tmp_path):
    (tmp_path / "bad.sgf").write_text("(;GM[1]SZ[9];B[zz")
    (tmp_path / "ok.sgf").write_bytes((sgf_dir / "g0.sgf").read_bytes())
    a, skipped = sample_positions([tmp_path], 3, seed=1)
    assert skipped == 1 and len(a) == 3
    assert all(1 <= m <= 45 for _, m in a)
    assert a == sample_positions([tmp_path], 3, seed=1)[0]


def test_read_labels_errors(tmp_path):
    p = tmp_path / "l.jsonl"
    p.write_text('{"sgf": "a.sgf", "move": 3, "value": 0.5, "sims": 10}\n{"sgf": "a.sgf"}\n')
    with pytest.raises(ValueError, match="l.jsonl:2"):
        read_labels(p)


def test_label_and_train_cli(sgf_dir, runs, tmp_path, capsys):
    labels = tmp_path / "labels.jsonl"
    jobs, _ = sample_positions([sgf_dir], 1, seed=0)
    first = label_positions(jobs[:2], labels, str(runs["mm"]), str(runs["policy"]), sims=200,
                            progress=False)  # fmt: skip
    assert len(first) == 2 and all(0.0 <= x.value <= 1.0 and x.sims == 200 for x in first)
    balance_main(["label", str(sgf_dir), "--model", str(runs["mm"]), "--policy",
                  str(runs["policy"]), "--sims", "200", "--out", str(labels)])  # fmt: skip
    got = read_labels(labels)
    assert len(got) == 6 and got[:2] == first  # resumed: the first two not searched again
    out = tmp_path / "sb"
    balance_main(["train", "--policy", str(runs["policy"]), "--labels", str(labels), "--out",
                  str(out), "--epochs", "1", "--value-playouts", "8", "--grad-playouts", "8",
                  "--eval-playouts", "16", "--val", "0.3"])  # fmt: skip
    metrics = json.loads((out / "metrics.json").read_text())["epochs"]
    assert [m["epoch"] for m in metrics] == [0, 1]
    assert (out / "error.png").stat().st_size > 0
    PatternPolicy.load(out / "policy.npz")
    assert "alias: running gomove train model=balance" in capsys.readouterr().err
    # the alias is gomove train model=balance: the same numbers through the one tree
    fields = {"policy": runs["policy"], "labels": labels, "epochs": 1, "value_playouts": 8,
              "grad_playouts": 8, "eval_playouts": 16, "val": 0.3}  # fmt: skip
    cfg = cfg_of(
        ["model=balance", "progress=false", *(f"model.{k}={v}" for k, v in fields.items())]
    )
    assert run(cfg, tmp_path / "sb2")["epochs"] == metrics
    with pytest.raises(SystemExit, match="no such file"):
        balance_main(["label", str(sgf_dir), "--model", str(tmp_path / "none.pt"), "--policy",
                      str(runs["policy"]), "--out", str(labels)])  # fmt: skip
    with pytest.raises(SystemExit, match="program not found"):
        balance_main(["label", str(sgf_dir), "--engine", "no-such-engine-x", "--out",
                      str(labels)])  # fmt: skip


FAKE_ANALYZER = r"""
import sys
log = open(sys.argv[1], "a")
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "quit":
        print("=\n", flush=True)
        break
    log.write(line)
    log.flush()
    if cmd[0] == "lz-genmove_analyze":
        print("=\ninfo move C3 visits 30 winrate 2500 prior 1000 order 0 pv C3 D4 "
              "info move D4 visits 10 winrate 2000 prior 500 order 1 pv D4\nplay C3\n", flush=True)
    else:
        print("=\n", flush=True)
"""


def test_engine_labels_by_lz_genmove_analyze(sgf_dir, tmp_path):
    """Another engine labels a position: it is sent the game's moves before the position
    over GTP, and its chosen move's win rate (for the side to move) becomes Black's."""
    script, log = tmp_path / "fake.py", tmp_path / "gtp.log"
    script.write_text(FAKE_ANALYZER)
    engine = [sys.executable, str(script), str(log)]
    game = load_game(sgf_dir / "g0.sgf")
    jobs = [(str(sgf_dir / "g0.sgf"), 1), (str(sgf_dir / "g0.sgf"), 6)]
    got = label_positions(jobs, tmp_path / "l.jsonl", None, None, 0, progress=False,
                          engine=engine)  # fmt: skip
    to_move = [game.moves[m - 1][0] for _, m in jobs]
    assert [x.value for x in got] == [0.25 if c == BLACK else 0.75 for c in to_move]
    assert all(x.sims == 40 for x in got)
    sent = [line.split() for line in log.read_text().splitlines()]
    plays = [s[1:] for s in sent if s[0] == "play"]

    def vertex(m):
        return "pass" if m is None else f"{'ABCDEFGHJ'[m[1]]}{m[0] + 1}"

    expect = [["b" if c == BLACK else "w", vertex(m)] for c, m in game.moves[:5]]
    assert plays == expect  # none before move 1, five before move 6
    assert sum(s[0] == "clear_board" for s in sent) == 2 and ["komi", "7.5"] in sent


def test_analyze_value_errors():
    assert analyze_value("info move A1 visits 5 winrate 10000 order 0 pv A1\nplay A1") == (1.0, 5)
    with pytest.raises(ValueError, match="no analysis"):
        analyze_value("play A1")
    with pytest.raises(ValueError, match="no order-0"):
        analyze_value("info move A1 visits 5 order 1 pv A1")
