"""Training runs as the experiments see them: launch one, read what it left.

Every experiment that trains (``gomove compare``: gomove.experiment.compare;
``gomove bench scale``: gomove.bench.training; ``scripts/results_table.py``)
launches ``train.py`` through ``launch`` and reads the run folder through the
readers here, and the rows it compares come from
``gomove/configs/experiment/<name>.yaml`` through ``load_experiment``.

Terms:
- run: the folder of one train.py process (``hydra.run.dir``): ``metrics.json``
  (gomove.evaluate.report), ``positions.npz`` (every test position's rank),
  ``model.pt`` (the checkpoint, read only by gomove.models.checkpoint's
  ``read_checkpoint``), ``.hydra/config.yaml`` (the composed config) and
  ``train.log`` (the process's output). gomove.train.move_models writes it.
- finished: metrics.json and positions.npz are there (written last, after
  model.pt).
- history: the trainer's rows, saved in the checkpoint (``History``).

The history, read one way (``History``): row 0 is the trainer's start, the
state before its first update, not an iteration; rows 1.. are its iterations
(MM), epochs (FBT, LFR) or passes (PR, BAR, LBR). So

- a figure per iteration (the seconds of each, their sum, median or mean; the
  count of iterations, ``len(rows) - 1`` as metrics.json's ``iterations``)
  reads rows 1.. only;
- the trainer's total time (``History.trainer_seconds``, the same sum as
  metrics.json's ``algorithm_seconds``) counts row 0 too, where the trainer
  timed it, because it is the algorithm's own work.

The evidence, the trainers' own rows 0: gomove.train.mm.loop (``fit_gammas``)
times its row 0, the pass that gathers the statistics of the first update at
gamma = 1 (without it there is no update), with ``seconds`` and
``cpu_seconds``; gomove.train.sgd.loop (``train_sgd``) times its row 0, one
no-grad pass measuring the start loss (it also reads the shards into memory
on the padded path: the benchmarks time epochs from row 1 on);
gomove.train.rankers.fit leaves its row 0, ``{"iter": 0, "positions": 0}``,
untimed. gomove.train.move_models counts ``len(history) - 1`` iterations and
sums every row's seconds as ``algorithm_seconds``: the same rule.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig, OmegaConf

from gomove.models.checkpoint import read_checkpoint
from gomove.train.trainers import compose_config

log = logging.getLogger(__name__)

METRICS = "metrics.json"
POSITIONS = "positions.npz"
CHECKPOINT = "model.pt"
TRAIN_LOG = "train.log"
SAVED_CONFIG = Path(".hydra") / "config.yaml"
EXPERIMENTS = "experiment"  # the folder of gomove/configs holding the experiments' rows


class RunFailed(RuntimeError):
    """A train.py process exited with an error; the message ends with its log's tail."""

    def __init__(self, run: Path, returncode: int, log_path: Path) -> None:
        tail = log_path.read_text(errors="replace")[-3000:] if log_path.exists() else ""
        super().__init__(f"training run {run} failed (exit {returncode}), see {log_path}:\n{tail}")
        self.run, self.returncode, self.log_path = run, returncode, log_path


# --- launching --------------------------------------------------------------------


def train_command(overrides: Sequence[str], nproc: int | None = None) -> list[str]:
    """The command line of a train.py run: this Python's ``-m gomove.cli.train`` (what
    ``python train.py`` runs); with nproc, under torchrun, that many processes on this
    machine (gomove.train.world)."""
    if nproc is not None:
        launcher = ["-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}"]
        return [sys.executable, *launcher, "-m", "gomove.cli.train", *overrides]
    return [sys.executable, "-m", "gomove.cli.train", *overrides]


def launch(
    overrides: Sequence[str],
    run: str | Path,
    *,
    log_path: str | Path | None = None,
    nproc: int | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
) -> dict[str, Any]:
    """Train in a process of its own into the folder run (``hydra.run.dir``, added to
    the overrides); return its metrics.json.

    Its memory is its own (the peak in metrics.json is the run's), and a failure
    stops only it: RunFailed. log_path: where its output goes (default
    RUN/train.log). nproc: run it under torchrun, that many processes. env:
    variables set for it on top of this process's (e.g. NUMBA_NUM_THREADS). cwd:
    the folder it runs in (relative data paths of the configs are relative to it;
    a relative run is then taken relative to it too).
    """
    run = Path(run) if cwd is None else Path(cwd, run).resolve()
    log_path = Path(log_path) if log_path is not None else run / TRAIN_LOG
    run.mkdir(parents=True, exist_ok=True)
    cmd = train_command([*overrides, f"hydra.run.dir={run}"], nproc)
    log.debug("train: %s", " ".join(cmd))
    with open(log_path, "w") as f:
        done = subprocess.run(
            cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, env=os.environ | dict(env or {})
        )
    if done.returncode != 0:
        raise RunFailed(run, done.returncode, log_path)
    return read_metrics(run)


def row_folder(name: str) -> str:
    """The run folder of an experiment's row named name ("FBT k=10, S=30" -> "fbtk10-s30")."""
    return name.lower().replace(" ", "").replace(",", "-").replace("=", "")


# --- reading a run ------------------------------------------------------------------


def _need(run: Path, name: str | Path) -> Path:
    """run/name, or a FileNotFoundError that says which run lacks what."""
    path = Path(run) / name
    if path.exists():
        return path
    if not Path(run).is_dir():
        raise FileNotFoundError(f"no training run at {run}: the folder does not exist")
    raise FileNotFoundError(
        f"{run} has no {name}: not a finished training run (train.py hydra.run.dir={run} "
        "writes it; see its train.log)"
    )


def finished(run: str | Path) -> bool:
    """Whether run holds the files a finished run writes last (metrics and positions)."""
    return (Path(run) / METRICS).exists() and (Path(run) / POSITIONS).exists()


def read_metrics(run: str | Path) -> dict[str, Any]:
    """The run's metrics.json (gomove.evaluate.report)."""
    return json.loads(_need(Path(run), METRICS).read_text())


def read_positions(run: str | Path) -> dict[str, np.ndarray]:
    """The run's positions.npz: every test position's rank, n_legal, game, move, radius
    and log_p, in game and move order."""
    with np.load(_need(Path(run), POSITIONS)) as z:
        return {k: z[k] for k in z.files}


def read_run_checkpoint(run: str | Path) -> dict[str, Any]:
    """The run's model.pt, by gomove.models.checkpoint.read_checkpoint (checked, with its
    extractor; no model built)."""
    return read_checkpoint(_need(Path(run), CHECKPOINT))


def read_history(run: str | Path) -> History:
    """The trainer's history saved in the run's checkpoint."""
    return History(list(read_run_checkpoint(run)["history"]))


@dataclass(frozen=True)
class History:
    """A trainer's history rows, read by the module docstring's rule: row 0 is the
    start, rows 1.. the iterations (epochs, passes).

    Every trainer's rows carry ``iter``; iterations carry ``seconds`` (wall) and
    ``cpu_seconds`` (this process's CPU time: on a shared machine, the work without
    the waiting); row 0 carries them where the trainer timed it (MM, SGD).
    """

    rows: list[dict[str, Any]]

    @property
    def start(self) -> dict[str, Any]:
        """Row 0: the state before the first update."""
        return self.rows[0] if self.rows else {}

    @property
    def iterations(self) -> list[dict[str, Any]]:
        """Rows 1..: one per iteration, epoch or pass."""
        return self.rows[1:]

    def seconds(self) -> list[float]:
        """Each iteration's wall seconds (rows 1.. that are timed)."""
        return [float(h["seconds"]) for h in self.iterations if "seconds" in h]

    def cpu_seconds(self) -> list[float] | None:
        """Each iteration's CPU seconds; None when an iteration lacks them."""
        if not all("cpu_seconds" in h for h in self.iterations):
            return None
        return [float(h["cpu_seconds"]) for h in self.iterations]

    def trainer_seconds(self) -> tuple[float, float | None]:
        """The trainer's own time, start and iterations, wall and CPU (validation and
        data loading are not in the rows). CPU is None when there is no iteration or
        one lacks it; a start timed without CPU counts its wall seconds there."""
        wall = sum(float(h.get("seconds", 0.0)) for h in self.rows)  # row order
        cpu = self.cpu_seconds()
        if not self.iterations or cpu is None:
            return wall, None
        total = sum(cpu)
        start = self.start
        if "seconds" in start:  # a timed start (MM, SGD) is the algorithm's work too
            total += float(start.get("cpu_seconds", start["seconds"]))
        return wall, total


def changed_settings(run: str | Path, overrides: Sequence[str]) -> list[str]:
    """The model settings in which a finished run's saved config (``.hydra/config.yaml``)
    differs from what the same overrides give today (a default changed since), [] when
    none does or the run saved no config."""
    saved = Path(run) / SAVED_CONFIG
    if not saved.exists():
        return []
    now = compose_config([o for o in overrides if not o.startswith("hydra.")])
    old = OmegaConf.to_container(OmegaConf.load(saved).model, resolve=True)
    new = OmegaConf.to_container(now.model, resolve=True)
    return sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))


# --- the experiments' rows ------------------------------------------------------------


def experiment_names() -> list[str]:
    """The experiments defined in gomove/configs/experiment/*.yaml."""
    folder = resources.files("gomove.configs") / EXPERIMENTS
    return sorted(
        p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")
    )


def load_experiment(name: str) -> DictConfig:
    """gomove/configs/experiment/NAME.yaml: an experiment's rows (its systems and their
    train.py overrides). A clear error naming the known experiments otherwise."""
    path = resources.files("gomove.configs") / EXPERIMENTS / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(experiment_names()) or "none"
        raise ValueError(
            f"unknown experiment {name!r}: no gomove/configs/{EXPERIMENTS}/{name}.yaml; "
            f"known experiments: {known}"
        )
    cfg = OmegaConf.create(path.read_text())
    if not isinstance(cfg, DictConfig):
        raise ValueError(f"gomove/configs/{EXPERIMENTS}/{name}.yaml: not a mapping")
    return cfg
