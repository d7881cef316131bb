"""Train a move-prediction model: `python train.py model=mm [data=tygem] [key=value ...]`.

The same as the ``gomove train`` console script (gomove/cli/train.py).
"""

from gomove.cli.train import main

if __name__ == "__main__":
    main()
