"""The wheel's one build step beyond setuptools': numba's compiled code, shipped inside it.

``pip install .`` builds a wheel; after copying the package, this runs ``gomove warmup
--pack`` on the copy, so the wheel carries the engine's compiled kernels
(``gomove/_numba``, gomove.kernel_cache) and the first ``genmove`` after the install
loads them instead of compiling for minutes. The warm-up scores with torch, which is
too big for pip's build environment: it is taken from the environment being installed
into (README: torch first). Without it, or with ``GOMOVE_PRECOMPILE=0``, or for an
editable install, the wheel ships no compiled code and numba compiles at first use.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


def _paths(build_lib: Path) -> list[str]:
    """The copy being built, this build environment's packages (numba, numpy, ...) and
    the target environment's (torch), in that order."""
    target = [sysconfig.get_paths()[k] for k in ("purelib", "platlib")]
    target.append(site.getusersitepackages())
    paths = [str(build_lib), *(p for p in sys.path if p), *target]
    return list(dict.fromkeys(p for p in paths if os.path.isdir(p)))


def precompile(build_lib: Path) -> None:
    """Compile the engine into build_lib/gomove/_numba; on failure, say why and ship none."""
    out = build_lib / "gomove" / "_numba"
    shutil.rmtree(out, ignore_errors=True)
    if os.environ.get("GOMOVE_PRECOMPILE", "1") == "0":
        return
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(_paths(build_lib)),
                   NUMBA_CACHE_DIR=cache, GOMOVE_WARMUP="0")  # fmt: skip
        cmd = [sys.executable, "-S", "-m", "gomove.cli", "warmup", "--pack", str(out)]
        done = subprocess.run(cmd, env=env, cwd=cache, stdout=subprocess.DEVNULL)
    took = time.perf_counter() - start
    if done.returncode != 0:
        shutil.rmtree(out, ignore_errors=True)
        print(f"gomove: no compiled code in the wheel (the warm-up failed after {took:.0f} s); "
              "numba compiles at first use", file=sys.stderr)  # fmt: skip
    else:
        print(f"gomove: the engine compiled into the wheel in {took:.0f} s", file=sys.stderr)


class BuildWithKernels(build_py):
    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            precompile(Path(self.build_lib).resolve())


setup(cmdclass={"build_py": BuildWithKernels})
