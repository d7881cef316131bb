"""Game packs: many games' records parsed once, in one small file that reads back fast.

A pack (``NAME.gomove-games.npz``, written by ``gomove data PATH... --pack OUT``) holds
every game's main line as numbers: what gomove keeps of an SGF record (gomove.reading.sgf's
Game), nothing else. Reading a pack skips sgfmill and the archive's decompression of
every member, and the large split's 147,329 games fit in a file small enough to carry to
another machine. gomove.reading.games reads packs wherever it reads SGF inputs (a
``data.train`` entry can be one); the games are replayed and filtered as any others.

Arrays (G games, M moves, S setup stones), compressed:
- ``format`` (str ``gomove-games``) and ``version`` (1);
- ``size`` uint8[G], ``komi`` float64[G], ``handicap`` int16[G];
- ``move_start`` int64[G + 1], ``moves`` uint16[M]: game g's moves are
  moves[move_start[g]:move_start[g + 1]], each the point row * size + col (PASS_CODE for a
  pass) with the colour in the top bit (set for white);
- ``setup_start`` int64[G + 1], ``setup`` uint16[S]: the root's AB/AW stones alike;
- ``meta`` uint8[]: UTF-8 JSON, one list a game of its source, result, ranks, date and
  player names (None where the record had none).
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from gomove.atomic import atomic_save_npz
from gomove.board.board import BLACK, WHITE
from gomove.reading.sgf import Game, GameError

PACK_SUFFIX = ".gomove-games.npz"
FORMAT, VERSION = "gomove-games", 1
WHITE_BIT = 1 << 15
PASS_CODE = WHITE_BIT - 1  # no point of a 19x19 board (at most 360)
META = ("source", "result", "black_rank", "white_rank", "date", "black", "white")


def _code(color: int, point: tuple[int, int] | None, size: int) -> int:
    where = PASS_CODE if point is None else point[0] * size + point[1]
    return where | (WHITE_BIT if color == WHITE else 0)


def _point(code: int, size: int) -> tuple[int, tuple[int, int] | None]:
    color = WHITE if code & WHITE_BIT else BLACK
    where = code & ~WHITE_BIT
    return color, None if where == PASS_CODE else divmod(where, size)


def write_pack(games: Iterable[Game], path: str | Path) -> int:
    """Write games (any iterable: they are read once, held as numbers) to path, atomically;
    returns how many."""
    size, komi, handicap = array("B"), array("d"), array("h")
    moves, setup = array("H"), array("H")
    move_start, setup_start = array("q", [0]), array("q", [0])
    meta: list[list[str | None]] = []
    for g in games:
        size.append(g.size)
        komi.append(g.komi)
        handicap.append(g.handicap)
        moves.extend(_code(c, p, g.size) for c, p in g.moves)
        setup.extend(_code(c, (r, col), g.size) for c, r, col in g.setup)
        move_start.append(len(moves))
        setup_start.append(len(setup))
        meta.append([getattr(g, k) for k in META])
    atomic_save_npz(
        path,
        compress=True,
        format=np.array(FORMAT),
        version=np.array(VERSION),
        size=np.frombuffer(size, np.uint8),
        komi=np.frombuffer(komi, np.float64),
        handicap=np.frombuffer(handicap, np.int16),
        move_start=np.frombuffer(move_start, np.int64),
        moves=np.frombuffer(moves, np.uint16),
        setup_start=np.frombuffer(setup_start, np.int64),
        setup=np.frombuffer(setup, np.uint16),
        meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
    )
    return len(meta)


def read_pack(path: str | Path) -> Iterator[tuple[str, Game | GameError]]:
    """(source, Game) for every game of the pack at path, in the order written; one
    GameError("read") for a file that is not a readable pack."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["format"]) != FORMAT or int(z["version"]) != VERSION:
                raise ValueError(f"not a version-{VERSION} {FORMAT} pack")
            a = {k: z[k] for k in z.files}
        meta = json.loads(a["meta"].tobytes().decode())
        if not len(meta) == len(a["size"]) == len(a["move_start"]) - 1:
            raise ValueError("its arrays disagree on the number of games")
    except (OSError, ValueError, KeyError, EOFError) as e:  # zipfile errors are OSError/ValueError
        yield str(path), GameError("read", str(path), None, f"not a game pack: {e}")
        return
    ms, ss = a["move_start"], a["setup_start"]
    for i, fields in enumerate(meta):
        n = int(a["size"][i])
        info = dict(zip(META, fields, strict=True))
        moves = [_point(int(c), n) for c in a["moves"][ms[i] : ms[i + 1]]]
        setup = [(c, *p) for c, p in (_point(int(c), n) for c in a["setup"][ss[i] : ss[i + 1]])]
        yield (
            info["source"],
            Game(
                size=n,
                komi=float(a["komi"][i]),
                handicap=int(a["handicap"][i]),
                setup=setup,
                moves=moves,
                **info,
            ),
        )
