"""Experiments: the studies built from training runs.

Where to start reading:

- ``runs``: a run as the experiments see it: ``launch`` starts ``train.py``
  in a process of its own and returns its metrics; ``read_metrics``,
  ``read_positions`` and ``read_history`` read a run folder (checkpoints only
  through gomove.models.checkpoint); ``History`` is the one reading of a
  trainer's history (row 0 is the start, rows 1.. the iterations);
  ``load_experiment`` reads an experiment's rows from
  ``gomove/configs/experiment/<name>.yaml``.
- ``compare``: the comparison paper's systems at several training sizes
  (experiment ``compare``), its tables and figures (``gomove compare``).
- ``territory_compare``: the territory CRF beside playout ownership maps
  (``gomove territory compare``).

A training run itself is gomove.train (``gomove train``, gomove.train.trainers.run);
the benchmarks are gomove.bench. ``scripts/results_table.py`` (experiment
``results_table``) also launches and reads its runs through ``runs``.
"""
