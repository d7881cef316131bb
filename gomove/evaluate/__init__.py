"""Evaluation: the papers' measures and their report, territory measures, matches.

Where to start reading: ``measures`` (top-1, log-evidence, the cumulative rank
distribution, by game phase and pattern size), ``report`` (metrics.json, the summary
table and the papers' plots), ``saved_model`` (``gomove evaluate``: a saved model on
data.test), ``territory_measures`` (how well an ownership map knows the final
territory), ``match`` (refereed, resumable matches between GTP engines, Wilson
intervals).
"""
