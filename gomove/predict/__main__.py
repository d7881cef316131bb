"""``python -m gomove.predict``: the same as ``gomove predict`` (gomove/cli/predict.py)."""

from gomove.cli.predict import main

main()
