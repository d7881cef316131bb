"""The probability floor (gomove.models.calibration) and calibration by the bins
(gomove.train.calibrate): the mixture against a slow per-row reference, its round trip
through a model's saved state, and a fit that finds a floor the data was drawn with."""

from __future__ import annotations

import pytest
import torch

from gomove.data.batch import Batch
from gomove.evaluate.measures import evaluate
from gomove.models.calibration import floored
from gomove.models.fbt import FactorizationBT
from gomove.models.mm import BradleyTerry, masked_log_softmax
from gomove.models.rankers import GaussianRanking, WinRateRanking
from gomove.train.calibrate import calibrate


def _ragged(b: int, m: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    n = torch.randint(1, m + 1, (b,), generator=g)
    mask = torch.arange(m)[None, :] < n[:, None]
    lp = masked_log_softmax(torch.randn(b, m, generator=g, dtype=torch.float64) * 3, mask)
    return lp, mask


def test_floor_is_the_mixture_with_the_uniform_choice() -> None:
    lp, mask = _ragged(50, 9, 0)
    got = floored(lp, mask, 0.1)
    for i in range(len(lp)):
        n = int(mask[i].sum())
        want = [0.9 * float(torch.exp(lp[i, j])) + 0.1 / n for j in range(n)]
        assert torch.exp(got[i, :n]).tolist() == pytest.approx(want, rel=1e-12)
        assert torch.isinf(got[i, n:]).all()
    assert torch.exp(got).sum(1).tolist() == pytest.approx([1.0] * len(lp))
    assert torch.equal(
        got.argsort(1, descending=True)[:, :1], lp.argsort(1, descending=True)[:, :1]
    )
    assert floored(lp, mask, 0.0) is lp
    for bad in (-0.1, 1.0):
        with pytest.raises(ValueError, match="floor"):
            floored(lp, mask, bad)


def _models(f: int) -> list[torch.nn.Module]:
    g = torch.Generator().manual_seed(1)
    lg = torch.randn(f, generator=g, dtype=torch.float64)
    lg[0] = 0.0
    return [BradleyTerry(f, lg), FactorizationBT(f, 3, init_std=0.3, generator=g),
            WinRateRanking(f, lg.clone()), GaussianRanking(f, lg.clone())]  # fmt: skip


def test_every_model_scores_with_its_floor_and_keeps_it_when_saved() -> None:
    f = 12
    feat = torch.randint(1, f, (30, 7, 2), generator=torch.Generator().manual_seed(2))
    mask = torch.ones(30, 7, dtype=torch.bool)
    mask[:5, 4:] = False
    for model in _models(f):
        plain = model.log_probs(feat, mask)
        model.floor.fill_(0.2)
        torch.testing.assert_close(model.log_probs(feat, mask), floored(plain, mask, 0.2))
        state = model.state_dict()
        again = type(model).from_state_dict(state)
        assert float(again.floor) == 0.2
        torch.testing.assert_close(again.log_probs(feat, mask), model.log_probs(feat, mask))
        old = {k: v for k, v in state.items() if k != "floor"}  # saved before the floor
        assert float(type(model).from_state_dict(old).floor) == 0.0


def test_calibrating_by_the_bins_finds_the_floor_the_data_was_drawn_with() -> None:
    """Expert moves drawn from (1 - 0.05) softmax(s) + 0.05 / n: the model that scores
    softmax(s) is too sure of its top moves; by the likelihood no floor is fitted, by
    the bins one is, and the largest gap shrinks."""
    g = torch.Generator().manual_seed(3)
    f, b, m = 400, 6000, 12
    lg = torch.randn(f, generator=g, dtype=torch.float64) * 2.5
    lg[0] = 0.0
    model = BradleyTerry(f, lg)
    feat = torch.randint(1, f, (b, m, 1), generator=g)
    mask = torch.ones(b, m, dtype=torch.bool)
    truth = torch.exp(floored(model.log_probs(feat, mask), mask, 0.05))
    winner = torch.multinomial(truth, 1, generator=g).squeeze(1)
    batch = Batch(feat, mask, winner, torch.arange(b), torch.zeros(b, dtype=torch.long))
    by_ll, _, floor_ll = calibrate(model, [batch])
    by_bins, tau, floor = calibrate(model, [batch], "bins")
    assert floor_ll == 0.0 and 0.03 <= floor <= 0.06 and float(by_bins.floor) == floor
    gap_ll = evaluate(by_ll.log_probs, [batch])["calibration_gap"]
    gap_bins = evaluate(by_bins.log_probs, [batch])["calibration_gap"]
    assert gap_bins < gap_ll
    with pytest.raises(ValueError, match="calibrate by"):
        calibrate(model, [batch], "gap")
