"""``gomove match``: Coulom's Table 2 against GNU Go: each row a gomove configuration,
games played over GTP, resumable, written as SGF, tabulated with 95% intervals.

gomove match --size 9 --games 100 --sims 3000 --out matches/9x9 --workers 2
gomove match --model RUN/model.pt --policy RUN_LIGHT/policy.npz ... \\
    --row "pattern+pw=--tree coulom" --row "pattern+pw+rave=--tree coulom --set rave=true"

Default rows: uniform (uniform playouts, plain UCT), pattern (pattern
playouts, plain UCT), pattern+pw (pattern playouts and progressive widening),
default (gomove gtp's defaults for the board size). Rows are NAME=ARGS with
gomove gtp arguments added to the common ones; --model and --policy default to
the shipped model and policy, as gomove gtp's.
Running the same command again resumes every row where it stopped. A game that an
engine fails (it crashes, or refuses its arguments) is not counted: its reason goes to
the row's errors.txt, the command exits with status 1, and running it again plays it.

--opponent plays any GTP program in GNU Go's place (it referees by its
final_score), --engine-env and --opponent-env set each one's variables:

gomove match --engine "pachi -t =2000" --engine-env DATA_DIR=gomove-patterns \\
    --opponent "pachi -t =2000" --opponent-env DATA_DIR=stock --row "gomove-pats=" --out m

--engine plays another GTP program in gomove's place under the same harness
(a calibration: the same opponent, colours, komi and referee), each row's ARGS
added to its command; its own options set its budget:

gomove match --engine "pachi --nodcnn -t =5000" --row "moggy=threads=1,pondering=0" \
    --row "light=threads=1,pondering=0,playout=light" --size 9 --out matches/pachi
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from gomove.atomic import atomic_write_text
from gomove.cli import doc_parser
from gomove.cli.model_args import NONE
from gomove.evaluate.match import engine_command, find_program, run_match, summary

DEFAULT_ROWS = (
    "uniform=--uniform --no-pw",
    "pattern=--no-pw",
    "pattern+pw=--tree coulom",
    "default=",
)


def env_of(items: list[str], flag: str) -> dict[str, str]:
    """KEY=VALUE strings as a dict; exits with the flag named on a bad one."""
    env = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            sys.exit(f"gomove match: {flag} {item!r}: expected KEY=VALUE")
        env[key] = value
    return env


def main(argv: list[str] | None = None) -> None:
    ap = doc_parser("gomove match", __doc__)
    ap.add_argument("--model", help="model.pt or .npz (the tree; default: the shipped model)")
    ap.add_argument("--policy", help="policy.npz (pattern playouts; default: the shipped one)")
    ap.add_argument("--engine", help="or play this GTP engine command in gomove's place")
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--komi", type=float, default=7.5)
    ap.add_argument("--games", type=int, default=100, help="games per row")
    ap.add_argument("--sims", type=int, default=3000, help="simulations per gomove move")
    ap.add_argument("--seconds", type=float, help="or seconds per gomove move")
    ap.add_argument("--row", action="append", help="NAME=ARGS (repeatable; default: 3 rows)")
    ap.add_argument("--gnugo", default="gnugo", help="GNU Go's executable")
    ap.add_argument("--level", type=int, default=10, help="GNU Go's level")
    ap.add_argument("--opponent", metavar="CMD",
                    help="the opponent's GTP command instead of GNU Go (it referees)")  # fmt: skip
    ap.add_argument("--engine-env", action="append", default=[], metavar="KEY=VALUE",
                    help="a variable for the tested engine (repeatable)")  # fmt: skip
    ap.add_argument("--opponent-env", action="append", default=[], metavar="KEY=VALUE",
                    help="a variable for the opponent (Pachi's DATA_DIR=...)")  # fmt: skip
    ap.add_argument("--workers", type=int, default=1, help="games at once (one per core)")
    ap.add_argument("--out", required=True, help="folder of the match (resumed when present)")
    args = ap.parse_args(argv)
    envs = (env_of(args.engine_env, "--engine-env"), env_of(args.opponent_env, "--opponent-env"))
    if args.engine:
        try:
            base = engine_command(args.engine)
        except ValueError as e:
            sys.exit(f"gomove match: --engine {e}")
        if not args.row:
            sys.exit("gomove match: --engine needs at least one --row NAME=ARGS")
    else:
        models = []
        for flag, path in (("--model", args.model), ("--policy", args.policy)):
            if path is not None and path != NONE and not Path(path).is_file():
                sys.exit(f"gomove match: {path}: no such file")
            models += [flag, path] if path is not None else []
        budget = (
            ["--sims", str(args.sims)] if args.seconds is None else ["--seconds", str(args.seconds)]
        )
        base = [sys.executable, "-m", "gomove.cli", "gtp", *models, *budget, "--seed", "0"]
    tested = Path(base[0]).name if args.engine else "gomove"
    rows = []
    for spec in args.row or DEFAULT_ROWS:
        name, sep, extra = spec.partition("=")
        if not sep or not name:
            sys.exit(f"gomove match: --row {spec!r}: expected NAME=ARGS")
        rows.append((name, shlex.split(extra)))
    # the arguments first, then the machine: a bad command line says so even without GNU Go
    if args.opponent:
        try:
            opponent = engine_command(args.opponent)
        except ValueError as e:
            sys.exit(f"gomove match: --opponent {e}")
        rival = Path(opponent[0]).name
    else:
        gnugo = find_program(args.gnugo)
        if gnugo is None:
            sys.exit(f"gomove match: {args.gnugo!r} not found (Debian: apt-get install gnugo)")
        opponent = [gnugo, "--mode", "gtp", "--level", str(args.level), "--chinese-rules"]
        rival = f"GNU Go {args.level}"
    out = Path(args.out)
    table, unplayed = [], []
    for name, extra in rows:
        print(f"== {name}: {shlex.join(extra) or '(defaults)'}", flush=True)

        def progress(r, done, name=name):
            s = summary(list(done.values()))
            print(f"  {name} game {r.index}: {tested} {r.gomove_color} "
                  f"{'won' if r.gomove_won else 'lost'} ({r.how} {r.referee_score}) "
                  f"-> {s['wins']:g}/{s['games']}", flush=True)  # fmt: skip

        results = run_match(
            out / name, base + extra, opponent, args.games, args.size,
            args.komi, workers=args.workers, names=(f"{tested} {name}", rival),
            progress=progress, envs=envs,
        )  # fmt: skip
        table.append((name, extra, summary(results)))
        if len(results) < args.games:
            unplayed.append(f"{name}: {args.games - len(results)} of {args.games} games "
                            f"({out / name / 'errors.txt'})")  # fmt: skip
    budget_text = (
        "its own budget"
        if args.engine
        else f"{args.sims} simulations"
        if args.seconds is None
        else f"{args.seconds} s"
    )
    against = shlex.join(opponent) if args.opponent else f"GNU Go 3.8 level {args.level}"
    lines = [
        f"{tested} against {against}, {args.size}x{args.size}, komi "
        f"{args.komi:g}, Chinese rules, {budget_text} per move",
        "",
        "| configuration | games | wins | win rate | 95% CI | as black | as white | "
        "disagreements |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, _, s in table:
        lo, hi = s["ci95"]
        rate = f"{100 * s['win_rate']:.1f}%" if s["games"] else "-"
        lines.append(
            f"| {name} | {s['games']} | {s['wins']:g} | {rate} | "
            f"{100 * lo:.1f}-{100 * hi:.1f}% | {s['as_black']} | {s['as_white']} | "
            f"{len(s['disagreements'])} |"
        )
    for name, _, s in table:
        if s["disagreements"]:
            lines.append(f"\n{name}: {tested}'s final_score disagreed with {rival}'s in games "
                         + ", ".join(map(str, s["disagreements"])))  # fmt: skip
    text = "\n".join(lines) + "\n"
    atomic_write_text(out / "table.md", text)
    print(text)
    if unplayed:
        sys.exit("gomove match: games an engine failed, not played (the same command plays "
                 "them):\n  " + "\n  ".join(unplayed))  # fmt: skip


if __name__ == "__main__":
    main()
