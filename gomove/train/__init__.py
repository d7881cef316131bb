"""Training: ``gomove train model=NAME``, one trainer table, one folder per family.

Where to start reading: ``trainers`` (TRAINERS: every trainer's name, config schema,
run and fit; ``run`` is gomove train), ``schemas`` (the Hydra tree's schemas),
``context`` (TrainContext, what a move model's trainer is given, passed whole), then
the runs: ``move_models`` (data -> datasets -> fit -> evaluation, for mm, fbt, lfr, pr,
bar and lbr), ``territory/run`` and ``balance/run``. The families: ``mm/``, ``sgd/``
(FBT, LFR), ``rankers/`` (PR, BAR, LBR), ``territory/`` (Stern's CRF), ``balance/``
(simulation balancing of the playout policy), each with its loop, engines and kernels
side by side. Shared: ``calibrate`` (temperature and floor), ``monitor``
(per-iteration validation, log line, TensorBoard), ``resume`` (train states for
``resume=true``), ``world`` (torchrun's processes, the shared harvest),
``hierarchy_tensors`` (the pattern hierarchy in torch).
"""
