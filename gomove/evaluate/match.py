"""Matches between two GTP engines (gomove against GNU Go, or any two), resumable, refereed,
tabulated.

Terms:
- match: n games of one gomove configuration (its gomove gtp arguments)
  against an opponent, colours alternating (gomove black in even games),
  komi and Chinese rules as set; K workers play games at once, each holding
  one process of each engine for all its games.
- result: one JSON line per finished game in ``results.jsonl`` (appended and
  flushed as each game ends) and the game as ``games/<i>.sgf``; a match run
  again skips the games already there, so an interrupted match resumes.
- referee: the opponent's ``final_score`` decides a game both engines passed
  out; gomove's own ``final_score`` is recorded beside it and disagreements
  (another winner) are listed. A resignation or an illegal move decides at once.
"""

from __future__ import annotations

import json
import math
import os
import queue
import shlex
import shutil
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gomove.atomic import atomic_write_json, atomic_write_text

MAX_MOVES_PER_POINT = 3


def find_program(name: str) -> str | None:
    """name on PATH, or in /usr/games where Debian puts games (gnugo) off a root PATH."""
    return shutil.which(name) or shutil.which(name, path="/usr/games")


def engine_command(text: str) -> list[str]:
    """A GTP engine's command line (shell words), its program resolved by find_program,
    so that one found only in /usr/games also starts; ValueError when it is not found."""
    words = shlex.split(text)
    program = find_program(words[0]) if words else None
    if program is None:
        raise ValueError(f"{text!r}: program not found")
    return [program, *words[1:]]


class GtpClient:
    """An engine process spoken to over GTP."""

    def __init__(
        self,
        command: list[str],
        stderr_path: Path | None = None,
        env: dict[str, str] | None = None,
    ):
        """env: variables set for this engine over ours (Pachi's DATA_DIR, say)."""
        err = open(stderr_path, "ab") if stderr_path else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
            bufsize=1, env={**os.environ, **env} if env else None,
        )  # fmt: skip
        self.command = command
        self.stderr_path = stderr_path

    def died(self) -> str:
        """Why the engine is gone: its exit status and the last line it wrote to stderr."""
        why = f"{self.command[0]} exited ({self.proc.returncode})"
        if self.stderr_path is not None and self.stderr_path.is_file():
            with open(self.stderr_path, "rb") as f:
                f.seek(max(0, self.stderr_path.stat().st_size - 2000))
                lines = f.read().decode("utf-8", "replace").strip().splitlines()
            if lines:
                why += f": {lines[-1].strip()}"
        return why

    def send(self, line: str) -> tuple[bool, str]:
        """(ok, text) of one command; RuntimeError when the engine died."""
        if self.proc.poll() is not None:
            raise RuntimeError(self.died())
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        lines = []
        while True:
            out = self.proc.stdout.readline()
            if out == "":
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    raise RuntimeError(
                        f"{self.command[0]} closed its output after {line!r}"
                    ) from None
                raise RuntimeError(f"{self.died()} after {line!r}")
            out = out.rstrip("\r\n")
            if out == "" and lines:
                break
            if out == "" and not lines:
                continue
            lines.append(out)
        head, text = lines[0], "\n".join(lines)
        ok = head.startswith("=")
        return ok, text[1:].lstrip("0123456789").strip()

    def new_game(self, size: int, komi: float) -> None:
        """An empty board of size with komi."""
        self.must(f"boardsize {size}")
        self.must("clear_board")
        self.must(f"komi {komi}")

    def must(self, line: str) -> str:
        ok, text = self.send(line)
        if not ok:
            raise RuntimeError(f"{self.command[0]}: {line!r} failed: {text}")
        return text

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.send("quit")
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@dataclass
class GameResult:
    index: int
    gomove_color: str  # "B" or "W"
    winner: str  # "B", "W" or "0" (jigo)
    gomove_won: bool
    how: str  # "score", "resign", "illegal", "max_moves"
    referee_score: str
    gomove_score: str
    agreed: bool
    moves: list[str] = field(default_factory=list)
    seconds: float = 0.0


def score_winner(score: str) -> str:
    """'B+3.5' -> 'B', 'W+R' -> 'W', '0' -> '0'; '?' for anything else."""
    s = score.strip().upper()
    if s in ("0", "DRAW", "JIGO"):
        return "0"
    if s[:2] in ("B+", "W+"):
        return s[0]
    return "?"


def play_game(
    index: int,
    gomove: GtpClient,
    opponent: GtpClient,
    size: int,
    komi: float,
) -> GameResult:
    """One game; gomove is black in even games."""
    gomove_color = "B" if index % 2 == 0 else "W"
    for e in (gomove, opponent):
        e.new_game(size, komi)
    engines = {"B": gomove, "W": opponent} if gomove_color == "B" else {"B": opponent, "W": gomove}
    other = {"B": "W", "W": "B"}
    moves: list[str] = []
    color = "B"
    passes = 0
    how = "score"
    winner = None
    start = time.perf_counter()
    while passes < 2:
        if len(moves) >= MAX_MOVES_PER_POINT * size * size:
            how = "max_moves"
            break
        ok, move = engines[color].send(f"genmove {color}")
        move = move.strip()
        if not ok:
            raise RuntimeError(f"genmove {color} failed: {move}")
        if move.lower() == "resign":
            how, winner = "resign", other[color]
            break
        ok, text = engines[other[color]].send(f"play {color} {move}")
        if not ok:  # the mover's move is illegal for the other engine: a forfeit
            how, winner = "illegal", other[color]
            moves.append(f"{color} {move}")
            break
        moves.append(f"{color} {move}")
        passes = passes + 1 if move.lower() == "pass" else 0
        color = other[color]
    referee = gomove_score = ""
    if winner is None:
        _, referee = opponent.send("final_score")
        _, gomove_score = gomove.send("final_score")
        winner = score_winner(referee)
    agreed = how != "score" or score_winner(gomove_score) == winner
    return GameResult(index, gomove_color, winner, winner == gomove_color, how, referee,
                      gomove_score, agreed, moves, time.perf_counter() - start)  # fmt: skip


def game_sgf(r: GameResult, size: int, komi: float, names: tuple[str, str]) -> str:
    """The game as SGF (FF4, Chinese rules); names = (gomove, opponent)."""
    black, white = names if r.gomove_color == "B" else names[::-1]
    cols = "ABCDEFGHJKLMNOPQRST"
    nodes = []
    for m in r.moves:
        c, v = m.split()
        if v.lower() == "pass":
            coord = ""
        else:
            col = cols.index(v[0].upper())
            row = size - int(v[1:])
            coord = chr(97 + col) + chr(97 + row)
        nodes.append(f";{c}[{coord}]")
    result = {"0": "0"}.get(r.winner, f"{r.winner}+{'R' if r.how == 'resign' else ''}")
    if r.how == "score" and r.referee_score:
        result = r.referee_score
    head = (f"(;GM[1]FF[4]CA[UTF-8]AP[gomove-match]SZ[{size}]KM[{komi}]RU[Chinese]"
            f"PB[{black}]PW[{white}]RE[{result}]C[{r.how}; referee {r.referee_score}; "
            f"gomove {r.gomove_score}]")  # fmt: skip
    return head + "".join(nodes) + ")\n"


def read_results(out: Path) -> dict[int, GameResult]:
    path = out / "results.jsonl"
    done: dict[int, GameResult] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                try:
                    d = json.loads(line)
                    done[d["index"]] = GameResult(**d)
                except (ValueError, TypeError, KeyError):
                    continue  # a line cut by a crash: that game is played again
    return done


def run_match(
    out: Path,
    gomove_cmd: list[str],
    opponent_cmd: list[str],
    n_games: int,
    size: int,
    komi: float,
    workers: int = 1,
    names: tuple[str, str] = ("gomove", "opponent"),
    progress=None,
    envs: tuple[dict[str, str] | None, dict[str, str] | None] = (None, None),
) -> list[GameResult]:
    """Play the games of out/ not yet in its results.jsonl; return all results by index.
    A game an engine fails is left unplayed (the next run plays it) and listed, with the
    engine's reason, in out/errors.txt, which lists only this run's failures.
    envs: the tested engine's and the opponent's variables (GtpClient's env)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "errors.txt").unlink(missing_ok=True)
    (out / "games").mkdir(exist_ok=True)
    atomic_write_json(out / "match.json", {
        "gomove": shlex.join(gomove_cmd), "opponent": shlex.join(opponent_cmd),
        "games": n_games, "size": size, "komi": komi,
        **({"env": envs[0]} if envs[0] else {}),
        **({"opponent_env": envs[1]} if envs[1] else {})})  # fmt: skip
    done = read_results(out)
    todo: queue.Queue[int] = queue.Queue()
    for i in range(n_games):
        if i not in done:
            todo.put(i)
    lock = threading.Lock()
    errors: list[str] = []

    def worker(w: int) -> None:
        gm = GtpClient(gomove_cmd, out / f"gomove-{w}.stderr", envs[0])
        op = GtpClient(opponent_cmd, out / f"opponent-{w}.stderr", envs[1])
        try:
            while True:
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    r = play_game(i, gm, op, size, komi)
                except (RuntimeError, OSError, ValueError) as e:  # a crashed engine: restart both
                    with lock:  # written at once, so that an interrupted run keeps it
                        errors.append(f"game {i}: {type(e).__name__}: {e}")
                        atomic_write_text(out / "errors.txt", "\n".join(sorted(errors)) + "\n")
                    gm.close()
                    op.close()
                    gm = GtpClient(gomove_cmd, out / f"gomove-{w}.stderr", envs[0])
                    op = GtpClient(opponent_cmd, out / f"opponent-{w}.stderr", envs[1])
                    continue
                atomic_write_text(out / "games" / f"{i:04d}.sgf", game_sgf(r, size, komi, names))
                with lock:
                    with open(out / "results.jsonl", "a") as f:
                        f.write(json.dumps(asdict(r)) + "\n")
                        f.flush()
                    done[i] = r
                    if progress is not None:
                        progress(r, done)
        finally:
            gm.close()
            op.close()

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(max(1, workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [done[i] for i in sorted(done)]


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def summary(results: list[GameResult]) -> dict:
    n = len(results)
    wins = sum(1.0 if r.gomove_won else (0.5 if r.winner == "0" else 0.0) for r in results)
    lo, hi = wilson(wins, n)
    return {
        "games": n,
        "wins": wins,
        "win_rate": wins / n if n else float("nan"),
        "ci95": (lo, hi),
        "as_black": sum(r.gomove_won for r in results if r.gomove_color == "B"),
        "as_white": sum(r.gomove_won for r in results if r.gomove_color == "W"),
        "disagreements": [r.index for r in results if not r.agreed],
        "resigned": sum(r.how == "resign" for r in results),
    }
