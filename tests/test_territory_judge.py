"""The dead strings' judge: its features against a plain reference, its verdict the same
under the board's symmetries and both colours, its fit recovering a known model, its
place in crf.pt and in the count."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gomove.board.board import BLACK, WHITE, board_from_points, signed_points
from gomove.board.scoring import area_score, area_score_judged
from gomove.models.territory.crf import TerritoryCRF
from gomove.models.territory.judge import JUDGE_FEATURES, StringJudge, judged_score, string_features
from gomove.models.territory.playout_counts import mc_counts
from gomove.models.territory.reading import board_symmetries, geometry
from gomove.train.territory.judge import fit_logistic

SIZE = 9


def _position(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    points = rng.choice([-1, 0, 1], size=SIZE * SIZE, p=[0.3, 0.4, 0.3]).astype(np.int8)
    return signed_points(board_from_points(points, SIZE, BLACK))  # no stone without liberties


def _reference(points: np.ndarray, to_move: int, expected: np.ndarray, playouts: int):
    """The strings (sets of points) by breadth-first search, and their features, plainly."""
    nbr = geometry(SIZE).nbr
    mine, theirs = mc_counts(points * np.int8(to_move), SIZE, playouts)
    black_balance = to_move * (mine - theirs) / playouts
    seen: set[int] = set()
    out = []
    for i in map(int, np.flatnonzero(points)):
        if i in seen:
            continue
        string, todo = {i}, [i]
        while todo:
            p = todo.pop()
            for q in map(int, nbr[p]):
                if q >= 0 and points[q] == points[i] and q not in string:
                    string.add(q)
                    todo.append(q)
        seen |= string
        libs = {int(q) for p in string for q in nbr[p] if q >= 0 and points[q] == 0}
        s = float(points[i])
        stones = sorted(string)
        n_libs = len(libs)
        row = [1.0, s * expected[stones].mean(), s * black_balance[stones].mean(),
               np.log(len(stones)), min(n_libs, 6) / 6, n_libs <= 1, n_libs == 2]  # fmt: skip
        out.append((stones, np.array(row, np.float64)))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_string_features_match_a_plain_reference(seed):
    points = _position(seed)
    expected = np.random.default_rng(seed + 10).uniform(-1, 1, SIZE * SIZE)
    index, x = string_features(points, -1, SIZE, expected, 8)
    assert x.shape[1] == len(JUDGE_FEATURES)
    assert np.array_equal(index >= 0, points != 0)
    ref = _reference(points, -1, expected, 8)
    assert len(ref) == len(x)
    for stones, row in ref:
        assert len(set(index[stones].tolist())) == 1  # one string, one index
        np.testing.assert_allclose(x[index[stones[0]]], row, atol=1e-12)


def test_the_verdict_is_the_same_under_symmetries_and_colours():
    points = _position(5)
    expected = np.tanh(np.random.default_rng(6).normal(0, 1, SIZE * SIZE))
    judge = StringJudge(np.array([-1.0, -3.0, -6.0, 0.2, 1.0, 0.5, 0.0]), 16)
    dead = judge.dead(points, 1, SIZE, expected)
    assert dead.any() and not dead.all()  # the test sees both verdicts
    for perm in board_symmetries(SIZE):  # the point each symmetry sends each point to
        moved, moved_e = np.empty_like(points), np.empty_like(expected)
        moved[perm], moved_e[perm] = points, expected
        np.testing.assert_array_equal(judge.dead(moved, 1, SIZE, moved_e)[perm], dead)
    np.testing.assert_array_equal(judge.dead(-points, -1, SIZE, -expected), dead)
    empty = np.zeros(SIZE * SIZE, np.int8)
    assert not judge.dead(empty, 1, SIZE, np.zeros(SIZE * SIZE)).any()  # no strings


def test_fit_logistic_recovers_the_weights_that_drew_the_labels():
    rng = np.random.default_rng(0)
    x = np.column_stack([np.ones(40000), rng.normal(size=(40000, 3))])
    w = np.array([-0.5, 2.0, -1.0, 0.3])
    y = rng.random(40000) < 1 / (1 + np.exp(-(x @ w)))
    np.testing.assert_allclose(fit_logistic(x, y, l2=1e-6), w, atol=0.08)


def _walls() -> tuple[np.ndarray, np.ndarray]:
    """Black walls off columns 0-3, white 5-8; a lone white stone in black's area."""
    points = np.zeros(SIZE * SIZE, np.int8)
    points[[i * SIZE + 3 for i in range(SIZE)]] = 1
    points[[i * SIZE + 5 for i in range(SIZE)]] = -1
    points[4 * SIZE + 1] = -1
    expected = np.where(np.arange(SIZE * SIZE) % SIZE <= 3, 0.9, -0.9)
    expected[np.arange(SIZE * SIZE) % SIZE == 4] = 0.0
    return points, expected


def test_judged_score_removes_what_the_judge_calls_dead_and_falls_back_without_one():
    points, expected = _walls()
    board = board_from_points(points, SIZE, BLACK)
    own = expected.reshape(SIZE, SIZE)
    crf = TerritoryCRF("stern")
    mean_rule = area_score_judged(board, 0.0, own)
    assert judged_score(board, BLACK, 0.0, own, crf.judge) == mean_rule  # no judge: the mean rule
    assert mean_rule == pytest.approx(0.0)  # the white stone dead: 36 points each
    crf.judge = StringJudge(np.array([-20.0, 0, 0, 0, 0, 0, 0]), 8)  # nothing is dead
    alive = area_score(board, 0.0, np.zeros(SIZE * SIZE, np.int8))
    assert alive == pytest.approx(9 - 37)  # black's area is then dame but for its wall
    assert judged_score(board, BLACK, 0.0, own, crf.judge) == pytest.approx(alive)
    crf.judge = StringJudge(np.array([0.0, -10.0, 0, 0, 0, 0, 0]), 8)  # the map decides
    assert judged_score(board, WHITE, 0.0, own, crf.judge) == pytest.approx(mean_rule)


def test_the_judge_travels_in_crf_pt_and_old_files_have_none(tmp_path):
    crf = TerritoryCRF("stern")
    old = TerritoryCRF.load(crf.save(tmp_path / "old.pt"))
    assert old.judge is None
    crf.judge = StringJudge(np.arange(len(JUDGE_FEATURES), dtype=np.float64), 32)
    back = TerritoryCRF.load(crf.save(tmp_path / "crf.pt"))
    np.testing.assert_array_equal(back.judge.weights, crf.judge.weights)
    assert back.judge.playouts == 32
    state = torch.load(tmp_path / "crf.pt", weights_only=True)
    state["judge"]["features"] = ["bias"]
    torch.save(state, tmp_path / "bad.pt")
    with pytest.raises(ValueError, match="string judge features"):
        TerritoryCRF.load(tmp_path / "bad.pt")
    with pytest.raises(ValueError, match="weights"):
        StringJudge(np.zeros(3), 8)
