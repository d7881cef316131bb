"""Do the territory labels' dead stones agree with GNU Go's, and do their scores match the games'?

    python scripts/territory_labels_check.py [DATA] [--games 150] [--playouts 512] [--pattern]

Reads the games of DATA (default: the test month, ../shared/data/tygem-9d-2006-06.zip)
in file order and keeps the first ``--games`` that ended by counting. For each, the
dead stones of its final position are decided by the labels' method
(gomove.data.territory_labels: settle playouts), by uniform playouts, with ``--pattern`` by
the shipped pattern policy's playouts (no self-atari of more than 3 stones), and by
GNU Go (``loadsgf`` then ``final_status_list dead`` and ``final_status_list seki``),
each turned into an owner map and a territory score by the same rules
(gomove.data.territory_labels.territory_from_dead). Prints, for every method: the share of
games whose implied score equals the recorded result, and against GNU Go the share of
games whose dead sets agree exactly and the share of points whose owner agrees.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from gomove.board.board import BLACK, WHITE, Board
from gomove.board.coords import from_loc, gtp_to_loc
from gomove.board.replay import board_at
from gomove.data.territory_labels import (
    FinalTerritory,
    final_territory,
    parse_result,
    placed_stones,
    territory_from_dead,
)
from gomove.evaluate.match import GtpClient, find_program
from gomove.playout.driver import run_playouts
from gomove.playout.policy import PatternPolicy
from gomove.reading.games import ReadConfig, iter_games
from gomove.reading.sgf import Game

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tygem-9d-2006-06.zip"
LETTERS = "abcdefghijklmnopqrs"


def sgf_text(game: Game) -> str:
    """The game as a plain SGF record GNU Go reads (size, komi, setup, main line)."""

    def point(row: int, col: int) -> str:
        return LETTERS[col] + LETTERS[game.size - 1 - row]

    setup = ""
    for colour, tag in ((BLACK, "AB"), (WHITE, "AW")):
        stones = [point(r, c) for k, r, c in game.setup if k == colour]
        if stones:
            setup += tag + "".join(f"[{s}]" for s in stones)
    moves = "".join(f";{'BW'[c - 1]}[{'' if m is None else point(*m)}]" for c, m in game.moves)
    return f"(;GM[1]FF[4]SZ[{game.size}]KM[{game.komi}]{setup}{moves})\n"


def gnugo_lists(client: GtpClient, game: Game) -> tuple[np.ndarray, np.ndarray]:
    """GNU Go's (dead, seki) stones of the game's final position, bool[size, size] each."""
    fd, path = tempfile.mkstemp(suffix=".sgf")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(sgf_text(game))
        client.must(f"loadsgf {path}")
    finally:
        os.unlink(path)
    out = []
    for status in ("dead", "seki"):
        marks = np.zeros((game.size, game.size), bool)
        for vertex in client.must(f"final_status_list {status}").split():
            marks[from_loc(gtp_to_loc(vertex, game.size), game.size)] = True
        out.append(marks)
    return out[0], out[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    p.add_argument("--games", type=int, default=150, help="counted games to check")
    p.add_argument("--playouts", type=int, default=512, help="playouts a final position")
    p.add_argument("--pattern", action="store_true", help="also the pattern policy's playouts")
    p.add_argument("--verbose", action="store_true", help="one line a game")
    args = p.parse_args()
    gnugo = find_program("gnugo")
    if gnugo is None:
        raise SystemExit("GNU Go not found (gnugo on PATH or in /usr/games)")
    methods = {"settle": None, "uniform": run_playouts}
    if args.pattern:
        player = PatternPolicy.default().player(selfatari_max=3)

        def pattern(board: Board, color: int, komi: float, n: int, seed: int):
            return run_playouts(board, color, komi, n, seed, policy=player)

        methods["pattern"] = pattern
    client = GtpClient([gnugo, "--mode", "gtp"])
    matches: dict[str, int] = defaultdict(int)
    same_dead: dict[str, int] = defaultdict(int)
    same_owner: dict[str, float] = defaultdict(float)
    seconds: dict[str, float] = defaultdict(float)
    n_read = n = 0
    try:
        for game in iter_games(args.data, ReadConfig(sizes=(19,), superko=False)):
            n_read += 1
            recorded = parse_result(game.result)
            if recorded is None:
                continue
            board, _ = board_at(game)
            placed = placed_stones(game)
            finals: dict[str, FinalTerritory] = {}
            for name, playouts in methods.items():
                t = time.perf_counter()
                finals[name] = final_territory(
                    board, game.komi, *placed, n=args.playouts, playouts=playouts
                )
                seconds[name] += time.perf_counter() - t
            t = time.perf_counter()
            dead, seki = gnugo_lists(client, game)
            seconds["gnugo"] += time.perf_counter() - t
            finals["gnugo"] = territory_from_dead(board, game.komi, *placed, dead, seki)
            ref = finals["gnugo"]
            for name, final in finals.items():
                matches[name] += final.territory_score == recorded
                same_dead[name] += bool(np.array_equal(final.dead, ref.dead))
                same_owner[name] += float(np.mean(final.owner == ref.owner))
            n += 1
            if args.verbose:
                scores = " ".join(f"{k} {v.territory_score:+.1f}" for k, v in finals.items())
                print(f"{game.source}: {game.result} | {scores}", flush=True)
            if n >= args.games:
                break
    finally:
        client.close()
    print(f"{n} counted games among the first {n_read} of {args.data}; {args.playouts} playouts")
    print("method    score = recorded   dead = GNU Go's   owner = GNU Go's   s/game")
    for name in finals:
        print(
            f"{name:8s}  {matches[name] / n:15.1%}   {same_dead[name] / n:14.1%}   "
            f"{same_owner[name] / n:15.2%}   {seconds[name] / n:6.2f}"
        )


if __name__ == "__main__":
    main()
