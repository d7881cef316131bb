"""``gomove train model=territory``: Stern's territory CRF trained on games labelled with
their final territory, then measured on the labelled test games.

The run: labelled games (gomove.data.territory_labels) -> every ``model.every``-th
position -> the CRF's fit (gomove.train.territory.fit) -> the dead strings' judge
(gomove.train.territory.judge) -> ``crf.pt``, then the measures of
gomove.evaluate.territory_measures on the labelled games of data.test. Writes into
the run directory: ``crf.pt``, ``train_state.pt`` (for resume=true), ``metrics.json``,
``summary.txt``, ``calibration.png``, ``by_move.png`` and TensorBoard events (``tb/``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig, OmegaConf
from torch.utils.tensorboard import SummaryWriter

from gomove.atomic import atomic_write_json
from gomove.data.sources import paths
from gomove.data.territory_labels import TerritorySet, territory_dataset
from gomove.evaluate.territory_measures import (
    OwnerScores,
    counted_score,
    crf_counter,
    crf_predictor,
    format_results,
    measure,
    plot_by_move,
    plot_owner_calibration,
)
from gomove.memory import AnonPeak
from gomove.models.device import resolve_device
from gomove.models.territory.crf import TerritoryCRF
from gomove.models.territory.features import feature_set
from gomove.playout.policy import PatternPolicy
from gomove.train.context import Trainer, seed_everything
from gomove.train.resume import TRAIN_STATE, Resume
from gomove.train.territory.fit import fit, labelled_positions
from gomove.train.territory.judge import fit_judge

log = logging.getLogger(__name__)

CRF_FILE = "crf.pt"


def _dataset(data: DictConfig, which: str, max_games: Any, progress: bool) -> TerritorySet:
    return territory_dataset(
        paths(data[which]), data.cache_dir, max_games=max_games, progress=progress
    )


def run_territory(cfg: DictConfig, out_dir: str | Path, trainer: Trainer) -> dict[str, Any]:
    """The whole of ``gomove train model=territory``: returns the metrics it writes."""
    with AnonPeak() as anon:
        return _run(cfg, Path(out_dir), trainer, anon)


def _run(cfg: DictConfig, out: Path, trainer: Trainer, anon: AnonPeak) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    tcfg = trainer.model_config(cfg)
    seed_everything(tcfg.seed)
    device = resolve_device(cfg.device)
    t0 = time.time()
    train = _dataset(cfg.data, "train", cfg.data.max_games, cfg.progress)
    test = _dataset(cfg.data, "test", cfg.data.max_test_games, cfg.progress)
    data_s = time.time() - t0
    log.info("territory: train %s; test %s", train.stats, test.stats)
    if train.n_games == 0 or test.n_games == 0:
        raise SystemExit(
            "gomove train model=territory: no labelled games (none ended by counting?)"
        )
    keep = np.flatnonzero(train.move % tcfg.every == 0)
    policy = None
    if feature_set(tcfg.features).policy:
        policy = PatternPolicy.default() if tcfg.policy is None else PatternPolicy.load(tcfg.policy)
    crf = TerritoryCRF(tcfg.features, policy)
    data = labelled_positions(
        crf, train.colour[keep], train.to_move[keep], train.owner[train.game[keep]], train.size
    )
    writer = SummaryWriter(str(out / "tb"))
    check = _spread(len(test.move), tcfg.max_eval_positions)

    def on_epoch(epoch: int, record: dict[str, float]) -> None:
        writer.add_scalar("train/pl_loss", record["pl_loss"], epoch)
        scores = OwnerScores()
        predict = crf_predictor(crf, tcfg.eval_sweeps, tcfg.seed)
        for p in check:
            g = int(test.game[p])
            e, s = predict(test.colour[p], int(test.to_move[p]), test.size, float(test.komi[g]))
            komi = float(test.komi[g])
            counted = counted_score(test.colour[p], int(test.to_move[p]), test.size, komi, e)
            scores.add(e, test.owner[g], s, komi, counted)
        summary = scores.summary()
        writer.add_scalar("test/accuracy", summary["accuracy"], epoch)
        writer.add_scalar("test/mse", summary["mse"], epoch)
        writer.add_scalar("test/score_abs_err", summary["score_abs_err"], epoch)
        log.info("epoch %d: held-out owner accuracy %.4f", epoch, summary["accuracy"])

    resume = Resume(
        out / TRAIN_STATE,
        OmegaConf.to_container(cfg, resolve=True),
        bool(cfg.resume),
        data_seconds=data_s,
        peak_anon_mb=lambda: anon.peak_mb,
    )
    t_fit = time.time()
    history = fit(crf, data, tcfg, device, resume, cfg.progress, on_epoch)
    fit_s = time.time() - t_fit
    writer.close()
    if tcfg.judge_playouts:
        crf.judge = fit_judge(crf, train, tcfg.judge_playouts, cfg.progress)
    meta = {
        "features": tcfg.features,
        "policy": (tcfg.policy or "shipped") if policy is not None else None,
        "method": tcfg.method,
        "train_games": train.n_games,
        "train_positions": int(len(keep)),
        "data": paths(cfg.data.train),
        "max_games": cfg.data.max_games,
        "seed": tcfg.seed,
        "judge_playouts": tcfg.judge_playouts,
    }
    crf.save(out / CRF_FILE, meta)
    results = {
        "crf": measure(
            crf_predictor(crf, tcfg.eval_sweeps, tcfg.seed),
            test,
            progress=cfg.progress,
            desc="test",
            count=crf_counter(crf),
        )
    }
    metrics = {
        "config": asdict(tcfg),
        "train": {**train.stats, "positions_used": int(len(keep))},
        "test": test.stats,
        "history": history,
        "total_seconds": time.time() - t0,
        # fit_seconds, peak_anon_mb, attempts: over all attempts when resumed
        **resume.whole_cost(fit_s, data_s, anon.peak_mb, seconds_key="fit_seconds"),
        "results": results,
    }
    atomic_write_json(out / "metrics.json", metrics)
    table = format_results(results)
    (out / "summary.txt").write_text(table + "\n")
    plot_owner_calibration(results, out / "calibration.png")
    plot_by_move(results, out / "by_move.png")
    print(table)
    return metrics


def _spread(n: int, k: int) -> np.ndarray:
    """k indices spread evenly over range(n)."""
    return (
        np.unique(np.linspace(0, n - 1, num=min(n, k)).astype(np.int64))
        if n
        else np.zeros(0, np.int64)
    )
