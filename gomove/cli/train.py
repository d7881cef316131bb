"""``gomove train`` (and ``python train.py``): train and evaluate a model as the Hydra config says.

    gomove train model=mm data=tygem [key=value ...]

The configs ship inside the package (gomove/configs), so this works from an
installed gomove as well as from a checkout.
"""

from __future__ import annotations

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from gomove.experiment.run import run
from gomove.train.specs import register

register()


@hydra.main(version_base="1.3", config_path="../configs", config_name="config")
def main(cfg: DictConfig) -> float:
    metrics = run(cfg, HydraConfig.get().runtime.output_dir)
    return metrics["top1"]


if __name__ == "__main__":
    main()
