"""The ``territory`` config group of ``gomove territory train`` (gomove/configs/territory.yaml)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from gomove.train.config import ENGINES, DataConfig

METHODS = ("ml", "pl", "independent")
CHAINS = ("persistent", "labels")


@dataclass
class TerritoryConfig:
    """What the CRF learns and how (gomove.train.territory.fit). The defaults are the
    recipe of the shipped model, chosen on the validation month (docs/territory.md):
    the rmc16 features (16 rule playouts a position beside the static reading), fields
    only, by their exact likelihood. The joint models (ml, pl) measure worse on each
    point's owner: longer pseudo-likelihood training, or faster ML, overfits
    the couplings and the model magnetizes (whole regions flip together and the
    scores go wild); their best recipe was a few steps of pseudo-likelihood, then
    persistent ML at lr 0.005 (``territory.method=ml territory.features=wide``).

    features: "stern", "rich", "wide", "mc8", "mc16", "mc32" (uniform playouts), or
        "pmc4", "pmc6", "pmc8", "pmc12" (pattern-policy playouts), "rmc8", "rmc12",
        "rmc16" (rule playouts, gomove.playout.rules)
        (gomove.models.territory.features).
    policy: the pmc features' playout policy, a policy.npz (null: the shipped light
        policy); the model keeps a copy of its gammas.
    method: "ml", maximum likelihood, the model's statistics estimated by
        ``sweeps`` Swendsen-Wang sweeps a step on one persistent chain per
        training position; "pl", pseudo-likelihood (exact gradient, no sampling); or
        "independent", the couplings held at zero, so that the likelihood is exact
        (logistic regression on the fields) and a query needs no sampling.
    pl_epochs: ml starts from this many pseudo-likelihood epochs (a cheap warm start).
    epochs, batch_size (positions a step), lr (Adam), l2 (weight of the squared
        parameters in the mean loss).
    every: keep every n-th position of each labelled game for training (neighbouring
        positions differ by a stone and share their labels).
    chains: "persistent", each training position's chain continues where its last
        visit left it (persistent contrastive divergence), or "labels", every step
        starts the chains at the positions' labels (contrastive divergence, CD-sweeps:
        biased, but it keeps the model near the data when the persistent chains lag).
    engine: where ml's sweeps run: "auto" (compiled on the CPU, torch on another
        device), "numba" (CPU only) or "torch" (any device: the CUDA path, checkable
        on the CPU).
    eval_sweeps: Swendsen-Wang sweeps a test position is estimated with.
    max_eval_positions: test positions of the per-epoch check (TensorBoard).
    judge_playouts: the dead strings' judge (gomove.models.territory.judge), fitted
        after the CRF on the last positions of the training games, reads this many
        uniform playouts (0: no judge; counting then judges a string by the CRF's
        mean map). On the validation month (its 285 labelled games) 256 judged best:
        within 2 points of the count in 94.4% of the games from their last position,
        against 93.7% (64, 128), 89.8% (32), 84.2% (16), 80.4% without a judge.
    """

    features: str = "rmc16"
    policy: str | None = None
    method: str = "independent"
    pl_epochs: int = 2
    epochs: int = 3
    batch_size: int = 256
    lr: float = 0.02
    l2: float = 1e-4
    sweeps: int = 5
    chains: str = "persistent"
    engine: str = "auto"
    every: int = 16
    eval_sweeps: int = 100
    max_eval_positions: int = 300
    judge_playouts: int = 256
    seed: int = 0

    def validate(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"territory.method must be one of {METHODS}, not {self.method!r}")
        if (
            min(self.epochs, self.batch_size, self.every, self.eval_sweeps) < 1
            or self.pl_epochs < 0
        ):
            raise ValueError("territory: epochs, batch_size, every and eval_sweeps must be >= 1")
        if self.chains not in CHAINS:
            raise ValueError(f"territory.chains must be one of {CHAINS}, not {self.chains!r}")
        if self.engine not in ENGINES:
            raise ValueError(f"territory.engine must be one of {ENGINES}, not {self.engine!r}")
        if self.judge_playouts < 0:
            raise ValueError("territory.judge_playouts must be >= 0 (0: no judge)")
        if self.method == "ml" and self.sweeps < 1:
            raise ValueError("territory.sweeps must be >= 1 for method=ml")


@dataclass
class TerritoryRunConfig:
    """The whole config of ``gomove territory train``."""

    data: DataConfig = MISSING
    territory: TerritoryConfig = field(default_factory=TerritoryConfig)
    seed: int = 0
    device: str = "auto"
    progress: bool = True
    resume: bool = False
    threads: Any = None


def register() -> None:
    """The schema of gomove/configs/territory.yaml (its data group is train.py's)."""
    ConfigStore.instance().store(name="base_territory", node=TerritoryRunConfig)
