"""Experiments: a training run end to end, and the studies built from runs.

Where to start reading:

- ``run``: one training run in this process, ``run(cfg, out_dir)``: data,
  features, datasets, training, evaluation and the run folder it writes
  (model.pt, metrics.json, positions.npz); ``gomove train`` is this.
- ``runs``: a run as the experiments see it: ``launch`` starts ``train.py``
  in a process of its own and returns its metrics; ``read_metrics``,
  ``read_positions`` and ``read_history`` read a run folder (checkpoints only
  through gomove.models.checkpoint); ``History`` is the one reading of a
  trainer's history (row 0 is the start, rows 1.. the iterations);
  ``load_experiment`` reads an experiment's rows from
  ``gomove/configs/experiment/<name>.yaml``.
- ``compare``: the comparison paper's systems at several training sizes
  (experiment ``compare``), its tables and figures (``gomove compare``).
- ``bench``: the speed and memory benchmarks (``gomove bench``); ``scale``
  trains through ``runs`` under torchrun.

``scripts/results_table.py`` (experiment ``results_table``) also launches
and reads its runs through ``runs``.
"""
