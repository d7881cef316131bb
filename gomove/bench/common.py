"""What every benchmark shares: the config (gomove/configs/experiment/bench.yaml), the
games it reads, its JSON lines, the positions the playouts and searches start from.

Every figure is one JSON object on its own line (``emit``); a figure measured against a
target carries it (``target``) and whether it met it (``ok``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
from omegaconf import DictConfig

from gomove.board.board import BLACK, new_board, play
from gomove.board.replay import board_at
from gomove.experiment.runs import load_experiment
from gomove.playout.driver import playout
from gomove.playout.rng import new_rng
from gomove.reading.games import ReadConfig, iter_games
from gomove.samples import sample_path


@cache
def bench_config() -> DictConfig:
    """gomove/configs/experiment/bench.yaml: suites, targets, the search rows."""
    return load_experiment("bench")


DATA_ENV = "GOMOVE_DATA"  # the folder of the game archives


def emit(record: dict) -> dict:
    print(json.dumps(record), flush=True)
    return record


def data_folder(data: str | None = None) -> str:
    """The folder of the game archives: data, else $GOMOVE_DATA, else the config's
    ``data`` (from the current directory)."""
    return data or os.environ.get(DATA_ENV) or str(bench_config().data)


def games_path(data: str | None = None) -> tuple[str, str | None]:
    """The games to read and, when it is the embedded sample for want of the archive,
    why: data (a folder holding the config's archive means that archive; any other path,
    an archive, an SGF file or folder, is read as it is), else the archive in
    ``data_folder()``, else the embedded sample."""
    archive_name = str(bench_config().archive)
    if data is not None:
        archive = Path(data) / archive_name
        return (str(archive) if archive.is_file() else data), None
    folder = Path(data_folder())
    if (folder / archive_name).is_file():
        return str(folder / archive_name), None
    why = (f"no {archive_name} in {folder} (give --data, or set ${DATA_ENV}): "
           "the embedded sample")  # fmt: skip
    return sample_path("gnugo-train.zip"), why


def load_games(path: str, n: int, superko: bool = False) -> list:
    return list(iter_games(path, ReadConfig(max_games=n, superko=superko)))


def timed(fn: Callable[[], int]) -> tuple[int, float]:
    """(what fn returns, a count; the wall seconds it took)."""
    t = time.perf_counter()
    n = fn()
    return n, time.perf_counter() - t


def playout_positions(games: list) -> list[tuple[str, object, int]]:
    """(name, board, colour to move): empty 9x9 and 19x19, and a mid-game position of each.

    19x19 mid-game: the position before move 120 of the first game read (a real
    game); 9x9 mid-game (no real 9x9 games here): after 30 moves of a seeded
    uniform playout from the empty board.
    """

    out = [("9x9 empty", new_board(9), BLACK), ("19x19 empty", new_board(19), BLACK)]
    b9 = new_board(9)
    moves = np.zeros(30, np.int32)
    playout(b9, BLACK, 7.0, new_rng(7), 30, np.zeros(81, np.int8), moves)
    mid9 = new_board(9)
    color = BLACK
    for m in moves:
        play(mid9, int(m), color)
        color = 3 - color
    out.insert(1, ("9x9 mid-game (30 random moves)", mid9, color))
    game = next((g for g in games if g.size == 19 and len(g.moves) >= 120), None)
    if game is not None:
        b19, to_move = board_at(game, 120)
        out.append(("19x19 mid-game (move 120)", b19, to_move))
    return out
