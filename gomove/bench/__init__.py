"""Benchmarks: ``gomove bench`` (``python bench.py``), JSON lines out.

Where to start reading: ``suite`` (the benchmarks by name, the suites of
gomove/configs/experiment/bench.yaml that run them), then the benchmarks by topic:
``extraction`` (replay, feature extraction), ``training`` (MM, FBT and LFR, the
rankers, torchrun), ``playouts`` (playouts, the Monte-Carlo owner, the territory CRF),
``engine_speed`` (search, prediction, the analysis protocol) and ``gpu`` (a GPU
machine's CUDA engines beside numba). ``common`` holds what they share: the config,
the games, the JSON lines.
"""
