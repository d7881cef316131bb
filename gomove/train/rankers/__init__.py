"""The comparison paper's rankers (Wistuba et al. 2012): PR, BAR and LBR.

Where to start reading: ``fit`` (``fit_ranker``: the passes over the flat layout and the
softmax temperature's calibration), ``kernels`` (the numba updates: PR's counts, BAR's
Algorithm 1, LBR's expectation propagation per position).
"""
