"""Playing Go with the models.

Where to start reading: ``predict`` (a model on one position), ``search`` (MCTS and its
presets for each board size), ``gtp`` (the engine GUIs talk to), ``analysis`` (KataGo's
JSON analysis protocol), ``ownership`` (maps by playouts or the territory CRF),
``game`` (a game in progress), ``labelling`` (positions labelled by a search, for
simulation balancing), ``warmup`` (compiling the engine ahead), ``boardplot``.

Nothing here imports training: a model is loaded by gomove.models.checkpoint.
"""
