"""The comparison paper's rankers (Wistuba et al. 2012): PR, BAR and LBR.

``fit`` trains them over the flat layout and calibrates a softmax temperature;
``kernels`` holds the numba updates (PR's counts, BAR's Algorithm 1, LBR's
expectation propagation per position).
"""
