"""Random legal games as SGF bytes, for tests that need real-looking records."""

from __future__ import annotations

import random

import numpy as np
from sgfmill import sgf

from gomove.board.board import BLACK, WHITE, legal_moves, new_board, play
from gomove.board.coords import PASS, from_loc


def random_sgf(size: int, n_moves: int, seed: int) -> bytes:
    """A random legal game (no superko repeats: seeded, short) as SGF bytes."""
    rng = random.Random(seed)
    b = new_board(size)
    out = np.empty(size * size, dtype=np.int64)
    game = sgf.Sgf_game(size)
    game.root.set("KM", 6.5)
    color = BLACK
    for _ in range(n_moves):
        n = legal_moves(b, color, True, out)
        loc = int(out[rng.randrange(n)]) if n and rng.random() > 0.02 else PASS
        play(b, loc, color)
        node = game.extend_main_sequence()
        node.set_move("b" if color == BLACK else "w", None if loc == PASS else from_loc(loc, size))
        color = WHITE if color == BLACK else BLACK
    return game.serialise()
