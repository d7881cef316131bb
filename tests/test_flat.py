"""The compact flat layout (gomove.train.flat): bit-packed levels and the memory-mapped cache.

Invariants checked:
- packing round-trips every level of every group, the maximum of each group
  included, for group sizes that fill words exactly and spill into new ones;
- a level above its group's size is refused, never silently cut;
- from_dataset builds flat/ once and memory-maps it after that, equal to the
  in-memory arrays; a folder left without flat.json is rebuilt.
"""

from __future__ import annotations

import numpy as np
import pytest

from gomove.train.flat import WORD_BITS, FlatData, pack_fields


@pytest.mark.parametrize(
    "sizes",
    [
        [2, 5, 2, 1, 3, 4, 16, 16, 300],  # the full features: 23 bits, one word
        [255, 255, 255, 255, 1],  # 8 bits each: a word filled exactly, then a second
        [1] * 40,  # one bit each: 32 in the first word
        [200, 70000, 3, 65535],  # wide groups as int32
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


def test_full_features_take_one_word():
    _, words = pack_fields([2, 5, 2, 1, 3, 4, 16, 16])
    assert words == 1


def test_level_above_size_refused():
    with pytest.raises(ValueError, match="levels in"):
        FlatData.from_levels([np.array([0, 6])], [1], [5], np.arange(3), np.zeros(2))


def test_dataset_mapped_once_and_equal(ds):
    folder = ds.path / "flat"
    if folder.exists():
        for f in folder.iterdir():
            f.unlink()
    mem = FlatData.from_dataset(ds, cache=False)
    assert not (folder / "flat.json").exists()
    built = FlatData.from_dataset(ds)
    assert (folder / "flat.json").exists()
    mapped = FlatData.from_dataset(ds)
    assert isinstance(mapped.packed, np.memmap) and not mapped.packed.flags.writeable
    for d in (built, mapped):
        for name in ("packed", "levw", "pos_start", "winner"):
            np.testing.assert_array_equal(getattr(d, name), getattr(mem, name))
    (folder / "flat.json").unlink()  # an interrupted build: rebuilt, not trusted
    (folder / "packed.npy").write_bytes(b"garbage")
    again = FlatData.from_dataset(ds)
    np.testing.assert_array_equal(again.packed, mem.packed)
