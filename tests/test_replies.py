"""Last good replies (gomove.playout.pattern.replies, LGRF-1 and -2) in playouts and search.

- learning equals a plain dictionary version of Baier and Drake's rule, on
  random simulations;
- a playout with a table answers every point move by its stored reply exactly
  when that reply is legal and fills no own eye (checked on a replay by the
  reference rules), draws otherwise, and keeps its incremental state right;
- a search with ``lgr`` learns replies, keeps them from move to move and
  forgets them on ``clear()``.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import reference as ref
from synthetic import check_replay, recorded_game

from gomove.board.board import BLACK, WHITE, copy_board, is_legal, new_board, play
from gomove.board.coords import PASS, gtp_to_loc
from gomove.play.search.search import Search
from gomove.play.search.settings import SearchConfig
from gomove.playout.pattern.replies import learn_replies, new_replies, no_replies
from gomove.playout.policy import PatternPolicy


def learn_reference(table: dict, seq: list[int], first_color: int, black: float) -> None:
    """Baier and Drake's rule on a dict: (colour, previous moves) -> reply."""
    if black == 0.5:
        return
    winner = BLACK if black > 0.5 else WHITE
    for j in range(1, len(seq)):
        color = first_color if j % 2 == 0 else 3 - first_color
        move = seq[j]
        keys = [(color, seq[j - 1])]
        if j >= 2:
            keys.append((color, seq[j - 2], seq[j - 1]))
        for key in keys:
            if PASS in key[1:] or move == PASS:
                continue
            if color == winner:
                table[key] = move
            elif table.get(key) == move:
                del table[key]


def table_of(table: dict, n: int, order: int) -> np.ndarray:
    out = new_replies(n, order)
    for key, move in table.items():
        if len(key) == 2:
            out[key[0] - 1, key[1]] = move
        elif order == 2:
            out[key[0] - 1, n + key[1] * n + key[2]] = move
    return out


@pytest.mark.parametrize("order", [1, 2])
def test_learning_equals_the_rule(order):
    rnd = random.Random(order)
    n = new_board(5).color.shape[0]
    points = [gtp_to_loc(f"{c}{r}", 5) for c in "ABCDE" for r in range(1, 6)]
    replies, table = new_replies(n, order), {}
    for _ in range(400):
        # few points, so replies are overwritten and forgotten often
        seq = [rnd.choice(points[:6] + [PASS]) for _ in range(rnd.randrange(0, 12))]
        first, black = rnd.choice((BLACK, WHITE)), rnd.choice((0.0, 1.0, 1.0, 0.5))
        learn_replies(replies, np.array(seq, np.int64), len(seq), first, black, n)
        learn_reference(table, seq, first, black)
        assert np.array_equal(replies, table_of(table, n, order))
    assert (replies[:, :n] >= 0).any()
    if order == 2:
        assert (replies[:, n:] >= 0).any()


def test_learning_is_off_without_a_table():
    replies = no_replies()
    learn_replies(replies, np.array([10, 11, 12], np.int64), 3, BLACK, 1.0, 49)
    assert replies.shape == (2, 0)
    with pytest.raises(ValueError, match="order"):
        new_replies(49, 3)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("seed", range(6))
def test_playouts_answer_by_playable_replies(seed, order):
    size = 9
    start = new_board(size)
    play(start, gtp_to_loc("E5", size), BLACK)
    n = start.color.shape[0]
    rs = np.random.default_rng(seed)
    points = np.array([gtp_to_loc(f"{c}{r}", size) for c in "ABCDEFGHJ" for r in range(1, 10)])
    replies = new_replies(n, order)
    # a reply for most points (and, order 2, most pairs); many are taken or illegal
    # when their turn comes
    has = rs.random((2, len(points))) < 0.8
    for c in range(2):
        replies[c, points[has[c]]] = rs.choice(points, has[c].sum())
        if order == 2:
            pairs = (n + points[:, None] * n + points[None, :]).ravel()
            has2 = rs.random(len(pairs)) < 0.5
            replies[c, pairs[has2]] = rs.choice(points, has2.sum())
    before = replies.copy()
    policy = PatternPolicy.neutral()
    player = policy.player(check=True, replies=replies)
    moves, b = recorded_game(player, start, WHITE, seed)
    assert int(player.errors[0]) == 0, "incremental gammas differ after reply moves"
    check_replay(start, WHITE, moves, b)
    # replay: each move after a point move is the first playable of its stored replies
    # (to the last two moves, then to the last one), else drawn
    r, color, answered = copy_board(start), WHITE, 0
    prev2, prev = PASS, gtp_to_loc("E5", size)
    for move in moves:
        stored = []
        if order == 2 and prev != PASS and prev2 != PASS:
            stored.append(int(replies[color - 1, n + prev2 * n + prev]))
        if prev != PASS:
            stored.append(int(replies[color - 1, prev]))
        playable = [
            x
            for x in stored
            if x >= 0 and is_legal(r, x, color) and not ref.oracle_is_eye(r.color, x, color, size)
        ]
        if playable:
            assert move == playable[0]
            answered += 1
        play(r, move, color)
        prev2, prev, color = prev, move, 3 - color
    assert answered > 0
    assert np.array_equal(replies, before)  # playouts read the table, the search writes it


@pytest.mark.parametrize("order", [1, 2])
def test_search_learns_keeps_and_forgets_replies(capture_model, order):
    cfg = SearchConfig(playouts="pattern", pw=False, lgr=order, sims=300, resign=0)
    s = Search(cfg, PatternPolicy.neutral(), capture_model)
    board = new_board(7)
    res = s.run(board, BLACK, 7.5)
    n = board.color.shape[0]
    assert s.replies.shape == (2, n if order == 1 else n + n * n)
    learned = int((s.replies >= 0).sum())
    assert learned > 0
    play(board, res.move, BLACK)
    s.advance(res.move)
    s.run(board, WHITE, 7.5)
    assert int((s.replies >= 0).sum()) > 0
    s.clear()
    assert int((s.replies >= 0).sum()) == 0
    # another board size: a table of that size
    s.run(new_board(9), BLACK, 7.5, sims=50)
    n = new_board(9).color.shape[0]
    assert s.replies.shape == (2, n if order == 1 else n + n * n)


def test_lgr_needs_pattern_playouts():
    with pytest.raises(ValueError, match="lgr"):
        SearchConfig(playouts="uniform", pw=False, lgr=1).validate()
    with pytest.raises(ValueError, match="lgr"):
        SearchConfig(lgr=3).validate()
