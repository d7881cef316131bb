"""``python -m gomove.data PATH...``: the same as ``gomove-data`` (gomove/cli/data.py)."""

import sys

from gomove.cli.data import main

sys.exit(main())
