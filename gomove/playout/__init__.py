"""Playouts: random games to the end, uniform or drawn by a learned pattern policy.

Where to start reading: ``driver`` (the one playout driver, its hooks, uniform
playouts, eyes and area scoring: rules-level, so the Monte-Carlo owner feature
can use it), then ``policy`` (PatternPolicy: a policy file with its kernel tables,
the API the search and GTP use) and ``pattern/`` (the compiled pattern playouts).
The driver sits below the features; the pattern policy above the models
(tests/test_layers.py).
"""
