"""Predictor: a trained model's move probabilities on one position, for any model kind.

Terms:
- prediction: the candidates of one position (every legal move of the player
  to move, superko as the model's features were extracted, then pass) and the
  model's probability of each, from the softmax over them.
- one code path: the checkpoint's FeatureExtractor fills the position's levels
  (FeatureExtractor.position), the registry maps them to global indices and
  the model scores them with ``log_probs``, the same call training and the
  evaluation make, so every registered model (gomove.train.trainers.TRAINERS)
  predicts here unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from gomove import pretrained
from gomove.board.board import BLACK, SIZE, WHITE, Board
from gomove.board.coords import PASS, from_loc, loc_to_gtp
from gomove.data.extractor import FeatureExtractor
from gomove.models import MoveModel
from gomove.models.checkpoint import load_checkpoint
from gomove.play.boardplot import draw_board, new_figure, save_figure


@dataclass(frozen=True)
class Prediction:
    """locs int64[n] (pass last) and their probabilities float64[n], in candidate order."""

    locs: np.ndarray
    probs: np.ndarray
    size: int

    def order(self) -> np.ndarray:
        """Candidate indices from the most to the least probable (ties by loc order)."""
        return np.argsort(-self.probs, kind="stable")

    def top(self, k: int) -> list[tuple[str, float]]:
        """The k most probable moves as (GTP vertex, probability)."""
        return [
            (loc_to_gtp(int(self.locs[j]), self.size), float(self.probs[j]))
            for j in self.order()[:k]
        ]

    def rank_of(self, loc: int) -> int | None:
        """1-based rank of the move at loc (ties counted pessimistically), None when it is
        not a candidate (an illegal move)."""
        hit = np.nonzero(self.locs == loc)[0]
        if len(hit) == 0:
            return None
        return int((self.probs >= self.probs[hit[0]]).sum())

    def prob_of(self, loc: int) -> float:
        hit = np.nonzero(self.locs == loc)[0]
        return float(self.probs[hit[0]]) if len(hit) else 0.0


class Predictor:
    """A model and the features it was trained on, ready to score positions."""

    def __init__(self, model: MoveModel, extractor: FeatureExtractor, name: str = "model"):
        self.model = model
        self.extractor = extractor
        self.registry = extractor.registry
        self.name = name
        if model.n_features != self.registry.n_features:
            raise ValueError(
                f"{name}: the model has {model.n_features} features but its registry "
                f"{self.registry.n_features}"
            )

    @classmethod
    def from_checkpoint(cls, path: str | Path, name: str | None = None) -> Predictor:
        """From a run's model.pt or a packed .npz (any model kind; a clear error when the
        file is not one); name: how messages call it (default: its kind and path)."""
        return cls.from_state(load_checkpoint(path), name or None, path)

    @classmethod
    def from_state(cls, state: dict, name: str | None, path: str | Path) -> Predictor:
        """From load_checkpoint's dict of the file at path."""
        module = state["module"]
        if isinstance(module, torch.nn.Module):
            module.eval()
        return cls(module, state["extractor"], name=name or f"{state['model_name']} ({path})")

    @classmethod
    def default(cls) -> Predictor:
        """The full model shipped with gomove (gomove.pretrained; its card: docs/model-card.md)."""
        path = pretrained.MODEL
        if not path.is_file():
            raise FileNotFoundError(pretrained.missing(path))
        state = load_checkpoint(path)
        name = pretrained.describe(state["model_name"], state["source"])
        return cls.from_state(state, name, path)

    def features(self, board: Board, to_move: int) -> tuple[np.ndarray, torch.Tensor]:
        """(locs int64[n], feat LongTensor[1, n, G]) of the position, as a batch of one."""
        if to_move not in (BLACK, WHITE):
            raise ValueError(f"to_move must be BLACK or WHITE, not {to_move}")
        locs, levels = self.extractor.position(board, to_move)
        feat = self.registry.global_indices(levels)
        return locs, torch.from_numpy(feat).unsqueeze(0)

    def log_probs(self, board: Board, to_move: int) -> tuple[np.ndarray, np.ndarray]:
        """(locs, log-probability float64[n]) of every candidate."""
        locs, feat = self.features(board, to_move)
        mask = torch.ones(feat.shape[:2], dtype=torch.bool)
        with torch.no_grad():
            lp = self.model.log_probs(feat, mask)[0]
        return locs, lp.double().numpy()

    def predict(self, board: Board, to_move: int) -> Prediction:
        locs, lp = self.log_probs(board, to_move)
        p = np.exp(lp - lp.max())
        return Prediction(locs, p / p.sum(), int(board.info[SIZE]))

    def probs(self, board: Board, to_move: int) -> dict[int, float]:
        """{loc: probability} over the legal moves and pass (PASS = -1)."""
        pred = self.predict(board, to_move)
        return {int(loc): float(p) for loc, p in zip(pred.locs, pred.probs, strict=True)}


def probability_grid(pred: Prediction) -> np.ndarray:
    """float64[size, size] (sgfmill row, col): each legal point's probability, NaN elsewhere."""
    grid = np.full((pred.size, pred.size), np.nan)
    for loc, p in zip(pred.locs, pred.probs, strict=True):
        if loc != PASS:
            r, c = from_loc(int(loc), pred.size)
            grid[r, c] = p
    return grid


def plot_prediction(
    board: Board,
    to_move: int,
    pred: Prediction,
    path: str | Path,
    title: str = "",
    expert: int | None = None,
    label_top: int = 10,
) -> Path:
    """A PNG of the board shaded by move probability (log scale), the label_top best moves
    numbered with their percentages and the expert's move ringed with its rank."""
    size = pred.size
    fig, ax = new_figure()
    grid = probability_grid(pred)
    floor = 1e-4
    im = ax.imshow(
        np.log10(np.clip(grid, floor, 1.0)),
        cmap="YlOrRd",
        vmin=np.log10(floor),
        vmax=0.0,
        origin="lower",
        extent=(-0.5, size - 0.5, -0.5, size - 0.5),
        alpha=0.9,
    )
    draw_board(ax, board)
    for k, j in enumerate(pred.order()[:label_top], 1):
        loc = int(pred.locs[j])
        if loc == PASS:
            continue
        r, c = from_loc(loc, size)
        ax.text(c, r, f"{100 * pred.probs[j]:.0f}" if pred.probs[j] >= 0.01 else f"{k}",
                ha="center", va="center", fontsize=max(6, 170 // size), zorder=3,
                color="black", weight="bold")  # fmt: skip
    lines = [title] if title else []
    side = "black" if to_move == BLACK else "white"
    head = f"{side} to move; pass {100 * pred.prob_of(PASS):.1f}%"
    if expert is not None:
        rank = pred.rank_of(expert)
        vertex = loc_to_gtp(expert, size)
        if expert != PASS:
            r, c = from_loc(expert, size)
            ax.scatter([c], [r], s=(330 / size) ** 2, facecolors="none", edgecolors="blue",
                       linewidths=2.5, zorder=4)  # fmt: skip
        head += (
            f"; expert {vertex}: rank {rank}, p = {pred.prob_of(expert):.3f}"
            if rank is not None
            else f"; expert {vertex}: not a candidate"
        )
    lines.append(head)
    ax.set_title("\n".join(lines), fontsize=9)
    cb = fig.colorbar(im, ax=ax, fraction=0.046, label="move probability")
    ticks = [-4, -3, -2, -1, 0]
    cb.set_ticks(ticks, labels=["<0.01%", "0.1%", "1%", "10%", "100%"])
    return save_figure(fig, path)
