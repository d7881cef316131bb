"""ASCII boards for tests: build a numba Board from a diagram, and draw one back.

Terms:
- diagram: rows of ``X`` (black), ``O`` (white) and ``.`` (empty), top row
  first; spaces and blank lines are ignored. The number of rows is the board
  size, and the top row is sgfmill row size - 1 (so the bottom-left point is
  "A1" as in GTP).
"""

from __future__ import annotations

from gomove.board.board import (
    BLACK,
    EMPTY,
    KO,
    SIZE,
    TO_MOVE,
    WHITE,
    Board,
    new_board,
    setup_stone,
)
from gomove.board.coords import gtp_to_loc, to_loc

CHARS = {".": EMPTY, "X": BLACK, "O": WHITE}
SYMBOLS = {EMPTY: ".", BLACK: "X", WHITE: "O"}


def parse(text: str) -> list[list[int]]:
    """Diagram -> colours[row][col] with row 0 at the bottom (sgfmill order)."""
    rows = [line.replace(" ", "") for line in text.strip().splitlines()]
    rows = [row for row in rows if row]
    size = len(rows)
    for row in rows:
        if len(row) != size or any(ch not in CHARS for ch in row):
            raise ValueError(f"bad diagram row {row!r} for a {size}x{size} board")
    return [[CHARS[ch] for ch in row] for row in reversed(rows)]


def board_from(text: str, to_move: int = BLACK) -> Board:
    """A Board holding the diagram's stones as setup stones, to_move to play.

    Raises ValueError when a diagram string has no liberties (setup would
    silently capture it, so the board would not show the diagram).
    """
    grid = parse(text)
    size = len(grid)
    b = new_board(size)
    for row in range(size):
        for col in range(size):
            if grid[row][col] != EMPTY:
                setup_stone(b, to_loc(row, col, size), grid[row][col])
    if to_text(b) != to_text_grid(grid):
        raise ValueError("diagram has a string without liberties:\n" + text)
    b.info[TO_MOVE] = to_move
    b.info[KO] = -1
    return b


def loc_of(coord: str | tuple[int, int], size: int) -> int:
    """ "D4" (GTP, no I) or sgfmill (row, col) -> padded loc."""
    if isinstance(coord, str):
        return gtp_to_loc(coord, size)
    row, col = coord
    if not (0 <= row < size and 0 <= col < size):
        raise ValueError(f"point {coord!r} is off a {size}x{size} board")
    return to_loc(row, col, size)


def to_text_grid(grid: list[list[int]]) -> str:
    return "\n".join(" ".join(SYMBOLS[c] for c in row) for row in reversed(grid))


def to_text(b: Board) -> str:
    """The board as a diagram (top row first), the inverse of board_from."""
    size = int(b.info[SIZE])
    grid = [[int(b.color[to_loc(r, c, size)]) for c in range(size)] for r in range(size)]
    return to_text_grid(grid)
