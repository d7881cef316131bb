"""Pachi's own move-prediction harness (t-predict) with its stock patterns and with gomove's.

Writes the first N games of a test set as GTP (``pachi-predict`` commands,
what ``t-predict/predict`` feeds Pachi), then runs a built Pachi (``make
DCNN=0``) with engine ``pattern`` once per pattern set, each in a folder of its
own holding that set's ``patterns_mm.spat`` and ``patterns_mm.gamma``, and
reads back Pachi's figures: the top-1 rate of every move (its ``Move N:
Predict`` lines) and its own top-n table (printed every 200 moves, so it
covers the largest multiple of 200). One JSON object per pattern set.

    taskset -c 1 python scripts/pachi_predict.py --pachi ../ext/pachi \\
        --games ../shared/data/tygem-9d-2006-06.zip --n 25 \\
        --set stock=../ext/pachi --set gomove=OUTDIR --work /tmp/predict
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from gomove.board.board import BLACK
from gomove.board.coords import loc_to_gtp, move_to_loc
from gomove.reading.games import ReadConfig, ReadStats, iter_games

PATTERN_FILES = ("patterns_mm.spat", "patterns_mm.gamma")


def gtp_games(games: str, n: int) -> tuple[str, int, int]:
    """The first n even 19x19 games as one GTP stream; (text, games, moves)."""
    cfg = ReadConfig(sizes=(19,), handicap=False, max_games=n, superko=False)
    lines, count, moves = [], 0, 0
    for game in iter_games(games, cfg, ReadStats()):
        lines += ["boardsize 19", "clear_board", f"komi {game.komi}"]
        for color, move in game.moves:
            c = "b" if color == BLACK else "w"
            lines.append(f"pachi-predict {c} {loc_to_gtp(move_to_loc(move, 19), 19)}")
            moves += move is not None
        count += 1
    return "\n".join(lines) + "\nquit\n", count, moves


def predict(pachi: Path, patterns: Path, stream: str, work: Path) -> dict[str, object]:
    """Run ``pachi -d 0 -e pattern threads=1`` on stream in work/ with patterns' files."""
    work.mkdir(parents=True, exist_ok=True)
    for name in PATTERN_FILES:
        src = patterns / name
        if not src.is_file():
            sys.exit(f"error: {src} not found")
        shutil.copyfile(src, work / name)
    t0 = time.perf_counter()
    p = subprocess.run(
        [str(pachi / "pachi"), "-d", "0", "-e", "pattern", "threads=1"],
        input=stream,
        cwd=work,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - t0
    (work / "stdout.txt").write_text(p.stdout)
    (work / "stderr.txt").write_text(p.stderr)
    if p.returncode:
        sys.exit(f"error: pachi failed ({p.returncode}): {p.stderr[-2000:]}")
    right = len(re.findall(r"Predict: Correctly predicted", p.stderr))
    wrong = len(re.findall(r"Predict: Wrong prediction", p.stderr))
    out: dict[str, object] = {
        "moves": right + wrong,
        "top1": right / max(right + wrong, 1),
        "seconds": seconds,
    }
    blocks = p.stdout.split("Topn stats:")
    if len(blocks) > 1:
        last = blocks[-1]
        m = re.search(r"Predicted\s*:\s*(\d+)/(\d+)", last)
        tops = {1: int(m.group(1))} if m else {}
        for k, hit in re.findall(r"in best\s+(\d+):\s*(\d+)/", last):
            tops[int(k)] = int(hit)
        total = int(m.group(2)) if m else 0
        out["pachi_table_moves"] = total
        out["pachi_top1"] = tops.get(1, 0) / max(total, 1)
        out["pachi_top10"] = tops.get(10, 0) / max(total, 1)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pachi", type=Path, required=True, help="a built Pachi source tree")
    p.add_argument("--games", required=True, help="test games (file, folder, zip...)")
    p.add_argument("--n", type=int, default=25, help="first N even games (25)")
    p.add_argument(
        "--set",
        action="append",
        required=True,
        metavar="NAME=DIR",
        help="a pattern set: a folder with patterns_mm.spat and patterns_mm.gamma",
    )
    p.add_argument("--work", type=Path, default=Path("pachi-predict"))
    args = p.parse_args()
    if not (args.pachi / "pachi").is_file():
        p.error(f"{args.pachi}/pachi not found: build Pachi first (make DCNN=0)")
    stream, n_games, n_moves = gtp_games(args.games, args.n)
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "games.gtp").write_text(stream)
    for spec in args.set:
        name, _, folder = spec.partition("=")
        res = predict(args.pachi, Path(folder), stream, args.work / name)
        print(json.dumps({"set": name, "games": n_games, "game_moves": n_moves, **res}), flush=True)


if __name__ == "__main__":
    main()
