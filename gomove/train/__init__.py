"""Training, one folder per model family: ``mm/``, ``sgd/`` (FBT, LFR), ``rankers/``
(PR, BAR, LBR), ``balance/`` (simulation balancing of the playout policy).

Where to start reading: ``specs`` (MODELS: each model name's config schema, trainer
and engines), ``config`` (the schemas). Shared by the families: ``monitor``
(per-iteration validation, log line, TensorBoard), ``resume`` (train states for
``resume=true``), ``world`` (torchrun's processes, the shared harvest).
"""
