"""Ownership maps: each point's probability of ending as black's, estimated by playouts.

Stern et al.'s territory prediction, done by Monte Carlo: from a position, n
playouts (gomove.play.playout) are run to the end and scored by area; a
point's black ownership is the fraction of them in which it ends black (a
black stone, or an empty point only black stones touch). 1 - P(black) -
P(white) is the share of games where it was dame.

    python -m gomove.play.ownership GAME.sgf --move 120 --playouts 1000 --out own.png
    python -m gomove.play.ownership ARCHIVE.zip --game 3 --move 150

Terms:
- policy: uniform playouts by default, or a trained light pattern policy
  (``--policy policy.npz``, gomove.play.policy).
- ``OwnershipMap``: black[size, size], white[size, size] (probabilities, sgfmill
  (row, col) order with row 0 at the bottom), the playouts' mean score and its
  standard error (black minus white minus komi), n, the colour to move.
"""

from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gomove.board.board import BLACK, SIZE, WHITE, Board, play
from gomove.board.coords import from_loc
from gomove.data.replay import game_arrays, start_board
from gomove.play.playout import run_playouts
from gomove.play.policy import PatternPolicy


@dataclass(frozen=True)
class OwnershipMap:
    black: np.ndarray  # float64[size, size]
    white: np.ndarray  # float64[size, size]
    mean_score: float
    score_stderr: float
    n: int
    to_move: int

    @property
    def size(self) -> int:
        return self.black.shape[0]

    def expected_territory(self) -> float:
        """Expected black minus white area (no komi): sum over points of P(black) - P(white)."""
        return float((self.black - self.white).sum())


def ownership(
    board: Board,
    to_move: int,
    n: int = 1000,
    komi: float = 7.5,
    seed: int = 0,
    max_moves: int | None = None,
    policy: PatternPolicy | None = None,
) -> OwnershipMap:
    """n playouts from board (unchanged) with to_move to play -> OwnershipMap.

    Uniform playouts, or the pattern policy's (gomove.play.policy) when given.
    """
    if n < 1:
        raise ValueError(f"need at least one playout, not {n}")
    play_n = run_playouts if policy is None else policy.run_playouts
    scores, counts = play_n(board, to_move, komi, n, seed, max_moves)
    return OwnershipMap(
        black=counts[BLACK] / n,
        white=counts[WHITE] / n,
        mean_score=float(scores.mean()),
        score_stderr=float(scores.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"),
        n=n,
        to_move=to_move,
    )


def board_at(game, move: int | None = None) -> tuple[Board, int]:
    """The board of a gomove.sgf.Game before its move number ``move`` (1-based; None: the end).

    Returns (board, colour to move).
    """
    ga = game_arrays(game)
    n_moves = len(ga.locs)
    stop = n_moves if move is None else move - 1
    if not 0 <= stop <= n_moves:
        raise ValueError(f"{game.source}: move must be in 1..{n_moves + 1}, not {move}")
    b = start_board(ga)
    for loc, color in zip(ga.locs[:stop], ga.colors[:stop]):
        play(b, int(loc), int(color))
    if stop < n_moves:
        to_move = int(ga.colors[stop])
    else:
        to_move = WHITE if n_moves and ga.colors[-1] == BLACK else BLACK
    return b, to_move


def stones(board: Board) -> np.ndarray:
    """int8[size, size] of EMPTY/BLACK/WHITE in sgfmill (row, col) order."""
    size = int(board.info[SIZE])
    out = np.zeros((size, size), dtype=np.int8)
    for loc in np.nonzero((board.color == BLACK) | (board.color == WHITE))[0]:
        r, c = from_loc(int(loc), size)
        out[r, c] = board.color[loc]
    return out


def plot_ownership(board: Board, own: OwnershipMap, path: str | Path, title: str = "") -> Path:
    """A PNG of the board with each point shaded by P(black) - P(white) and the stones drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    size = own.size
    fig, ax = plt.subplots(figsize=(7, 6.4))
    # +1: black surely owns it (dark), -1: white surely does (light)
    im = ax.imshow(
        own.black - own.white,
        cmap="RdBu_r",
        vmin=-1,
        vmax=1,
        origin="lower",
        extent=(-0.5, size - 0.5, -0.5, size - 0.5),
        alpha=0.85,
    )
    for i in range(size):
        ax.plot([0, size - 1], [i, i], color="k", lw=0.5, zorder=1)
        ax.plot([i, i], [0, size - 1], color="k", lw=0.5, zorder=1)
    grid = stones(board)
    for color, face in ((BLACK, "black"), (WHITE, "white")):
        rows, cols = np.nonzero(grid == color)
        ax.scatter(cols, rows, s=(230 / size) ** 2, c=face, edgecolors="black", zorder=2)
    letters = "ABCDEFGHJKLMNOPQRSTUVWXYZ"[:size]
    ax.set_xticks(range(size), list(letters))
    ax.set_yticks(range(size), [str(i + 1) for i in range(size)])
    ax.set_xlim(-0.7, size - 0.3)
    ax.set_ylim(-0.7, size - 0.3)
    ax.set_aspect("equal")
    side = "black" if own.to_move == BLACK else "white"
    ax.set_title(
        (title + "\n" if title else "")
        + f"{own.n} playouts, {side} to move: score {own.mean_score:+.1f} "
        f"(+-{own.score_stderr:.1f}), expected area B-W {own.expected_territory():+.1f}",
        fontsize=9,
    )
    fig.colorbar(im, ax=ax, fraction=0.046, label="P(black owns) - P(white owns)")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> None:
    from gomove.data.games import ReadConfig, iter_games
    from gomove.sgf import parse_game

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sgf", help="an SGF file, or an archive / folder of them (see --game)")
    ap.add_argument("--game", type=int, default=0, help="which game of an archive (0-based)")
    ap.add_argument("--move", type=int, default=None, help="before this move (default: the end)")
    ap.add_argument("--playouts", type=int, default=1000)
    ap.add_argument("--komi", type=float, default=None, help="default: the game's")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--policy", help="a policy.npz (train.py features=light); default: uniform")
    ap.add_argument("--out", default="ownership.png")
    args = ap.parse_args(argv)
    path = Path(args.sgf)
    if path.suffix.lower() == ".sgf":
        game = parse_game(path.read_bytes(), str(path))
    else:  # an archive or folder: its game number --game
        game = next(
            itertools.islice(iter_games([str(path)], ReadConfig(superko=False)), args.game, None),
            None,
        )
        if game is None:
            raise SystemExit(f"{path}: fewer than {args.game + 1} readable games")
    board, to_move = board_at(game, args.move)
    komi = game.komi if args.komi is None else args.komi
    policy = PatternPolicy.load(args.policy) if args.policy else None
    own = ownership(board, to_move, args.playouts, komi, args.seed, policy=policy)
    where = "end" if args.move is None else f"move {args.move}"
    plot_ownership(board, own, args.out, title=f"{path.name}, {where}")
    dame = np.clip(1.0 - own.black - own.white, 0.0, 1.0)
    print(
        f"{args.out}: {own.n} playouts, mean score {own.mean_score:+.2f} "
        f"+- {own.score_stderr:.2f} (komi {komi}); points mostly black "
        f"{int((own.black > 0.5).sum())}, mostly white {int((own.white > 0.5).sum())}, "
        f"mean dame share {dame.mean():.3f}"
    )


if __name__ == "__main__":
    main()
