"""PatternPolicy: the learnt light-feature gammas (features.light_gammas) as the playouts use them.

Terms:
- policy file: gomove.features.light_gammas (``policy.npz``); PatternPolicy is
  a LightGammas, so ``PatternPolicy.load`` reads it.
- kernel tables (``PatternPolicy.tables()``, pattern_playout.PolicyTables):
  the file's gammas by pattern3x3 level, plus what a level's 3x3 code tells
  without the board: playable (board.is_legal up to ko and not playout.is_eye,
  both asked once per level by pattern_playout.code_flags), capture possible
  (an opponent in atari), self-atari sure (no capture, one empty orthogonal
  point and no own string out of atari next to it) or possible (no capture,
  at most one empty orthogonal point and an own string out of atari next to
  it: light.self_atari_at decides), the level the
  other colour sees, and which colour's strings are in atari next to it.
  All of these are the same for the 8 symmetries of a code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from gomove.board.board import Board, new_board
from gomove.board.playout import check_playout_args
from gomove.features.light import (
    CAPTURE_OTHER,
    S_EMPTY,
    S_OPP_ATARI,
    S_OWN,
    S_OWN_ATARI,
    code_digits,
    pattern_levels,
    swap_colors,
)
from gomove.features.light_gammas import LEVEL_GROUPS, LightGammas
from gomove.play.pattern_playout import PolicyTables, code_flags, pattern_playouts
from gomove.train.specs import load_checkpoint


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


@dataclass
class PatternPolicy(LightGammas):
    """The gammas of a policy file plus the kernel tables built from them (once)."""

    _tables: PolicyTables | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def from_checkpoint(cls, path: str | Path) -> PatternPolicy:
        """From a model.pt of ``train.py model=mm features=light``."""
        state = load_checkpoint(path)
        log_gamma = state["module"].log_gammas()
        if log_gamma is None:
            raise ValueError(f"{path}: a pattern policy needs an mm model's gammas")
        return cls.from_gammas(state["extractor"].registry, log_gamma.numpy())

    def tables(self) -> PolicyTables:
        """The arrays the playout kernels read (module docstring), built once."""
        if self._tables is None:
            self._tables = self._build_tables()
        return self._tables

    def _build_tables(self) -> PolicyTables:
        m = level_masks()
        level_codes, _ = pattern_levels()
        gamma = np.concatenate([[0.0], self.pattern[level_codes]])
        play = np.where(m["playable"], gamma, 0.0)
        # in gamma_at's order, so that the base gamma rounds as policy_gamma does
        base = play * np.where(m["capture"], self.capture[CAPTURE_OTHER], 1.0)
        base = base * np.where(m["sa_sure"], self.self_atari[1], 1.0)
        return PolicyTables(
            m["level"],
            play,
            base,
            m["sa_sure"],
            m["sa_maybe"],
            m["swap"],
            *(np.ascontiguousarray(self._level(g), dtype=np.float64) for g in LEVEL_GROUPS[:4]),
            m["atari"],
        )

    def run_playouts(
        self,
        board: Board,
        color: int,
        komi: float,
        n: int,
        seed: int,
        max_moves: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """n pattern-policy playouts from board (unchanged), as playout.run_playouts.

        Returns (scores float64[n], owner_counts int64[3, size, size]).
        """
        size, max_moves = check_playout_args(board, color, n, max_moves)
        counts = np.zeros((3, size * size), np.int64)
        scores = pattern_playouts(
            board,
            int(color),
            float(komi),
            int(n),
            np.uint64(seed % 2**64),
            int(max_moves),
            self.tables(),
            counts,
        )
        return scores, counts.reshape(3, size, size)
