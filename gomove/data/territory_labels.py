"""Final-territory labels: who owns every point at the end of a game that was counted.

Stern et al.'s territory predictor learns P(owner | position) from positions
paired with the territory their game ended with; this module makes those pairs
from real game records (issue 37, deliverable 1).

Terms:
- dead stones: decided by playouts from the final position (``final_territory``):
  n playouts, half with black to move first and half with white, of the settle
  policy; a string is dead when the other colour owns its points in most of
  them (the mean over its stones of P(own colour) - P(other colour) is below 0).
- settle policy (gomove.playout.uniform.settle_policy): the uniform policy that
  never plays a self-atari leaving more than ``limit`` stones in atari. A
  finished game of a territory ruleset leaves dame open and groups short of
  liberties; uniform playouts fill them at random and kill big live groups by
  self-atari, and they break every seki. Settle playouts miss the other way:
  dead stones whose capture takes a self-atari stay. Measured by
  ``scripts/territory_labels_check.py`` on the first 150 counted games of
  tygem-9d-2006-06 (512 playouts): the score implied equals the recorded one in
  84.0% of games with settle playouts, 78.0% with uniform ones, 86.7% with the
  pattern policy's (self-atari of at most 3 stones) and 86.7% with GNU Go's
  ``final_status_list dead``; the dead stones are GNU Go's exactly in 92.7%
  (settle), 86.7% (uniform) and 94.0% (pattern) of games, the owners on 99.3%,
  98.9% and 99.6% of points. On all 336 counted games of the first 1,000,
  settle playouts label 296 (88.1%). A caller may pass other playouts
  (``territory_dataset(playouts=...)``), a pattern policy's for example.
- seki: a live string touching an empty point that stays dame (touches both
  colours at the end) in most playouts, a point the settle policy never fills
  because it would be a self-atari. The empty regions such strings alone
  surround (their eyes) are nobody's territory under territory rules.
- owner: int8[size, size], sgfmill [row, col] (row 0 at the bottom, as
  gomove.play.ownership.OwnershipMap): +1 black, -1 white, 0 neither, by area
  after the dead stones are removed: a stone is its colour's, an empty region
  its colour's when it touches stones of that colour only, else 0 (dame, and
  the liberties seki strings share). Eyes in seki are owned by their colour
  here (area counting), but left out of territory_score.
- territory score: the B - W score under territory rules (Japanese, Korean)
  implied by the owner map (``territory_from_dead``'s docstring derives it).
- counted: a result like ``B+2.5`` (``parse_result``); R (resignation), T (time),
  F (forfeit), Void or none are not counted and give no label.
- TerritorySet: every position of every labelled game (the board before each move
  and after the last one), each paired with its game's final owner; cached in
  ``<cache_dir>/territory-<key>.npz`` (``territory_dataset``).
"""

from __future__ import annotations

import itertools
import json
import multiprocessing as mp
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from tqdm import tqdm

from gomove.atomic import atomic_save_npz, atomic_write_json
from gomove.board.board import (
    BLACK,
    EMPTY,
    SIZE,
    WHITE,
    Board,
    W,
    copy_board,
    play,
)
from gomove.board.coords import to_loc
from gomove.board.replay import game_arrays, start_board
from gomove.board.scoring import area_score, judged_dead
from gomove.data.dataset import cache_key, default_workers, input_fingerprint
from gomove.playout.driver import run_playouts
from gomove.playout.uniform import settle_policy
from gomove.reading.games import FILTER_REASONS, ReadConfig, ReadStats, iter_games
from gomove.reading.sgf import Game

LABEL_VERSION = 1  # bump when a label or the cached layout changes
DEFAULT_PLAYOUTS = 512
DEFAULT_LIMIT = 1
SKIP_REASONS = ("not counted", "score mismatch", "unreadable", "filtered")

# (board, colour to move, komi, n, seed) -> (scores float64[n], owner_counts int64[3, size, size])
Playouts = Callable[[Board, int, float, int, int], tuple[np.ndarray, np.ndarray]]


def settle_playouts(limit: int = DEFAULT_LIMIT) -> Playouts:
    """run_playouts with the settle policy, as a Playouts callable."""
    policy = settle_policy(limit)

    def playouts(board: Board, color: int, komi: float, n: int, seed: int):
        return run_playouts(board, color, komi, n, seed, policy=policy)

    return playouts


# ---- one final position ---------------------------------------------------------------


@dataclass(frozen=True)
class FinalTerritory:
    """The end of one game as counted (module docstring); arrays [row, col], sgfmill order."""

    owner: np.ndarray  # int8[size, size]: +1 black, -1 white, 0 neither
    dead: np.ndarray  # bool[size, size]: the stones removed before counting
    seki: np.ndarray  # bool[size, size]: stones of strings in seki and the eyes they surround
    area: int  # black minus white area, no komi: owner.sum()
    territory_score: float  # B - W under territory rules, komi included
    playout_owner: np.ndarray | None = None  # float32[size, size]: P(black) - P(white)

    @property
    def size(self) -> int:
        return self.owner.shape[0]


def _points(size: int) -> np.ndarray:
    """loc of every flat point r * size + c."""
    return to_loc(*np.divmod(np.arange(size * size), size), size)


_SIGNED = np.array([0, 1, -1, 0], np.int8)  # EMPTY, BLACK, WHITE, WALL -> owner sign


def territory_from_dead(
    board: Board,
    komi: float,
    placed_black: int,
    placed_white: int,
    dead: np.ndarray,
    seki_stones: np.ndarray | None = None,
) -> FinalTerritory:
    """The counted end of board once the stones marked ``dead`` (bool[size, size]) are removed.

    seki_stones: bool[size, size], live stones in seki; the empty regions that
    touch them and one colour only are their eyes, not territory.

    The score: let A = area (alive stones + empty points surrounded by one
    colour), S = alive stones, T = territory (surrounded empty points, the
    removed dead stones' points included), P = stones placed in the game
    (moves, passes excluded, plus setup stones), C = stones captured during the
    game, D = dead stones removed at the end, per colour (b, w). A stone
    placed is on the board, was captured, or is dead: S_b = P_b - C_b - D_b.
    Territory rules give black T_b + C_w + D_w (territory plus prisoners) and
    white T_w + C_b + D_b, so
        A_b - A_w = (S_b - S_w) + (T_b - T_w)
                  = (P_b - P_w) + (T_b + C_w + D_w) - (T_w + C_b + D_b),
    i.e. territory score = (A_b - A_w) - (P_b - P_w) - E - komi, where E, the
    black minus white eye points of strings in seki, is what territory rules
    count as nobody's. Dame are nobody's under both rules. A pass hands over
    no stone here (Japanese and Korean rules; AGA-style pass stones would).
    """
    size = int(board.info[SIZE])
    locs = _points(size)
    dead = np.asarray(dead, bool).reshape(size, size)
    judged = copy_board(board)
    judged.color[locs[dead.reshape(-1)]] = EMPTY
    owner3 = np.zeros(size * size, np.int8)
    area_score(judged, 0.0, owner3)
    owner = _SIGNED[owner3].reshape(size, size)
    seki = np.zeros((size, size), bool)
    if seki_stones is not None:
        stones = np.asarray(seki_stones, bool).reshape(size, size) & ~dead
        seki = stones | (_eyes_of(judged.color[locs].reshape(size, size), stones) & (owner != 0))
    stone_here = _SIGNED[judged.color[locs]].reshape(size, size) != 0
    eyes = seki & ~stone_here
    area = int(owner.sum(dtype=np.int64))
    seki_eyes = int(owner[eyes].sum(dtype=np.int64))
    score = float(area - (placed_black - placed_white) - seki_eyes - komi)
    return FinalTerritory(owner, dead, seki, area, score)


def _eyes_of(colour: np.ndarray, stones: np.ndarray) -> np.ndarray:
    """The empty regions of colour (int8[size, size], board colours) touching stones."""
    size = colour.shape[0]
    out = np.zeros((size, size), bool)
    seen = np.zeros((size, size), bool)
    for r0, c0 in zip(*np.nonzero((colour == EMPTY) & ~seen), strict=True):
        if seen[r0, c0]:
            continue
        region = [(r0, c0)]
        seen[r0, c0] = True
        touches = False
        i = 0
        while i < len(region):
            r, c = region[i]
            i += 1
            for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if 0 <= rr < size and 0 <= cc < size:
                    if colour[rr, cc] == EMPTY and not seen[rr, cc]:
                        seen[rr, cc] = True
                        region.append((rr, cc))
                    elif stones[rr, cc]:
                        touches = True
        if touches:
            for r, c in region:
                out[r, c] = True
    return out


def final_territory(
    board: Board,
    komi: float,
    placed_black: int,
    placed_white: int,
    n: int = DEFAULT_PLAYOUTS,
    seed: int = 0,
    playouts: Playouts | None = None,
) -> FinalTerritory:
    """The counted end of a finished game's final position, dead stones and seki decided
    by n playouts (module docstring; settle playouts unless ``playouts`` is given).

    Half of the playouts start with black to move and half with white: at the end
    of a game either side may move next, and neither should decide a fight alone.
    placed_black, placed_white: stones each colour put on the board (see
    territory_from_dead, which derives the score).
    """
    if n < 2:
        raise ValueError(f"need at least 2 playouts, not {n}")
    play_n = playouts or settle_playouts()
    size = int(board.info[SIZE])
    _, first_black = play_n(board, BLACK, komi, n // 2, seed)
    _, first_white = play_n(board, WHITE, komi, n - n // 2, seed + 1)
    counts = (first_black + first_white).reshape(3, size * size)
    own = (counts[BLACK] - counts[WHITE]) / n
    dame = counts[EMPTY] / n
    locs = _points(size)
    sign = _SIGNED[board.color[locs]].astype(np.float64)
    heads = board.head[locs]
    stone = sign != 0
    # a string's fate is one decision: the mean over its stones of "own colour owns it"
    dead = judged_dead(board, own)
    # seki: live strings next to a point that stays dame in most playouts
    after = territory_from_dead(board, komi, placed_black, placed_white, dead.reshape(size, size))
    open_dame = (sign == 0) | dead
    stays = open_dame & (after.owner.reshape(-1) == 0) & (dame > 0.5)
    in_seki = np.zeros(board.color.shape[0], bool)
    w = int(board.info[W])
    for loc in locs[stays]:
        for nb in (loc - w, loc - 1, loc + 1, loc + w):
            if board.color[nb] in (BLACK, WHITE):
                in_seki[board.head[nb]] = True
    seki_stones = (stone & ~dead & in_seki[heads]).reshape(size, size)
    out = territory_from_dead(board, komi, placed_black, placed_white, after.dead, seki_stones)
    return FinalTerritory(
        out.owner, out.dead, out.seki, out.area, out.territory_score,
        own.reshape(size, size).astype(np.float32),
    )  # fmt: skip


# ---- games --------------------------------------------------------------------------

_RESULT = re.compile(r"([BW])\+(\d+(?:\.\d*)?|\.\d+)")


def parse_result(result: str | None) -> float | None:
    """The counted B - W score of an SGF result (``B+2.5`` -> 2.5, ``W+0.5`` -> -0.5,
    ``0``/``Draw``/``Jigo`` -> 0.0); None for R, T, F, Void, an unknown margin or none."""
    text = (result or "").strip()
    if text.lower() in ("0", "draw", "jigo"):
        return 0.0
    m = _RESULT.fullmatch(text.upper())
    if m is None:
        return None
    value = float(m.group(2))
    return value if m.group(1) == "B" else -value


def placed_stones(game: Game) -> tuple[int, int]:
    """Stones black and white put on the board: setup stones and moves, passes not."""
    black = sum(1 for c, _, _ in game.setup if c == BLACK)
    white = sum(1 for c, _, _ in game.setup if c == WHITE)
    black += sum(1 for c, m in game.moves if c == BLACK and m is not None)
    white += sum(1 for c, m in game.moves if c == WHITE and m is not None)
    return black, white


def game_territory(
    game: Game, n: int = DEFAULT_PLAYOUTS, seed: int = 0, playouts: Playouts | None = None
) -> FinalTerritory:
    """final_territory of a game's position after its last move."""
    ga = game_arrays(game)
    b = start_board(ga)
    for loc, color in zip(ga.locs, ga.colors, strict=True):
        play(b, int(loc), int(color))
    return final_territory(b, game.komi, *placed_stones(game), n=n, seed=seed, playouts=playouts)


def label_game(
    game: Game, n: int = DEFAULT_PLAYOUTS, seed: int = 0, playouts: Playouts | None = None
) -> tuple[FinalTerritory | None, str | None]:
    """(the game's final territory, None), or (None, why it gets no label): ``not counted``
    (no score in its result) or ``score mismatch`` (the territory score implied is not
    the recorded one). The check is exact: results are half points, and a wrong dead
    string or a missed seki eye moves the score by at least one point."""
    recorded = parse_result(game.result)
    if recorded is None:
        return None, "not counted"
    final = game_territory(game, n, seed, playouts)
    if abs(final.territory_score - recorded) > 1e-6:
        return None, "score mismatch"
    return final, None


@njit(cache=True)
def _positions(b: Board, locs: np.ndarray, colors: np.ndarray, points: np.ndarray, out) -> None:
    """out[i] = the signed colours (+1 black, -1 white) at points before move i; out[-1]
    after the last move (b is played to the end)."""
    n = locs.shape[0]
    for i in range(n + 1):
        for p in range(points.shape[0]):
            c = b.color[points[p]]
            out[i, p] = 1 if c == BLACK else (-1 if c == WHITE else 0)
        if i < n:
            play(b, locs[i], colors[i])


class _Labelled(NamedTuple):
    """One labelled game's arrays, as a worker returns them."""

    owner: np.ndarray  # int8[N]
    colour: np.ndarray  # int8[M + 1, N]
    to_move: np.ndarray  # int8[M + 1]
    seki: bool


def _game_positions(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """(colour int8[M + 1, N], to_move int8[M + 1]) of every position of a game."""
    ga = game_arrays(game)
    n = len(ga.locs)
    colour = np.zeros((n + 1, game.size * game.size), np.int8)
    _positions(start_board(ga), ga.locs, ga.colors, _points(game.size), colour)
    movers = np.append(ga.colors, WHITE if n and ga.colors[-1] == BLACK else BLACK)
    if n == 0:
        movers[0] = game.first_color
    return colour, np.where(movers == BLACK, 1, -1).astype(np.int8)


# the labelling settings of a territory_dataset call, set before its pool forks
_JOB: tuple[int, int, Playouts | None] = (DEFAULT_PLAYOUTS, 0, None)


def _label_task(game: Game) -> _Labelled | str:
    n, seed, playouts = _JOB
    final, why = label_game(game, n, seed, playouts)
    if final is None:
        return str(why)
    colour, to_move = _game_positions(game)
    return _Labelled(final.owner.reshape(-1), colour, to_move, bool(final.seki.any()))


# ---- the dataset ------------------------------------------------------------------


@dataclass
class TerritorySet:
    """Every position of the labelled games, each with its game's final owner.

    Flat points r * size + c (sgfmill rows, row 0 at the bottom).
    """

    size: int
    colour: np.ndarray  # int8[P, size*size]: +1 black, -1 white, 0 empty
    to_move: np.ndarray  # int8[P]: +1 black, -1 white
    move: np.ndarray  # int16[P]: moves played before the position (0: the start)
    game: np.ndarray  # int32[P]: the position's game, an index into the per-game arrays
    owner: np.ndarray  # int8[G, size*size]: the final owner (module docstring)
    komi: np.ndarray  # float32[G]
    result: np.ndarray  # float32[G]: the recorded B - W score
    n_moves: np.ndarray  # int16[G]
    names: list[str]  # [G]: each game's source
    stats: dict[str, Any]  # games read, labelled, skipped by reason (SKIP_REASONS), ...

    def __len__(self) -> int:
        return len(self.move)

    @property
    def n_games(self) -> int:
        return len(self.names)

    def at_move(self, at: int | str) -> np.ndarray:
        """Indices of the positions after ``at`` moves; "last": each game's final position."""
        target = self.n_moves[self.game] if at == "last" else np.int64(int(at))
        return np.flatnonzero(self.move == target)

    def positions_owner(self, idx: np.ndarray) -> np.ndarray:
        """The final owner int8[len(idx), size*size] paired with positions idx."""
        return self.owner[self.game[idx]]


_ARRAYS = ("colour", "to_move", "move", "game", "owner", "komi", "result", "n_moves")


def territory_path(
    paths: Any,
    cache_dir: str | Path,
    max_games: int | None = None,
    size: int = 19,
    n: int = DEFAULT_PLAYOUTS,
    seed: int = 0,
    method: str = f"settle-{DEFAULT_LIMIT}",
) -> Path:
    """Where territory_dataset caches its set: ``<cache_dir>/territory-<key>.npz``."""
    key = cache_key(
        "territory", input_fingerprint(paths), max_games, size, n, seed, method, LABEL_VERSION
    )
    return Path(cache_dir) / f"territory-{key}.npz"


def territory_dataset(
    paths: Any,
    cache_dir: str | Path,
    max_games: int | None = None,
    progress: bool = True,
    size: int = 19,
    n: int = DEFAULT_PLAYOUTS,
    seed: int = 0,
    playouts: Playouts | None = None,
    method: str | None = None,
    workers: int | None = None,
) -> TerritorySet:
    """The labelled positions of the first max_games games of paths (in file order, as the
    standard split reads them; unreadable and filtered records not counted), computed
    once per cache key and loaded from ``territory_path`` after.

    size: the board size kept (others are filtered). n, seed: the playouts of
    each final position (final_territory). playouts: other playouts than the
    settle policy's (for example a pattern policy's, from a layer above); then
    ``method`` must name them, since it keys the cache. Labelling runs on
    ``workers`` processes (default_workers()).
    """
    if playouts is not None and method is None:
        raise ValueError(
            "territory_dataset: name the playouts given (method=...): it keys the cache"
        )
    method = method or f"settle-{DEFAULT_LIMIT}"
    path = territory_path(paths, cache_dir, max_games, size, n, seed, method)
    if path.exists():
        return load_territory(path)
    t0 = time.time()
    data = _label_games(paths, max_games, size, n, seed, playouts, workers, progress)
    data.stats["seconds"] = round(time.time() - t0, 1)
    data.stats["method"] = method
    save_territory(path, data)
    return data


def _label_games(
    paths: Any,
    max_games: int | None,
    size: int,
    n: int,
    seed: int,
    playouts: Playouts | None,
    workers: int | None,
    progress: bool,
) -> TerritorySet:
    global _JOB
    # Tygem and the other territory rulesets end a game on a repeated position: no superko
    read = ReadStats()
    games = iter_games(paths, ReadConfig(sizes=(size,), max_games=max_games, superko=False), read)
    workers = workers or default_workers()
    skipped: Counter[str] = Counter()
    kept: list[tuple[Game, _Labelled]] = []
    bar = tqdm(total=max_games, desc="territory labels", unit="game", disable=not progress)
    _JOB = (n, seed, playouts)
    pool = None
    if workers > 1:
        _warm_up(playouts)  # compile before forking, not once per worker
        pool = mp.get_context("fork").Pool(workers)
    try:
        pairs = _games_and_labels(games, pool)
        for game, out in pairs:
            bar.update(1)
            if isinstance(out, str):
                skipped[out] += 1
            else:
                kept.append((game, out))
    finally:
        bar.close()
        if pool is not None:
            pool.close()
            pool.join()
        _JOB = (DEFAULT_PLAYOUTS, 0, None)
    skipped["unreadable"] = sum(v for k, v in read.skipped.items() if k not in FILTER_REASONS)
    skipped["filtered"] = sum(v for k, v in read.skipped.items() if k in FILTER_REASONS)
    return _assemble(kept, size, read, skipped)


def _games_and_labels(games, pool, batch: int = 256) -> Iterator[tuple[Game, _Labelled | str]]:
    """(game, _label_task(game)) in reading order, on the pool when there is one, which
    is handed ``batch`` games at a time (so that reading never runs far ahead)."""
    if pool is None:
        for game in games:
            yield game, _label_task(game)
        return
    while chunk := list(itertools.islice(games, batch)):
        yield from zip(chunk, pool.imap(_label_task, chunk, chunksize=4), strict=True)


def _warm_up(playouts: Playouts | None) -> None:
    b = start_board(game_arrays(Game("warm-up", 9, 0.0, 0, [], [])))
    final_territory(b, 0.0, 0, 0, n=2, playouts=playouts)


def _assemble(
    kept: list[tuple[Game, _Labelled]], size: int, read: ReadStats, skipped: Counter[str]
) -> TerritorySet:
    pts = size * size
    moves = [len(lab.to_move) for _, lab in kept]
    game = np.repeat(np.arange(len(kept), dtype=np.int32), moves)
    move = np.concatenate([np.arange(m, dtype=np.int16) for m in moves] or [np.zeros(0, np.int16)])
    stats = {
        "records": read.files,
        "games": read.games,
        "labelled": len(kept),
        "positions": int(sum(moves)),
        "skipped": {r: int(skipped[r]) for r in SKIP_REASONS},
        "seki": sum(lab.seki for _, lab in kept),
    }
    return TerritorySet(
        size=size,
        colour=np.concatenate([lab.colour for _, lab in kept] or [np.zeros((0, pts), np.int8)]),
        to_move=np.concatenate([lab.to_move for _, lab in kept] or [np.zeros(0, np.int8)]),
        move=move,
        game=game,
        owner=np.array([lab.owner for _, lab in kept], np.int8).reshape(len(kept), pts),
        komi=np.array([g.komi for g, _ in kept], np.float32),
        result=np.array([parse_result(g.result) for g, _ in kept], np.float32),
        n_moves=np.array([len(g.moves) for g, _ in kept], np.int16),
        names=[g.source for g, _ in kept],
        stats=stats,
    )


def save_territory(path: str | Path, data: TerritorySet) -> None:
    """Write data to path (npz, compressed) atomically, and a JSON sidecar for people."""
    meta = {"label_version": LABEL_VERSION, "size": data.size, "stats": data.stats}
    arrays = {name: getattr(data, name) for name in _ARRAYS}
    names = np.array(data.names, dtype=str) if data.names else np.zeros(0, "<U1")
    atomic_save_npz(path, compress=True, names=names, meta=np.array(json.dumps(meta)), **arrays)
    atomic_write_json(Path(path).with_suffix(".json"), meta)


def load_territory(path: str | Path) -> TerritorySet:
    """A TerritorySet that save_territory wrote."""
    with np.load(path) as z:
        meta = json.loads(str(z["meta"]))
        if meta["label_version"] != LABEL_VERSION:
            raise ValueError(
                f"{path}: territory labels version {meta['label_version']}, "
                f"expected {LABEL_VERSION}; delete it to rebuild"
            )
        arrays = {name: z[name] for name in _ARRAYS}
        names = [str(s) for s in z["names"]]
    return TerritorySet(size=meta["size"], names=names, stats=meta["stats"], **arrays)
