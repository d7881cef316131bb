"""``python -m gomove.cli SUB ...``: the same as ``gomove SUB ...`` (gomove.cli.main)."""

from gomove.cli.main import entry

if __name__ == "__main__":
    entry()
