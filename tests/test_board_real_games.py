"""Replays real 19x19 games on the numba board and on sgfmill's board side by side."""

from __future__ import annotations

import itertools
import zipfile
from pathlib import Path

import numpy as np
import pytest
from sgfmill import boards, sgf

from gomove.board.board import (
    BLACK,
    KO,
    WHITE,
    Board,
    count_libs,
    is_legal,
    new_board,
    play,
    setup_stone,
)
from gomove.board.coords import PASS, move_to_loc, to_loc

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
GAMES_PER_ARCHIVE = 350
MIN_GAMES = 2000
CODES = {None: 0, "b": BLACK, "w": WHITE}


def colours(ref: boards.Board) -> np.ndarray:
    """sgfmill's board as int8[size, size] colours, row 0 at the bottom."""
    flat = map(CODES.__getitem__, itertools.chain.from_iterable(ref.board))
    return np.fromiter(flat, np.int8, ref.side * ref.side).reshape(ref.side, ref.side)


def assert_same_colours(b: Board, ref: boards.Board, where: str) -> None:
    w = ref.side + 2
    got = b.color.reshape(w, w)[1:-1, 1:-1]
    want = colours(ref)
    bad = np.argwhere(got != want)
    assert bad.size == 0, f"{where}: colours differ at (row, col) {bad[:5].tolist()}"


def replay(data: bytes, name: str) -> int:
    """Replay one game; return the number of moves played (passes included).

    Checks: every move sgfmill plays is is_legal on the numba board; after
    every move every point has the same colour on both boards and the numba
    ko point is sgfmill's simple-ko point (or -1); at the end every string's
    incremental liberty count equals count_libs.
    """
    game = sgf.Sgf_game.from_bytes(data)
    size = game.get_size()
    ref = boards.Board(size)
    b = new_board(size)
    black, white, empty = game.get_root().get_setup_stones()
    assert not empty, f"{name}: AE in the root"
    ref.apply_setup(black, white, empty)
    for stones, color in ((black, BLACK), (white, WHITE)):
        for row, col in stones:
            setup_stone(b, to_loc(row, col, size), color)
    moves = [node.get_move() for node in game.get_main_sequence()[1:]]
    n = 0
    for colour, move in moves:
        if colour is None:
            continue
        color = BLACK if colour == "b" else WHITE
        where = f"{name} move {n + 1} {colour} {move}"
        loc = move_to_loc(move, size)
        n += 1
        if loc == PASS:
            play(b, PASS, color)
            continue
        assert is_legal(b, loc, color), f"{where}: sgfmill plays it, numba calls it illegal"
        ko = ref.play(move[0], move[1], colour)
        play(b, loc, color)
        want_ko = -1 if ko is None else to_loc(ko[0], ko[1], size)
        assert b.info[KO] == want_ko, f"{where}: ko {b.info[KO]} != sgfmill's {want_ko}"
        assert_same_colours(b, ref, where)
    for p in range(b.color.shape[0]):
        if b.color[p] in (BLACK, WHITE) and b.head[p] == p:
            assert b.libs[p] == count_libs(b, p), f"{name} end: libs of the string at {p}"
    return n


@pytest.mark.data
def test_real_games_match_sgfmill():
    """The first GAMES_PER_ARCHIVE games of every monthly archive replay
    identically on both boards (see replay for the checks); at least
    MIN_GAMES games are replayed."""
    archives = sorted(DATA.glob("*.zip")) if DATA.is_dir() else []
    if not archives:
        pytest.skip(f"no game archives in {DATA}")
    games = moves = 0
    for archive in archives:
        with zipfile.ZipFile(archive) as zf:
            names = [n for n in zf.namelist() if n.endswith(".sgf")][:GAMES_PER_ARCHIVE]
            for name in names:
                moves += replay(zf.read(name), f"{archive.name}:{name}")
                games += 1
    print(f"replayed {games} games, {moves} moves")
    assert games >= MIN_GAMES, f"only {games} games ({moves} moves) replayed"
