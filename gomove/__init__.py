"""gomove: fast move-prediction models for Go learned from expert game records.

Where to start reading: the packages bottom to top, each importing only those below
it (tests/test_layers.py; README, Modules): ``board`` (the rules), ``reading`` (game
records), ``features`` (what a candidate move is made of), ``playout`` (random games
to the end), ``data`` (extraction and the on-disk layout), ``models``, ``evaluate``,
``train`` (``gomove train``: gomove.train.trainers), ``export``, ``play`` (search, GTP,
analysis), ``experiment`` (studies), ``bench`` and ``cli`` (``gomove SUB``). This
module keys numba's cache on the kernel sources.
"""

from __future__ import annotations

import ast
import hashlib
import os
from pathlib import Path

__version__ = "0.1.0"

# decorators that make a function compiled code (or part of it)
_KERNEL_DECORATORS = ("njit", "jit", "overload", "vectorize", "guvectorize", "cfunc")


def _decorator_name(node: ast.expr) -> str:
    while isinstance(node, ast.Call):
        node = node.func
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _strip_docstring(node: ast.AST) -> None:
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]


def kernel_source(source: str) -> str | None:
    """What compiled code depends on in one module, or None when it uses no numba.

    The kernels (functions under a numba decorator) without docstrings, and the
    module-level constants, classes (the NamedTuple types kernels take) and
    imports they may read, all as ast.unparse gives them: comments, docstrings
    and formatting do not count.
    """
    tree = ast.parse(source)
    uses_numba = any(
        (isinstance(n, ast.Import) and any(a.name.split(".")[0] == "numba" for a in n.names))
        or (isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "numba")
        for n in tree.body
    )
    if not uses_numba:
        return None
    parts = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            if not any(_decorator_name(d) in _KERNEL_DECORATORS for d in node.decorator_list):
                continue
        elif not isinstance(node, ast.Assign | ast.AnnAssign | ast.ClassDef | ast.Import):
            if not isinstance(node, ast.ImportFrom):
                continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.FunctionDef | ast.ClassDef):
                _strip_docstring(inner)
        parts.append(ast.unparse(node))
    return "\n".join(parts)


def _numba_cache_dir() -> Path:
    """A numba cache folder named by a hash of the kernel sources of the whole package.

    Numba's own cache is invalidated per source file only: a kernel compiled
    with another file's kernel inlined keeps the old code after that file
    changes (seen here: a changed hash-table slot function left cached callers
    looking up the wrong slots). Keying the whole cache on every module's
    kernel sources (``kernel_source``) makes any change to compiled code
    recompile everything, and edits to prose or plain Python nothing.
    """
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        src = kernel_source(text) if "numba" in text else None  # parse only likely modules
        if src is not None:
            h.update(path.relative_to(root).as_posix().encode())
            h.update(src.encode())
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "gomove" / "numba" / h.hexdigest()[:16]


# must happen before numba is imported (it reads its config once)
os.environ.setdefault("NUMBA_CACHE_DIR", str(_numba_cache_dir()))
