"""Last good reply with forgetting (Baier and Drake 2010, LGRF-1 and -2): playouts that learn.

A search's simulations tell which answer to a move won; a playout then answers
that move the same way before it draws from the patterns. The patterns are the
same in every position, the replies are learned in the game at hand, so a local
fight the patterns misjudge can be played right after a few simulations.

Terms:
- replies: int32[2, L] (order 1; L: the padded board's length),
  ``replies[c - 1, prev]`` the move colour c last answered prev with in a
  simulation c won, -1 for none; order 2 (LGRF-2) appends the replies to the
  last two moves, int32[2, L + L * L], ``replies[c - 1, L + prev2 * L + prev]``.
  The order is the table's shape; ``no_replies()`` (shape [2, 0]) turns the
  rule off. A search owns one table for the game it plays (gomove.play.search)
  and learns into it after every simulation; the pattern playouts read it
  (gomove.playout.pattern.playout).
- learning: for each move m of a simulation (tree moves and playout moves)
  by colour c after the point move prev (and prev2 before it): c won the
  simulation, so the reply to prev (and to prev2, prev) becomes m; c lost
  and the stored reply is m, so it is forgotten (-1). Replies after a pass
  and pass replies are not kept.
- playable reply: the stored one when it is legal (board.is_legal_arrays)
  and fills none of the mover's own eyes (board.scoring's eye); order 2 tries
  the reply to the last two moves first, then the reply to the last one; with
  none, the pattern draw picks the move.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import BLACK, WHITE, is_legal_arrays
from gomove.board.scoring import eye_at


def no_replies() -> np.ndarray:
    """The table of a search without the rule: the playouts never find a reply."""
    return np.full((2, 0), -1, np.int32)


def replies_width(board_len: int, order: int) -> int:
    """A table's width for boards of board_len points (Board.color's length) and the
    order (1 or 2): the order is read back from it."""
    if order not in (1, 2):
        raise ValueError(f"last good replies of order 1 or 2, not {order}")
    return board_len if order == 1 else board_len * (1 + board_len)


def new_replies(board_len: int, order: int = 1) -> np.ndarray:
    """An empty table of the given order (1 or 2) for boards of board_len points."""
    return np.full((2, replies_width(board_len, order)), -1, np.int32)


@njit(cache=True, inline="always")
def _playable(r: int, bc, head, libs, info, w: int, color: int) -> bool:
    return (
        r >= 0 and not eye_at(bc, w, r, color) and is_legal_arrays(bc, head, libs, info, r, color)
    )


@njit(cache=True, inline="always")
def playable_reply(replies, bc, head, libs, info, w: int, color: int, last: int, last2: int) -> int:
    """color's stored reply to the last two moves (order 2) or else to the last one,
    when it is playable; else -1."""
    n = bc.shape[0]
    if replies.shape[1] == 0 or last < 0:
        return -1
    if replies.shape[1] > n and last2 >= 0:
        r = replies[color - 1, n + last2 * n + last]
        if _playable(r, bc, head, libs, info, w, color):
            return r
    r = replies[color - 1, last]
    return r if _playable(r, bc, head, libs, info, w, color) else -1


@njit(cache=True, inline="always")
def _learn(replies, slot: int, c: int, winner: int, m: int) -> None:
    if c == winner:
        replies[c - 1, slot] = m
    elif replies[c - 1, slot] == m:
        replies[c - 1, slot] = -1


@njit(cache=True)
def learn_replies(
    replies, seq, n_seq: int, first_color: int, black_result: float, board_len: int
) -> None:
    """Learn from one simulation: seq[:n_seq] its moves (PASS for a pass), played by
    first_color and then alternately; black_result 1 (black won), 0 (white won) or
    1/2 (a draw: nothing learned)."""
    if replies.shape[1] == 0 or black_result == 0.5:
        return
    n = board_len
    order2 = replies.shape[1] > n
    winner = BLACK if black_result > 0.5 else WHITE
    c = first_color
    for j in range(1, n_seq):
        c = 3 - c  # the colour of seq[j]
        prev, m = seq[j - 1], seq[j]
        if prev < 0 or m < 0:
            continue
        _learn(replies, prev, c, winner, m)
        if order2 and j >= 2 and seq[j - 2] >= 0:
            _learn(replies, n + seq[j - 2] * n + prev, c, winner, m)
