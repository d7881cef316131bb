"""Were gomove's resignations right? GNU Go plays each resigned game out and counts it.

    python scripts/check_resignations.py docs/matches/19x19-10000/pattern+pw [--workers 2]

For every game of a match row (a gomove match folder with results.jsonl) that
gomove lost by resigning, replays its moves into GNU Go (level 10, Chinese
rules, the match's komi and size), lets GNU Go play both sides from the
resigned position until two passes, and takes its ``final_score``. Prints one
line a game (index, gomove's colour, moves, GNU Go's estimate_score at the
resignation, the final score, and RESIGNED_A_WIN when gomove's side wins the
playout), then the count, as in docs/logs/engine-matches.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gomove.evaluate.match import (
    MAX_MOVES_PER_POINT,
    GameResult,
    GtpClient,
    find_program,
    read_results,
    score_winner,
)


def play_out(gnugo: str, result: GameResult, size: int, komi: float, level: int) -> tuple[str, str]:
    """(estimate at the resignation, final score after GNU Go plays both sides out)."""
    client = GtpClient([gnugo, "--mode", "gtp", "--level", str(level), "--chinese-rules"])
    try:
        client.new_game(size, komi)
        for move in result.moves:
            client.must(f"play {move}")
        estimate = client.must("estimate_score")
        color = "W" if result.moves and result.moves[-1].startswith("B") else "B"
        passes = 0
        for _ in range(MAX_MOVES_PER_POINT * size * size):
            reply = client.must(f"genmove {color}").upper()
            if reply == "RESIGN":
                break
            passes = passes + 1 if reply == "PASS" else 0
            if passes == 2:
                break
            color = "W" if color == "B" else "B"
        return estimate, client.must("final_score")
    finally:
        client.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("row", type=Path, help="a match row's folder (results.jsonl, match.json)")
    p.add_argument("--level", type=int, default=10)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    gnugo = find_program("gnugo")
    if gnugo is None:
        raise SystemExit("gnugo not found (Debian: apt-get install gnugo)")
    match = json.loads((args.row / "match.json").read_text())
    resigned = [
        r
        for _, r in sorted(read_results(args.row).items())
        if r.how == "resign" and not r.gomove_won
    ]
    if not resigned:
        raise SystemExit(f"{args.row}: no game gomove resigned")

    def check(r: GameResult) -> tuple[GameResult, str, str]:
        return (r, *play_out(gnugo, r, match["size"], match["komi"], args.level))

    margins, wrong = [], 0
    with ThreadPoolExecutor(args.workers) as pool:
        for r, estimate, final in pool.map(check, resigned):
            winner = score_winner(final)
            won = winner == r.gomove_color
            wrong += won
            if winner in "BW":
                margins.append(float(final[2:]))
            flag = "RESIGNED_A_WIN" if won else ""
            print(r.index, r.gomove_color, len(r.moves), estimate, final, flag, flush=True)
    median = statistics.median(margins) if margins else float("nan")
    print(
        f"{len(resigned)} resignations, {wrong} of them games gomove's side wins in GNU Go's "
        f"playout; margins {min(margins, default=float('nan'))} smallest, {median} median"
    )


if __name__ == "__main__":
    main()
