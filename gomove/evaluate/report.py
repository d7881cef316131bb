"""The measures as people read them: a text table, metrics.json and the papers' plots (PNG)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure


def format_table(metrics: dict[str, Any]) -> str:
    """A readable plain-text summary of ``evaluate``'s output."""
    le = metrics["log_evidence"]
    inv = f" (1/{math.exp(-le):.1f})" if math.isfinite(le) else ""
    lines = [
        f"positions {metrics['n_positions']}   games {metrics['n_games']}",
        f"top-1 {metrics['top1']:.4f}   log-evidence {le:.4f}{inv}",
    ]
    if "mean_rank" in metrics:
        lines.append(
            f"mean rank {metrics['mean_rank']:.2f}   rank error {metrics['rank_error']:.4f}"
            f"   mean legal moves {metrics['mean_legal']:.1f}"
        )
    topn = metrics["topn"]
    shown = [k for k in (1, 2, 3, 5, 10, 20, 30) if k <= len(topn)]
    lines.append("top-n  " + "  ".join(f"{k}: {topn[k - 1]:.3f}" for k in shown))
    lines += ["", f"{'moves':>9} {'n':>8} {'top1':>7} {'log-ev':>8} {'rank-err':>9}"]
    for p in metrics["phase"]:
        lines.append(
            f"{p['first_move']:>4}-{p['last_move']:<4} {p['n']:>8} {p['top1']:>7.4f}"
            f" {p['log_evidence']:>8.4f} {p['rank_error']:>9.4f}"
        )
    if metrics.get("by_pattern_size"):
        lines += ["", f"{'radius':>6} {'n':>8} {'share':>7} {'top1':>7} {'rank-err':>9}"]
        for s in metrics["by_pattern_size"]:
            lines.append(
                f"{s['radius']:>6} {s['n']:>8} {s['fraction']:>7.4f} {s['top1']:>7.4f}"
                f" {s.get('rank_error', float('nan')):>9.4f}"
            )
    if metrics.get("calibration"):
        gap = metrics.get("calibration_gap")
        lines += ["", "calibration: predicted probability against the expert's frequency"
                  + (f" (largest gap {gap:.4f})" if gap is not None else "")]  # fmt: skip
        lines.append(f"{'bin':>9} {'moves':>10} {'predicted':>10} {'observed':>9}")
        for b in metrics["calibration"]:
            if b["n"]:
                lines.append(f"{b['lo']:.1f}-{b['hi']:.1f}   {b['n']:>10} "
                             f"{b['predicted']:>10.4f} {b['observed']:>9.4f}")  # fmt: skip
    return "\n".join(lines)


def plot_calibration(ax: Any, bins: list[dict[str, Any]], label: str | None = None,
                     color: str | None = None) -> None:  # fmt: skip
    """One model's calibration bins (measures.calibration) on ax, the diagonal drawn once
    by the caller; bins without moves left out."""
    kept = [b for b in bins if b["n"]]
    ax.plot([b["predicted"] for b in kept], [b["observed"] for b in kept], marker="o",
            label=label, color=color)  # fmt: skip


def calibration_axes(ax: Any, title: str) -> None:
    ax.plot([0, 1], [0, 1], color="k", lw=0.8, ls="--", label="calibrated")
    ax.set(xlabel="predicted probability of a move", ylabel="share the expert played",
           xlim=(0, 1), ylim=(0, 1), title=title)  # fmt: skip
    ax.grid(alpha=0.3)


def _save(fig: Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def write_report(metrics: dict[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """Write metrics.json, summary.txt and the papers' plots as PNGs; return name -> path.

    Plots use matplotlib's Figure directly (Agg canvas, no pyplot state), so
    this is safe without a display and in threads.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    paths["metrics"] = out / "metrics.json"
    paths["metrics"].write_text(json.dumps(metrics, indent=2))
    paths["summary"] = out / "summary.txt"
    paths["summary"].write_text(format_table(metrics) + "\n")

    topn = metrics["topn"]
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.plot(range(1, len(topn) + 1), topn, marker=".")
    ax.set(xlabel="n", ylabel="P(expert move within the best n)", ylim=(0, 1))
    ax.set_title("Cumulative rank distribution (Coulom 2007, fig. 4)")
    ax.grid(alpha=0.3)
    paths["cumulative_rank"] = _save(fig, out / "cumulative_rank.png")

    phase = metrics["phase"]
    x = [p["first_move"] for p in phase]
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.plot(x, [p["log_evidence"] for p in phase], marker="o")
    ax.set(xlabel="first move of the phase", ylabel="mean log-evidence")
    ax.set_title("Log-evidence per game phase (Coulom 2007, fig. 3)")
    ax.grid(alpha=0.3)
    paths["phase_log_evidence"] = _save(fig, out / "phase_log_evidence.png")

    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.plot(x, [p["rank_error"] for p in phase], marker="o", label="mean")
    if phase and "rank_error_median" in phase[0]:
        ax.plot(x, [p["rank_error_median"] for p in phase], ls="--", label="median")
        ax.fill_between(
            x,
            [p["rank_error_q25"] for p in phase],
            [p["rank_error_q75"] for p in phase],
            alpha=0.2,
            label="quartiles",
        )
    ax.set(xlabel="first move of the phase", ylabel="(rank - 1) / legal moves")
    ax.set_title("Rank error per game phase (Wistuba et al. 2012, fig. 7)")
    ax.legend()
    ax.grid(alpha=0.3)
    paths["phase_rank_error"] = _save(fig, out / "phase_rank_error.png")

    if metrics.get("by_pattern_size"):
        sizes = metrics["by_pattern_size"]
        r = [s["radius"] for s in sizes]
        fig = Figure(figsize=(6, 4))
        ax = fig.add_subplot()
        ax.bar([v - 0.2 for v in r], [s["top1"] for s in sizes], width=0.4, label="top-1")
        ax.bar([v + 0.2 for v in r], [s["fraction"] for s in sizes], width=0.4, label="share")
        ax.set(xlabel="radius of the matched shape (0 = none)", ylim=(0, 1))
        ax.set_title("Prediction rate by pattern size (Wistuba et al. 2012, fig. 8)")
        ax.legend()
        ax.grid(alpha=0.3, axis="y")
        paths["pattern_size_top1"] = _save(fig, out / "pattern_size_top1.png")
        if "rank_error" in sizes[0]:
            fig = Figure(figsize=(6, 4))
            ax = fig.add_subplot()
            ax.plot(r, [s["rank_error"] for s in sizes], marker="o")
            ax.set(xlabel="radius of the matched shape (0 = none)",
                   ylabel="(rank - 1) / legal moves", ylim=(0, None))  # fmt: skip
            ax.set_title("Rank error by pattern size (Stern et al. 2006)")
            ax.grid(alpha=0.3)
            paths["pattern_size_rank_error"] = _save(fig, out / "pattern_size_rank_error.png")
    if metrics.get("calibration"):
        fig = Figure(figsize=(5, 5))
        ax = fig.add_subplot()
        calibration_axes(ax, "Calibration of the move probabilities")
        plot_calibration(ax, metrics["calibration"], "model")
        ax.legend()
        paths["calibration"] = _save(fig, out / "calibration.png")
    return paths
