"""Train states: what a trainer saves after every iteration or epoch to resume after a crash.

Terms:
- train state: a trainer's own dict of everything its loop carries
  (gomove.train.mm.loop: log-gammas, iteration, history, the greedy schedule's
  gains, the statistics of the next update, the trail of updates;
  gomove.train.sgd.loop: parameters, optimizer and RNG states, epoch, history),
  written whole by one atomic rename (gomove.atomic), so a kill at any moment
  leaves the last complete state.
- run config: the resolved config of the run, a plain dict, saved with the
  state. A state saved under another config would not continue the same run,
  so ``load`` refuses it; the keys of IGNORED (how a run is watched or how
  many processes extract, not what it computes) may differ.
- ``Resume``: where a run's train state lives and whether to continue from
  it (the top-level ``resume`` key); the trainers take one as ``checkpoint``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from gomove.atomic import atomic_write

log = logging.getLogger(__name__)

TRAIN_STATE_VERSION = 1
TRAIN_STATE = "train_state.pt"  # in a run directory, for resume=true
IGNORED = ("resume", "progress", "threads", "data.workers")


@dataclass
class Resume:
    """A run's train-state file; with ``resume``, ``load`` continues from it.

    config: the run's config as a plain dict (compared on load).
    """

    path: Path
    config: dict[str, Any] = field(default_factory=dict)
    resume: bool = False

    def __post_init__(self) -> None:
        self.path = Path(self.path)

    def load(self) -> dict[str, Any] | None:
        """The saved train state to continue from, or None to start fresh.

        Raises ValueError when the state was saved under another config.
        """
        if not self.resume:
            return None
        if not self.path.exists():
            log.info("resume: no train state at %s; starting fresh", self.path)
            return None
        saved = torch.load(self.path, map_location="cpu", weights_only=False)
        if saved.get("version") != TRAIN_STATE_VERSION:
            raise ValueError(
                f"{self.path}: train state version {saved.get('version')}, "
                f"expected {TRAIN_STATE_VERSION}; delete it to start fresh"
            )
        diff = config_diff(saved["config"], self.config)
        if diff:
            raise ValueError(
                f"{self.path}: saved by a run of another config ({'; '.join(diff)}); "
                "resume with the same config or use a new run directory"
            )
        log.info("resume: continuing from %s", self.path)
        return saved["state"]

    def save(self, state: dict[str, Any]) -> None:
        """Replace the file by state and the run config, atomically."""
        saved = {"version": TRAIN_STATE_VERSION, "config": self.config, "state": state}
        atomic_write(self.path, lambda f: torch.save(saved, f))

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def config_diff(saved: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """'key: saved A, now B' for every dotted key whose values differ (IGNORED apart)."""
    a, b = _flatten(saved), _flatten(now)
    return [
        f"{key}: saved {a.get(key)!r}, now {b.get(key)!r}"
        for key in sorted(a.keys() | b.keys())
        if key not in IGNORED and a.get(key) != b.get(key)
    ]


def _flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in d.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out |= _flatten(value, name + ".")
        else:
            out[name] = value
    return out
