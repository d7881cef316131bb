"""Reading the flat layout in chunks (gomove.data.chunks) and the epochs cut from them.

Invariants checked:
- chunk_bounds covers every position once, in chunks of the size asked (one chunk
  for None, none for no positions);
- in_chunks yields the chunks in the order asked, each (the first too) asked for
  before it is yielded, and the prefetched span of a chunk of a dataset on disk holds
  every record bit of its candidates;
- an SGD epoch over data read in chunks visits every position exactly once, each
  mini-batch inside one chunk, the chunks in a random order, the same for the same seed;
- FBT trained on data read in chunks reaches the likelihood of unchunked training.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from synthetic import flat_of, make_data, make_groups, random_log_gamma

from gomove.data.chunks import Prefetch, chunk_bounds, in_chunks
from gomove.models.fbt import FactorizationBT
from gomove.train.context import TrainContext
from gomove.train.schemas import SGDConfig
from gomove.train.sgd.compiled import CompiledSGD
from gomove.train.sgd.loop import train_sgd

GROUPS = make_groups([5, 30, 3, 12])
N_FEATURES = 51


@pytest.fixture(scope="module")
def flat():
    return flat_of(make_data(random_log_gamma(N_FEATURES, 2), GROUPS, 6, 40, 12, 3), GROUPS)


def chunked(data, n):
    out = copy.copy(data)
    out.chunk_positions = n
    return out


def test_chunk_bounds():
    assert chunk_bounds(10, 4).tolist() == [0, 4, 8, 10]
    assert chunk_bounds(8, 4).tolist() == [0, 4, 8]
    assert chunk_bounds(10, None).tolist() == [0, 10]
    assert chunk_bounds(3, 100).tolist() == [0, 3]
    assert chunk_bounds(0, 5).tolist() == [0]


def test_in_chunks_order(flat):
    data = chunked(flat, 50)
    bounds = chunk_bounds(flat.n_positions, 50)
    want = list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
    assert list(in_chunks(data)) == want
    got = list(in_chunks(data, [2, 0, 1]))
    assert got == [(100, 150), (0, 50), (50, 100)]


def test_in_chunks_asks_for_every_chunk_before_it_is_worked_on(flat, monkeypatch):
    """The first chunk included (an epoch's, or a resumed pass's first)."""
    asked, seen = [], []

    def ask(self, lo, hi):
        asked.append((lo, hi))

    monkeypatch.setattr(Prefetch, "ask", ask)
    for lo_hi in in_chunks(chunked(flat, 50), [2, 0, 1]):
        assert lo_hi in asked
        seen.append(lo_hi)
    assert asked == seen == [(100, 150), (0, 50), (50, 100)]


def test_prefetch_span_holds_the_chunk(ds):
    """On a dataset on disk: the span asked for covers each chunk's records' bits."""
    data = chunked(ds.flat(), 17)
    fetch = Prefetch(data)
    assert fetch.fd is not None
    width = data.layout.width
    try:
        for lo, hi in in_chunks(data):
            offset, length = fetch.span(lo, hi)
            first_bit = int(data.pos_start[lo]) * width
            end_bit = int(data.pos_start[hi]) * width
            assert offset % 8 == 0 and offset * 8 <= first_bit
            assert end_bit <= (offset + length) * 8
    finally:
        fetch.close()


def epoch(data, seed=0):
    model = FactorizationBT(N_FEATURES, 2, 0.1, generator=torch.Generator().manual_seed(0))
    steps = CompiledSGD(model, data, SGDConfig(k=2, batch_size=16, seed=seed))
    return [b.copy() for b in steps]


@pytest.mark.parametrize("chunk", [None, 50])
def test_n_batches_counts_what_a_pass_yields(flat, chunk):
    """The progress bar's total: a whole pass's batches, or the rest of a continued one."""
    model = FactorizationBT(N_FEATURES, 2, 0.1, generator=torch.Generator().manual_seed(0))
    steps = CompiledSGD(model, chunked(flat, chunk), SGDConfig(k=2, batch_size=16))
    assert steps.n_batches() == sum(1 for _ in steps)
    if chunk is None:
        return
    yielded = 0
    for _ in steps:  # stop at the second cut
        yielded += 1
        cut = steps.cut()
        if cut is not None and cut.done == 2:
            break
    steps.continue_pass(cut)
    rest = len(epoch(chunked(flat, 50))) - yielded
    assert steps.n_batches() == sum(1 for _ in steps) == rest


def test_chunked_epoch_visits_every_position_once(flat):
    data = chunked(flat, 50)
    batches = epoch(data)
    seen = np.concatenate(batches)
    assert np.array_equal(np.sort(seen), np.arange(flat.n_positions))
    bounds = chunk_bounds(flat.n_positions, 50)
    for b in batches:
        assert len(np.unique(np.searchsorted(bounds, b, side="right"))) == 1
    firsts = [np.searchsorted(bounds, b[0], side="right") for b in batches]
    assert firsts != sorted(firsts)  # the chunks come in a shuffled order
    again = epoch(chunked(flat, 50))
    assert all(np.array_equal(a, b) for a, b in zip(batches, again, strict=True))


def test_chunked_training_fits_as_well():
    """2,000 positions, 3 epochs: read in chunks of 200 (batches shuffled within a
    chunk, the chunks shuffled) fits the training data as well as one shuffle of all."""
    data = flat_of(make_data(random_log_gamma(N_FEATURES, 2), GROUPS, 40, 50, 12, 3), GROUPS)
    ctx = TrainContext(N_FEATURES, GROUPS, progress=False)
    cfg = SGDConfig(k=2, epochs=3, batch_size=16)
    _, whole = train_sgd(cfg, data, ctx)
    _, parts = train_sgd(cfg, chunked(data, 200), ctx)
    assert parts[-1]["log_likelihood"] == pytest.approx(whole[-1]["log_likelihood"], abs=0.01)
    assert parts[-1]["log_likelihood"] > parts[0]["log_likelihood"] + 0.25
