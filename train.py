"""Train a move-prediction model: `python train.py model=mm [data=tygem] [key=value ...]`."""

from __future__ import annotations

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from gomove.train.config import register
from gomove.train.run import run

register()


@hydra.main(version_base="1.3", config_path="configs", config_name="config")
def main(cfg: DictConfig) -> float:
    metrics = run(cfg, HydraConfig.get().runtime.output_dir)
    return metrics["top1"]


if __name__ == "__main__":
    main()
