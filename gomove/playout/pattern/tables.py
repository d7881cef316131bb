"""PolicyTables: a policy file's gammas as the playout kernels read them, and what builds them.

Terms:
- kernel tables (``build_tables(gammas)``): the gammas of a LightGammas
  (gomove.features.light_gammas) by pattern3x3 level, plus what a level's 3x3
  code tells without the board (``level_masks``): playable (board.is_legal
  up to ko and not playout.is_eye, both asked once per level by
  ``code_flags``), capture possible (an opponent in atari), self-atari sure
  (no capture, one empty orthogonal point and no own string out of atari next
  to it) or possible (no capture, at most one empty orthogonal point and an
  own string out of atari next to it: board.self_atari_at decides), the level
  the other colour sees, and which colour's strings are in atari next to it.
  All of these are the same for the 8 symmetries of a code.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit

from gomove.board.board import BLACK, EMPTY, KO, WHITE, Board, W, is_legal, new_board
from gomove.board.scoring import is_eye
from gomove.features.levels import CAPTURE_OTHER
from gomove.features.light import (
    S_OPP_ATARI,
    S_OWN_ATARI,
    code_digits,
    pattern_levels,
    swap_colors,
)
from gomove.features.light_gammas import LEVEL_GROUPS, LightGammas
from gomove.features.patterns import S_EMPTY, S_OFF, S_OWN


class PolicyTables(NamedTuple):
    """A policy as the kernels read it (``build_tables``).

    ``level`` maps a raw 3x3 code to its pattern3x3 level (light.pattern_levels;
    a 663 KB table, where per-code gammas would take 2.6 MB and miss the
    cache). Indexed by that level: ``play`` its gamma, 0 where the move is
    illegal up to ko or fills an own eye (``code_flags``); ``sa_sure`` the
    move is a self-atari whatever the board (no capture, one empty orthogonal
    point, no own string out of atari next to it), ``sa_maybe`` it may be one
    (no capture, at most one empty orthogonal point, an own string out of
    atari next to it: board.self_atari_at decides); ``base`` play times the
    capture:other gamma where the code shows a capture, times the self-atari
    gamma where sa_sure (the base gamma); ``swap`` the level the other
    colour sees; ``atari`` which orthogonal strings are in atari, as bits
    1 (WHITE's: BLACK captures) and 2 (BLACK's: WHITE captures), so ``atari[k]
    & color`` is a capture for color, and 0 neither (no capture, no extension).
    The gammas of the other groups by level, 0 (absent) = 1.
    """

    level: np.ndarray  # uint16[N_RAW]
    play: np.ndarray  # float64[K + 1]
    base: np.ndarray  # float64[K + 1]
    sa_sure: np.ndarray  # bool[K + 1]
    sa_maybe: np.ndarray  # bool[K + 1]
    swap: np.ndarray  # int32[K + 1]
    capture: np.ndarray  # float64[5]
    extension: np.ndarray  # float64[2]
    self_atari: np.ndarray  # float64[2]
    contiguity: np.ndarray  # float64[2]
    atari: np.ndarray  # uint8[K + 1]


@njit(cache=True)
def code_flags(b: Board, digits: np.ndarray, legal_out: np.ndarray, eye_out: np.ndarray) -> None:
    """board.is_legal (up to ko) and playout.is_eye of a move for BLACK, per 3x3 code.

    b: an empty 3x3 board; digits: int64[N, 8] (light.code_digits) of codes a
    board can show. Each code's neighbourhood is set on b around the point
    whose off-board neighbours it has (a corner, an edge or the centre), each
    stone a string of its own with one liberty (in atari) or two, and the two
    board rules are asked.
    """
    w = b.info[W]
    # light.py's digit order: orthogonal as board.neighbours, then diagonal
    offsets = np.array([-w, -1, 1, w, -w - 1, -w + 1, w - 1, w + 1])
    for i in range(digits.shape[0]):
        d = digits[i]
        row = 0 if d[0] == S_OFF else (2 if d[3] == S_OFF else 1)
        col = 0 if d[1] == S_OFF else (2 if d[2] == S_OFF else 1)
        loc = (row + 1) * w + col + 1
        for r in range(3):
            for c in range(3):
                b.color[(r + 1) * w + c + 1] = EMPTY
        for k in range(8):
            st = d[k]
            p = loc + offsets[k]
            if st == S_OFF:
                continue
            if st == S_EMPTY:
                b.color[p] = EMPTY
                continue
            b.color[p] = BLACK if st == S_OWN or st == S_OWN_ATARI else WHITE
            b.head[p] = p
            b.nxt[p] = p
            b.nstones[p] = 1
            b.libs[p] = 1 if st == S_OWN_ATARI or st == S_OPP_ATARI else 2
        b.info[KO] = -1
        legal_out[i] = is_legal(b, loc, BLACK)
        eye_out[i] = is_eye(b, loc, BLACK)


@lru_cache(maxsize=1)
def level_masks() -> dict[str, np.ndarray]:
    """Per pattern3x3 level (index 0: none): playable, capture, sa_sure, sa_maybe, swap, atari."""
    level_codes, raw_to_level = pattern_levels()
    d = code_digits(level_codes)
    legal = np.zeros(len(level_codes), np.bool_)
    eye = np.zeros(len(level_codes), np.bool_)
    code_flags(new_board(3), d, legal, eye)
    orth = d[:, :4]
    capture = (orth == S_OPP_ATARI).any(axis=1)
    # bit 1: an opponent (WHITE for BLACK's code) string in atari, BLACK captures;
    # bit 2: an own string in atari, WHITE captures; 0: quiet
    atari = capture.astype(np.uint8) | 2 * (orth == S_OWN_ATARI).any(axis=1).astype(np.uint8)
    playable = legal & ~eye
    empties = (orth == S_EMPTY).sum(axis=1)
    free_own = (orth == S_OWN).any(axis=1)
    sa_sure = playable & ~capture & (empties == 1) & ~free_own
    sa_maybe = playable & ~capture & (empties <= 1) & free_own
    swap = raw_to_level[swap_colors(level_codes)]

    def pad(a, none):
        return np.concatenate([[none], a]).astype(a.dtype)

    return {
        "level": raw_to_level.astype(np.uint16),
        "playable": pad(playable, False),
        "capture": pad(capture, False),
        "sa_sure": pad(sa_sure, False),
        "sa_maybe": pad(sa_maybe, False),
        "swap": pad(swap.astype(np.int32), 0),
        "atari": pad(atari, 0),
    }


def build_tables(g: LightGammas) -> PolicyTables:
    """The kernel tables of a policy's gammas (module docstring)."""
    m = level_masks()
    level_codes, _ = pattern_levels()
    gamma = np.concatenate([[0.0], g.pattern[level_codes]])
    play = np.where(m["playable"], gamma, 0.0)
    # in gamma_at's order, so that the base gamma rounds as policy_gamma does
    base = play * np.where(m["capture"], g.capture[CAPTURE_OTHER], 1.0)
    base = base * np.where(m["sa_sure"], g.self_atari[1], 1.0)
    return PolicyTables(
        m["level"],
        play,
        base,
        m["sa_sure"],
        m["sa_maybe"],
        m["swap"],
        *(np.ascontiguousarray(g.of(name), dtype=np.float64) for name in LEVEL_GROUPS[:4]),
        m["atari"],
    )
