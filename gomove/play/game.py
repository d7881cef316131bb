"""GameState: a game in progress as an engine keeps it (board, moves, undo, passes, komi).

The board is rebuilt from the move list on undo, so undo is exact (captures,
ko, superko history) at the cost of a replay, which takes microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gomove.board.board import BLACK, WHITE, Board, new_board, play
from gomove.board.coords import PASS, SUPPORTED_SIZES, loc_to_gtp
from gomove.board.replay import move_error

COLOR_NAMES = {BLACK: "black", WHITE: "white"}


@dataclass
class GameState:
    size: int = 19
    komi: float = 7.5
    moves: list[tuple[int, int]] = field(default_factory=list)  # (color, loc)
    board: Board = field(init=False)

    def __post_init__(self) -> None:
        if not 2 <= self.size <= 19:
            raise ValueError(f"board size {self.size} is not supported (2..19; "
                             f"tested: {SUPPORTED_SIZES})")  # fmt: skip
        self._replay()

    def _replay(self) -> None:
        """The board from the move list (after undo: exact, ko and superko history included)."""
        self.board = new_board(self.size)
        for color, loc in self.moves:
            play(self.board, loc, color)

    @property
    def to_move(self) -> int:
        if not self.moves:
            return BLACK
        return WHITE if self.moves[-1][0] == BLACK else BLACK

    @property
    def passes(self) -> int:
        """Consecutive passes at the end of the game (2: the game is over)."""
        n = 0
        for _, loc in reversed(self.moves):
            if loc != PASS:
                break
            n += 1
        return n

    def check(self, color: int, loc: int) -> str | None:
        """Why color may not play loc now (None: legal; positional superko applies)."""
        return move_error(self.board, loc, color)

    def play(self, color: int, loc: int) -> None:
        why = self.check(color, loc)
        if why is not None:
            raise ValueError(f"{why}: {COLOR_NAMES[color]} {loc_to_gtp(loc, self.size)}")
        play(self.board, loc, color)
        self.moves.append((color, loc))

    def undo(self) -> None:
        if not self.moves:
            raise ValueError("cannot undo: no moves played")
        self.moves.pop()
        self._replay()

    def clear(self, size: int | None = None) -> None:
        if size is not None:
            if not 2 <= size <= 19:
                raise ValueError(f"unacceptable size {size}")
            self.size = size
        self.moves = []
        self._replay()
