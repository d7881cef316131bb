"""Coordinates: the four ways gomove names a point, and conversions between them.

| name     | form                         | example (19x19, the point D4)    |
|----------|------------------------------|----------------------------------|
| sgfmill  | (row, col), row 0 = bottom   | (3, 3)                           |
| pt       | flat point row * size + col  | 60                               |
| loc      | padded index (row+1)*W+col+1 | 4 * 21 + 4 = 88, with W = size+2 |
| GTP      | column letter (no I) + row   | "D4"                             |

The padded board has one ring of WALL points around the playing area, so a
neighbour of any on-board loc is loc +- 1 or loc +- W and never out of range.
A pass is loc PASS (-1); "no move yet" is NO_MOVE (-2). GUIs and KataGo list a
board's values row by row from the top (A19 first on 19x19): ``top_row_first``.
"""

from __future__ import annotations

import numpy as np

PASS = -1
NO_MOVE = -2
MIN_SIZE = 2
MAX_SIZE = 19
SUPPORTED_SIZES = (9, 13, 19)
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


def width(size: int) -> int:
    return size + 2


def to_loc(row: int, col: int, size: int) -> int:
    return (row + 1) * (size + 2) + col + 1


def from_loc(loc: int, size: int) -> tuple[int, int]:
    w = size + 2
    return loc // w - 1, loc % w - 1


def move_to_loc(move: tuple[int, int] | None, size: int) -> int:
    """sgfmill move (row, col) or None (pass) -> loc."""
    if move is None:
        return PASS
    return to_loc(move[0], move[1], size)


def loc_to_move(loc: int, size: int) -> tuple[int, int] | None:
    if loc == PASS:
        return None
    return from_loc(loc, size)


def loc_to_gtp(loc: int, size: int) -> str:
    if loc == PASS:
        return "pass"
    row, col = from_loc(loc, size)
    return f"{GTP_COLUMNS[col]}{row + 1}"


def gtp_to_loc(vertex: str, size: int) -> int:
    v = vertex.strip().upper()
    if v == "PASS":
        return PASS
    col = GTP_COLUMNS.find(v[:1]) if v else -1
    digits = v[1:]
    if col < 0 or not digits.isdigit() or len(digits) > 2:
        raise ValueError(f"{vertex!r} is not a vertex (a letter A-T without I, then a row)")
    row = int(digits) - 1
    if not (0 <= row < size and 0 <= col < size):
        raise ValueError(f"vertex {vertex!r} is off a {size}x{size} board")
    return to_loc(row, col, size)


def top_row_first(grid: np.ndarray) -> np.ndarray:
    """A [size, size] grid in sgfmill order (row 0 at the bottom) as the flat list GUIs
    and KataGo read: row by row from the top, each row left to right."""
    return np.asarray(grid)[::-1].reshape(-1)
