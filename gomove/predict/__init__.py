"""``python -m gomove.predict``: the entry point of ``gomove predict`` (gomove/cli/predict.py)."""
