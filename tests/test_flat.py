"""The compact flat layout (gomove.data.flat): bit-packed levels and the memory-mapped cache.

Invariants checked:
- packing round-trips every level of every group, the maximum of each group
  included, for group sizes that fill words exactly and spill into new ones,
  and for wide groups in two bytes, three bytes (the largest included) and four;
- the same levels held in two bytes and in three train alike: MM's pass, FBT's
  loss and gradient and BAR's model are equal;
- a level above its group's size is refused, never silently cut.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gomove.data.flat import WORD_BITS, FlatData, pack_fields
from gomove.models.fbt import FactorizationBT
from gomove.train.context import TrainContext
from gomove.train.mm.tensor import flat_mm
from gomove.train.rankers.fit import fit_ranker
from gomove.train.schemas import RankerConfig, SGDConfig
from gomove.train.sgd.compiled import CompiledSGD


@pytest.mark.parametrize(
    "sizes",
    [
        [2, 5, 2, 1, 3, 4, 16, 16, 300],  # the full features: 23 bits, one word
        [255, 255, 255, 255, 1],  # 8 bits each: a word filled exactly, then a second
        [1] * 40,  # one bit each: 32 in the first word
        [200, 70000, 3, 65535],  # wide groups in three bytes
        [3, (1 << 24) - 1, 300],  # the largest three-byte group
        [3, 1 << 24, 300],  # wide groups as int32
    ],
)
def test_pack_round_trips_every_level(sizes):
    rng = np.random.default_rng(len(sizes))
    c = 500
    levels = []
    for s in sizes:
        lv = rng.integers(0, s + 1, size=c)
        lv[:2] = (0, s)  # the extremes always
        levels.append(lv)
    data = FlatData.from_levels(
        levels, np.cumsum([1, *sizes[:-1]]), sizes, np.arange(c + 1), np.zeros(c)
    )
    for g, lv in enumerate(levels):
        np.testing.assert_array_equal(data.level(g), lv)
        rows = rng.permutation(c)[:50]
        np.testing.assert_array_equal(data.level(g, rows), lv[rows])
    fields, words = pack_fields([s for s in sizes if s < 256])
    assert data.packed.shape == (c, words)
    bits = [int(s).bit_length() for s in sizes if s < 256]
    assert words == len({int(w) for w in fields[:, 0]}) and all(
        fields[i, 1] + b <= WORD_BITS for i, b in enumerate(bits)
    )
    assert data.min_features == max(o + s for o, s in zip(data.offsets, sizes, strict=True))


@pytest.mark.parametrize("size, dtype, width", [(300, np.uint16, 1), (70000, np.uint8, 3)])
def test_wide_layout(size, dtype, width):
    lv = np.array([0, size])
    data = FlatData.from_levels([lv, lv], [1, 1 + size], [size, size], np.arange(3), np.zeros(2))
    assert data.levw.dtype == dtype and data.levw.shape == (2, 2 * width)


def _two_layouts(seed: int = 0) -> tuple[FlatData, FlatData]:
    """Random positions whose shape-like group (levels < 300) is declared with 300
    levels (uint16) and with 70,000 (three bytes); the wide group last, so the
    narrow groups' global indices agree."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 12, size=40)
    starts = np.concatenate([[0], np.cumsum(counts)])
    c = int(starts[-1])
    sizes = [3, 16]
    levels = [rng.integers(0, s + 1, size=c) for s in sizes] + [rng.integers(0, 300, size=c)]
    winner = rng.integers(0, counts)
    out = []
    for wide in (300, 70000):
        sz = [*sizes, wide]
        out.append(FlatData.from_levels(levels, np.cumsum([1, *sz[:-1]]), sz, starts, winner))
    return out[0], out[1]


def test_three_byte_levels_train_as_two_byte():
    two, three = _two_layouts()
    assert two.levw.dtype == np.uint16 and three.levw.dtype == np.uint8
    n2, n3 = two.min_features, three.min_features
    rng = np.random.default_rng(1)
    for g in range(3):
        lg = torch.zeros(1 + 3 + 16 + 70000, dtype=torch.float64)
        lg[: 1 + 3 + 16 + 300] = torch.from_numpy(rng.normal(size=1 + 3 + 16 + 300))
        a = flat_mm(two, team_dtype="float64").collect(lg[: 1 + 3 + 16 + 300].numpy(), [g])
        b = flat_mm(three, team_dtype="float64").collect(lg.numpy(), [g])
        assert a.log_likelihood == pytest.approx(b.log_likelihood, rel=1e-12)
        torch.testing.assert_close(b.denom[: len(a.denom)], a.denom, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(b.wins[: len(a.wins)], a.wins)
    pos = np.arange(two.n_positions)
    grads = []
    w, v = rng.normal(size=320), rng.normal(size=(320, 3))
    w[0], v[0] = 0, 0
    for data, n in ((two, 1 + 3 + 16 + 300), (three, 1 + 3 + 16 + 70000)):
        model = FactorizationBT(n, k=3)
        with torch.no_grad():
            model.w.zero_()
            model.v.zero_()
            model.w[:320].copy_(torch.from_numpy(w))
            model.v[:320].copy_(torch.from_numpy(v))
        sgd = CompiledSGD(model, data, SGDConfig(k=3, epochs=1))
        grads.append((sgd.loss_grad(pos), sgd.grad[:320].copy()))
    assert grads[0][0] == pytest.approx(grads[1][0], rel=1e-12)
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-12, atol=1e-15)
    thetas = []
    for data, n in ((two, n2), (three, n3)):
        groups = data.group_spans()
        model, _ = fit_ranker(
            RankerConfig(name="bar"), data, TrainContext(max(n, data.min_features), groups, "cpu")
        )
        thetas.append(model.theta[:320].detach().clone())
    torch.testing.assert_close(thetas[1], thetas[0])


def test_full_features_take_one_word():
    _, words = pack_fields([2, 5, 2, 1, 3, 4, 16, 16])
    assert words == 1


def test_level_above_size_refused():
    with pytest.raises(ValueError, match="levels in"):
        FlatData.from_levels([np.array([0, 6])], [1], [5], np.arange(3), np.zeros(2))
