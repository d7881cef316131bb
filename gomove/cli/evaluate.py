"""``gomove evaluate checkpoint=RUN/model.pt [data=...] [hydra.run.dir=DIR]``: score a saved model.

Evaluates the checkpoint on ``data.test`` (the same config groups as
gomove train) and writes metrics.json, summary.txt and the plots.
"""

from __future__ import annotations

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from gomove.evaluate.saved_model import evaluate_checkpoint
from gomove.train.trainers import register

register()


@hydra.main(version_base="1.3", config_path="../configs", config_name="config")
def main(cfg: DictConfig) -> None:
    evaluate_checkpoint(cfg, HydraConfig.get().runtime.output_dir)


if __name__ == "__main__":
    main()
