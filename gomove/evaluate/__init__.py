"""Evaluation: the papers' measures (``measures``), their report and plots (``report``),
and matches between GTP engines (``match``: refereed, resumable, Wilson intervals)."""
