"""Playing Go with the models: ``search`` (MCTS), ``gtp`` (the engine GUIs talk to),
``predict`` (a model on one position), ``ownership`` maps, ``game`` (a game in
progress), ``labels`` (positions labelled for simulation balancing), ``boardplot``.

Nothing here imports training: a model is loaded by gomove.models.checkpoint.
"""
