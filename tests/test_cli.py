"""The command-line tools: every console script resolves and runs from any folder; scripts load.

Invariants checked:
- every ``[project.scripts]`` entry of pyproject.toml names an importable function;
- the Hydra tools (gomove-train, gomove-evaluate) find their configs from a folder
  outside the checkout (the configs ship in the package): ``--cfg job`` prints the
  composed config, overrides included;
- the argparse tools answer ``--help``; the scripts under scripts/ import and
  answer ``--help`` (a renamed module breaks them here, not in a user's hands).
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_console_script_entry_points_import(name):
    module, func = SCRIPTS[name].split(":")
    assert callable(getattr(importlib.import_module(module), func))


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("module", ["gomove.cli.train", "gomove.cli.evaluate"])
def test_hydra_tools_find_their_configs_anywhere(module, tmp_path):
    """Composed from an empty folder outside the checkout, with an override applied."""
    out = run([sys.executable, "-m", module, "--cfg", "job", "model=fbt", "k=7"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "name: fbt" in out.stdout and "k: 7" in out.stdout


@pytest.mark.parametrize(
    "name", ["gomove-data", "gomove-bench", "gomove-ownership", "gomove-compare"]
)
def test_argparse_tools_answer_help(name, tmp_path):
    exe = shutil.which(name)
    if exe is None:
        pytest.skip(f"{name} is not installed (pip install -e .)")
    out = run([exe, "--help"], tmp_path)
    assert out.returncode == 0 and "usage" in out.stdout, out.stderr


@pytest.mark.parametrize("script", sorted(p.name for p in (ROOT / "scripts").glob("*.py")))
def test_scripts_answer_help(script, tmp_path):
    out = run([sys.executable, str(ROOT / "scripts" / script), "--help"], tmp_path)
    assert out.returncode == 0 and "usage" in out.stdout, out.stderr
