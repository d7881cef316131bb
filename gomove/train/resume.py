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
- spent (``Spent``): what a run has cost over its attempts up to its last saved
  state (training seconds, the first attempt's data seconds, the peak memory),
  saved beside every state, so that a run resumed over several sittings reports
  its whole cost and not only its last attempt's. The work of a killed attempt
  after its last save is redone, so it is not counted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from gomove.atomic import atomic_write

log = logging.getLogger(__name__)

TRAIN_STATE_VERSION = 1
TRAIN_STATE = "train_state.pt"  # in a run directory, for resume=true
IGNORED = ("resume", "progress", "threads", "data.workers", "save_minutes")


@dataclass(frozen=True)
class Spent:
    """A run's cost over its attempts up to a saved state (``known``: False for a state
    saved before states carried it, whose earlier attempts' cost is lost)."""

    attempts: int = 0
    train_seconds: float = 0.0
    data_seconds: float | None = None  # the first attempt's (harvest and extraction)
    peak_anon_mb: float | None = None
    known: bool = True

    def plus(self, train_seconds: float, data_seconds: float | None,
             peak_anon_mb: float | None) -> Spent:  # fmt: skip
        """This cost and one more attempt's."""
        peaks = [m for m in (self.peak_anon_mb, peak_anon_mb) if m is not None]
        return Spent(
            attempts=self.attempts + 1,
            train_seconds=self.train_seconds + train_seconds,
            data_seconds=self.data_seconds if self.attempts else data_seconds,
            peak_anon_mb=max(peaks) if peaks else None,
            known=self.known,
        )


@dataclass
class Resume:
    """A run's train-state file; with ``resume``, ``load`` continues from it.

    config: the run's config as a plain dict (compared on load).
    data_seconds, peak_anon_mb: this attempt's data time and its memory so far (a
    callable: gomove.memory.AnonPeak's reading), counted in ``spent``.
    within_seconds: a trainer whose pass can stop at a chunk's end (FBT and LFR over
    data read in chunks) saves there too once this long has passed since the last save
    (``due``), so a kill loses minutes, not an epoch; None: after each epoch only.
    """

    path: Path
    config: dict[str, Any] = field(default_factory=dict)
    resume: bool = False
    data_seconds: float | None = None
    peak_anon_mb: Callable[[], float | None] | None = None
    within_seconds: float | None = None

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self.earlier = Spent()  # the attempts before this one (load sets it)
        self._started = self._saved = time.perf_counter()

    def due(self) -> bool:
        """Whether a save within a pass is due (``within_seconds`` since the last save)."""
        w = self.within_seconds
        return w is not None and time.perf_counter() - self._saved >= w

    def spent(self) -> Spent:
        """The run's cost so far: the earlier attempts' and this one's until now."""
        return self.earlier.plus(
            time.perf_counter() - self._started, self.data_seconds,
            self.peak_anon_mb() if self.peak_anon_mb else None,
        )  # fmt: skip

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
        if "spent" in saved:
            self.earlier = Spent(**saved["spent"])
        else:
            log.warning("resume: %s does not say what its earlier attempts cost; the "
                        "figures count this attempt alone", self.path)  # fmt: skip
            self.earlier = Spent(attempts=1, known=False)
        e = self.earlier
        log.info("resume: continuing from %s (attempt %d, %.0f s of training before)",
                 self.path, e.attempts + 1, e.train_seconds)  # fmt: skip
        return saved["state"]

    def save(self, state: dict[str, Any]) -> None:
        """Replace the file by state, the run config and what the run has cost, atomically."""
        saved = {"version": TRAIN_STATE_VERSION, "config": self.config, "state": state,
                 "spent": asdict(self.spent())}  # fmt: skip
        atomic_write(self.path, lambda f: torch.save(saved, f))
        self._saved = time.perf_counter()

    def side_file(self, name: str) -> Path:
        """A file of the run's own beside the state (``<state file>.<name>``: MM's
        trail of updates), which the state names when it relies on it."""
        return self.path.with_name(f"{self.path.name}.{name}")

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)

    def whole_cost(self, seconds: float, data_seconds: float | None,
                   peak_anon_mb: float | None, seconds_key: str = "train_seconds",
                   ) -> dict[str, Any]:  # fmt: skip
        """A run's metrics of its cost: this attempt's figures (``seconds`` under
        ``seconds_key``, ``peak_anon_mb``) and ``attempts``; resumed, the sums over all
        its attempts in their place, this attempt's under ``this_attempt``, the first
        attempt's data seconds as ``first_data_seconds`` and ``spent_known``."""
        own = {seconds_key: seconds, "peak_anon_mb": peak_anon_mb}
        if not self.earlier.attempts:
            return {**own, "attempts": 1}
        spent = self.earlier.plus(seconds, data_seconds, peak_anon_mb)
        return {seconds_key: spent.train_seconds, "peak_anon_mb": spent.peak_anon_mb,
                "attempts": spent.attempts, "this_attempt": own,
                "first_data_seconds": spent.data_seconds, "spent_known": spent.known}  # fmt: skip


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
