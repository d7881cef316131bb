"""Benchmarks, JSON lines out: `python bench.py [BENCHMARK or SUITE ...]` (gomove.bench).

The same as the ``gomove bench`` console script (gomove/cli/bench.py).
"""

from gomove.cli.bench import main

if __name__ == "__main__":
    main()
