"""Coulom's MM (minorization-maximization) for the generalized Bradley-Terry model.

Where to start reading: ``loop`` (the update, the prior, the cyclic and greedy
schedules, stopping and resuming, in numpy), then ``fit`` (``train_mm``: the loop
on any engine into a torch model). Engines, one word each, all giving the same
pass statistics:
- ``padded``: torch over streamed padded Batches, any device (the oracle);
- ``compiled``: numba over the flat layout on the CPU (``NumbaMM``; ``kernels``
  holds its passes; ``cached``, the bookkeeping both flat-layout engines share);
- ``tensor``: torch over the flat layout, any device (``TorchMM``, ``flat_mm``);
- ``distributed``: any engine with its statistics all-reduced over torchrun's ranks.
"""
