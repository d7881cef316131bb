"""The papers' evaluation measures on hand-built batches with known ranks, and the report files."""

from __future__ import annotations

import itertools
import json
import math

import pytest
import reference as ref
import torch
from torch.testing import assert_close

from gomove.data.batch import Batch
from gomove.evaluate.measures import evaluate, expert_ranks, uniform_log_probs
from gomove.evaluate.report import format_table, write_report
from gomove.models.mm import BradleyTerry

# log-gammas: feature i has log-gamma i - 1 for i >= 1 (feature 5: 4, the strongest)
LOG_GAMMA = torch.tensor([0.0, 0.0, 1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
MODEL = BradleyTerry(6, LOG_GAMMA)


def hand_batches() -> list[Batch]:
    """Four positions in two batches of different M, one feature column.

    pos 0 (game 0, move 0):  teams 4 3 2 | pad   expert 4 -> rank 1
    pos 1 (game 0, move 29): teams 2 3 4 1       expert 2 -> rank 3
    pos 2 (game 1, move 30): teams 3 3 1         expert the second 3 (tie) -> rank 2
    pos 3 (game 1, move 65): teams 2 | pad pad   expert 2, alone -> rank 1
    Padding rows hold the strongest feature (5) on purpose: only the mask may
    keep it out.
    """
    b1 = Batch(
        feat=torch.tensor([[[4], [3], [2], [5]], [[2], [3], [4], [1]]]),
        mask=torch.tensor([[True, True, True, False], [True, True, True, True]]),
        winner=torch.tensor([0, 0]),
        game=torch.tensor([0, 0]),
        move=torch.tensor([0, 29]),
    )
    b2 = Batch(
        feat=torch.tensor([[[3], [3], [1]], [[2], [5], [5]]]),
        mask=torch.tensor([[True, True, True], [True, False, False]]),
        winner=torch.tensor([1, 0]),
        game=torch.tensor([1, 1]),
        move=torch.tensor([30, 65]),
    )
    return [b1, b2]


def lse(*xs: float) -> float:
    return math.log(sum(math.exp(x) for x in xs))


# log P(expert) of the four positions, from log-gammas by hand
EXPECTED_LOG_EV = [
    3 - lse(3, 2, 1),
    1 - lse(1, 2, 3, 0),
    2 - lse(2, 2, 0),
    0.0,
]
EXPECTED_RANK = [1, 3, 2, 1]
EXPECTED_LEGAL = [3, 4, 3, 1]


def test_hand_built_metrics() -> None:
    """top1 with pessimistic ties, topn rising to 1 at n = 3, log-evidence by
    hand, rank error (rank - 1) / legal, phases of 30 moves (0-29, 30-59,
    60-89), padding ignored, games counted once."""
    m = evaluate(MODEL.log_probs, hand_batches())
    assert m["n_positions"] == 4
    assert m["n_games"] == 2
    assert m["top1"] == pytest.approx(0.5)
    assert len(m["topn"]) == 30
    assert m["topn"][:3] == pytest.approx([0.5, 0.75, 1.0])
    assert all(a <= b for a, b in itertools.pairwise(m["topn"]))
    assert m["topn"][-1] == pytest.approx(1.0)
    assert m["log_evidence"] == pytest.approx(sum(EXPECTED_LOG_EV) / 4)
    assert m["mean_rank"] == pytest.approx(7 / 4)
    errors = [(r - 1) / n for r, n in zip(EXPECTED_RANK, EXPECTED_LEGAL, strict=True)]
    assert m["rank_error"] == pytest.approx(sum(errors) / 4)

    phases = {p["phase"]: p for p in m["phase"]}
    assert sorted(phases) == [0, 1, 2]
    assert [phases[k]["n"] for k in (0, 1, 2)] == [2, 1, 1]
    assert phases[0]["first_move"] == 0 and phases[0]["last_move"] == 29
    assert phases[0]["top1"] == pytest.approx(0.5)
    assert phases[1]["top1"] == 0.0 and phases[2]["top1"] == 1.0
    assert phases[0]["log_evidence"] == pytest.approx(sum(EXPECTED_LOG_EV[:2]) / 2)
    assert phases[1]["log_evidence"] == pytest.approx(EXPECTED_LOG_EV[2])
    assert phases[0]["rank_error"] == pytest.approx((errors[0] + errors[1]) / 2)
    assert phases[1]["rank_error"] == pytest.approx(1 / 3)
    assert phases[2]["rank_error"] == 0.0


def test_phase_length_and_max_rank() -> None:
    """phase_len regroups the same positions; max_rank sets topn's length."""
    m = evaluate(MODEL.log_probs, hand_batches(), phase_len=40, max_rank=2)
    assert [(p["phase"], p["n"]) for p in m["phase"]] == [(0, 3), (1, 1)]
    assert m["topn"] == pytest.approx([0.5, 0.75])


def test_split_into_batches_changes_nothing() -> None:
    """The same positions in one padded batch or in two batches give the same measures."""
    b1, b2 = hand_batches()
    m_all = 4
    feat = torch.zeros(4, m_all, 1, dtype=torch.long)
    mask = torch.zeros(4, m_all, dtype=torch.bool)
    feat[:2], mask[:2] = b1.feat, b1.mask
    feat[2:, :3], mask[2:, :3] = b2.feat, b2.mask
    one = Batch(
        feat,
        mask,
        torch.cat([b1.winner, b2.winner]),
        torch.cat([b1.game, b2.game]),
        torch.cat([b1.move, b2.move]),
    )
    assert evaluate(MODEL.log_probs, [one]) == evaluate(MODEL.log_probs, [b1, b2])


def test_ranks_match_reference() -> None:
    """expert_ranks equals the loop oracle on random positions with many ties."""
    gen = torch.Generator().manual_seed(0)
    lp = torch.randint(0, 4, (50, 12), generator=gen).double()
    mask = torch.rand(50, 12, generator=gen) < 0.7
    mask[:, 0] = True
    winner = torch.zeros(50, dtype=torch.long)
    lp = lp.masked_fill(~mask, float("-inf"))
    want = [
        ref.expert_rank(p, k, int(w))
        for p, k, w in zip(lp.tolist(), mask.tolist(), winner.tolist(), strict=True)
    ]
    assert expert_ranks(lp, mask, winner).tolist() == want


def test_uniform_baseline() -> None:
    """Uniform: log-evidence = mean -log(legal); with pessimistic ties only
    forced moves are top-1; probabilities sum to 1 over real candidates."""
    data = hand_batches()
    lp = uniform_log_probs(data[0].feat, data[0].mask)
    assert_close(lp.exp().sum(1), torch.ones(2, dtype=torch.float64))
    assert lp[0, 3] == float("-inf")
    m = evaluate(uniform_log_probs, data)
    assert m["log_evidence"] == pytest.approx(-sum(math.log(n) for n in EXPECTED_LEGAL) / 4)
    assert m["top1"] == pytest.approx(0.25)
    assert m["mean_rank"] == pytest.approx(sum(EXPECTED_LEGAL) / 4)


def test_by_pattern_size() -> None:
    """The expert move's shape radius groups the prediction rate; 0 = no shape."""
    # two columns: column 0 as before, column 1 a 'shape' level (6, 7) or none
    b1, b2 = hand_batches()
    shapes = [torch.tensor([[6, 0, 0, 0], [7, 6, 6, 6]]), torch.tensor([[0, 0, 0], [6, 0, 0]])]
    data = [
        Batch(torch.cat([b.feat, s[..., None]], -1), *b.astuple()[1:])
        for b, s in zip((b1, b2), shapes, strict=True)
    ]
    model = BradleyTerry(8, torch.cat([LOG_GAMMA, torch.zeros(2, dtype=torch.float64)]))
    radius = torch.tensor([0, 0, 0, 0, 0, 0, 3, 5])
    m = evaluate(model.log_probs, data, shape_radius=radius)
    rows = {s["radius"]: s for s in m["by_pattern_size"]}
    assert sorted(rows) == [0, 3, 5]
    assert rows[3]["n"] == 2 and rows[3]["top1"] == 1.0  # positions 0 and 3
    assert rows[5]["n"] == 1 and rows[5]["top1"] == 0.0  # position 1
    assert rows[0]["n"] == 1 and rows[0]["top1"] == 0.0  # position 2
    assert sum(s["fraction"] for s in rows.values()) == pytest.approx(1.0)
    # rank error (rank - 1) / legal: position 0 0/3, 3 0/1; 1 2/4; 2 1/3
    assert rows[3]["rank_error"] == 0.0 and rows[5]["rank_error"] == pytest.approx(0.5)
    assert rows[0]["rank_error"] == pytest.approx(1 / 3)
    assert "by_pattern_size" not in evaluate(model.log_probs, data)


def test_calibration_equals_a_slow_count() -> None:
    """Every legal candidate binned by its probability: per bin the count, the mean
    probability and the share of experts, as a loop over the candidates gives them."""
    data = hand_batches()
    m = evaluate(MODEL.log_probs, data)
    n, total, hits = [0] * 10, [0.0] * 10, [0] * 10
    for b in data:
        lp = MODEL.log_probs(b.feat, b.mask)
        for i in range(len(b)):
            for j in range(b.feat.shape[1]):
                if b.mask[i, j]:
                    p = math.exp(float(lp[i, j]))
                    k = min(int(p * 10), 9)
                    n[k] += 1
                    total[k] += p
                    hits[k] += int(j == int(b.winner[i]))
    for k, row in enumerate(m["calibration"]):
        assert row["n"] == n[k]
        if n[k]:
            assert row["predicted"] == pytest.approx(total[k] / n[k], rel=1e-6)
            assert row["observed"] == pytest.approx(hits[k] / n[k])
        else:
            assert row["predicted"] is None and row["observed"] is None
    assert m["calibration_gap"] is None  # no bin has 1,000 moves


def test_uniform_model_is_calibrated_and_a_sharp_one_is_not() -> None:
    """Uniform over n legal moves on many positions puts every move in one bin whose
    observed share is its prediction; a model far too sure of a wrong move is not."""
    g = torch.Generator().manual_seed(0)
    b, m = 1200, 8
    feat = torch.randint(1, 6, (b, m, 1), generator=g)
    batch = Batch(feat, torch.ones(b, m, dtype=torch.bool), torch.randint(0, m, (b,), generator=g),
                  torch.arange(b), torch.zeros(b, dtype=torch.long))  # fmt: skip
    uni = evaluate(uniform_log_probs, [batch])
    assert uni["calibration_gap"] == pytest.approx(0.0, abs=1e-6)

    def sharp(feat, mask):  # all its mass on candidate 0, which the expert rarely plays
        lp = torch.full(mask.shape, -30.0, dtype=torch.float64)
        lp[:, 0] = 0.0
        return lp

    assert evaluate(sharp, [batch])["calibration_gap"] > 0.5


def test_expert_on_padding_raises() -> None:
    """An expert move outside the mask breaks the contract and is refused."""
    b1, _ = hand_batches()
    b1.winner[0] = 3
    with pytest.raises(ValueError, match="real candidates"):
        evaluate(MODEL.log_probs, [b1])


def test_write_report(tmp_path) -> None:
    """metrics.json round-trips with the required keys; every plot is a non-empty
    PNG; format_table shows the headline numbers."""
    radius = torch.tensor([0, 0, 0, 3, 4, 5])
    m = evaluate(MODEL.log_probs, hand_batches(), shape_radius=radius)
    paths = write_report(m, tmp_path / "report")
    saved = json.loads((tmp_path / "report" / "metrics.json").read_text())
    for key in ("top1", "topn", "log_evidence", "n_positions", "n_games", "phase"):
        assert saved[key] == m[key]
    names = ("cumulative_rank", "phase_log_evidence", "phase_rank_error", "pattern_size_top1",
             "pattern_size_rank_error", "calibration")  # fmt: skip
    for name in names:
        png = paths[name]
        assert png.suffix == ".png" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = format_table(m)
    assert "top-1 0.5000" in table and "positions 4" in table
    assert (tmp_path / "report" / "summary.txt").read_text().strip() == table.strip()


def test_nan_model_fails_clearly():
    """A diverged model (NaN scores) is an error that says so, not a numpy crash."""
    b = Batch(
        torch.zeros(2, 3, 1, dtype=torch.long),
        torch.ones(2, 3, dtype=torch.bool),
        torch.tensor([0, 1]),
        torch.tensor([0, 0]),
        torch.tensor([0, 1]),
    )
    with pytest.raises(ValueError, match="NaN"):
        evaluate(lambda feat, mask: torch.full(mask.shape, float("nan")), [b])
