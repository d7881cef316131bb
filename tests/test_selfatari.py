"""Big self-ataris in the pattern playouts (gomove.board.board.big_self_atari).

- the kernel equals the reference (a self-atari, captures nothing, and the string
  after the move has more than limit stones) on every legal point of random 7x7
  and 9x9 positions, for limits 0 to 4;
- playouts with a limit never draw such a move, play only legal moves that fill
  no own eye, pass only when every such move is a big self-atari, and keep their
  incremental state (check); with no limit they play the same games as a player
  built without the setting.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import reference as ref
from synthetic import check_replay, random_position, recorded_game

from gomove.board.board import BLACK, TO_MOVE, big_self_atari, copy_board, is_legal, play
from gomove.board.coords import PASS
from gomove.play.search.settings import SearchConfig
from gomove.playout.policy import PatternPolicy


def slow(color, loc: int, player: int, size: int, limit: int) -> bool:
    if limit <= 0 or not ref.is_self_atari(color, loc, player, size):
        return False
    new, _ = ref.after_move(color, loc, player, size)
    return len(ref.string_at(new, loc, size)) > limit


@pytest.mark.parametrize("size", [7, 9])
def test_big_self_atari_equals_the_reference(size):
    rnd = random.Random(size)
    met = {False: 0, True: 0}
    for _ in range(300):
        b, _, _, ko = random_position(rnd, size, rnd.randrange(40, 160))
        player = int(b.info[TO_MOVE])
        for loc in ref.legal_moves(b.color, player, size, ko):
            limit = rnd.randrange(0, 5)
            want = slow(b.color, loc, player, size, limit)
            assert big_self_atari(b, loc, player, limit) == want, (loc, limit)
            met[want] += 1
    assert met[True] >= 40, met


def playout_moves(limit: int, seed: int):
    """The moves of one checked neutral-policy playout from a random 9x9 position, with
    a flag per move: was it a big self-atari for the limit."""
    rnd = random.Random(seed)
    start, _, _, _ = random_position(rnd, 9, 30)
    color = int(start.info[TO_MOVE])
    player = PatternPolicy.neutral().player(check=True, selfatari_max=limit)
    moves, final = recorded_game(player, start, color, seed)
    if not limit:
        check_replay(start, color, moves, final)
    assert player.errors[0] == 0
    b, c, flags = copy_board(start), color, []
    for loc in moves:
        if loc == PASS and limit:  # forced: every playable move is a big self-atari
            playable = [p for p in ref.board_points(9) if is_legal(b, p, c)
                        and not ref.oracle_is_eye(b.color, p, c, 9)]  # fmt: skip
            assert all(slow(b.color, p, c, 9, limit) for p in playable)
        elif loc != PASS:
            assert is_legal(b, loc, c) and not ref.oracle_is_eye(b.color, loc, c, 9)
        flags.append(loc != PASS and slow(b.color, loc, c, 9, max(limit, 1)))
        play(b, loc, c)
        c = 3 - c
    assert np.array_equal(b.color, final.color)
    return moves, flags


def test_playouts_never_draw_a_big_self_atari():
    big_without = 0
    for seed in range(40):
        _, flags = playout_moves(0, seed)  # no limit: flags are self-ataris of 2+ stones
        big_without += sum(flags)
        _, flags = playout_moves(1, seed)
        assert not any(flags), seed
    assert big_without >= 20  # the neutral policy plays them without the limit


def test_no_limit_changes_nothing():
    rnd = random.Random(3)
    start, _, _, _ = random_position(rnd, 9, 20)
    policy = PatternPolicy.neutral()
    a, b = (recorded_game(p, start, BLACK, 5)[0]
            for p in (policy.player(), policy.player(selfatari_max=0)))  # fmt: skip
    assert a == b
    with pytest.raises(ValueError, match="selfatari_max"):
        policy.player(selfatari_max=-1)
    with pytest.raises(ValueError, match="selfatari_max"):
        SearchConfig(selfatari_max=2, playouts="uniform").validate()
    with pytest.raises(ValueError, match="selfatari_max"):
        SearchConfig(selfatari_max=-1).validate()
    assert np.all(np.array(a) >= PASS)
