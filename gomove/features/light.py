"""Coulom's light features (2007, section 4.1): cheap enough for playouts, learnt like the others.

One kernel, ``levels_at`` (``light_levels`` on a Board), gives a point's
levels; dataset extraction (``features=light``, gomove.data.visitor) and the
playout policy (gomove/play/pattern/) both call it, so training and playing see the
same features by construction. Groups and levels (0 = absent):

- pass: the pass candidate only, 1 previous move not a pass / 2 a pass (as in
  tactical.py); point moves have none.
- capture (the move captures a string S; the lowest level that applies):
  1 S touches one of our strings in a new atari (one liberty, touching the
  previous move); 2 S holds the previous move (re-capture); 3 the move touches
  the previous move's string (prevent connection); 4 any other capture.
  Tactical.py's levels without ladder reading: its 4 and 5 are 4 here.
- extension: 1 the move is the liberty of one of our strings in a new atari
  (tactical.py's extension without the ladder).
- self_atari: 1 the move captures nothing and leaves its string one liberty.
- contiguity: 1 the move is one of the 8 points around the previous move.
- pattern3x3: the canonical 3x3 code around the move.

3x3 code (``light_code``): the 8 neighbours, colours relative to the player to
move. The 4 orthogonal ones (in ``board.neighbours`` order: below, left,
right, above) take 6 states: EMPTY, OWN, OPP, OFF, OWN_ATARI, OPP_ATARI (a
stone whose string has one liberty, which is then the move's point); the 4
diagonal ones (below-left, below-right, above-left, above-right) take EMPTY,
OWN, OPP, OFF. raw code = sum orth_i 6^i + 1296 sum diag_j 4^j, in
[0, N_RAW). The canonical code is the least raw code over the 8 symmetries of
the square (patterns.SYMMETRIES); the group's levels are the canonical codes
of every raw code a real board can show (off-board points on no side, one
side or one corner), in increasing order, named as the 3x3 diagram top row
first: ``X`` own, ``O`` opponent, ``x``/``o`` in atari, ``.`` empty, ``#``
off, ``*`` the move (``##./#*X/#.o``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from gomove.board.board import (
    Board,
    W,
    self_atari_at,
)
from gomove.features.levels import (
    CAPTURE_OTHER,
    capture_and_extension,
    last_move,
)
from gomove.features.patterns import S_EMPTY, S_OFF, S_OPP, S_OWN, SYMMETRIES, point_state

# the orthogonal points' states: patterns.py's four, and own / opponent in atari
S_OWN_ATARI = 4
S_OPP_ATARI = 5
N_ORTH_STATES = 6
N_DIAG_STATES = 4
DIAG_BASE = N_ORTH_STATES**4  # 1296
N_RAW = DIAG_BASE * N_DIAG_STATES**4  # 331,776

# (dx, dy) of the code's 8 digits: orthogonal in board.neighbours order, then diagonal
ORTH_OFFSETS = ((0, -1), (-1, 0), (1, 0), (0, 1))
DIAG_OFFSETS = ((-1, -1), (1, -1), (-1, 1), (1, 1))

LIGHT_LEVELS = {
    "pass": ("not_after_pass", "after_pass"),
    "capture": ("atari_defence", "recapture", "prevent_connection", "other"),
    "extension": ("new_atari",),
    "self_atari": ("self_atari",),
    "contiguity": ("contiguous",),
}
PATTERN3X3_GROUP = "pattern3x3"  # the group of the 3x3 patterns' levels
LIGHT_GROUPS = (*LIGHT_LEVELS, PATTERN3X3_GROUP)
N_LIGHT = len(LIGHT_GROUPS)
# columns of the light level array: levels.py's shared four (PASS_COL, CAPTURE_COL,
# EXTENSION_COL, SELF_ATARI_COL), then these
CONTIGUITY_COL, PATTERN_COL = 4, 5


# ---- kernels ------------------------------------------------------------------------
# The ``*_at`` kernels take the board's arrays (bc = b.color, head, nxt, libs)
# and w themselves: the playouts unpack them once per game, since numba counts
# a reference each time a Board field is read, which costs more than the
# feature itself. The Board forms below are what everything else calls.


@njit(cache=True, inline="always")
def code_at(bc, head, libs, w: int, loc: int, color: int) -> int:
    """The raw 3x3 code of the empty point loc for color to move (see the docstring)."""
    code = 0
    mult = 1
    for nb in (loc - w, loc - 1, loc + 1, loc + w):
        s = point_state(bc[nb], color)
        if (s == S_OWN or s == S_OPP) and libs[head[nb]] == 1:
            s += S_OWN_ATARI - S_OWN  # S_OWN_ATARI or S_OPP_ATARI
        code += s * mult
        mult *= N_ORTH_STATES
    for d in (loc - w - 1, loc - w + 1, loc + w - 1, loc + w + 1):
        code += point_state(bc[d], color) * mult
        mult *= N_DIAG_STATES
    return code


@njit(cache=True)
def light_code(b: Board, loc: int, color: int) -> int:
    return code_at(b.color, b.head, b.libs, b.info[W], loc, color)


@njit(cache=True, inline="always")
def contiguous(loc: int, last: int, w: int) -> bool:
    """The contiguity level: loc is one of the 8 points around the previous move
    last (PASS or NO_MOVE: none), w the padded board's width."""
    if last < 0 or loc == last:
        return False
    return abs(loc // w - last // w) <= 1 and abs(loc % w - last % w) <= 1


@njit(cache=True, inline="always")
def levels_at(
    bc, head, nxt, libs, w: int, loc: int, color: int, last: int, with_sa: bool
) -> tuple[int, int, int, int, int]:
    """(raw 3x3 code, capture, extension, self_atari, contiguity) of the empty point loc.

    last: the previous move (PASS or NO_MOVE for none), normally b.info[LAST];
    the playouts pass NO_MOVE for the part of a gamma that ignores it.
    with_sa False skips the self-atari test (self_atari 0): the playouts test
    it only for the move they draw. Capture and extension: features/levels.py.
    """
    opp = 3 - color
    code = code_at(bc, head, libs, w, loc, color)
    cont = 1 if contiguous(loc, last, w) else 0
    cap = 0
    ext = 0
    any_cap = False
    any_own_atari = False
    for nb in (loc - w, loc - 1, loc + 1, loc + w):
        c = bc[nb]
        if (c == 1 or c == 2) and libs[head[nb]] == 1:
            if c == opp:
                any_cap = True
            else:
                any_own_atari = True
    if last >= 0 and (any_cap or any_own_atari):
        lm = last_move(bc, head, libs, w, color, last)
        cap, ext = capture_and_extension(bc, head, nxt, libs, w, loc, color, lm)
    elif any_cap:
        cap = CAPTURE_OTHER
    sa = 0
    if with_sa and not any_cap and self_atari_at(bc, head, nxt, libs, w, loc, color):
        sa = 1
    return code, cap, ext, sa, cont


@njit(cache=True)
def light_levels(b: Board, loc: int, color: int, last: int) -> tuple[int, int, int, int, int]:
    """levels_at on b's own arrays: the light levels of the empty point loc (see levels_at)."""
    return levels_at(b.color, b.head, b.nxt, b.libs, b.info[W], loc, color, last, True)


# ---- codes as digits, symmetries, levels ----------------------------------------------


def code_digits(codes: np.ndarray) -> np.ndarray:
    """int64[N, 8] states of raw codes: 4 orthogonal then 4 diagonal digits."""
    codes = np.asarray(codes, dtype=np.int64)
    out = np.empty((len(codes), 8), dtype=np.int64)
    rest = codes.copy()
    for i in range(4):
        out[:, i] = rest % N_ORTH_STATES
        rest //= N_ORTH_STATES
    for j in range(4):
        out[:, 4 + j] = rest % N_DIAG_STATES
        rest //= N_DIAG_STATES
    return out


def digits_code(digits: np.ndarray) -> np.ndarray:
    """The inverse of code_digits."""
    digits = np.asarray(digits, dtype=np.int64)
    orth = N_ORTH_STATES ** np.arange(4)
    diag = DIAG_BASE * N_DIAG_STATES ** np.arange(4)
    return digits[:, :4] @ orth + digits[:, 4:] @ diag


def symmetry_perms() -> np.ndarray:
    """int64[8, 8]: digit k of a code lands on digit perm[s, k] under symmetry s."""
    offsets = ORTH_OFFSETS + DIAG_OFFSETS
    index = {o: k for k, o in enumerate(offsets)}
    return np.array([[index[sym(x, y)] for x, y in offsets] for sym in SYMMETRIES])


def transform(codes: np.ndarray, s: int) -> np.ndarray:
    """Raw codes of the same neighbourhoods under symmetry s."""
    d = code_digits(codes)
    out = np.empty_like(d)
    out[:, symmetry_perms()[s]] = d
    return digits_code(out)


def swap_colors(codes: np.ndarray) -> np.ndarray:
    """Raw codes with own and opponent exchanged (the other player's view)."""
    d = code_digits(codes)
    orth = np.array([S_EMPTY, S_OPP, S_OWN, S_OFF, S_OPP_ATARI, S_OWN_ATARI])
    diag = np.array([S_EMPTY, S_OPP, S_OWN, S_OFF])
    return digits_code(np.concatenate([orth[d[:, :4]], diag[d[:, 4:]]], axis=1))


@lru_cache(maxsize=1)
def canonical_codes() -> np.ndarray:
    """int64[N_RAW]: the least raw code over the 8 symmetries, per raw code."""
    raw = np.arange(N_RAW, dtype=np.int64)
    return np.min(np.stack([transform(raw, s) for s in range(8)]), axis=0)


def board_codes() -> np.ndarray:
    """Every raw code a real board can show: off-board points on no side, one side or a corner."""
    offsets = ORTH_OFFSETS + DIAG_OFFSETS
    out = []
    for ox in (-1, 0, 1):
        for oy in (-1, 0, 1):
            # off: the side(s) (ox, oy) points to; x/y 0 means no side off that way
            off = [(ox != 0 and x == ox) or (oy != 0 and y == oy) for x, y in offsets]
            choices = [
                [S_OFF]
                if off[k]
                else ([S_EMPTY, S_OWN, S_OPP, S_OWN_ATARI, S_OPP_ATARI] if k < 4 else [0, 1, 2])
                for k in range(8)
            ]
            grid = np.stack(np.meshgrid(*choices, indexing="ij"), axis=-1).reshape(-1, 8)
            out.append(digits_code(grid))
    return np.unique(np.concatenate(out))


@lru_cache(maxsize=1)
def pattern_levels() -> tuple[np.ndarray, np.ndarray]:
    """(level_codes int64[K], the canonical code of levels 1..K;
    raw_to_level int32[N_RAW], the level of each raw code, 0 for none)."""
    canon = canonical_codes()
    level_codes = np.unique(canon[board_codes()])
    raw_to_level = np.zeros(N_RAW, dtype=np.int32)
    pos = np.searchsorted(level_codes, canon)
    found = pos < len(level_codes)
    found[found] = level_codes[pos[found]] == canon[found]
    raw_to_level[found] = pos[found] + 1
    return level_codes, raw_to_level


def code_name(code: int) -> str:
    """The 3x3 diagram of a raw code, top row first (see the module docstring)."""
    d = code_digits(np.array([code]))[0]
    orth = ".XO#xo"
    diag = ".XO#"
    o = [orth[k] for k in d[:4]]
    g = [diag[k] for k in d[4:]]
    # rows top to bottom: above-left, above, above-right / left, *, right / below...
    return f"{g[2]}{o[3]}{g[3]}/{o[1]}*{o[2]}/{g[0]}{o[0]}{g[1]}"


def light_level_names() -> dict[str, tuple[str, ...]]:
    """Every light group's level names, in LIGHT_GROUPS order."""
    level_codes, _ = pattern_levels()
    return {**LIGHT_LEVELS, PATTERN3X3_GROUP: tuple(code_name(int(c)) for c in level_codes)}
