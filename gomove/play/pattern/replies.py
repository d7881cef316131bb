"""Last good reply with forgetting (Baier and Drake 2010, LGRF-1): playouts that learn.

A search's simulations tell which answer to a move won; a playout then answers
that move the same way before it draws from the patterns. The patterns are the
same in every position, the replies are learned in the game at hand, so a local
fight the patterns misjudge can be played right after a few simulations.

Terms:
- replies: int32[2, L] (L: the padded board's length), ``replies[c - 1, prev]``
  the move colour c last answered prev with in a simulation c won, -1 for none.
  ``no_replies()`` (shape [2, 0]) turns the rule off. A search owns one table
  for the game it plays (gomove.play.search) and learns into it after every
  simulation; the pattern playouts read it (gomove.play.pattern.playout).
- learning: for each move m of a simulation (tree moves and playout moves)
  after a point move prev, by colour c: c won the simulation, so
  replies[c - 1, prev] = m; c lost and replies[c - 1, prev] is m, so it is
  forgotten (-1). Replies after a pass and pass replies are not kept.
- playable reply: the stored one when it is legal (board.is_legal_arrays)
  and fills none of the mover's own eyes (board.playout's eye), else none, and
  the pattern draw picks the move.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import BLACK, WHITE, is_legal_arrays
from gomove.board.playout import eye_at


def no_replies() -> np.ndarray:
    """The table of a search without the rule: the playouts never find a reply."""
    return np.full((2, 0), -1, np.int32)


def new_replies(board_len: int) -> np.ndarray:
    """An empty table for boards of board_len points (Board.color's length)."""
    return np.full((2, board_len), -1, np.int32)


@njit(cache=True, inline="always")
def playable_reply(replies, bc, head, libs, info, w: int, color: int, last: int) -> int:
    """color's stored reply to the point move last when it is playable, else -1."""
    if last < 0 or last >= replies.shape[1]:
        return -1
    r = replies[color - 1, last]
    if r < 0 or eye_at(bc, w, r, color) or not is_legal_arrays(bc, head, libs, info, r, color):
        return -1
    return r


@njit(cache=True)
def learn_replies(replies, seq, n_seq: int, first_color: int, black_result: float) -> None:
    """Learn from one simulation: seq[:n_seq] its moves (PASS for a pass), played by
    first_color and then alternately; black_result 1 (black won), 0 (white won) or
    1/2 (a draw: nothing learned)."""
    if replies.shape[1] == 0 or black_result == 0.5:
        return
    winner = BLACK if black_result > 0.5 else WHITE
    c = first_color
    for j in range(1, n_seq):
        c = 3 - c  # the colour of seq[j]
        prev, m = seq[j - 1], seq[j]
        if prev < 0 or m < 0:
            continue
        if c == winner:
            replies[c - 1, prev] = m
        elif replies[c - 1, prev] == m:
            replies[c - 1, prev] = -1
