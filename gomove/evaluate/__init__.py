"""Evaluation: the papers' measures (measures.py) and their report and plots (report.py)."""
