"""Write KataGo's evaluations of real Go positions as a JSON-lines reference file.

The script drives KataGo's JSON analysis engine (``AppRun analysis``) over stdin/stdout
and writes one JSON object per analysed position::

    {"game": "101109667.sgf", "turn": 100, "to_move": "B", "scoreLead": -8.39,
     "winrate": 0.0118, "ownership": [361 floats], "visits": 1, "symmetries": 8,
     "rules": "chinese", "komi": 6.5}

- ``game`` is the SGF's member name in the zip and ``turn`` the number of moves played
  before the position (turn 0 is the empty board).
- ``scoreLead``, ``winrate`` and ``ownership`` are all from Black's point of view
  (KataGo is started with ``reportAnalysisWinratesAs=BLACK``). ``ownership`` is
  row-major from A19 to T1, as KataGo gives it: index ``(19 - row) * 19 + col`` for
  board row ``row`` (1 = bottom) and column ``col`` (0 = A).
- By default each position gets one visit with all 8 symmetries averaged
  (``maxVisits 1``, ``rootNumSymmetriesToSample 8``): the network's own evaluation,
  not a search. ``--visits`` asks for a search instead. ``ignorePreRootHistory`` is false,
  so the network sees the previous moves as in a real game.

Rules: "chinese" (area scoring) with the game's komi, 6.5 in these files. The Tygem games
are labelled Japanese, but area and territory counts of a finished game differ by at most
a point or so, and area scoring needs no dead-stone agreement, so it is the well-defined
choice and the one KataGo is trained on most. ``--rules`` changes it.

Modes (games are taken in zip order; games that are not 19x19 or that have setup stones
are skipped):

- ``--positions``: positions spread over many games. From each game, turns
  50, 100, 150, 200 and 250 (``--turns``) are taken where the game has a move played at
  that turn (turn < number of moves), until ``--count`` positions (default 320).
- ``--games G``: whole games. Every ``--every``-th turn (0, 5, 10, ... up to and including
  the final position when it falls on the step) of the first G games.

The run is resumable: positions already in the output file are skipped, new lines are
appended and flushed one by one, so a killed run continues where it stopped.

Example (KataGo, network, analysis.cfg and tune.txt in /work/katago; see
docs at /work/shared/docs/katago-cpu.md)::

    python scripts/katago_reference.py --positions --out /work/katago/positions.jsonl \\
        --katago-dir /work/katago --pin 1 --nice 10
    python scripts/katago_reference.py --games 2 --every 5 --out /work/katago/games.jsonl \\
        --katago-dir /work/katago --pin 1 --nice 10

``POCL_MAX_PTHREAD_COUNT`` is set to 1 for KataGo unless it is already set, so the PoCL
OpenCL runtime uses a single CPU thread. The script does not depend on gomove.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from sgfmill import sgf

BOARD_SIZE = 19
COLUMNS = "ABCDEFGHJKLMNOPQRST"  # GTP columns: no I


@dataclass
class Game:
    """One game's main line, in KataGo's move format."""

    name: str
    komi: float
    moves: list[tuple[str, str]]  # ("B" | "W", "Q16" | "pass")


@dataclass
class Job:
    """The positions to analyse in one game."""

    game: Game
    turns: list[int]


def gtp_vertex(move: tuple[int, int] | None) -> str:
    """Convert an sgfmill (row, col) move, row 0 at the bottom, to a GTP vertex."""
    if move is None:
        return "pass"
    row, col = move
    return f"{COLUMNS[col]}{row + 1}"


def read_games(zip_path: Path, default_komi: float) -> Iterator[Game]:
    """Yield the usable 19x19 games of a zip of SGF files, in zip order."""
    with zipfile.ZipFile(zip_path) as zf:
        for name in zf.namelist():
            if not name.lower().endswith(".sgf"):
                continue
            try:
                game = sgf.Sgf_game.from_bytes(zf.read(name))
            except ValueError as exc:
                print(f"skip {name}: unreadable SGF ({exc})", file=sys.stderr)
                continue
            root = game.get_root()
            if game.get_size() != BOARD_SIZE:
                continue
            if root.has_setup_stones() or root.has_property("HA"):
                continue
            komi = game.get_komi() if root.has_property("KM") else default_komi
            moves: list[tuple[str, str]] = []
            for node in game.get_main_sequence()[1:]:
                colour, move = node.get_move()
                if colour is None:
                    continue
                moves.append((colour.upper(), gtp_vertex(move)))
            yield Game(name=name, komi=komi, moves=moves)


def position_jobs(games: Iterator[Game], turns: list[int], count: int) -> Iterator[Job]:
    """Jobs for --positions: the given turns of each game, until `count` positions."""
    left = count
    for game in games:
        if left <= 0:
            return
        chosen = [t for t in turns if t < len(game.moves)][:left]
        if chosen:
            left -= len(chosen)
            yield Job(game, chosen)


def game_jobs(games: Iterator[Game], n_games: int, every: int) -> Iterator[Job]:
    """Jobs for --games: every `every`-th turn of the first `n_games` games."""
    for i, game in enumerate(games):
        if i >= n_games:
            return
        yield Job(game, list(range(0, len(game.moves) + 1, every)))


def done_positions(out: Path) -> set[tuple[str, int]]:
    """The (game, turn) pairs already in the output file."""
    done: set[tuple[str, int]] = set()
    if not out.exists():
        return done
    with out.open() as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut off by a kill; the position is redone
            done.add((row["game"], int(row["turn"])))
    return done


class KataGo:
    """A KataGo analysis engine subprocess talking JSON lines."""

    def __init__(self, args: argparse.Namespace) -> None:
        kdir = Path(args.katago_dir)
        cmd = [
            str(kdir / "squashfs-root" / "AppRun"),
            "analysis",
            "-config",
            str(kdir / args.config),
            "-model",
            str(kdir / args.model),
            "-override-config",
            "reportAnalysisWinratesAs=BLACK",
        ]
        if args.nice:
            cmd = ["nice", "-n", str(args.nice), *cmd]
        if args.pin:
            cmd = ["taskset", "-c", args.pin, *cmd]
        env = dict(os.environ)
        env.setdefault("POCL_MAX_PTHREAD_COUNT", "1")
        log = open(args.katago_log, "a") if args.katago_log else None  # noqa: SIM115
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log if log is not None else subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=kdir,
        )

    def query(self, query: dict[str, Any]) -> None:
        """Send one query (one line of JSON)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(query) + "\n")
        self.proc.stdin.flush()

    def response(self) -> dict[str, Any]:
        """Read the next response line."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"KataGo exited (return code {self.proc.poll()})")
        return json.loads(line)

    def close(self) -> None:
        """Close stdin and wait for KataGo to finish; kill it if it does not."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def analyse(
    engine: KataGo, job: Job, args: argparse.Namespace, out: IO[str], started: float
) -> int:
    """Analyse one game's turns, appending one line per position; return lines written."""
    qid = job.game.name
    engine.query(
        {
            "id": qid,
            "moves": [list(m) for m in job.game.moves[: max(job.turns)]],
            "rules": args.rules,
            "komi": job.game.komi,
            "boardXSize": BOARD_SIZE,
            "boardYSize": BOARD_SIZE,
            "analyzeTurns": job.turns,
            "maxVisits": args.visits,
            "includeOwnership": True,
            "overrideSettings": {
                "rootNumSymmetriesToSample": args.symmetries,
                "ignorePreRootHistory": False,
            },
        }
    )
    pending = set(job.turns)
    written = 0
    while pending:
        resp = engine.response()
        if resp.get("id") != qid:
            print(f"unexpected response: {str(resp)[:200]}", file=sys.stderr)
            continue
        if "error" in resp:
            print(f"{qid}: KataGo error: {resp['error']}", file=sys.stderr)
            return written
        if "warning" in resp:
            print(f"{qid}: KataGo warning: {resp['warning']}", file=sys.stderr)
            continue
        if resp.get("isDuringSearch"):
            continue
        turn = int(resp["turnNumber"])
        root = resp["rootInfo"]
        row = {
            "game": qid,
            "turn": turn,
            "to_move": root["currentPlayer"],
            "scoreLead": root["scoreLead"],
            "winrate": root["winrate"],
            "ownership": resp["ownership"],
            "visits": root["visits"],
            "symmetries": args.symmetries,
            "rules": args.rules,
            "komi": job.game.komi,
        }
        out.write(json.dumps(row) + "\n")
        out.flush()
        pending.discard(turn)
        written += 1
        elapsed = time.monotonic() - started
        print(
            f"{qid} turn {turn}: lead {root['scoreLead']:+.2f} ({elapsed:.0f} s)", file=sys.stderr
        )
    return written


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Write KataGo's evaluations (Black's view) of Tygem positions as JSON lines."
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--positions", action="store_true", help="positions spread over many games")
    mode.add_argument("--games", type=int, metavar="G", help="whole games: the first G games")
    parser.add_argument(
        "--zip",
        type=Path,
        default=Path("/work/shared/data/tygem-9d-2006-06.zip"),
        help="zip of SGF files (default: %(default)s)",
    )
    parser.add_argument("--out", type=Path, required=True, help="output JSON-lines file")
    parser.add_argument(
        "--count", type=int, default=320, help="--positions: how many (default: %(default)s)"
    )
    parser.add_argument(
        "--turns",
        type=lambda s: [int(t) for t in s.split(",")],
        default=[50, 100, 150, 200, 250],
        help="--positions: turns taken from each game (default: 50,100,150,200,250)",
    )
    parser.add_argument(
        "--every", type=int, default=5, help="--games: turn step (default: %(default)s)"
    )
    parser.add_argument(
        "--visits", type=int, default=1, help="maxVisits per position (default: %(default)s)"
    )
    parser.add_argument(
        "--symmetries",
        type=int,
        default=8,
        choices=range(1, 9),
        metavar="{1..8}",
        help="rootNumSymmetriesToSample (default: %(default)s)",
    )
    parser.add_argument("--rules", default="chinese", help="KataGo rules (default: %(default)s)")
    parser.add_argument(
        "--komi", type=float, default=6.5, help="komi when the SGF has none (default: %(default)s)"
    )
    parser.add_argument(
        "--katago-dir",
        default=os.environ.get("KATAGO_DIR", "/work/katago"),
        help="folder with squashfs-root/, the config and the model (default: $KATAGO_DIR "
        "or %(default)s)",
    )
    parser.add_argument("--config", default="analysis.cfg", help="analysis config in --katago-dir")
    parser.add_argument(
        "--model", default="b10c384h6nbttflrs.bin.gz", help="network in --katago-dir"
    )
    parser.add_argument("--pin", metavar="CPUS", help="run KataGo under taskset -c CPUS")
    parser.add_argument("--nice", type=int, default=0, help="run KataGo under nice -n N")
    parser.add_argument("--katago-log", help="append KataGo's stderr to this file")
    args = parser.parse_args(argv)
    if args.games is not None and args.games < 1:
        parser.error("--games must be at least 1")
    if args.every < 1:
        parser.error("--every must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    games = read_games(args.zip, args.komi)
    if args.positions:
        jobs = position_jobs(games, sorted(args.turns), args.count)
    else:
        jobs = game_jobs(games, args.games, args.every)

    done = done_positions(args.out)
    todo: list[Job] = []
    for job in jobs:
        turns = [t for t in job.turns if (job.game.name, t) not in done]
        if turns:
            todo.append(Job(job.game, turns))
    n_todo = sum(len(j.turns) for j in todo)
    print(f"{len(done)} positions already in {args.out}, {n_todo} to do", file=sys.stderr)
    if not todo:
        return 0

    args.out.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    engine = KataGo(args)
    written = 0
    try:
        with args.out.open("a") as out:
            for job in todo:
                written += analyse(engine, job, args, out, started)
    finally:
        engine.close()
    elapsed = time.monotonic() - started
    per = elapsed / written if written else float("nan")
    print(f"wrote {written} positions in {elapsed:.0f} s ({per:.1f} s each)", file=sys.stderr)
    return 0 if written == n_todo else 1


if __name__ == "__main__":
    sys.exit(main())
