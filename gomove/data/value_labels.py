"""Labelled positions: a position of an SGF game and its value, one JSON line each.

What gomove.play.labelling writes (a search's or another engine's win rate for
BLACK) and simulation balancing (gomove.train.balance) reads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from gomove.board.board import Board
from gomove.board.replay import board_at
from gomove.reading.games import load_game


@dataclass(frozen=True)
class Labelled:
    """A position of an SGF game (before its move ``move``, 1-based) and its value."""

    sgf: str
    move: int
    value: float  # P(BLACK wins), from the labelling search
    sims: int

    def board(self) -> tuple[Board, int]:
        return board_at(load_game(self.sgf), self.move)


def read_labels(path: str | Path) -> list[Labelled]:
    """The labels of a JSONL file (``label_positions``); a line that does not parse is an error."""
    out = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                out.append(
                    Labelled(str(d["sgf"]), int(d["move"]), float(d["value"]), int(d["sims"]))
                )
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{i}: not a label line ({e})") from None
    return out
