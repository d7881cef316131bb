"""Last good replies (gomove.play.pattern.replies) in the playouts and the search.

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
from synthetic import check_replay

from gomove.board.board import BLACK, NMOVES, WHITE, copy_board, is_legal, new_board, play
from gomove.board.coords import PASS, gtp_to_loc
from gomove.board.playout import default_max_moves, new_rng, play_game, start_state
from gomove.play.pattern.replies import learn_replies, new_replies, no_replies
from gomove.play.policy import PatternPolicy
from gomove.play.search.config import SearchConfig
from gomove.play.search.search import Search


def learn_reference(table: dict, seq: list[int], first_color: int, black: float) -> None:
    if black == 0.5:
        return
    winner = BLACK if black > 0.5 else WHITE
    for j in range(1, len(seq)):
        color = first_color if j % 2 == 0 else 3 - first_color
        prev, move = seq[j - 1], seq[j]
        if prev == PASS or move == PASS:
            continue
        if color == winner:
            table[color, prev] = move
        elif table.get((color, prev)) == move:
            del table[color, prev]


def test_learning_equals_the_rule():
    rnd = random.Random(0)
    n = new_board(5).color.shape[0]
    points = [gtp_to_loc(f"{c}{r}", 5) for c in "ABCDE" for r in range(1, 6)]
    replies, table = new_replies(n), {}
    for _ in range(400):
        # few points, so replies are overwritten and forgotten often
        seq = [rnd.choice(points[:6] + [PASS]) for _ in range(rnd.randrange(0, 12))]
        first, black = rnd.choice((BLACK, WHITE)), rnd.choice((0.0, 1.0, 1.0, 0.5))
        learn_replies(replies, np.array(seq, np.int64), len(seq), first, black)
        learn_reference(table, seq, first, black)
        expect = np.full_like(replies, -1)
        for (c, prev), move in table.items():
            expect[c - 1, prev] = move
        assert np.array_equal(replies, expect)
    assert (replies >= 0).sum() > 0


def test_learning_is_off_without_a_table():
    replies = no_replies()
    learn_replies(replies, np.array([10, 11, 12], np.int64), 3, BLACK, 1.0)
    assert replies.shape == (2, 0)


@pytest.mark.parametrize("seed", range(8))
def test_playouts_answer_by_playable_replies(seed):
    size = 9
    start = new_board(size)
    play(start, gtp_to_loc("E5", size), BLACK)
    n = start.color.shape[0]
    rs = np.random.default_rng(seed)
    points = np.array([gtp_to_loc(f"{c}{r}", size) for c in "ABCDEFGHJ" for r in range(1, 10)])
    replies = new_replies(n)
    # a reply for most points; many are taken or illegal when their turn comes
    has = rs.random((2, len(points))) < 0.8
    for c in range(2):
        replies[c, points[has[c]]] = rs.choice(points, has[c].sum())
    before = replies.copy()
    policy = PatternPolicy.neutral()
    player = policy.player(check=True, replies=replies)
    b = copy_board(start)
    max_moves = default_max_moves(size)
    moves_out = np.full(max_moves, -99, np.int32)
    state = start_state(player, b)
    play_game(b, WHITE, 7.5, new_rng(seed), max_moves, player, state,
              np.zeros(size * size, np.int8), moves_out)  # fmt: skip
    moves = moves_out[: int(b.info[NMOVES] - start.info[NMOVES])].tolist()
    assert int(player.errors[0]) == 0, "incremental gammas differ after reply moves"
    check_replay(start, WHITE, moves, b)
    # replay: each move after a point move is its stored reply exactly when that is playable
    r, color, prev, answered = copy_board(start), WHITE, gtp_to_loc("E5", size), 0
    for move in moves:
        stored = int(replies[color - 1, prev]) if prev != PASS else -1
        playable = (
            stored >= 0
            and is_legal(r, stored, color)
            and not ref.oracle_is_eye(r.color, stored, color, size)
        )
        if playable:
            assert move == stored
            answered += 1
        play(r, move, color)
        prev, color = move, 3 - color
    assert answered > 0
    assert np.array_equal(replies, before)  # playouts read the table, the search writes it


def test_search_learns_keeps_and_forgets_replies(capture_model):
    cfg = SearchConfig(playouts="pattern", pw=False, lgr=True, sims=300, resign=0)
    s = Search(cfg, PatternPolicy.neutral(), capture_model)
    board = new_board(7)
    res = s.run(board, BLACK, 7.5)
    assert s.replies.shape == (2, board.color.shape[0])
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
    assert s.replies.shape == (2, new_board(9).color.shape[0])


def test_lgr_needs_pattern_playouts():
    with pytest.raises(ValueError, match="lgr"):
        SearchConfig(playouts="uniform", pw=False, lgr=True).validate()
