"""Pattern-policy playouts (gomove/play/pattern/) and the policy file (policy.py).

Invariants checked:
- every playout ends (two passes in a row, or max_moves); replayed on a fresh
  copy every move is legal (``is_legal``), none fills the mover's own eye, a
  side passes only when it has no legal non-eye move, and the score is the
  flood-fill oracle's (test_playout.check_game's checks), on many seeded runs;
- incremental == full: before every draw of seeded playouts on 9x9, 13x13
  and 19x19, each point's proposal weight times its acceptance equals
  policy_gamma recomputed from light_levels, both colours' base gammas equal
  a recomputation and the row sums equal fresh sums (``check=True``), also
  with a self-atari gamma above 1;
- the first move's empirical frequencies on a fixed position with a previous
  move match the gamma proportions (chi-square, fixed seed), and still do
  when nearly every proposal is rejected and the full-scan draw takes over;
- the playable table (code_flags) equals is_legal and not is_eye on random
  positions, sa_sure levels are self-ataris and levels neither sa_sure nor
  sa_maybe are not; same seed, same games; the playout driver (run_games)
  equals game-by-game play_game; run_playouts leaves the board unchanged,
  counts sum to n;
- the checker (check_gammas) is silent on a sound state and counts each kind
  of corruption of it (a base gamma, a row sum, a level, the atari list, a
  hot point's value), also through a checked playout;
- policy file round trip, from_gammas against the registry, version check;
  ``train.py model=mm features=light`` writes a policy.npz that loads and
  equals the checkpoint's.
"""

from __future__ import annotations

import numpy as np
import pytest
import reference as ref
import torch
from board_ascii import board_from, loc_of
from synthetic import CORNER, EYES, check_replay, random_policy, tiny

from gomove.board.board import (
    BLACK,
    KO,
    LAST,
    NMOVES,
    SIZE,
    WHITE,
    Board,
    copy_board,
    is_legal,
    is_self_atari,
    legal_moves,
    new_board,
    play,
)
from gomove.board.coords import NO_MOVE, PASS
from gomove.board.scoring import default_max_moves, is_eye
from gomove.features.levels import last_move
from gomove.features.light import (
    LIGHT_LEVELS,
    N_RAW,
    light_code,
    pattern_levels,
)
from gomove.features.light_gammas import LEVEL_GROUPS
from gomove.models.checkpoint import load_checkpoint
from gomove.playout.driver import play_game, reset_state, run_games, run_playouts, start_state
from gomove.playout.pattern.check import check_gammas
from gomove.playout.pattern.draw import collect_hot, hot_gammas, policy_gamma
from gomove.playout.policy import PatternPolicy
from gomove.playout.rng import new_rng, seed_state
from gomove.train.trainers import run


def with_self_atari(policy: PatternPolicy, gamma: float) -> PatternPolicy:
    sa = np.array([1.0, gamma])
    return PatternPolicy(
        policy.pattern, policy.capture, policy.extension, sa, policy.contiguity, policy.pass_
    )


POLICIES = {
    "random": random_policy(0),
    "neutral": PatternPolicy.neutral(),
    # self-ataris favoured: the acceptance test then scales the other moves down
    "self-atari 8": with_self_atari(random_policy(1), 8.0),
}


def recorded(start: Board, color: int, seed: int, policy: PatternPolicy, check: bool = True):
    """One pattern playout on a copy of start: (final board, score, owner, moves, errors)."""
    size = int(start.info[SIZE])
    max_moves = default_max_moves(size)
    b = copy_board(start)
    owner = np.full(size * size, -1, np.int8)
    moves = np.full(max_moves, -99, np.int32)
    player = policy.player(check)
    state = start_state(player, b)
    score = play_game(b, color, 7.5, new_rng(seed), max_moves, player, state, owner, moves)
    n = int(b.info[NMOVES] - start.info[NMOVES])
    return b, score, owner, moves[:n].tolist(), int(player.errors[0])


def check_pattern_game(start: Board, color: int, seed: int, policy: PatternPolicy) -> None:
    size = int(start.info[SIZE])
    final, score, owner, moves, errors = recorded(start, color, seed, policy)
    assert errors == 0, f"{errors} gammas differ from the full recomputation"
    max_moves = default_max_moves(size)
    assert len(moves) == max_moves or moves[-2:] == [PASS, PASS]
    assert all(moves[i] != PASS or moves[i + 1] != PASS for i in range(len(moves) - 2))
    check_replay(start, color, moves, final)
    assert (score, owner.tolist()) == ref.oracle_area(final.color, size, 7.5)


# --- whole playouts: legal, no eye fills, incremental == full ----------------------


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("seed", range(12))
def test_playouts_9x9_empty(seed, policy):
    check_pattern_game(new_board(9), BLACK if seed % 2 else WHITE, seed, POLICIES[policy])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("diagram", [EYES, CORNER])
def test_playouts_9x9_from_positions(diagram, seed):
    start = board_from(diagram)
    play(start, loc_of("E5", 9), BLACK)  # a previous move, so its hot points count from move 1
    check_pattern_game(start, WHITE, seed, POLICIES["random"])


@pytest.mark.parametrize("seed", range(3))
def test_playouts_13x13_and_19x19(seed):
    check_pattern_game(new_board(13), BLACK, 100 + seed, POLICIES["random"])
    if seed < 2:
        check_pattern_game(new_board(19), BLACK, 200 + seed, POLICIES["random"])


def test_playouts_from_game_positions():
    """Mid-game 19x19 positions of a random game with a ko on the board and a
    capture-rich 9x9 one: incremental == full throughout."""
    import random

    rnd = random.Random(3)
    for size, n_moves in ((19, 150), (9, 60)):
        b = new_board(size)
        out = np.zeros(size * size, np.int64)
        color = BLACK
        for _ in range(n_moves):
            n = legal_moves(b, color, False, out)
            play(b, int(out[rnd.randrange(n)]), color)
            color = 3 - color
        for seed in range(3):
            check_pattern_game(b, color, seed, POLICIES["random"])


# --- the policy's move frequencies --------------------------------------------------

FIRST = """
. . . . . . .
. X O . . . .
. X O . . . .
. O X X . . .
. . O X . . .
. . . . . . .
. . . . . . .
"""


def chi_square_p(observed: np.ndarray, expected: np.ndarray) -> float:
    """p-value of Pearson's chi-square, the cells expecting < 5 pooled into one."""
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    stat = float(((obs - exp) ** 2 / exp).sum())
    df = len(obs) - 1
    return float(torch.special.gammaincc(torch.tensor(df / 2.0), torch.tensor(stat / 2.0)))


def first_moves(start: Board, color: int, policy: PatternPolicy, n: int, seed: int) -> np.ndarray:
    """Counts by point of the first move of n seeded one-move playouts from start."""
    player = policy.player()
    size = int(start.info[SIZE])
    hits = np.zeros(start.color.shape[0], np.int64)
    owner = np.zeros(size * size, np.int8)
    first = np.zeros(1, np.int32)
    state = start_state(player, start)
    for g in range(n):
        rng = np.array([seed_state(np.uint64(seed), g)], np.uint64)
        b = copy_board(start)
        reset_state(player, state)
        play_game(b, color, 0.0, rng, 1, player, state, owner, first)
        hits[first[0]] += 1
    return hits


def test_first_move_frequencies_match_gammas():
    """First moves of 20,000 seeded games from a 7x7 position after white's
    E4 (extensions, a capture and contiguous points are on): their counts
    match gamma / sum of gammas (chi-square over points expecting >= 5, the
    rest pooled; p > 0.001 with the fixed seed 7)."""
    start = board_from(FIRST, WHITE)
    play(start, loc_of("E4", 7), WHITE)
    policy = POLICIES["random"]
    t = policy.tables()
    last, ko = int(start.info[LAST]), int(start.info[KO])
    points = ref.board_points(7)
    gamma = np.array([policy_gamma(start, p, BLACK, last, ko, t) for p in points])
    assert (gamma > 0).sum() > 20
    n = 20_000
    hits = first_moves(start, BLACK, policy, n, seed=7)
    observed = hits[points]
    assert observed.sum() == n and (observed[gamma == 0] == 0).all()
    assert chi_square_p(observed, n * gamma / gamma.sum()) > 1e-3


def test_rejected_self_ataris_fall_back_to_the_exact_draw():
    """White to move on EYES, where three points are self-ataris only the board
    shows (sa_maybe levels found nowhere else as non-self-ataris here): with
    gamma 1e6 for those levels and 1e-200 for self-atari, nearly every
    proposal is one of them and is rejected, so moves come from the full-scan
    draw after MAX_TRIES rejections. They must still follow policy_gamma:
    never those three points, the others uniformly (chi-square)."""
    start = board_from(EYES, WHITE)
    neutral = PatternPolicy.neutral()
    t = neutral.tables()
    points = ref.board_points(9)
    empty = [p for p in points if start.color[p] == 0]
    sa_levels, other_levels = set(), set()
    for p in empty:
        k = int(t.level[light_code(start, p, WHITE)])
        if t.sa_maybe[k]:
            (sa_levels if is_self_atari(start, p, WHITE) else other_levels).add(k)
    trap = sa_levels - other_levels
    trapped = [p for p in empty if int(t.level[light_code(start, p, WHITE)]) in trap]
    assert len(trapped) == 3
    _, raw_to_level = pattern_levels()
    pattern = np.where(np.isin(raw_to_level, list(trap)), 1e6, 1.0)
    ones = [np.ones(len(LIGHT_LEVELS[g]) + 1) for g in LEVEL_GROUPS]
    policy = with_self_atari(PatternPolicy(pattern, *ones), 1e-200)
    pt = policy.tables()
    gamma = np.array([policy_gamma(start, p, WHITE, NO_MOVE, -1, pt) for p in points])
    n = 4000
    observed = first_moves(start, WHITE, policy, n, seed=11)[points]
    assert observed[[points.index(p) for p in trapped]].sum() == 0
    assert observed.sum() == n and (observed[gamma == 0] == 0).all()
    assert chi_square_p(observed, n * gamma / gamma.sum()) > 1e-3


# after white's G6: black F6 in a new atari (extension F5), white C4 in atari (capture D4)
CHECKED = """
. . . . . O .
. . . . O X .
. . X O . . .
. X O . O . .
. . X O . . .
. . . . . . .
. . . . . . .
"""


def checked_position(policy: PatternPolicy):
    """CHECKED after white's G6, black to move, and the state the move loop has before its
    draw: (board, colour, last, ko, tables, state, hot points, hot extra total)."""
    b = board_from(CHECKED, WHITE)
    play(b, loc_of("G6", 7), WHITE)
    player = policy.player()
    s, _ = start_state(player, b)
    t = player.tables
    last, ko = int(b.info[LAST]), int(b.info[KO])
    s.gen[0] += 1
    lm = last_move(b.color, b.head, b.libs, 9, BLACK, last)
    nh, ncont = collect_hot(b, BLACK, last, ko, int(s.gen[0]), lm.na, s, t)
    hot_total = hot_gammas(b, BLACK, ko, nh, ncont, lm, s, t)
    return b, BLACK, last, ko, t, s, nh, hot_total


def _raise_base(b, s, t, p):
    s.gam[0, p] *= 2.0
    s.rows[0, s.rowof[p]] += s.gam[0, p] / 2  # the row sum agrees: only the gamma is wrong


def _shift_row(b, s, t, p):
    s.rows[1, 0] += 0.5


def _other_level(b, s, t, p):
    s.lev[p] = t.swap[s.lev[p]] if t.swap[s.lev[p]] != s.lev[p] else s.lev[p] + 1


def _drop_from_alist(b, s, t, p):
    x = s.alist[0]
    s.acount[0] -= 1
    s.alist[0] = s.alist[s.acount[0]]
    s.apos[s.alist[0]] = 0
    s.apos[x] = -1


def _halve_hot(b, s, t, p):
    q = s.pts[int(np.argmax(s.extra[: len(s.extra)]))]
    s.hotval[q] *= 0.5


CORRUPTIONS = {
    "base gamma": _raise_base,
    "row sum": _shift_row,
    "level": _other_level,
    "atari list": _drop_from_alist,
    "hot value": _halve_hot,
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_checker_counts_a_corrupted_state(corruption):
    """check_gammas finds nothing wrong with the state the move loop builds, and counts
    each kind of corruption of it; a checked playout from a corrupted state counts
    errors too (fault injection: the checker the playout tests rely on can fail)."""
    r = POLICIES["random"]  # hot points above their base: contiguity and extension favoured
    policy = PatternPolicy(
        r.pattern, r.capture, np.array([1.0, 3.0]), r.self_atari, np.array([1.0, 3.0]), r.pass_
    )
    b, color, last, ko, t, s, nh, hot_total = checked_position(policy)
    assert s.acount[0] > 0 and hot_total > 0  # the position has atari strings and hot points
    assert check_gammas(b, color, last, ko, t, s, nh, hot_total) == 0
    empty = [p for p in ref.board_points(7) if b.color[p] == 0 and s.gam[0, p] > 0]
    CORRUPTIONS[corruption](b, s, t, empty[len(empty) // 2])
    assert check_gammas(b, color, last, ko, t, s, nh, hot_total) > 0
    if corruption != "hot value":  # hot values are recomputed before every draw
        player = policy.player(check=True)
        state = (s, s)
        owner, no = np.zeros(49, np.int8), np.zeros(0, np.int32)
        play_game(copy_board(b), color, 7.5, new_rng(0), 1, player, state, owner, no)
        assert player.errors[0] > 0


# --- tables, seeds, many playouts ---------------------------------------------------


def test_playable_table_is_is_legal_and_not_is_eye():
    """On random 9x9 positions, a point's level is playable (play > 0 with all
    gammas 1) exactly when is_legal (ko aside) and not is_eye, for both colours;
    a playable move is a self-atari (board.is_self_atari) whenever its level is
    sa_sure, and never when it is neither sa_sure nor sa_maybe."""
    import random

    t = PatternPolicy.neutral().tables()
    rnd = random.Random(0)
    for _ in range(40):
        b = new_board(9)
        out = np.zeros(81, np.int64)
        color = BLACK
        for _ in range(rnd.randrange(0, 140)):
            n = legal_moves(b, color, False, out)
            if n == 0:
                break
            play(b, int(out[rnd.randrange(n)]), color)
            color = 3 - color
        b.info[KO] = -1
        for p in ref.board_points(9):
            if b.color[p] != 0:
                continue
            for c in (BLACK, WHITE):
                want = bool(is_legal(b, p, c)) and not bool(is_eye(b, p, c))
                k = t.level[light_code(b, p, c)]
                assert (t.play[k] > 0) == want
                if want:
                    sa = bool(is_self_atari(b, p, c))
                    assert not (t.sa_sure[k] and t.sa_maybe[k])
                    assert sa if t.sa_sure[k] else (not sa or t.sa_maybe[k])


def test_same_seed_same_games_and_batch_equals_single():
    """run_games(seed) plays game g as play_game from seed_state(seed, g), a fresh state."""
    player = POLICIES["random"].player()
    start = board_from(EYES)
    counts = np.zeros((3, 81), np.int64)
    scores = run_games(start, WHITE, 7.5, 6, np.uint64(5), 243, player, counts)
    again = run_games(start, WHITE, 7.5, 6, np.uint64(5), 243, player, np.zeros((3, 81), int))
    assert np.array_equal(scores, again)
    for g in range(6):
        b = copy_board(start)
        rng = np.array([seed_state(np.uint64(5), g)], np.uint64)
        owner = np.zeros(81, np.int8)
        no = np.zeros(0, np.int32)
        score = play_game(b, WHITE, 7.5, rng, 243, player, start_state(player, b), owner, no)
        assert score == scores[g]
    other = run_games(start, WHITE, 7.5, 6, np.uint64(6), 243, player, counts)
    assert not np.array_equal(scores, other)


def test_run_playouts_counts_and_board_unchanged():
    start = board_from(EYES, to_move=WHITE)
    before = [a.copy() for a in start]
    scores, counts = run_playouts(start, WHITE, 7.5, 25, 1, policy=POLICIES["random"].player())
    assert scores.shape == (25,) and counts.shape == (3, 9, 9)
    assert (counts.sum(axis=0) == 25).all()
    for a, b in zip(before, start, strict=True):
        assert np.array_equal(a, b)
    assert scores.sum() == pytest.approx((counts[BLACK] - counts[WHITE]).sum() - 25 * 7.5)
    with pytest.raises(ValueError):
        run_playouts(start, 3, 7.5, 1, 0, policy=POLICIES["random"].player())


@pytest.mark.parametrize("power", [0.0, 0.5, 1.5])
def test_tempered_policy_raises_every_move_gamma_to_the_power(power):
    """A move's gamma is a product of group gammas, so tempering every group
    gives each move its gamma to the power (0: the neutral policy), on a
    position with extensions, a capture, self-ataris and contiguous points."""
    start = board_from(FIRST, WHITE)
    play(start, loc_of("E4", 7), WHITE)
    policy = POLICIES["self-atari 8"]
    tempered = policy.tempered(power)
    assert isinstance(tempered, PatternPolicy) and tempered.tables() is not policy.tables()
    last, ko = int(start.info[LAST]), int(start.info[KO])
    points = ref.board_points(7)

    def gammas(pol: PatternPolicy, color: int) -> np.ndarray:
        return np.array([policy_gamma(start, p, color, last, ko, pol.tables()) for p in points])

    for color in (BLACK, WHITE):
        before, after = gammas(policy, color), gammas(tempered, color)
        assert (before > 0).sum() > 20
        np.testing.assert_allclose(after, before**power * (before > 0), rtol=1e-12)
    neutral = PatternPolicy.neutral()
    if power == 0.0:
        for name in ("pattern", "capture", "extension", "self_atari", "contiguity", "pass_"):
            assert np.array_equal(getattr(tempered, name), getattr(neutral, name))
    with pytest.raises(ValueError, match="power"):
        policy.tempered(-1.0)
    with pytest.raises(ValueError, match="finite"):
        policy.tempered(1e6)


# --- the policy file -------------------------------------------------------------------


def test_policy_file_round_trip(tmp_path):
    policy = POLICIES["random"]
    policy.save(tmp_path / "policy.npz")
    back = PatternPolicy.load(tmp_path / "policy.npz")
    for name in ("pattern", "capture", "extension", "self_atari", "contiguity", "pass_"):
        assert np.array_equal(getattr(back, name), getattr(policy, name))
    with np.load(tmp_path / "policy.npz") as z:
        arrays = dict(z)
    arrays["format_version"] = np.array([99])
    np.savez(tmp_path / "old.npz", **arrays)
    with pytest.raises(ValueError, match="format"):
        PatternPolicy.load(tmp_path / "old.npz")
    with pytest.raises(ValueError):
        PatternPolicy(np.ones(N_RAW), np.ones(4), np.ones(2), np.ones(2), np.ones(2), np.ones(3))


def test_train_light_writes_the_policy(games, tmp_path):  # noqa: F811
    """train.py model=mm features=light: policy.npz loads, equals the policy
    rebuilt from model.pt, and holds exp(log_gamma) of each level (pattern
    gammas per raw code by the code's level)."""
    out = tmp_path / "run"
    metrics = run(tiny(games, tmp_path, ["features=light"]), out)
    assert 0.0 <= metrics["top1"] <= 1.0
    policy = PatternPolicy.load(out / "policy.npz")
    state = load_checkpoint(out / "model.pt")
    reg = state["extractor"].registry
    log_gamma = state["module"].log_gamma.numpy()
    again = PatternPolicy.from_gammas(reg, log_gamma)
    assert np.array_equal(policy.pattern, again.pattern)
    _, raw_to_level = pattern_levels()
    code = int(np.flatnonzero(raw_to_level)[123])
    i = reg.index("pattern3x3", int(raw_to_level[code]))
    assert policy.pattern[code] == pytest.approx(np.exp(log_gamma[i]))
    assert policy.contiguity[1] == pytest.approx(np.exp(log_gamma[reg.index("contiguity", 1)]))
    assert policy.capture[0] == 1.0
