"""Rule playouts (gomove/playout/rules.py) against a slow Python statement of the rules.

Every recorded move of games from several positions is replayed on a fresh copy and
checked against the rules as the module docstring states them, with tests/reference.py
deciding strings, liberties, legality and eyes: an answer to the last move when one
exists, else a playable point around it (near = 1), else any playable point, and a pass
only when none is left. Also: the draws among the candidates are uniform, the player's
arguments are checked, and the driver runs the policy reproducibly.
"""

from __future__ import annotations

import numpy as np
import pytest
import reference as ref
from board_ascii import board_from, loc_of
from synthetic import CORNER, EYES

from gomove.board.board import (
    BLACK,
    EMPTY,
    KO,
    LAST,
    NMOVES,
    SIZE,
    WHITE,
    copy_board,
    new_board,
    play,
)
from gomove.board.coords import PASS
from gomove.board.scoring import default_max_moves
from gomove.playout.driver import play_game, run_playouts, start_state
from gomove.playout.rng import new_rng
from gomove.playout.rule import RULES, RulePlayer, rule_player


def big_self_atari(color, loc: int, player: int, size: int, limit: int) -> bool:
    """The move captures nothing and leaves a string of more than limit stones with one
    liberty."""
    new, captured = ref.after_move(color, loc, player, size)
    if captured:
        return False
    stones = ref.string_at(new, loc, size)
    return len(ref.liberties(new, stones, size)) == 1 and len(stones) > limit


def playable(b, loc: int, player: int, limit: int) -> bool:
    size = int(b.info[SIZE])
    c = b.color
    return (
        ref.is_legal(c, loc, player, size, int(b.info[KO]))
        and not ref.oracle_is_eye(c, loc, player, size)
        and not big_self_atari(c, loc, player, size, limit)
    )


def allowed(b, player: int, limit: int) -> tuple[str, set[int]]:
    """Which rule decides the next move of player on b, and the moves it allows."""
    size = int(b.info[SIZE])
    c = b.color
    ko = int(b.info[KO])
    last = int(b.info[LAST])
    if last >= 0 and c[last] == 3 - player:
        answers = set()
        stones = ref.string_at(c, last, size)
        libs = ref.liberties(c, stones, size)
        if len(libs) == 1 and ref.is_legal(c, min(libs), player, size, ko):
            answers.add(min(libs))
        for nb in ref.adjacent(last, size):
            if c[nb] == player:
                own = ref.liberties(c, ref.string_at(c, nb, size), size)
                if len(own) == 1:
                    lib = min(own)
                    if ref.is_legal(c, lib, player, size, ko) and not big_self_atari(
                        c, lib, player, size, 1
                    ):
                        answers.add(lib)
        if answers:
            return "answer", answers
        w = size + 2
        around = {
            last + d
            for d in (-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1)
            if c[last + d] == EMPTY and playable(b, last + d, player, limit)
        }
        if around:
            return "near", around
    return "anywhere", playable_points(b, player, limit) or {PASS}


def playable_points(b, player: int, limit: int) -> set[int]:
    size = int(b.info[SIZE])
    return {p for p in ref.board_points(size) if playable(b, p, player, limit)}


def rule_game(start, color: int, seed: int, player: RulePlayer = RULES) -> list[int]:
    b = copy_board(start)
    max_moves = default_max_moves(int(start.info[SIZE]))
    moves = np.full(max_moves, -99, np.int32)
    owner = np.zeros(int(start.info[SIZE]) ** 2, np.int8)
    play_game(b, color, 0.0, new_rng(seed), max_moves, player, start_state(player, b), owner, moves)
    return moves[: int(b.info[NMOVES] - start.info[NMOVES])].tolist()


def check_rules(
    start, color: int, moves: list[int], limit: int, near: float = 1.0
) -> dict[str, int]:
    """Replay moves; each is one its rule allows (with near < 1, a move the near rule
    decides may also be drawn from anywhere). Returns how often each rule decided."""
    b = copy_board(start)
    used = {"answer": 0, "near": 0, "anywhere": 0}
    for i, loc in enumerate(moves):
        rule, ok = allowed(b, color, limit)
        if rule == "near" and near < 1.0:
            ok = ok | playable_points(b, color, limit)
        assert loc in ok, f"move {i}: {loc} not allowed by rule {rule!r} ({sorted(ok)})"
        used[rule] += 1
        play(b, loc, color)
        color = 3 - color
    return used


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("diagram", [EYES, CORNER, None])
def test_every_move_follows_the_rules(diagram, seed):
    start = new_board(9) if diagram is None else board_from(diagram)
    color = BLACK if seed % 2 else WHITE
    moves = rule_game(start, color, seed)
    assert moves[-2:] == [PASS, PASS]
    used = check_rules(start, color, moves, RULES.selfatari_max)
    assert used["near"] > 0 and used["anywhere"] > 0


def test_every_move_follows_the_rules_19x19():
    used = {"answer": 0, "near": 0, "anywhere": 0}
    for seed in range(2):
        moves = rule_game(new_board(19), BLACK, 50 + seed)
        for k, v in check_rules(new_board(19), BLACK, moves, RULES.selfatari_max).items():
            used[k] += v
    assert all(v > 0 for v in used.values()), used


def test_other_settings_follow_the_rules():
    """near = 0.5: a move after an opponent stone with no answer is next to it or drawn
    from anywhere; a limit of 1 refuses every self-atari of a string."""
    for seed in range(4):
        player = rule_player(selfatari_max=1, near=0.5)
        moves = rule_game(board_from(EYES), BLACK, seed, player)
        check_rules(board_from(EYES), BLACK, moves, 1, near=0.5)


def test_draws_are_uniform_among_the_candidates():
    """After a white stone in the open, black's answer is uniform over the 8 points
    around it; with near = 0 it is uniform over the whole board."""
    size = 9
    start = new_board(size)
    play(start, loc_of("E5", size), WHITE)
    around = {loc_of(p, size) for p in ("D6", "E6", "F6", "D5", "F5", "D4", "E4", "F4")}
    for player, support, n in ((RULES, around, 4000), (rule_player(3, 0.0), None, 16000)):
        hits: dict[int, int] = {}
        for g in range(n):
            b = copy_board(start)
            first = np.zeros(1, np.int32)
            owner = np.zeros(size * size, np.int8)
            state = start_state(player, b)
            play_game(b, BLACK, 0.0, new_rng(3, g), 1, player, state, owner, first)
            hits[int(first[0])] = hits.get(int(first[0]), 0) + 1
        want = support or set(ref.board_points(size)) - {loc_of("E5", size)}
        assert set(hits) == want
        counts = np.array(list(hits.values()), np.float64)
        expected = n / len(want)
        chi2 = ((counts - expected) ** 2 / expected).sum()
        dof = len(want) - 1
        assert chi2 < dof + 5 * np.sqrt(2 * dof), (chi2, hits)  # about 5 sigma


def test_rule_player_checks_its_arguments():
    with pytest.raises(ValueError, match="selfatari_max"):
        rule_player(selfatari_max=0)
    with pytest.raises(ValueError, match="near"):
        rule_player(near=1.5)


def test_run_playouts_with_the_rules_is_reproducible():
    start = board_from(EYES, to_move=WHITE)
    s1, o1 = run_playouts(start, WHITE, 7.5, 12, seed=4, policy=RULES)
    s2, o2 = run_playouts(start, WHITE, 7.5, 12, seed=4, policy=RULES)
    s3, _ = run_playouts(start, WHITE, 7.5, 12, seed=5, policy=RULES)
    assert np.array_equal(s1, s2) and np.array_equal(o1, o2)
    assert not np.array_equal(s1, s3)
    assert (o1.sum(axis=0) == 12).all()
