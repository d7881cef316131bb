"""``gomove SUB``: thin argument parsing over the library; ``main`` dispatches.

One module a subcommand, each with a ``main``; see README, Modules."""
