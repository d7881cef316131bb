"""``gomove SUB``: thin argument parsing over the library.

Where to start reading: ``main`` (the dispatcher: one module a subcommand, each with a
``main``), then the subcommand's module; ``model_args`` (--model, --policy, --territory:
the shipped ones by default) is what the engines' subcommands share.
"""

from __future__ import annotations

import argparse


def doc_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """A subcommand's parser from its module docstring: the first paragraph is the
    description, the rest (examples, notes) the epilog, printed as written."""
    head, _, rest = doc.partition("\n\n")
    raw = argparse.RawDescriptionHelpFormatter
    return argparse.ArgumentParser(prog=prog, description=head, epilog=rest, formatter_class=raw)
