"""The comparison paper's experiment in one call: train every system at every size, then
its Table I and Figures 5, 6, 7, 8 and 10, plus the log-evidence it lacks.

Wistuba, Schaefer and Platzner 2012, section IV. Each (system, training size)
is one ``train.py`` run in its own process (``OUT/runs/<system>-<games>``,
gomove.experiment.runs.launch: its memory is its own, so its peak is
measured, and one run's failure, say MM out of memory at 20,000 games, leaves
the others), on the same split, features and pattern table for every system
of a size. The figures read the runs' ``metrics.json``, ``positions.npz``
(every test position's rank) and checkpoint histories, through
gomove.experiment.runs.

Terms:
- system: a row of the comparison, a name, a label and its train.py overrides
  (gomove/configs/experiment/compare.yaml: mm, lbr, bar, pr, fbt, lfr;
  ``NAME+small`` adds Stern's small feature vector, ``features.small=true``).
- size: the number of training games (``data.max_games``).
- training time: the trainer's own time, its start pass and every iteration
  (``History.trainer_seconds``: validation and data loading excluded), per
  training game (Fig. 10): CPU time where the
  history has it (one thread per run, so single-core time that other jobs on
  a shared machine do not inflate), wall time otherwise (marked *).
- rank error: (rank - 1) / legal moves (gomove.evaluate.measures; the paper's
  rank / legal moves, shifted so that a perfect prediction is 0).
- bootstrap: games of the test set drawn with replacement; Fig. 6's intervals
  are the 2.5 and 97.5 percentiles of each system's difference to the
  baseline (compare.yaml's ``baseline``: PR), paired
  (the same draw for every system).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from gomove.atomic import atomic_write_json, atomic_write_text
from gomove.evaluate.measures import calibration
from gomove.evaluate.report import calibration_axes, plot_calibration
from gomove.experiment.runs import (
    RunFailed,
    changed_settings,
    finished,
    launch,
    load_experiment,
    read_history,
    read_metrics,
    read_positions,
)

log = logging.getLogger(__name__)

EXPERIMENT = "compare"  # gomove/configs/experiment/compare.yaml: the systems
SMALL_SUFFIX = "+small"
PHASE_LEN = 30
MAX_PHASES = 8  # Fig. 7: moves 0..239
MAX_RANK = 30


@dataclass(frozen=True)
class System:
    """A row of the comparison: its name, label and train.py overrides."""

    name: str
    label: str
    overrides: list[str]


def systems(experiment: str = EXPERIMENT) -> dict[str, System]:
    """The experiment's systems (gomove/configs/experiment/EXPERIMENT.yaml), in order."""
    cfg = load_experiment(experiment)
    return {
        name: System(name, str(s.label), [str(o) for o in s.overrides])
        for name, s in cfg.systems.items()
    }


def baseline(experiment: str = EXPERIMENT) -> str:
    """The system Fig. 6 draws the differences to."""
    return str(load_experiment(experiment).baseline)


def system(name: str, experiment: str = EXPERIMENT) -> System:
    """A system by name; ``<name>+small`` adds Stern's small features (the experiment's
    small_overrides and small_label)."""
    base = name.removesuffix(SMALL_SUFFIX)
    known = systems(experiment)
    if base not in known:
        raise ValueError(f"unknown system {name!r}; known: {', '.join(known)} (and NAME+small)")
    if base == name:
        return known[name]
    cfg = load_experiment(experiment)
    return System(
        name,
        known[base].label + str(cfg.small_label),
        known[base].overrides + [str(o) for o in cfg.small_overrides],
    )


@dataclass
class Plan:
    """What to run: systems x sizes on a data config, with extra overrides for every run.

    data: the data config group (``tygem``: the standard split; ``sample``: the
    embedded games of --quick). extra: overrides for every run. per_system:
    overrides for one system (e.g. quick settings). experiment: the
    gomove/configs/experiment file naming the systems.
    """

    out: Path
    systems: list[str]
    sizes: list[int]
    data: str = "tygem"
    extra: list[str] = field(default_factory=list)
    per_system: dict[str, list[str]] = field(default_factory=dict)
    threads: int = 1
    bootstrap: int = 1000
    seed: int = 0
    resume: bool = True
    report_only: bool = False  # train nothing: tables and figures of the finished runs
    experiment: str = EXPERIMENT


def run_dir(plan: Plan, name: str, size: int) -> Path:
    return plan.out / "runs" / f"{name}-{size}"


def train_one(plan: Plan, name: str, size: int) -> dict[str, Any] | None:
    """One train.py run in its own process; its metrics, or None when it failed (logged).
    A finished run is reused unless its model settings differ from today's."""
    out = run_dir(plan, name, size)
    overrides = [
        *system(name, plan.experiment).overrides,
        f"data={plan.data}",
        f"data.max_games={size}",
        "progress=false",
        f"threads={plan.threads}",
        *plan.extra,
        *plan.per_system.get(name.removesuffix(SMALL_SUFFIX), []),
    ]
    if plan.resume and finished(out):
        changed = changed_settings(out, overrides)
        if not changed or plan.report_only:
            if changed:
                log.warning(
                    "%s at %d games: trained with other model settings (%s) than today's",
                    name,
                    size,
                    ", ".join(changed),
                )
            log.info("%s at %d games: done before (%s)", name, size, out)
            return read_metrics(out)
        log.warning(
            "%s at %d games: the finished run had other model settings (%s): trained again",
            name,
            size,
            ", ".join(changed),
        )
    if plan.report_only:
        return None
    log.info("%s at %d games: %s", name, size, " ".join(overrides))
    t0 = time.perf_counter()
    try:
        metrics = launch(overrides, out, env={"NUMBA_NUM_THREADS": str(plan.threads)})
    except RunFailed as e:
        log.warning("%s at %d games failed (exit %d): see %s", name, size, e.returncode, e.log_path)
        return None
    log.info(
        "%s at %d games: top-1 %.4f, log-evidence %.4f, %.0f s",
        name,
        size,
        metrics["top1"],
        metrics["log_evidence"],
        time.perf_counter() - t0,
    )
    return metrics


def cumulative(rank: np.ndarray, max_rank: int = MAX_RANK) -> np.ndarray:
    """P(rank <= n) for n = 1..max_rank."""
    counts = np.bincount(np.minimum(rank, max_rank + 1) - 1, minlength=max_rank + 1)
    return np.cumsum(counts[:max_rank]) / len(rank)


def bootstrap_differences(
    ranks: dict[str, np.ndarray], game: np.ndarray, baseline: str, n_boot: int, seed: int
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each system's cumulative distribution minus the baseline's, with a 95% interval by
    resampling games (paired: one draw of games for all systems): {name: (diff, lo, hi)}."""
    games, gidx = np.unique(game, return_inverse=True)
    n_games = len(games)
    per_game_n = np.bincount(gidx, minlength=n_games).astype(np.float64)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n_games, np.full(n_games, 1.0 / n_games), size=n_boot).astype(
        np.float64
    )  # [B, games]

    def hits(rank: np.ndarray) -> np.ndarray:  # [games, n]: positions with rank <= n
        out = np.zeros((n_games, MAX_RANK))
        for n in range(1, MAX_RANK + 1):
            out[:, n - 1] = np.bincount(gidx, weights=(rank <= n), minlength=n_games)
        return out

    total = weights @ per_game_n  # [B]
    base_h = hits(ranks[baseline])
    base_boot = (weights @ base_h) / total[:, None]
    out = {}
    for name, rank in ranks.items():
        h = hits(rank)
        diff = (h.sum(0) - base_h.sum(0)) / per_game_n.sum()
        boot = (weights @ h) / total[:, None] - base_boot
        out[name] = (diff, np.percentile(boot, 2.5, axis=0), np.percentile(boot, 97.5, axis=0))
    return out


def _save(fig: Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def _colors(names: Sequence[str]) -> dict[str, str]:
    return {n: f"C{i}" for i, n in enumerate(names)}


def figures(
    plan: Plan, size: int, names: list[str], label: dict[str, str], out: Path
) -> dict[str, Path]:
    """Figures 5, 6, 7 and 8 for one training size, from the runs' positions; label:
    each system's legend."""
    pos = {n: read_positions(run_dir(plan, n, size)) for n in names}
    base = baseline(plan.experiment)
    color = _colors(names)
    paths = {}
    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    x = np.arange(1, MAX_RANK + 1)
    for n in names:
        ax.plot(x, cumulative(pos[n]["rank"]), marker=".", label=label[n], color=color[n])
    ax.set(xlabel="n", ylabel="P(expert move within the first n)", ylim=(0, 1))
    ax.set_title(f"Cumulative rank distribution, {size:,} training games (Fig. 5)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    paths["fig5"] = _save(fig, out / f"fig5_cumulative_{size}.png")

    if base in names:
        game = pos[base]["game"]
        for n in names:
            if not np.array_equal(pos[n]["game"], game):
                raise ValueError(f"{n} and {base} were tested on different positions")
        diffs = bootstrap_differences(
            {n: pos[n]["rank"] for n in names}, game, base, plan.bootstrap, plan.seed
        )
        fig = Figure(figsize=(7, 4.5))
        ax = fig.add_subplot()
        for n in names:
            if n == base:
                continue
            d, lo, hi = diffs[n]
            ax.plot(x, d, label=label[n], color=color[n])
            ax.fill_between(x, lo, hi, color=color[n], alpha=0.2)
        ax.axhline(0, color="k", lw=0.8)
        ax.set(xlabel="n", ylabel=f"difference of P(rank <= n) to {base.upper()}")
        title = f"Difference to {label[base].lower()}, 95% bootstrap CI (Fig. 6), {size:,}"
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        paths["fig6"] = _save(fig, out / f"fig6_difference_to_pr_{size}.png")

    fig = Figure(figsize=(10, 4.5))
    ax = fig.add_subplot()
    width = 0.8 / len(names)
    for i, n in enumerate(names):
        p = pos[n]
        err = (p["rank"] - 1) / p["n_legal"]
        phase = p["move"] // PHASE_LEN
        data = [err[phase == k] for k in range(MAX_PHASES)]
        keep = [k for k in range(MAX_PHASES) if len(data[k])]
        bp = ax.boxplot(
            [data[k] for k in keep],
            positions=[k + (i - (len(names) - 1) / 2) * width for k in keep],
            widths=width * 0.9,
            whis=(2.5, 97.5),
            sym=".",
            flierprops={"markersize": 1, "alpha": 0.3},
            patch_artist=True,
            manage_ticks=False,
        )
        for box in bp["boxes"]:
            box.set(facecolor=color[n], alpha=0.6)
        ax.plot([], [], color=color[n], lw=6, alpha=0.6, label=label[n])
    ax.set_xticks(range(MAX_PHASES))
    ax.set_xticklabels([f"{k * PHASE_LEN}-{(k + 1) * PHASE_LEN - 1}" for k in range(MAX_PHASES)])
    ax.set(xlabel="moves", ylabel="(rank - 1) / legal moves")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Rank error per game phase, whiskers 95% (Fig. 7), {size:,} training games")
    ax.legend(fontsize=8)
    paths["fig7"] = _save(fig, out / f"fig7_rank_error_{size}.png")

    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    ax2 = ax.twinx()
    radius = pos[names[0]]["radius"]
    radii = np.unique(radius[radius >= 0])
    share = np.array([np.mean(radius == r) for r in radii])
    ax2.bar(radii, share, color="0.85", width=0.6, label="share of positions")
    ax2.set_ylabel("share of expert moves")
    for n in names:
        hit = pos[n]["rank"] == 1
        ax.plot(
            radii,
            [hit[pos[n]["radius"] == r].mean() for r in radii],
            marker="o",
            color=color[n],
            label=label[n],
        )
    ax.set_zorder(ax2.get_zorder() + 1)
    ax.patch.set_visible(False)
    ax.set(
        xlabel="radius of the shape matched at the expert move (0 = none)",
        ylabel="prediction rate",
        ylim=(0, 1),
    )
    ax.set_title(f"Prediction rate by pattern size (Fig. 8), {size:,} training games")
    ax.legend(fontsize=8, loc="upper left")
    paths["fig8"] = _save(fig, out / f"fig8_pattern_size_{size}.png")

    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    for n in names:
        err = (pos[n]["rank"] - 1) / pos[n]["n_legal"]
        ax.plot(radii, [err[pos[n]["radius"] == r].mean() for r in radii], marker="o",
                color=color[n], label=label[n])  # fmt: skip
    ax.set(xlabel="radius of the shape matched at the expert move (0 = none)",
           ylabel="(rank - 1) / legal moves", ylim=(0, None))  # fmt: skip
    ax.set_title(f"Rank error by pattern size (Stern et al.), {size:,} training games")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    paths["rank_error_by_size"] = _save(fig, out / f"rank_error_pattern_size_{size}.png")

    have = [n for n in names if "cal_n" in pos[n]]
    if have:
        fig = Figure(figsize=(5.5, 5.5))
        ax = fig.add_subplot()
        calibration_axes(ax, f"Calibration, {size:,} training games")
        for n in have:
            bins, _ = calibration(pos[n]["cal_n"], pos[n]["cal_p"], pos[n]["log_p"])
            plot_calibration(ax, bins, label[n], color[n])
        ax.legend(fontsize=8)
        paths["calibration"] = _save(fig, out / f"calibration_{size}.png")
    return paths


def time_figure(
    table: dict[str, dict[int, dict[str, Any]]], names: list[str], label: dict[str, str], out: Path
) -> Path:
    """Fig. 10: training time per game against the training size."""
    color = _colors(names)
    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    for n in names:
        sizes = sorted(table.get(n, {}))
        if sizes:
            ax.plot(
                sizes,
                [table[n][s]["seconds_per_game"] for s in sizes],
                marker="o",
                label=label[n],
                color=color[n],
            )
    ax.set(xlabel="training games", ylabel="training seconds per game", yscale="log")
    ax.set_title("Training time per game, one core (Fig. 10)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return _save(fig, out / "fig10_time_per_game.png")


def markdown(
    table: dict[str, dict[int, dict[str, Any]]],
    names: list[str],
    label: dict[str, str],
    sizes: list[int],
    plan: Plan,
    figs: dict[int, dict[str, Path]],
    time_fig: Path,
) -> str:
    """Table I, log-evidence, time and memory tables and the figures, as markdown."""

    def cell(n: str, s: int, key: str, fmt: str) -> str:
        """One table cell; wall-clock seconds (no CPU time recorded) marked *."""
        if s not in table.get(n, {}):
            return "-"
        row = table[n][s]
        wall = key == "seconds_per_game" and not row.get("seconds_are_cpu", True)
        return fmt.format(row[key]) + ("*" if wall else "")

    def grid(title: str, key: str, fmt: str) -> list[str]:
        lines = [
            f"### {title}",
            "",
            "| system | " + " | ".join(f"{s:,}" for s in sizes) + " |",
            "|---|" + "---|" * len(sizes),
        ]
        for n in names:
            cells = [cell(n, s, key, fmt) for s in sizes]
            lines.append(f"| {label[n]} | " + " | ".join(cells) + " |")
        return lines + [""]

    lines = [
        "# Comparison of move prediction systems (Wistuba et al. 2012, section IV)",
        "",
        f"Data: `data={plan.data}`, training sizes {', '.join(f'{s:,}' for s in sizes)} games; "
        f"extra overrides: `{' '.join(plan.extra) or 'none'}`; {plan.threads} thread(s) per run.",
        "",
    ]
    lines += grid("Table I: prediction rate (test top-1) by training size", "top1_pct", "{:.2f}%")
    lines += grid(
        "Log-evidence (mean log-probability of the expert move)", "log_evidence", "{:.4f}"
    )
    lines += grid(
        "Training seconds per game (the algorithm alone, Fig. 10)", "seconds_per_game", "{:.4f}"
    )
    lines += grid("Peak memory of the run (GB, whole process)", "peak_gb", "{:.2f}")
    for size, paths in figs.items():
        lines += [f"### Figures, {size:,} training games", ""]
        lines += [f"![{k}]({p.name})" for k, p in paths.items()] + [""]
    lines += ["### Training time per game", "", f"![fig10]({time_fig.name})", ""]
    return "\n".join(lines)


def compare(plan: Plan) -> dict[str, Any]:
    """Train every system at every size (reusing finished runs), write the tables and
    figures into plan.out; return the table {system: {size: row}}."""
    # unknown names fail before any training
    label = {name: system(name, plan.experiment).label for name in plan.systems}
    plan.out.mkdir(parents=True, exist_ok=True)
    table: dict[str, dict[int, dict[str, Any]]] = {}
    for size in plan.sizes:
        for name in plan.systems:
            metrics = train_one(plan, name, size)
            if metrics is None:
                continue
            wall, cpu = read_history(run_dir(plan, name, size)).trainer_seconds()
            seconds = wall if cpu is None else cpu
            table.setdefault(name, {})[size] = {
                "top1": metrics["top1"],
                "top1_pct": 100 * metrics["top1"],
                "log_evidence": metrics["log_evidence"],
                "train_games": metrics["train_games"],
                "train_positions": metrics["train_positions"],
                "algorithm_seconds": seconds,
                "algorithm_wall_seconds": wall,
                "seconds_are_cpu": cpu is not None,
                "fit_seconds": metrics["train_seconds"],
                "seconds_per_game": seconds / metrics["train_games"],
                "peak_gb": metrics["peak_rss_mb"] / 1024,
                "test_positions": metrics["n_positions"],
            }
    names = [n for n in plan.systems if n in table]
    figs = {}
    for size in plan.sizes:
        have = [n for n in names if size in table[n]]
        if have:
            figs[size] = figures(plan, size, have, label, plan.out)
    time_fig = time_figure(table, names, label, plan.out)
    atomic_write_json(
        plan.out / "comparison.json",
        {n: {str(s): r for s, r in t.items()} for n, t in table.items()},
    )
    atomic_write_text(
        plan.out / "comparison.md",
        markdown(table, names, label, plan.sizes, plan, figs, time_fig),
    )
    return table
