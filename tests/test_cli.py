"""The command line: one ``gomove`` command whose subcommands run from any folder; scripts load.

Invariants checked:
- pyproject.toml installs one console script, ``gomove``, naming an importable function;
- ``gomove --help`` lists every subcommand; an unknown one exits 2 naming it;
- every ``gomove SUB --help`` exits 0 with its usage and at least one example line
  (a line that starts ``gomove SUB``);
- the Hydra subcommands (gomove train, gomove evaluate) find their configs from a
  folder outside the checkout (the configs ship in the package): ``--cfg job``
  prints the composed config, overrides included;
- the scripts under scripts/ import and answer ``--help`` (a renamed module breaks
  them here, not in a user's hands).
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from gomove.cli.main import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def test_one_console_script():
    assert list(SCRIPTS) == ["gomove"]
    module, func = SCRIPTS["gomove"].split(":")
    assert callable(getattr(importlib.import_module(module), func))


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)


GOMOVE = [sys.executable, "-m", "gomove.cli"]


@pytest.mark.parametrize("sub", ["train", "evaluate"])
def test_hydra_subcommands_find_their_configs_anywhere(sub, tmp_path):
    """Composed from an empty folder outside the checkout, with an override applied."""
    out = run([*GOMOVE, sub, "--cfg", "job", "model=fbt", "k=7"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "name: fbt" in out.stdout and "k: 7" in out.stdout


def test_gomove_lists_every_subcommand(tmp_path):
    out = run([*GOMOVE, "--help"], tmp_path)
    assert out.returncode == 0, out.stderr
    for sub in COMMANDS:
        assert f"  {sub} " in out.stdout


def test_unknown_subcommand_exits_2(tmp_path):
    out = run([*GOMOVE, "trian"], tmp_path)
    assert out.returncode == 2
    assert "unknown subcommand 'trian'" in out.stderr and "train" in out.stderr


@pytest.mark.parametrize("sub", sorted(COMMANDS))
def test_every_subcommand_answers_help_with_an_example(sub, tmp_path):
    out = run([*GOMOVE, sub, "--help"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "usage" in out.stdout
    examples = [x for x in out.stdout.splitlines() if x.strip().startswith(f"gomove {sub} ")]
    assert examples, out.stdout


def test_installed_gomove_runs(tmp_path):
    exe = shutil.which("gomove")
    if exe is None:
        pytest.skip("gomove is not installed (pip install -e .)")
    out = run([exe, "data", "--help"], tmp_path)
    assert out.returncode == 0 and "usage: gomove data" in out.stdout, out.stderr


@pytest.mark.parametrize("script", sorted(p.name for p in (ROOT / "scripts").glob("*.py")))
def test_scripts_answer_help(script, tmp_path):
    out = run([sys.executable, str(ROOT / "scripts" / script), "--help"], tmp_path)
    assert out.returncode == 0 and "usage" in out.stdout, out.stderr
