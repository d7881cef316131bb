"""numba's cache of gomove's kernels (gomove.kernel_cache): its key, and the cache a wheel
ships, packed from one install and seeded into another at another path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from numba.core.caching import _CacheLocator

from gomove import kernel_cache
from gomove.board import board

KERNEL = '''
import numpy as np
from numba import njit

LIMIT = 3  # a constant kernels read


@njit(cache=True)
def f(x):
    """Doubled."""
    return 2 * x  # the comment
'''


def test_the_key_reads_kernels_and_constants_not_prose():
    base = kernel_cache.kernel_source(KERNEL)
    prose = KERNEL.replace('"""Doubled."""', '"""Twice x."""').replace("the comment", "why")
    assert kernel_cache.kernel_source(prose) == base
    assert kernel_cache.kernel_source(KERNEL.replace("2 * x", "3 * x")) != base
    assert kernel_cache.kernel_source(KERNEL.replace("LIMIT = 3", "LIMIT = 4")) != base
    assert kernel_cache.kernel_source("x = 1\n") is None  # no numba: not a kernel module
    assert os.environ["NUMBA_CACHE_DIR"].endswith(kernel_cache.kernel_key())


def test_folder_names_are_numbas():
    path = board.__file__
    assert kernel_cache.numba_subdir(Path(path).parent) == (
        _CacheLocator.get_suitable_cache_subpath(path)
    )


def fake_cache(cache: Path) -> None:
    """A cache folder as numba and the warm-up leave it, for two package folders."""
    for rel, name in (("board", "board.play-1.py311"), ("playout/pattern", "draw.g-9.py311")):
        sub = cache / kernel_cache.numba_subdir(kernel_cache.ROOT / rel)
        sub.mkdir(parents=True)
        (sub / f"{name}.nbi").write_text(f"index {rel}")
        (sub / f"{name}.1.nbc").write_text(f"code {rel}")
    (cache / "gomove-warm-0123").write_text("1.0 s\n")
    (cache / "elsewhere_0123").mkdir()  # another package's sources: not packed
    (cache / "elsewhere_0123" / "x.nbi").write_text("not gomove's")


def test_pack_then_seed(tmp_path):
    fake_cache(tmp_path / "built")
    shipped = tmp_path / "_numba"
    assert kernel_cache.pack(tmp_path / "built", shipped, "k1") == 5
    assert (shipped / "board" / "board.play-1.py311.nbi").read_text() == "index board"
    assert (shipped / "playout" / "pattern" / "draw.g-9.py311.1.nbc").is_file()
    manifest = json.loads((shipped / kernel_cache.MANIFEST).read_text())
    assert manifest["key"] == "k1" and manifest["python"] == kernel_cache._python()

    cache = tmp_path / "cache"
    assert kernel_cache.seed(cache, "k1", shipped)
    for rel in ("board", "playout/pattern"):
        sub = cache / kernel_cache.numba_subdir(kernel_cache.ROOT / rel)
        assert {f.suffix for f in sub.iterdir()} == {".nbi", ".nbc"}
    assert (cache / "gomove-warm-0123").is_file()
    assert not (cache / "elsewhere_0123").exists()
    assert not kernel_cache.seed(cache, "k1", shipped)  # once

    other = tmp_path / "other"
    assert not kernel_cache.seed(other, "k2", shipped)  # other kernel sources: nothing
    assert [f.name for f in other.iterdir()] == [next(other.iterdir()).name]  # the marker
    assert not kernel_cache.seed(tmp_path / "none", "k1", tmp_path / "absent")


def test_a_seeded_cache_is_loaded_not_compiled(tmp_path):
    """Compile a kernel in one copy of the package, pack it; a copy at another path seeded
    from it loads the machine code (numba's cache hits) and compiles nothing."""
    ignore = shutil.ignore_patterns("__pycache__", "pretrained", "samples", "_numba")
    for name in ("one", "two"):
        shutil.copytree(kernel_cache.ROOT, tmp_path / name / "gomove", ignore=ignore)
    run = textwrap.dedent("""
        import os, sys
        from pathlib import Path
        import numpy as np
        from gomove import kernel_cache
        from gomove.playout.rng import seed_state
        seed_state(np.uint64(5), 3)
        s = seed_state.stats
        print(sum(s.cache_hits.values()), sum(s.cache_misses.values()))
        if sys.argv[1:]:
            kernel_cache.pack(Path(os.environ["NUMBA_CACHE_DIR"]), Path(sys.argv[1]),
                              kernel_cache.kernel_key())
    """)

    def python(name: str, *args: str) -> list[int]:
        env = os.environ | {"PYTHONPATH": str(tmp_path / name),
                            "XDG_CACHE_HOME": str(tmp_path / f"cache-{name}")}  # fmt: skip
        env.pop("NUMBA_CACHE_DIR", None)
        out = subprocess.run([sys.executable, "-c", run, *args], env=env, cwd=tmp_path,
                             capture_output=True, text=True, check=True)  # fmt: skip
        return [int(x) for x in out.stdout.split()]

    assert python("one", str(tmp_path / "two" / "gomove" / "_numba")) == [0, 1]
    assert python("two") == [1, 0]
