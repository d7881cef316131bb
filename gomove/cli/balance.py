"""``gomove balance``: simulation balancing of a playout policy (Huang, Coulom and Lin 2010).

Two steps, each resumable:

gomove balance label GAMES... --model RUN/model.pt --policy RUN_LIGHT/policy.npz \\
    --per-game 1 --sims 16000 --workers 2 --out labels.jsonl
gomove balance train --policy RUN_LIGHT/policy.npz --labels labels.jsonl --out RUN_SB/

``label`` searches positions drawn from the games (SGF files, or folders
searched for them) and writes each one's win rate for Black; with
``--engine "pachi -t =20000 threads=1"`` another program labels them
(any engine that answers ``lz-genmove_analyze``). ``train`` moves the
policy's gammas so that its playouts' mean outcome matches those values,
holding out a share of the games (``--val``) to measure the playouts' squared
error before and after, and writes RUN_SB/policy.npz (after every epoch),
metrics.json and error.png.
"""

from __future__ import annotations

import argparse
import json
import zlib
from pathlib import Path

from matplotlib.figure import Figure

from gomove.atomic import atomic_write_json
from gomove.cli import doc_parser
from gomove.data.labels import read_labels
from gomove.evaluate.match import engine_command
from gomove.play.labels import label_positions, sample_positions
from gomove.playout.policy import PatternPolicy
from gomove.train.balance.fit import BalanceConfig, balance, playout_error, positions_of


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


def _held_out(sgf: str, share: float) -> bool:
    """A game's side of the split, by a hash of its path (stable across runs)."""
    return zlib.crc32(sgf.encode()) % 10_000 < share * 10_000


def _train(args: argparse.Namespace) -> None:
    try:
        labels = read_labels(args.labels)
        policy = PatternPolicy.load(args.policy)
    except (OSError, ValueError) as e:
        raise SystemExit(f"gomove balance: {e}") from None
    val_labels = [x for x in labels if _held_out(x.sgf, args.val)]
    train_labels = [x for x in labels if not _held_out(x.sgf, args.val)]
    if not train_labels:
        raise SystemExit(f"gomove balance: {args.labels}: no training positions")
    cfg = BalanceConfig(args.value_playouts, args.grad_playouts, args.lr, args.clip,
                        args.epochs, seed=args.seed)  # fmt: skip
    try:
        cfg.validate()
    except ValueError as e:
        raise SystemExit(f"gomove balance: {e}") from None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    train, val = positions_of(train_labels), positions_of(val_labels)
    print(f"{len(train)} training and {len(val)} held-out positions")
    metrics: list[dict] = []
    n_eval = args.eval_playouts

    def measure(epoch: int, p: PatternPolicy) -> None:
        row = {"epoch": epoch, "train_mse": playout_error(p, train, n_eval, cfg.komi, 12345)}
        if val:
            row["val_mse"] = playout_error(p, val, n_eval, cfg.komi, 12345)
        metrics.append(row)
        print(json.dumps(row))
        if epoch > 0:
            p.save(out / "policy.npz")
        atomic_write_json(out / "metrics.json", {"config": vars(args), "epochs": metrics})

    measure(0, policy)
    balance(policy, train, cfg, on_epoch=measure)
    _plot(metrics, out / "error.png")
    print(f"{out / 'policy.npz'}; metrics in {out / 'metrics.json'}, {out / 'error.png'}")


def _plot(metrics: list[dict], path: Path) -> None:
    fig = Figure(figsize=(5, 3.5))
    ax = fig.subplots()
    epochs = [m["epoch"] for m in metrics]
    for key, label in (("train_mse", "training positions"), ("val_mse", "held-out positions")):
        if key in metrics[0]:
            ax.plot(epochs, [m[key] for m in metrics], marker="o", label=label)
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean (V* - V)^2 of the playouts")
    ax.set_title("simulation balancing")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


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
    tr = sub.add_parser("train", help="balance a policy on labelled positions")
    tr.add_argument("--policy", required=True, help="the policy.npz to start from")
    tr.add_argument("--labels", required=True, help="labels.jsonl of `label`")
    tr.add_argument("--out", required=True, help="folder for policy.npz and the metrics")
    tr.add_argument("--val", type=float, default=0.1, help="share of games held out")
    tr.add_argument("--epochs", type=int, default=4)
    tr.add_argument("--lr", type=float, default=1.0)
    tr.add_argument("--clip", type=float, default=0.1)
    tr.add_argument("--value-playouts", type=int, default=64)
    tr.add_argument("--grad-playouts", type=int, default=64)
    tr.add_argument("--eval-playouts", type=int, default=256)
    tr.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    (_label if args.command == "label" else _train)(args)


if __name__ == "__main__":
    main()
