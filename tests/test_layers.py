"""The package's layers: every import points down, the module graph has no cycle.

Invariants checked (on the real sources, and on small bad ones to show the check fails):
- every module of gomove belongs to exactly one layer of LAYERS (README, "Modules");
- an import of a gomove module, wherever it stands (module level, under
  TYPE_CHECKING, inside a function), names a module of the same or a lower layer;
- no gomove import sits inside a function (the style rule: never import late to
  dodge a cycle);
- the graph of gomove modules importing gomove modules is acyclic.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Bottom to top. A module's layer is that of the longest prefix naming it (the
# package ``gomove`` names only its own __init__). Each package is one layer.
BASE = ("gomove", "gomove.atomic", "gomove.memory", "gomove.samples", "gomove.configs")
BASE += ("gomove.kernel_cache",)  # numba's cache folder and the shipped cache
BASE += ("gomove.pretrained",)  # package data: the shipped models
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", BASE),
    ("board", ("gomove.board",)),
    ("reading", ("gomove.reading",)),
    ("features", ("gomove.features",)),
    ("playout", ("gomove.playout",)),
    ("data", ("gomove.data",)),
    ("models", ("gomove.models",)),
    ("evaluate", ("gomove.evaluate",)),
    ("train", ("gomove.train",)),
    ("export", ("gomove.export",)),
    ("play", ("gomove.play",)),
    ("experiment", ("gomove.experiment",)),
    ("bench", ("gomove.bench",)),
    ("cli", ("gomove.cli",)),
)
# Layers above training that must still never import it: loading a model to play
# or to export it pulls in no trainer, Hydra store or torch.distributed.
NEVER: dict[str, tuple[str, ...]] = {
    "gomove.play": ("gomove.train",),
    "gomove.export": ("gomove.train",),
    "gomove.models": ("gomove.train",),
}
LAYER_NAMES = [name for name, _ in LAYERS]


def layer_of(module: str) -> int:
    """Index of module's layer in LAYERS; KeyError for a module no layer names."""
    best, best_len = None, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            inside = module.startswith(p + ".") and p != "gomove"
            if (module == p or inside) and len(p) > best_len:
                best, best_len = i, len(p)
    if best is None:
        raise KeyError(module)
    return best


def module_sources(root: Path = ROOT / "gomove") -> dict[str, str]:
    """{dotted module name: source} of every .py file of the package."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path.read_text()
    return out


def gomove_imports(source: str, modules: set[str]) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) of every gomove import in source.

    ``from a.b import c`` names a.b.c when that is a module, else a.b.
    """
    tree = ast.parse(source)
    in_function: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for inner in ast.walk(node):
                if inner is not node:
                    in_function.add(id(inner))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            targets = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                for a in node.names
            ]
        else:
            continue
        for t in targets:
            if t == "gomove" or t.startswith("gomove."):
                out.append((t, node.lineno, id(node) in in_function))
    return out


def check(sources: dict[str, str]) -> list[str]:
    """Every violation of the module docstring's invariants, as readable lines."""
    modules = set(sources)
    problems = []
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, src in sources.items():
        try:
            mine = layer_of(mod)
        except KeyError:
            problems.append(f"{mod}: in no layer (add it to LAYERS and the README)")
            continue
        for target, line, late in gomove_imports(src, modules):
            if late:
                problems.append(f"{mod}:{line}: imports {target} inside a function")
            try:
                theirs = layer_of(target)
            except KeyError:
                problems.append(f"{mod}:{line}: imports {target}, which is in no layer")
                continue
            for low, banned in NEVER.items():
                inside = mod == low or mod.startswith(low + ".")
                if inside and any(target == b or target.startswith(b + ".") for b in banned):
                    problems.append(f"{mod}:{line}: imports {target}, which {low} must never use")
            if theirs > mine:
                problems.append(
                    f"{mod}:{line}: imports {target} ({LAYER_NAMES[theirs]}) "
                    f"from the lower layer {LAYER_NAMES[mine]}"
                )
            if target in graph and target != mod:
                graph[mod].add(target)
    problems += [f"import cycle: {' -> '.join(c)}" for c in cycles(graph)]
    return problems


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_package_layers_hold():
    """The real package: no module outside the layers, no upward or late import, no cycle."""
    problems = check(module_sources())
    assert not problems, "\n".join(problems)


def test_every_layer_is_used():
    """Each layer of the table names at least one module (the table is not stale)."""
    used = {layer_of(m) for m in module_sources()}
    assert used == set(range(len(LAYERS))), [LAYER_NAMES[i] for i in set(range(len(LAYERS))) - used]


@pytest.mark.parametrize(
    "sources, expected",
    [
        # board importing features: upward
        (
            {"gomove.board.x": "from gomove.features.registry import Registry\n"},
            "from the lower layer board",
        ),
        # a late import, even of a lower layer
        (
            {"gomove.train.x": "def f():\n    from gomove.board.board import play\n"},
            "inside a function",
        ),
        # an upward import hidden under TYPE_CHECKING
        (
            {
                "gomove.playout.x": (
                    "from typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n    from gomove.models.checkpoint import load_checkpoint\n"
                )
            },
            "from the lower layer playout",
        ),
        # a cycle within one layer
        (
            {
                "gomove.train.a": "import gomove.train.b\n",
                "gomove.train.b": "from gomove.train import a\n",
                "gomove.train": "",
            },
            "import cycle: gomove.train.a -> gomove.train.b",
        ),
        # a module no layer names
        ({"gomove.nowhere": ""}, "in no layer"),
        # play loading a model through training (a higher layer, but banned)
        (
            {"gomove.play.x": "from gomove.train.trainers import MODELS\n"},
            "gomove.play must never use",
        ),
        # export reaching into a trainer
        (
            {"gomove.export.x": "import gomove.train.mm.fit\n"},
            "gomove.export must never use",
        ),
    ],
)
def test_check_reports_violations(sources, expected):
    """The checker reports each kind of violation (so the real test can fail)."""
    problems = check(sources)
    assert any(expected in p for p in problems), problems
