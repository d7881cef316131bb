"""``python -m gomove.evaluate``: the same as ``gomove-evaluate`` (gomove/cli/evaluate.py)."""

from gomove.cli.evaluate import main

main()
