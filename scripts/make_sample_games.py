#!/usr/bin/env python3
"""Make a small sample of real 19x19 games by GNU Go self-play, as a zip of SGF files.

Why this exists: the game archives the models are meant to learn from (KGS, pro
collections) may not be committed to this repository, yet ``python train.py``
should run end to end on a fresh machine. So the repo ships a few dozen games
that anyone may redistribute: GNU Go (GPL) playing itself. They are weak but
real, complete and legal games (captures, ko, passes at the end), enough to
exercise reading, feature extraction, training and evaluation in minutes.

How a game is played: one ``gnugo --mode gtp`` process plays both colours
(``genmove black`` / ``genmove white`` alternately) with ``--seed`` set to the
game's seed. Each game opens with 2-4 moves drawn by ``random.Random(seed)``
among the corner points on the 3rd and 4th lines (3-3, 3-4, 4-4 points), so
games differ from their first moves, then GNU Go plays on until two
consecutive passes, a resignation, or ``--max-moves``. The result RE[] is
``B+R``/``W+R`` after a resignation and GNU Go's ``final_score`` otherwise.
GNU Go plays under positional superko here, the rule the project's reader
checks by default.

Everything is deterministic given the arguments (seeds, level, GNU Go build),
except DT[], which is ``--date`` (today by default). Zip members are
``gnugo-l<level>-s<seed>.sgf`` in seed order, with a fixed timestamp.

Example::

    python scripts/make_sample_games.py --games 60 --level 1 --seed 1 --jobs 2 \\
        --out gomove/samples/gnugo-train.zip
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import shutil
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from sgfmill import sgf
from tqdm import tqdm

SIZE = 19
KOMI = 6.5
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRST"  # GTP skips the letter I
# 0-based coordinates of the 3rd and 4th lines from either edge
OPENING_LINES = (2, 3, SIZE - 4, SIZE - 3)
OPENING_POINTS = [(row, col) for row in OPENING_LINES for col in OPENING_LINES]
ZIP_TIMESTAMP = (1980, 1, 1, 0, 0, 0)

Point = tuple[int, int]  # (row, col), row 0 at the bottom, as sgfmill
Move = tuple[str, Point | None]  # ("b" or "w", point or None for a pass)


class GTPError(RuntimeError):
    """GNU Go answered a command with an error, or died."""


class GTP:
    """A GNU Go process spoken to over GTP on its stdin/stdout."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )

    def send(self, command: str) -> str:
        """Send one command and return the answer without its ``=``; GTPError on ``?``."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        lines: list[str] = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise GTPError(f"gnugo exited during {command!r}")
            line = line.rstrip("\r\n")
            if not line and lines:
                break
            if line:
                lines.append(line)
        answer = "\n".join(lines)
        if answer.startswith("?"):
            raise GTPError(f"{command!r}: {answer[1:].strip()}")
        return answer[1:].strip()

    def close(self) -> float:
        """Quit GNU Go and return the CPU seconds (user + system) it used."""
        try:
            self.send("quit")
        except (GTPError, OSError):
            self.proc.kill()
        _, status, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        return usage.ru_utime + usage.ru_stime


def to_gtp(point: Point) -> str:
    row, col = point
    return f"{GTP_COLUMNS[col]}{row + 1}"


def from_gtp(vertex: str) -> Point | None:
    """GTP vertex (``D4``, ``pass``) -> (row, col) or None; ValueError for anything else."""
    v = vertex.strip().upper()
    if v == "PASS":
        return None
    col = GTP_COLUMNS.index(v[0])
    row = int(v[1:]) - 1
    if not 0 <= row < SIZE:
        raise ValueError(f"vertex {vertex!r} off the board")
    return row, col


@dataclass
class PlayedGame:
    seed: int
    moves: list[Move]
    result: str
    end: str  # "passes", "resign" or "cap"
    opening: int  # random opening moves
    seconds: float  # wall time
    cpu: float  # GNU Go's CPU time


def play_game(
    gnugo: str, seed: int, level: int, max_moves: int, min_opening: int, max_opening: int
) -> PlayedGame:
    """One self-play game, seeded by ``seed`` (GNU Go's seed and the random opening)."""
    t0 = time.perf_counter()
    rng = random.Random(seed)
    argv = [
        gnugo,
        "--mode",
        "gtp",
        "--level",
        str(level),
        "--seed",
        str(seed),
        "--boardsize",
        str(SIZE),
        "--komi",
        str(KOMI),
        "--positional-superko",
    ]
    gtp = GTP(argv)
    try:
        gtp.send(f"boardsize {SIZE}")
        gtp.send("clear_board")
        gtp.send(f"komi {KOMI}")
        moves: list[Move] = []
        colors = ("b", "w")
        opening = rng.randint(min_opening, max_opening)
        for point in rng.sample(OPENING_POINTS, opening):
            color = colors[len(moves) % 2]
            gtp.send(f"play {color} {to_gtp(point)}")
            moves.append((color, point))
        end = "cap"
        result = ""
        while len(moves) < max_moves:
            color = colors[len(moves) % 2]
            vertex = gtp.send(f"genmove {'black' if color == 'b' else 'white'}")
            if vertex.lower() == "resign":
                end = "resign"
                result = ("W" if color == "b" else "B") + "+R"
                break
            moves.append((color, from_gtp(vertex)))
            if len(moves) >= 2 and moves[-1][1] is None and moves[-2][1] is None:
                end = "passes"
                break
        if not result:
            score = gtp.send("final_score")
            result = "0" if score in ("0", "Jigo") else score
    finally:
        cpu = gtp.close()
    return PlayedGame(seed, moves, result, end, opening, time.perf_counter() - t0, cpu)


def to_sgf(game: PlayedGame, level: int, date: str) -> bytes:
    """The game as SGF bytes: root properties, then one node per move."""
    record = sgf.Sgf_game(size=SIZE)
    root = record.get_root()
    root.set("KM", KOMI)
    root.set("RU", "Japanese")
    root.set("PB", f"GNU Go {level}")
    root.set("PW", f"GNU Go {level}")
    root.set("RE", game.result)
    root.set("DT", date)
    root.set(
        "GC",
        f"GNU Go self-play: gnugo --level {level} --seed {game.seed} --positional-superko; "
        f"{game.opening} random opening moves; ended by {game.end}",
    )
    for color, point in game.moves:
        record.extend_main_sequence().set_move(color, point)
    return record.serialise()


def member_name(seed: int, level: int) -> str:
    return f"gnugo-l{level}-s{seed:06d}.sgf"


def write_zip(path: Path, members: list[tuple[str, bytes]]) -> None:
    """Write members in the given order, with a fixed timestamp (same input, same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=ZIP_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data, compresslevel=9)
    tmp.replace(path)


def find_gnugo(name: str) -> str:
    """``name`` on PATH, or in /usr/games where Debian installs it."""
    found = shutil.which(name) or shutil.which(name, path="/usr/games")
    if found is None:
        sys.exit(f"error: {name} not found (Debian: apt-get install gnugo)")
    return found


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Play GNU Go against itself on 19x19 and write the games as a zip of SGFs."
    )
    p.add_argument("--games", type=int, required=True, help="number of games")
    p.add_argument("--out", type=Path, required=True, help="output .zip")
    p.add_argument("--level", type=int, default=1, help="GNU Go level 0-10 (1)")
    p.add_argument("--seed", type=int, default=1, help="seed of the first game, >= 1 (1)")
    p.add_argument("--jobs", type=int, default=2, help="parallel gnugo processes (2)")
    p.add_argument("--max-moves", type=int, default=400, help="move cap per game (400)")
    p.add_argument("--min-opening", type=int, default=2, help="fewest random opening moves (2)")
    p.add_argument("--max-opening", type=int, default=4, help="most random opening moves (4)")
    p.add_argument("--date", default=None, help="DT[] value (today, YYYY-MM-DD)")
    p.add_argument("--gnugo", default="gnugo", help="gnugo executable (gnugo)")
    args = p.parse_args(argv)
    if args.games < 1 or args.jobs < 1:
        p.error("--games and --jobs must be at least 1")
    if args.seed < 1:
        p.error("--seed must be at least 1 (gnugo --seed 0 means a time-based seed)")
    if not 0 <= args.min_opening <= args.max_opening <= len(OPENING_POINTS):
        p.error("need 0 <= --min-opening <= --max-opening <= 16")
    if args.max_moves <= args.max_opening:
        p.error("--max-moves must exceed --max-opening")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    gnugo = find_gnugo(args.gnugo)
    date = args.date or datetime.date.today().isoformat()
    seeds = range(args.seed, args.seed + args.games)
    played: dict[int, PlayedGame] = {}
    t0 = time.perf_counter()
    with (
        ThreadPoolExecutor(max_workers=args.jobs) as pool,
        tqdm(total=args.games, desc="games", unit=" games") as bar,
    ):
        futures = [
            pool.submit(
                play_game,
                gnugo,
                seed,
                args.level,
                args.max_moves,
                args.min_opening,
                args.max_opening,
            )
            for seed in seeds
        ]
        for future in as_completed(futures):
            game = future.result()
            played[game.seed] = game
            bar.set_postfix(moves=len(game.moves), cpu=f"{game.cpu:.1f}s")
            bar.update()
    wall = time.perf_counter() - t0
    members = [
        (member_name(seed, args.level), to_sgf(played[seed], args.level, date)) for seed in seeds
    ]
    write_zip(args.out, members)
    games = list(played.values())
    n_moves = sum(len(g.moves) for g in games)
    ends = {e: sum(g.end == e for g in games) for e in ("passes", "resign", "cap")}
    distinct = len({tuple(g.moves) for g in games})
    print(
        f"{len(games)} games ({distinct} distinct), {n_moves} moves "
        f"({n_moves / len(games):.0f} per game), ended by {ends}; "
        f"per game {sum(g.cpu for g in games) / len(games):.1f} s CPU, "
        f"{sum(g.seconds for g in games) / len(games):.1f} s wall; "
        f"{wall:.0f} s wall with {args.jobs} jobs; "
        f"{args.out} {args.out.stat().st_size / 1024:.1f} KiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
