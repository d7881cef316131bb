"""Stern's territory predictor: a CRF over the final owner of every point.

Where to start reading: ``crf`` (the model and its queries), ``features`` (what it sees
of a position) over ``reading`` (the board's strings, regions and geometry) and
``playout_counts`` (what a few playouts say), ``judge`` (the dead strings of a count),
``sampler`` and ``batched`` (Swendsen-Wang sampling, compiled for play and in torch for
training).
"""
