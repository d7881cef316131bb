"""``gomove SUB ...``: the one command, as Go programs have it (``katago gtp``, ``analysis``).

    gomove train model=fbt k=10 data=tygem      # Hydra overrides, as python train.py
    gomove gtp --model RUN/model.pt --policy RUN_LIGHT/policy.npz
    gomove SUB --help                           # each subcommand's options and an example

Each subcommand is a module of gomove.cli with a ``main``; only the one asked
for is imported (by name, through importlib: ``gomove gtp`` does not start up
Hydra, and ``gomove data`` no torch), so start-up stays quick.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

# name -> (module of gomove.cli, one line of help)
COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("train", "train a model (Hydra: model=fbt k=10 data=tygem, model=territory)"),
    "evaluate": ("evaluate", "score a saved model on data.test (checkpoint=RUN/model.pt)"),
    "predict": ("predict", "a model's move probabilities on one position, printed and drawn"),
    "gtp": ("gtp", "a GTP engine for Go GUIs (Lizzie, Sabaki, GoGui) and matches"),
    "analysis": ("analysis", "KataGo's JSON analysis engine protocol (KaTrain and others)"),
    "warmup": ("warmup", "compile the engine once, ahead of the first game (minutes)"),
    "match": ("match", "matches between GTP engines, refereed, resumable, with intervals"),
    "ownership": ("ownership", "an ownership map (playouts or the territory CRF), as a PNG"),
    "territory": ("territory", "Stern's territory CRF beside playouts (compare; train: an alias)"),
    "export": ("export", "datasets and models as Coulom's mm and Pachi's files"),
    "import": ("import_", "Coulom's mm gammas as a gomove model"),
    "data": ("data", "read game records and count what a training run would get"),
    "bench": ("bench", "speed benchmarks, JSON lines (the same as python bench.py)"),
    "compare": ("compare", "the comparison paper's experiment: every system, tables, figures"),
    "balance": ("balance", "label positions for simulation balancing (label; train: an alias)"),
}
HYDRA_COMMANDS = ("train", "evaluate")  # their main reads sys.argv (Hydra's overrides)


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()]
    return (
        "usage: gomove SUB [ARGS...]\n\n"
        "Fast move-prediction models for Go: train, evaluate, play and export.\n\n"
        "subcommands:\n" + "\n".join(lines) + "\n\n"
        "gomove SUB --help gives a subcommand's options and an example.\n"
    )


def hydra_help(name: str, doc: str) -> str:
    """What ``gomove train|evaluate --help`` prints: the module's usage and the groups."""
    return (
        f"usage: gomove {name} [KEY=VALUE ...]\n\n{doc.strip()}\n\n"
        "Config groups (gomove/configs): data=sample|tygem, features=full|tactical|light,\n"
        "model=mm|fbt|lfr|pr|bar|lbr|territory|balance; any field as key=value (a misspelt\n"
        f"one fails with the valid names). Hydra's own help: gomove {name} --hydra-help;\n"
        f"the composed config:\ngomove {name} --cfg job\n"
    )


def main(argv: Sequence[str] | None = None) -> int | None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage(), end="")
        return 0
    name, rest = args[0], args[1:]
    if name in ("-V", "--version"):
        print(importlib.import_module("gomove").__version__)
        return 0
    if name not in COMMANDS:
        print(f"gomove: unknown subcommand {name!r}\n\n{usage()}", end="", file=sys.stderr)
        return 2
    module = importlib.import_module(f"gomove.cli.{COMMANDS[name][0]}")
    if name in HYDRA_COMMANDS:
        if any(a in ("-h", "--help") for a in rest):
            print(hydra_help(name, module.__doc__ or ""), end="")
            return 0
        sys.argv = [f"gomove {name}", *rest]
        return module.main()
    return module.main(rest)


def entry() -> None:
    """The console script: exit with main's status (None counts as 0); a reader that
    stops early (``gomove predict ... | head``) ends it quietly, as for other tools."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # Python's recipe: point stdout at devnull so the exit's flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
