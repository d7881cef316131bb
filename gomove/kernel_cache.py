"""numba's cache of gomove's kernels: its folder, and the cache a wheel ships.

Terms:
- cache folder: ``~/.cache/gomove/numba/KEY`` (``$XDG_CACHE_HOME`` first), KEY a hash of
  the kernel sources of the whole package (``kernel_source``); gomove's ``__init__``
  points ``NUMBA_CACHE_DIR`` at it before numba is imported. Inside it numba keeps one
  folder per source folder, named by the folder's name and a SHA-1 of its absolute
  path, and in each an index (``.nbi``) and the machine code (``.nbc``) of every
  compiled signature, keyed on the signature, the CPU (name and features) and the
  bytecode, and checked against the numba version and a hash of the source file.
- shipped cache: ``gomove/_numba/`` in a wheel (``setup.py`` builds it, running
  ``gomove warmup --pack``): the same files, one folder per package folder
  (``board``, ``playout/pattern``), and ``manifest.json`` (KEY, numba, Python). A
  source checkout has none.
- seeding: at the first import after an install, the shipped files are copied into
  the cache folder under the names numba gives the installed folders (``seed``), so
  the first ``genmove`` loads machine code instead of compiling it. A manifest that
  does not match (other kernel sources, numba or Python) seeds nothing; numba then
  compiles at first use as without it. numba checks every entry again itself.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(os.path.abspath(__file__)).parent  # as numba sees the sources (abspath)
SHIPPED = ROOT / "_numba"
MANIFEST = "manifest.json"
CACHE_SUFFIXES = (".nbi", ".nbc")

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


def kernel_key() -> str:
    """A hash of the kernel sources of the whole package (16 hex digits).

    Numba's own cache is invalidated per source file only: a kernel compiled
    with another file's kernel inlined keeps the old code after that file
    changes (seen here: a changed hash-table slot function left cached callers
    looking up the wrong slots). Keying the whole cache on every module's
    kernel sources makes any change to compiled code recompile everything, and
    edits to prose or plain Python nothing.
    """
    h = hashlib.sha256()
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        src = kernel_source(text) if "numba" in text else None  # parse only likely modules
        if src is not None:
            h.update(path.relative_to(ROOT).as_posix().encode())
            h.update(src.encode())
    return h.hexdigest()[:16]


def cache_dir(key: str) -> Path:
    """The cache folder of the kernel sources hashed to key."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "gomove" / "numba" / key


def numba_subdir(folder: Path) -> str:
    """The name numba gives the cache of the sources in folder (its
    _CacheLocator.get_suitable_cache_subpath): the folder's name and a SHA-1 of its path."""
    path = os.path.abspath(folder)
    return f"{os.path.basename(path)}_{hashlib.sha1(path.encode()).hexdigest()}"


def _python() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def pack(cache: Path, out: Path, key: str) -> int:
    """Write the cache folder's files of gomove's sources into out (a shipped cache: one
    folder per package folder, the top folder's stamps, and the manifest); returns the
    number of files."""
    names = {numba_subdir(d): d.relative_to(ROOT) for d in [ROOT, *ROOT.rglob("*")] if d.is_dir()}
    n = 0
    for f in sorted(cache.rglob("*")):
        if f.is_file() and f.parent == cache:
            dest = out / f.name  # the warm-up's stamp (gomove.play.warmup)
        elif f.suffix in CACHE_SUFFIXES and f.parent.name in names:
            dest = out / names[f.parent.name] / f.name
        else:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest)
        n += 1
    manifest = {"key": key, "numba": metadata.version("numba"), "python": _python()}
    (out / MANIFEST).write_text(json.dumps(manifest, sort_keys=True) + "\n")
    return n


def seed(cache: Path, key: str, shipped: Path = SHIPPED) -> bool:
    """Copy the shipped cache into the cache folder once, when its manifest matches these
    sources, numba and Python; True when it did. Files numba already wrote stay."""
    try:
        manifest = json.loads((shipped / MANIFEST).read_text())
    except (OSError, ValueError):
        return False  # no shipped cache (a source checkout) or a broken one
    done = cache / f"seeded-{hashlib.sha256(json.dumps(manifest).encode()).hexdigest()[:16]}"
    if done.exists():
        return False
    try:
        want = {"key": key, "numba": metadata.version("numba"), "python": _python()}
        if manifest != want:
            cache.mkdir(parents=True, exist_ok=True)
            done.touch()  # not for these sources, numba or Python: not asked again
            return False
        for f in sorted(shipped.rglob("*")):
            if not f.is_file() or f.name == MANIFEST:
                continue
            rel = f.parent.relative_to(shipped)
            dest = cache if f.parent == shipped else cache / numba_subdir(ROOT / rel)
            if not (dest / f.name).exists():
                dest.mkdir(parents=True, exist_ok=True)
                tmp = dest / f".{f.name}.seeding"
                shutil.copyfile(f, tmp)
                os.replace(tmp, dest / f.name)  # whole or not at all, as numba's own writes
        done.touch()
    except OSError:
        return False  # a read-only or full disk: numba compiles as without it
    return True
