"""The compact flat layout (gomove.data.flat, gomove.data.fields): records of bits.

Invariants checked:
- encoding round-trips every level of every group, the maximum of each group
  included, for narrow groups whose bit-packed combinations fill words exactly and
  spill into new ones, and for wide groups of 9 to 25 bits; the compiled reader, the
  numpy reader and the torch reader give the same levels; the dictionary holds each
  distinct narrow combination once;
- records read back bit for bit as a slow oracle lays them out (records that cross
  a word's end included), and a stream packed in chunks with a carry between them is
  the stream packed at once;
- the dictionary gives codes in the order combinations first appear, kept across
  chunks, and refuses a combination past its last code;
- the same levels with a wide group declared wider (more bits a record) train alike:
  MM's pass, FBT's loss and gradient and BAR's model are equal;
- a level above its group's size is refused, never silently cut.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from numba import njit

from gomove.data.device_flat import DeviceFlat
from gomove.data.fields import field_level, pack_records
from gomove.data.flat import (
    Dictionary,
    FlatData,
    Layout,
    code_bits_of,
    finish_words,
    local_records,
    read_records,
    records,
)
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
        [200, 70000, 3, 65535],  # two wide groups of 17 and 16 bits
        [3, (1 << 24) - 1, 300],  # a 24-bit group
        [3, 1 << 24, 300, 7],  # a 25-bit group
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
    device = DeviceFlat(data)
    for g, lv in enumerate(levels):
        np.testing.assert_array_equal(data.level(g), lv)
        rows = rng.permutation(c)[:50]
        np.testing.assert_array_equal(data.level(g, rows), lv[rows])
        np.testing.assert_array_equal(_compiled_levels(data, g), lv)
        np.testing.assert_array_equal(
            device.group_levels(g, torch.from_numpy(rows)).numpy(), lv[rows]
        )
    narrow = np.stack([levels[g] for g, s in enumerate(sizes) if s < 256], 1)
    assert len(data.combos) == len(np.unique(narrow, axis=0))  # each combination once
    assert data.combos.dtype == np.uint8 and data.combos.shape[1] == narrow.shape[1]
    lay = data.layout
    assert lay.width == lay.code_bits + sum(int(s).bit_length() for s in sizes if s >= 256)
    assert data.words.nbytes == 8 * (-(-c * lay.width // 64) + 1)  # the records, a spare word
    assert data.min_features == max(o + s for o, s in zip(data.offsets, sizes, strict=True))


def _compiled_levels(data: FlatData, g: int) -> np.ndarray:
    return _read_all(*data.field(g), data.n_candidates)


@njit(cache=True)
def _read_all(r, field, n):
    out = np.empty(n, np.int64)
    for c in range(n):
        out[c] = field_level(r, field, c)
    return out


def _oracle_stream(recs: list[int], width: int) -> list[int]:
    """The records laid out bit by bit, little-endian: the slow statement of the layout."""
    bits = [(r >> i) & 1 for r in recs for i in range(width)]
    bits += [0] * (-len(bits) % 64 + 64)  # the last word filled, and the spare word
    return [sum(b << i for i, b in enumerate(bits[k : k + 64])) for k in range(0, len(bits), 64)]


@pytest.mark.parametrize("width", [1, 7, 9, 31, 36, 57, 63, 64])
def test_records_match_the_bitwise_layout(width):
    """pack_records in chunks with a carry, then finish_words, lays the records out as
    the oracle does, and every reader reads each back, records over a word's end too."""
    rng = np.random.default_rng(width)
    recs = [int(x) for x in rng.integers(0, 2**63, size=300, dtype=np.uint64)]
    recs = [r & ((1 << width) - 1) for r in recs]
    recs[:2] = [0, (1 << width) - 1]
    arr = np.array(recs, dtype=np.uint64)
    carry, bits, words = np.uint64(0), 0, []
    for part in np.array_split(arr, 7):  # chunks of any length
        out, carry, bits = pack_records(part, width, carry, bits)
        words.append(out)
    stream = np.concatenate([*words, finish_words(carry, bits)])
    assert [int(w) for w in stream] == _oracle_stream(recs, width)
    whole, c2, b2 = pack_records(arr, width, np.uint64(0), 0)
    np.testing.assert_array_equal(np.concatenate([whole, finish_words(c2, b2)]), stream)
    if 9 <= width <= 57:  # one wide group (256 levels or more) filling the record
        data = FlatData(stream, np.zeros((0, 0), np.uint8), [1], [(1 << width) - 1],
                        np.arange(301), np.zeros(300))  # fmt: skip
        np.testing.assert_array_equal(read_records(data.records, np.arange(300)), arr)
        np.testing.assert_array_equal(_compiled_levels(data, 0), arr.astype(np.int64))


def test_dictionary_codes_follow_first_appearance_across_chunks():
    lay = Layout.of([3, 3, 70000])
    d = Dictionary(lay)
    a = local_records(lay, [np.array([1, 2, 1]), np.array([0, 3, 0]), np.array([5, 6, 7])])
    b = local_records(lay, [np.array([0, 1, 2]), np.array([0, 0, 3]), np.array([1, 1, 1])])
    ra, rb = records(a, d), records(b, d)
    code = np.uint64((1 << lay.code_bits) - 1)
    assert [int(x) for x in ra & code] == [0, 1, 0] and [int(x) for x in rb & code] == [2, 0, 1]
    again = Dictionary(lay, d.combo_rows())  # read back from a dataset's combos.bin
    np.testing.assert_array_equal(records(b, again), rb)
    small = Layout.of([1])  # two combinations: one code bit
    full = Dictionary(small)
    full.codes_of(np.array([[0], [1]], dtype=np.uint8))
    with pytest.raises(ValueError, match="dictionary is full"):
        full.codes_of(np.array([[2]], dtype=np.uint8))


def test_a_record_wider_than_57_bits_is_refused():
    assert Layout.of([1 << 28, 1 << 27]).width == 57
    with pytest.raises(ValueError, match="more than the 57"):
        Layout.of([1 << 28, 1 << 28])


@pytest.mark.parametrize("size, bits", [(300, 9), (70000, 17), (65535, 16)])
def test_wide_layout(size, bits):
    lv = np.array([0, size])
    data = FlatData.from_levels([lv, lv], [1, 1 + size], [size, size], np.arange(3), np.zeros(2))
    assert data.layout.width == 2 * bits and data.layout.code_bits == 0


def _two_layouts(seed: int = 0) -> tuple[FlatData, FlatData]:
    """Random positions whose shape-like group (levels < 300) is declared with 300
    levels (9 bits) and with 70,000 (17 bits); the wide group last, so the narrow
    groups' global indices agree."""
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


def test_wider_records_train_alike():
    two, three = _two_layouts()
    assert three.layout.width == two.layout.width + 8
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


def test_full_features_record_width():
    """The full features' 8 tactical groups (624,240 combinations) as a 16-bit code beside
    18 shape bits: 34 bits a candidate (4.25 bytes)."""
    lay = Layout.of([2, 5, 2, 1, 3, 4, 16, 16, 187815])
    assert (lay.n_narrow, lay.code_bits, lay.width) == (8, 16, 34)
    # a code holds 1/16 of the combinations allowed, in at least 16 bits, never more
    # bits than the combinations need
    assert [code_bits_of(n) for n in (2, 3, 60_000, 624_240, 5_600_000)] == [1, 2, 16, 16, 19]


def test_level_above_size_refused():
    with pytest.raises(ValueError, match="levels in"):
        FlatData.from_levels([np.array([0, 6])], [1], [5], np.arange(3), np.zeros(2))
