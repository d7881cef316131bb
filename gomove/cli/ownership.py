"""``gomove ownership GAME.sgf|ARCHIVE [--game N] [--move M]``: an ownership map as a PNG.

gomove ownership GAME.sgf --move 120 --playouts 1000 --out own.png
gomove ownership ARCHIVE.zip --game 3 --move 150 --policy RUN/policy.npz
gomove ownership GAME.sgf --move 120 --method crf             # the shipped territory CRF
gomove ownership GAME.sgf --move 120 --territory RUN/crf.pt --sweeps 500

--method playouts (the default) runs playouts that follow the shipped light
policy unless --policy names another (a policy.npz of train.py features=light)
or none (uniform playouts); --method crf asks Stern's territory CRF (--territory:
a crf.pt of gomove territory train, the shipped one by default), --sweeps
Swendsen-Wang sweeps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gomove.board.replay import board_at
from gomove.cli import doc_parser
from gomove.cli.model_args import (
    add_model_args,
    add_territory_args,
    load_policy,
    policy_name,
    territory_model,
    territory_name,
)
from gomove.models.territory.crf import SWEEPS
from gomove.play.ownership import crf_ownership, ownership, plot_ownership
from gomove.reading.games import load_game


def main(argv: list[str] | None = None) -> None:
    ap = doc_parser("gomove ownership", __doc__)
    ap.add_argument("sgf", help="an SGF file, or an archive / folder of them (see --game)")
    ap.add_argument("--game", type=int, default=0, help="which game of an archive (0-based)")
    ap.add_argument("--move", type=int, default=None, help="before this move (default: the end)")
    ap.add_argument("--playouts", type=int, default=1000)
    ap.add_argument("--sweeps", type=int, default=SWEEPS, help="the crf method's sweeps")
    ap.add_argument("--komi", type=float, default=None, help="default: the game's")
    ap.add_argument("--seed", type=int, default=0)
    add_model_args(ap, model=False)
    add_territory_args(ap, flag="--method")
    ap.add_argument("--out", default="ownership.png")
    args = ap.parse_args(argv)
    path = Path(args.sgf)
    try:
        game = load_game(path, args.game)
        crf = territory_model(args.ownership, args.territory)
        policy = load_policy(args.policy) if crf is None else None
        board, to_move = board_at(game, args.move)
        komi = game.komi if args.komi is None else args.komi
        if crf is None:
            own = ownership(board, to_move, args.playouts, komi, args.seed, policy=policy)
        else:
            own = crf_ownership(board, to_move, komi, crf, args.sweeps, args.seed)
    except (OSError, ValueError) as e:
        raise SystemExit(f"gomove ownership: {e}") from None
    where = "end" if args.move is None else f"move {args.move}"
    plot_ownership(board, own, args.out, title=f"{path.name}, {where}")
    source = policy_name(args.policy) if crf is None else territory_name(args.territory)
    dame = np.clip(1.0 - own.black - own.white, 0.0, 1.0)
    print(
        f"{args.out}: {own.describe()} ({source}), "
        f"mean score {own.mean_score:+.2f} +- {own.score_stderr:.2f} (komi {komi}); "
        f"points mostly black {int((own.black > 0.5).sum())}, "
        f"mostly white {int((own.white > 0.5).sum())}, "
        f"mean dame share {dame.mean():.3f}"
    )


if __name__ == "__main__":
    main()
