"""``gomove balance``: simulation balancing of a playout policy (Huang, Coulom and Lin 2010).

Two steps, each resumable:

gomove balance label GAMES... --model RUN/model.pt --policy RUN_LIGHT/policy.npz \\
    --per-game 1 --sims 16000 --workers 2 --out labels.jsonl
gomove train model=balance model.policy=RUN_LIGHT/policy.npz model.labels=labels.jsonl \\
    hydra.run.dir=RUN_SB

``label`` searches positions drawn from the games (SGF files, or folders
searched for them) and writes each one's win rate for Black; with
``--engine "pachi -t =20000 threads=1"`` another program labels them
(any engine that answers ``lz-genmove_analyze``). ``gomove train model=balance``
(gomove.train.balance.run) moves the policy's gammas so that its playouts' mean
outcome matches those values, holding out a share of the games (``model.val``) to
measure the playouts' squared error before and after, and writes RUN_SB/policy.npz
(after every epoch), metrics.json and error.png. ``gomove balance train --policy P
--labels L --out RUN_SB`` is an alias of it, its options the model group's fields.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gomove.cli import doc_parser
from gomove.cli import train as train_cli
from gomove.evaluate.match import engine_command
from gomove.play.labelling import label_positions, sample_positions

# the alias's options -> the fields of the balance model group (gomove.train.schemas)
TRAIN_FIELDS = ("policy", "labels", "val", "epochs", "lr", "clip", "value_playouts",
                "grad_playouts", "eval_playouts")  # fmt: skip


def _label(args: argparse.Namespace) -> None:
    try:
        engine = engine_command(args.engine) if args.engine else None
    except ValueError as e:
        raise SystemExit(f"gomove balance: --engine {e}") from None
    if engine is None and not (args.model and args.policy):
        raise SystemExit("gomove balance: label needs --model and --policy, or --engine")
    for path in (args.model, args.policy) if engine is None else ():
        if not Path(path).is_file():
            raise SystemExit(f"gomove balance: {path}: no such file")
    jobs, skipped = sample_positions(args.games, args.per_game, args.seed)
    if skipped:
        print(f"skipped {skipped} files that do not read as SGF games")
    if not jobs:
        raise SystemExit("gomove balance: no positions: no game has enough moves")
    labels = label_positions(jobs, args.out, args.model, args.policy, args.sims,
                             args.workers, args.seed, engine=engine)  # fmt: skip
    print(f"{args.out}: {len(labels)} labelled positions")


def _train(args: argparse.Namespace) -> None:
    """``gomove balance train``: ``gomove train model=balance`` with the options as
    overrides, said on stderr."""
    given = [k for k in TRAIN_FIELDS if getattr(args, k) is not None]
    overrides = [f"model.{k}={getattr(args, k)}" for k in given]
    overrides += [f"seed={args.seed}"] if args.seed is not None else []
    overrides += [f"hydra.run.dir={args.out}"]
    print("gomove balance train is an alias: running gomove train model=balance "
          + " ".join(overrides), file=sys.stderr)  # fmt: skip
    sys.argv = ["gomove train", "model=balance", *overrides]
    train_cli.main()


def main(argv: list[str] | None = None) -> None:
    ap = doc_parser("gomove balance", __doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    lab = sub.add_parser("label", help="label positions of games by the search")
    lab.add_argument("games", nargs="+", help="SGF files, or folders of them")
    lab.add_argument("--model", help="model.pt (progressive widening)")
    lab.add_argument("--policy", help="policy.npz (the playouts)")
    lab.add_argument("--engine", help="or label by this GTP engine command's "
                     "lz-genmove_analyze (e.g. \"pachi -t =20000 threads=1\")")  # fmt: skip
    lab.add_argument("--per-game", type=int, default=1, help="positions drawn per game")
    lab.add_argument("--sims", type=int, default=16000, help="simulations per position")
    lab.add_argument("--workers", type=int, default=1)
    lab.add_argument("--seed", type=int, default=0)
    lab.add_argument("--out", required=True, help="labels.jsonl (extended when present)")
    tr = sub.add_parser("train", help="an alias of gomove train model=balance (its model.* "
                        "fields; unset: the model group's defaults)")  # fmt: skip
    tr.add_argument("--policy", required=True, help="the policy.npz to start from")
    tr.add_argument("--labels", required=True, help="labels.jsonl of `label`")
    tr.add_argument("--out", required=True, help="folder for policy.npz and the metrics")
    tr.add_argument("--val", type=float, help="share of games held out")
    tr.add_argument("--epochs", type=int)
    tr.add_argument("--lr", type=float)
    tr.add_argument("--clip", type=float)
    tr.add_argument("--value-playouts", type=int)
    tr.add_argument("--grad-playouts", type=int)
    tr.add_argument("--eval-playouts", type=int)
    tr.add_argument("--seed", type=int)
    args = ap.parse_args(argv)
    (_label if args.command == "label" else _train)(args)


if __name__ == "__main__":
    main()
