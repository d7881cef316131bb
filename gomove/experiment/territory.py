"""``gomove territory train`` and ``gomove territory compare``: Stern's territory CRF trained on
games labelled with their final territory, and measured beside the playout ownership maps.

train (``train_run``): labelled games (gomove.data.territory) -> every ``every``-th
position -> the CRF's fit (gomove.train.territory.fit) -> ``crf.pt``, then the
measures of gomove.evaluate.territory on the labelled test games. Writes into the
run directory: ``crf.pt``, ``train_state.pt`` (for resume=true), ``metrics.json``,
``summary.txt``, ``calibration.png``, ``by_move.png`` and TensorBoard events (``tb/``).

compare (``compare_methods``): the same measures for several predictors (the CRF, the
Monte-Carlo ownership at n uniform playouts, the pattern-policy playouts) on the same
positions, with the CPU time each takes a position.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from matplotlib.figure import Figure
from omegaconf import DictConfig, OmegaConf
from torch.utils.tensorboard import SummaryWriter
from tqdm.auto import tqdm

from gomove.atomic import atomic_write_json
from gomove.board.board import BLACK, WHITE, board_from_points
from gomove.data.sources import paths
from gomove.data.territory_labels import TerritorySet, territory_dataset
from gomove.evaluate.report import plot_calibration
from gomove.evaluate.territory import MOVES, Calibration, OwnerScores
from gomove.models.device import resolve_device
from gomove.models.territory.crf import TerritoryCRF
from gomove.models.territory.features import feature_set
from gomove.play.ownership import judged_score, ownership
from gomove.playout.policy import PatternPolicy
from gomove.train.resume import Resume
from gomove.train.territory.config import TerritoryConfig
from gomove.train.territory.fit import fit, labelled_positions
from gomove.train.territory.judge import fit_judge

log = logging.getLogger(__name__)

CRF_FILE = "crf.pt"
TRAIN_STATE = "train_state.pt"

# (expected owner float[N] in absolute colours, predicted score B - W - komi) of a
# position given as (signed points int8[N], to_move +1/-1, size, komi)
Predictor = Callable[[np.ndarray, int, int, float], tuple[np.ndarray, float]]
# the B - W - komi score a referee counts for a position (signed points, to_move, size,
# komi) given a predictor's expected owner float[N]
Counter = Callable[[np.ndarray, int, int, float, np.ndarray], float]


def crf_predictor(crf: TerritoryCRF, sweeps: int, seed: int = 0) -> Predictor:
    def predict(points: np.ndarray, to_move: int, size: int, komi: float):
        est = crf.estimate(points, to_move, size, komi, sweeps=sweeps, seed=seed)
        return est.expected_owner.reshape(-1), est.mean_score

    return predict


def playout_predictor(n: int, policy: PatternPolicy | None = None, seed: int = 0) -> Predictor:
    def predict(points: np.ndarray, to_move: int, size: int, komi: float):
        colour = BLACK if to_move > 0 else WHITE
        board = board_from_points(points, size, colour)
        own = ownership(board, colour, n, komi, seed, policy=policy)
        return (own.black - own.white).reshape(-1), own.mean_score

    return predict


def counted_score(
    points: np.ndarray,
    to_move: int,
    size: int,
    komi: float,
    expected: np.ndarray,
    territory: TerritoryCRF | None = None,
) -> float:
    """The B - W - komi score a referee counts with expected (P(black) - P(white),
    float[N]) as the map: judged_score, as ``final_score`` counts (the territory CRF's
    string judge decides the dead strings when given one that has it)."""
    colour = BLACK if to_move > 0 else WHITE
    board = board_from_points(points, size, colour)
    own = np.asarray(expected).reshape(size, size)
    return judged_score(board, colour, komi, own, territory)


def crf_counter(crf: TerritoryCRF) -> Counter:
    """counted_score with crf's string judge (the dead strings by the mean map without one)."""

    def count(points: np.ndarray, to_move: int, size: int, komi: float, expected: np.ndarray):
        return counted_score(points, to_move, size, komi, expected, crf)

    return count


def measure(
    predictor: Predictor,
    data: TerritorySet,
    moves: Sequence[int | str] = MOVES,
    limit: int | None = None,
    progress: bool = False,
    desc: str = "",
    count: Counter = counted_score,
) -> dict[str, Any]:
    """The measures of gomove.evaluate.territory at each move number and over all of them,
    with the CPU time a position (process time: the predictor's own work, after one
    untimed call that compiles it) and, apart, the time of count's judging.

    The predictions of a move number run back to back and the counts after them, so that
    one predictor's judge (the CRF's string judge runs playouts of its own) does not
    evict the predictor's working memory between its calls: every row is timed as it
    would run alone."""
    by_move: dict[str, Any] = {}
    total = OwnerScores()
    cal = Calibration.empty()
    if len(data):  # compile first: the first call's JIT is no position's time
        komi = float(data.komi[data.game[0]])
        e, _ = predictor(data.colour[0], int(data.to_move[0]), data.size, komi)
        count(data.colour[0], int(data.to_move[0]), data.size, komi, e)
    for at in moves:
        idx = data.at_move(at)[:limit]
        scores = OwnerScores()
        predicted = []
        for p in tqdm(idx, desc=f"{desc} move {at}", disable=not progress, leave=False):
            komi = float(data.komi[data.game[p]])
            t0 = time.process_time()
            expected, score = predictor(data.colour[p], int(data.to_move[p]), data.size, komi)
            scores.seconds += time.process_time() - t0
            predicted.append((expected, score))
        for p, (expected, score) in zip(idx, predicted, strict=True):
            g = int(data.game[p])
            komi = float(data.komi[g])
            t0 = time.process_time()
            counted = count(data.colour[p], int(data.to_move[p]), data.size, komi, expected)
            scores.count_seconds += time.process_time() - t0
            scores.add(expected, data.owner[g], score, komi, counted)
            cal.add(expected, data.owner[g])
        by_move[str(at)] = scores.summary()
        total.merge(scores)
    return {"by_move": by_move, "all": total.summary(), "calibration": cal.table()}


def plot_owner_calibration(results: dict[str, dict[str, Any]], path: Path) -> Path:
    """Observed share of black owners against the predicted P(black), one line a method."""
    fig = Figure(figsize=(5.5, 5))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    for name, res in results.items():
        plot_calibration(ax, res["calibration"], name)
    ax.set_xlabel("predicted P(black owns the point)")
    ax.set_ylabel("observed share owned by black")
    ax.set_title("Calibration of the owner probability (10 bins)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def plot_by_move(results: dict[str, dict[str, Any]], path: Path) -> Path:
    """Owner accuracy and score error at each move number, one line a method."""
    fig = Figure(figsize=(10, 4))
    ax1, ax2 = fig.subplots(1, 2)
    for name, res in results.items():
        keys = list(res["by_move"])
        ax1.plot(keys, [100 * res["by_move"][k]["accuracy"] for k in keys], marker="o", label=name)
        ax2.plot(keys, [res["by_move"][k]["score_abs_err"] for k in keys], marker="o", label=name)
    ax1.set_xlabel("move")
    ax1.set_ylabel("points whose owner is predicted (%)")
    ax2.set_xlabel("move")
    ax2.set_ylabel("|expected score - final score| (points)")
    ax1.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def format_results(results: dict[str, dict[str, Any]]) -> str:
    """A markdown table: accuracy / mse / score error / share within 2 points / ms a
    position, per method and move."""
    moves = list(next(iter(results.values()))["by_move"])
    head = "| method | measure | " + " | ".join(f"move {m}" for m in moves) + " | all |"
    lines = [head, "|" + "---|" * (len(moves) + 3)]
    for name, res in results.items():
        for key, fmt in (
            ("accuracy", "{:.1%}"),
            ("mse", "{:.3f}"),
            ("score_abs_err", "{:.1f}"),
            ("score_within_2", "{:.1%}"),
            ("counted_abs_err", "{:.1f}"),
            ("counted_within_2", "{:.1%}"),
            ("ms_per_position", "{:.1f}"),
            ("ms_per_count", "{:.1f}"),
        ):
            cells = [fmt.format(res["by_move"][m][key]) for m in moves] + [
                fmt.format(res["all"][key])
            ]
            lines.append(f"| {name} | {key} | " + " | ".join(cells) + " |")
    n = {name: res["all"]["positions"] for name, res in results.items()}
    lines.append("")
    lines.append("positions: " + ", ".join(f"{k} {v}" for k, v in n.items()))
    return "\n".join(lines)


def _dataset(data: DictConfig, which: str, max_games: Any, progress: bool) -> TerritorySet:
    return territory_dataset(
        paths(data[which]), data.cache_dir, max_games=max_games, progress=progress
    )


def train_run(cfg: DictConfig, out_dir: str | Path) -> dict[str, Any]:
    """The whole of ``gomove territory train``: returns the metrics it writes."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tcfg = TerritoryConfig(**OmegaConf.to_container(cfg.territory, resolve=True))
    tcfg.seed = int(cfg.seed)
    tcfg.validate()
    random.seed(tcfg.seed)
    np.random.seed(tcfg.seed)
    torch.manual_seed(tcfg.seed)
    device = resolve_device(cfg.device)
    t0 = time.time()
    train = _dataset(cfg.data, "train", cfg.data.max_games, cfg.progress)
    test = _dataset(cfg.data, "test", cfg.data.max_test_games, cfg.progress)
    log.info("territory: train %s; test %s", train.stats, test.stats)
    if train.n_games == 0 or test.n_games == 0:
        raise SystemExit("gomove territory train: no labelled games (none ended by counting?)")
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

    resume = Resume(out / TRAIN_STATE, OmegaConf.to_container(cfg, resolve=True), bool(cfg.resume))
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
        "fit_seconds": fit_s,
        "total_seconds": time.time() - t0,
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


def compare_methods(
    predictors: dict[str, Predictor],
    data: TerritorySet,
    out_dir: str | Path,
    limit: int | None = None,
    progress: bool = True,
    counters: dict[str, Counter] | None = None,
) -> dict[str, Any]:
    """Measure each predictor on the same positions, each counted by its counter (default
    counted_score); write results.json, results.md and plots."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = {
        name: measure(
            fn,
            data,
            limit=limit,
            progress=progress,
            desc=name,
            count=(counters or {}).get(name, counted_score),
        )  # fmt: skip
        for name, fn in predictors.items()
    }
    atomic_write_json(
        out / "results.json", {"stats": data.stats, "limit": limit, "results": results}
    )
    table = format_results(results)
    (out / "results.md").write_text(table + "\n")
    plot_owner_calibration(results, out / "calibration.png")
    plot_by_move(results, out / "by_move.png")
    return results
