"""``gomove train`` (and ``python train.py``): train a model as the Hydra config says.

    gomove train model=mm data=tygem [key=value ...]       # a move-prediction model
    gomove train model=territory data=tygem                 # Stern's territory CRF
    gomove train model=balance model.labels=labels.jsonl    # simulation balancing

One Hydra tree for every trainer (gomove/configs; the model group picks the trainer of
gomove.train.trainers.TRAINERS). The configs ship inside the package, so this works
from an installed gomove as well as from a checkout.
"""

from __future__ import annotations

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from gomove.train.trainers import register, run

register()


@hydra.main(version_base="1.3", config_path="../configs", config_name="config")
def main(cfg: DictConfig) -> float | None:
    metrics = run(cfg, HydraConfig.get().runtime.output_dir)
    return metrics.get("top1")  # what a Hydra sweeper optimizes, for move models


if __name__ == "__main__":
    main()
