"""How well do playouts call the winner of real games? Uniform against pattern policy.

    python scripts/winner_by_playouts.py --policy runs/light/policy.npz
    python scripts/winner_by_playouts.py --games 100 --moves 150 --playouts 256

For each test game of the standard split (the first ``--games`` games of
2006-06 whose result names a winner, B+ or W+) and each move number of
``--moves`` the game reaches, runs ``--playouts`` playouts from the position
before that move with the game's komi, uniform and with the pattern policy,
and calls the winner by the sign of the mean area score. Prints, per move
number, the share of games each policy calls right (most of these games end
by resignation, so the result is the players' own verdict) and the mean
score, as a markdown table.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from gomove.board.replay import board_at
from gomove.playout.driver import run_playouts
from gomove.playout.policy import PatternPolicy
from gomove.reading.games import ReadConfig, iter_games

ROOT = Path(__file__).resolve().parents[1]
TEST = ROOT.parent / "shared" / "data" / "tygem-9d-2006-06.zip"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(TEST), help="games to read (default: 2006-06)")
    ap.add_argument("--games", type=int, default=500)
    ap.add_argument("--moves", type=int, nargs="+", default=[50, 100, 150, 200])
    ap.add_argument("--playouts", type=int, default=64)
    ap.add_argument("--policy", required=True, help="policy.npz of train.py features=light")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    policy = PatternPolicy.load(args.policy)
    games = [
        g
        for g in iter_games(args.data, ReadConfig(max_games=args.games))
        if g.result and g.result[:2] in ("B+", "W+")
    ]
    runners = {"uniform": run_playouts, "pattern": policy.run_playouts}
    print(f"{len(games)} games with a winner from {args.data}, {args.playouts} playouts each\n")
    print("| move | positions | black won | uniform right | pattern right "
          "| uniform mean score | pattern mean score |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    seconds = dict.fromkeys(runners, 0.0)
    board, to_move = board_at(games[0], 1)
    for runner in runners.values():  # compile before timing
        runner(board, to_move, games[0].komi, 1, 0)
    for move in args.moves:
        right = dict.fromkeys(runners, 0)
        means = {k: [] for k in runners}
        black_won = 0
        n = 0
        for i, game in enumerate(games):
            if len(game.moves) < move:
                continue
            board, to_move = board_at(game, move)
            black = game.result.startswith("B+")
            black_won += black
            n += 1
            for name, runner in runners.items():
                t = time.process_time()
                scores, _ = runner(board, to_move, game.komi, args.playouts, args.seed + i)
                seconds[name] += time.process_time() - t
                mean = float(scores.mean())
                means[name].append(mean)
                right[name] += (mean > 0) == black
        if n == 0:
            continue
        print(
            f"| {move} | {n} | {black_won / n:.1%} | {right['uniform'] / n:.1%} "
            f"| {right['pattern'] / n:.1%} | {np.mean(means['uniform']):+.1f} "
            f"| {np.mean(means['pattern']):+.1f} |"
        )
    print("\nCPU seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items()))


if __name__ == "__main__":
    main()
