"""The search (gomove.play.search).

- the progressive-widening schedule is Coulom's (t(0) = 0, t(n+1) = t(n) + 40 x
  1.4^n) and a ranked root's visited moves are exactly the first open_count
  moves of the model's order after each number of simulations;
- the engine never plays an illegal move, against a random player and against
  itself, checked by the game's own rules and by sgfmill's board;
- the tree is reused: after advance(move) the root is that child, its visits kept;
- search finds the capture that wins a small board; budgets and errors;
- a ranked node opening by AMAF (pw_amaf) moves the closed child of the best
  AMAF win rate to the next open slot, the others in the model's order, as a
  list-based reference does, and the search then visits only open children;
- a ranked node's children start with the tree prior's virtual visits and wins
  (prior_even, and prior_local by the common-fate-graph distance from the last
  move), which the selection counts and AMAF opening moves along;
- it passes only when the board as it stands and the board without its dead
  stones (the referee's count) give the same winner;
- every node's score statistics are those of the simulations through it, as a
  re-count of a search run one simulation at a time finds them, and the root's
  view pools its moves by their visits.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
import reference as ref
from board_ascii import board_from
from sgfmill import boards

from gomove.board.board import BLACK, WHITE, new_board, play
from gomove.board.coords import PASS, from_loc, gtp_to_loc, to_loc
from gomove.board.replay import play_moves
from gomove.board.scoring import area_score, area_score_judged, judged_dead
from gomove.cli.predict import parse_moves
from gomove.play.game import GameState
from gomove.play.search.kernels import (
    C_UCT,
    N_PARAMS,
    PRIOR_ABSOLUTE,
    PRIOR_EQEX,
    PRIOR_MIN,
    PW_AMAF,
    select_child,
)
from gomove.play.search.presets import pachi_prior
from gomove.play.search.search import RESIGN, MoveInfo, Search, checked_pass, root_view
from gomove.play.search.settings import SearchConfig
from gomove.play.search.tree import (
    N_NODES,
    add_children,
    new_tree,
    open_by_amaf,
    open_count,
    pw_schedule,
    reset_tree,
)
from gomove.playout.policy import PatternPolicy
from gomove.playout.rng import new_rng


def test_schedule_is_coulom():
    t = pw_schedule(6)
    assert np.allclose(t, [0, 40, 40 + 56, 40 + 56 + 78.4, 40 + 56 + 78.4 + 109.76,
                           40 + 56 + 78.4 + 109.76 + 153.664])  # fmt: skip
    # the n-th move opens when t(n-1) simulations have run
    assert [open_count(t, s, 100) for s in (0, 39, 40, 95, 96, 174, 175)] == [1, 1, 2, 2, 3, 3, 4]
    assert open_count(t, 10_000, 3) == 3  # never more than the children


@pytest.mark.parametrize("sims", [1, 2, 40, 41, 97, 180, 300])
def test_pw_opens_moves_on_schedule(capture_model, sims):
    cfg = SearchConfig(playouts="uniform", pw=True, rave=False, sims=sims, resign=0)
    s = Search(cfg, predictor=capture_model)
    board = new_board(9)
    s.run(board, BLACK, 7.5)
    t, r = s.tree, s.root
    f, k = int(t.first[r]), int(t.nchild[r])
    visited = np.nonzero(t.visits[f : f + k] > 0)[0]
    expected = open_count(s.schedule, sims - 1, k)
    assert list(visited) == list(range(expected))
    # children in the model's order
    assert np.all(np.diff(t.prior[f : f + k]) <= 0)
    assert t.visits[r] == sims


@pytest.mark.parametrize("promote_at", [None, 7])
def test_promotion_at_board_points(capture_model, promote_at):
    """Leaves are ranked by the full model at promote_at simulations (None: 5x5 = 25)."""
    cfg = SearchConfig(playouts="uniform", pw=True, rave=False, sims=2000, resign=0,
                       promote_at=promote_at)  # fmt: skip
    at = 25 if promote_at is None else promote_at
    s = Search(cfg, predictor=capture_model)
    res = s.run(new_board(5), BLACK, 0.5)
    t = s.tree
    n = t.info[0]
    ranked = np.nonzero(t.ranked[:n])[0]
    assert res.promotions == len(ranked) - 1 > 0  # the root is ranked at once
    for node in ranked[1:]:
        assert t.visits[node] >= at
    unranked_leaves = [x for x in range(n) if t.first[x] < 0]
    assert all(t.visits[x] <= at for x in unranked_leaves)
    if promote_at is not None:  # earlier promotions: more of them than at 25
        base = Search(replace(cfg, promote_at=None), predictor=capture_model)
        assert res.promotions > base.run(new_board(5), BLACK, 0.5).promotions


def sgfmill_check(board: boards.Board, color: int, loc: int, size: int) -> None:
    if loc == PASS:
        return
    r, c = from_loc(loc, size)
    assert board.get(r, c) is None, "played on an occupied point"
    board.play(r, c, "b" if color == BLACK else "w")


@pytest.mark.parametrize("config", [
    dict(playouts="uniform", pw=False, rave=False),
    dict(playouts="pattern", pw=False, rave=True),
    dict(playouts="pattern", pw=True, rave=True),
    dict(playouts="pattern", pw=True, rave=True, lgr=2),
    dict(playouts="pattern", pw=True, rave=True, pw_amaf=2),
    dict(playouts="pattern", pw=True, rave=True, pw_base=0, prior_even=4, prior_local=10),
])  # fmt: skip
def test_never_illegal(capture_model, config):
    size = 7
    rnd = random.Random(1)
    cfg = SearchConfig(sims=48, resign=0, seed=3, **config)
    for game in range(3):
        s = Search(cfg, PatternPolicy.neutral(), capture_model)
        g = GameState(size=size, komi=7.5)
        ref = boards.Board(size)
        opponent = "random" if game < 2 else "self"
        for ply in range(120):
            if g.passes >= 2:
                break
            color = g.to_move
            if opponent == "random" and color == WHITE:
                legal = [x for x in range(g.board.color.shape[0])
                         if g.board.color[x] == 0 and g.check(color, x) is None]  # fmt: skip
                loc = rnd.choice(legal) if legal else PASS
            else:
                res = s.run(g.board, color, g.komi, g.passes)
                assert res.move != RESIGN
                loc = res.move
                assert g.check(color, loc) is None, (game, ply, loc)
            sgfmill_check(ref, color, loc, size)
            g.play(color, loc)
            s.advance(loc)
            # our board and sgfmill's agree after captures
            for r in range(size):
                for c in range(size):
                    ours = int(g.board.color[(r + 1) * (size + 2) + c + 1])
                    theirs = {None: 0, "b": BLACK, "w": WHITE}[ref.get(r, c)]
                    assert ours == theirs


def test_tree_reuse(capture_model):
    cfg = SearchConfig(playouts="uniform", pw=False, rave=False, sims=600, resign=0)
    s = Search(cfg, predictor=capture_model)
    g = GameState(size=9)
    res = s.run(g.board, BLACK, 7.5)
    best = res.moves[0]
    t = s.tree
    f = int(t.first[s.root])
    child = f + int(np.nonzero(t.move[f : f + t.nchild[s.root]] == best.loc)[0][0])
    kept = int(t.visits[child])
    g.play(BLACK, best.loc)
    s.advance(best.loc)
    assert s.root == child and t.visits[s.root] == kept
    s.run(g.board, WHITE, 7.5, sims=100)
    assert t.visits[s.root] == kept + 100
    # a different position: a fresh tree
    s.advance(gtp_to_loc("A1", 9))
    assert s.root == -1


def test_search_captures_to_win(capture_model):
    # 5x5: black to move can capture the white string on C3/C4 (last liberty D4)
    board = new_board(5)
    moves = [(c, gtp_to_loc(v, 5)) for c, v in parse_moves(
        "B B3 W C3 B B4 W C4 B C5 W A1 B C2 W A2 B D3 W E1")]  # fmt: skip
    color = play_moves(board, moves)
    assert color == BLACK
    s = Search(SearchConfig(playouts="uniform", pw=False, rave=True, sims=3000, resign=0))
    res = s.run(board, BLACK, 0.5)
    assert res.move == gtp_to_loc("D4", 5)
    assert res.winrate > 0.6
    assert res.ownership is not None and res.ownership.shape == (5, 5)


def test_config_errors(capture_model):
    with pytest.raises(ValueError, match="policy"):
        Search(SearchConfig(playouts="pattern", pw=False))
    with pytest.raises(ValueError, match="full model"):
        Search(SearchConfig(playouts="uniform", pw=True))
    with pytest.raises(ValueError, match="budget"):
        SearchConfig(sims=None, seconds=None).validate()
    with pytest.raises(ValueError, match="unknown"):
        SearchConfig.from_dict({"simz": 3})
    with pytest.raises(ValueError, match="playouts"):
        SearchConfig(playouts="smart").validate()
    with pytest.raises(ValueError, match="promote_at"):
        SearchConfig(promote_at=0).validate()
    with pytest.raises(ValueError, match="prior_eqex"):
        SearchConfig(prior_eqex=-1).validate()
    with pytest.raises(ValueError, match="prior_scale"):
        SearchConfig(prior_scale="relative").validate()
    with pytest.raises(ValueError, match="prior_min"):
        SearchConfig(prior_min=1.5).validate()
    with pytest.raises(ValueError, match="playout_power"):
        SearchConfig(playout_power=-0.5).validate()


def test_playout_power_tempers_the_playouts_policy():
    policy = replace(PatternPolicy.neutral(), contiguity=np.array([1.0, 9.0]))
    same = Search(SearchConfig(pw=False, sims=50), policy)
    assert same.policy is policy
    s = Search(SearchConfig(pw=False, sims=50, playout_power=0.5), policy)
    assert s.player.tables.contiguity.tolist() == [1.0, 3.0]
    assert policy.contiguity.tolist() == [1.0, 9.0]  # the caller's policy is unchanged
    assert s.run(new_board(7), BLACK, 7.5).sims == 50


def test_seconds_budget():
    s = Search(SearchConfig(playouts="uniform", pw=False, sims=None, seconds=0.3, resign=0))
    res = s.run(new_board(9), BLACK, 7.5)
    assert 0.25 <= res.seconds < 2.0 and res.sims > 0


@pytest.mark.parametrize("eqex", [0.0, 30.0, 300.0])
@pytest.mark.parametrize("local", [False, True])
def test_prior_virtual_wins(eqex, local):
    """A ranked node's children start with eqex x sqrt(p / p_best) virtual wins, and
    their own virtual visits and wins (vn, vw): the selection picks the child with the
    best (wins + virtual) / (visits + virtual), computed here by hand (no exploration,
    no RAVE)."""
    t, root, f, priors, visits, wins = prior_tree()
    vn, vw = (np.array([5.0, 5.0, 2000.0]), np.array([2.5, 2.5, 1990.0])) if local else (0, 0)
    t.vn[f : f + 3], t.vw[f : f + 3] = vn, vw
    params = np.zeros(N_PARAMS)
    params[C_UCT], params[PRIOR_EQEX] = 0.0, eqex
    pn = eqex * np.sqrt(priors / priors[0])
    want = int(np.argmax((wins + pn + vw) / (visits + pn + vn)))
    got = select_child(t, root, params, np.zeros(3), new_rng(0)) - f
    assert got == want
    # the priors change the choice
    assert ({0.0: 1, 30.0: 1, 300.0: 0}[eqex] if not local else 2) == want


def prior_tree():
    """A ranked root with three open children of probabilities 0.6, 0.3 and 0.1."""
    t = new_tree(16)
    root = reset_tree(t, WHITE)
    priors = np.array([0.6, 0.3, 0.1])
    add_children(t, root, np.array([10, 11, 12]), priors, 3, True)
    visits, wins = np.array([40, 40, 40]), np.array([16.0, 20.0, 10.0])
    f = int(t.first[root])
    t.visits[f : f + 3], t.wins[f : f + 3] = visits, wins
    t.visits[root] = 10_000  # every child open
    return t, root, f, priors, visits, wins


@pytest.mark.parametrize("eqex", [30.0, 100.0, 300.0])
@pytest.mark.parametrize("p_min", [0.0, 0.2, 0.5])
def test_absolute_prior_and_its_floor(eqex, p_min):
    """prior_scale="absolute" gives eqex x sqrt(p) virtual wins (Pachi's pattern
    prior), and children below prior_min none; the choice equals the hand-computed
    argmax and differs from the relative scale's where the two disagree."""
    t, root, f, priors, visits, wins = prior_tree()
    params = np.zeros(N_PARAMS)
    params[C_UCT], params[PRIOR_EQEX] = 0.0, eqex
    params[PRIOR_ABSOLUTE], params[PRIOR_MIN] = 1.0, p_min
    pn = np.where(priors >= p_min, eqex * np.sqrt(priors), 0.0)
    values = (wins + pn) / (visits + pn)
    want = int(np.argmax(values))
    got = select_child(t, root, params, np.zeros(3), new_rng(0)) - f
    assert got == want
    # by hand: at eqex 30 the second child leads (36.4/56.4 against 39.2/63.2 for the
    # first) unless the floor 0.5 takes its 16.4 virtual wins away; from eqex 100 on
    # the first child's sqrt(0.6) x eqex wins lead
    assert want == (1 if eqex == 30.0 and p_min < 0.3 else 0)


def test_pachi_prior_follows_pachis_defaults():
    """pachi_prior derives Pachi's numbers from its eqex (14 below 15x15, 20 from it):
    the pattern prior 300 x eqex / 20, the even prior eqex, equiv_rave 3000 or 4000."""
    small, large = pachi_prior(9), pachi_prior(19)
    assert (small["prior_eqex"], small["prior_even"], small["rave_k"]) == (210, 14, 3000)
    assert (large["prior_eqex"], large["prior_even"], large["rave_k"]) == (300, 20, 4000)
    assert pachi_prior(13)["prior_eqex"] == 210 and pachi_prior(15)["prior_eqex"] == 300
    for size in (9, 13, 19):
        cfg = SearchConfig(**pachi_prior(size))
        cfg.validate()
        assert cfg.prior_scale == "absolute" and cfg.prior_min == 0.001
        assert cfg.pw_base == 0 and cfg.promote_at == 8 and cfg.c_uct == 0


def amaf_order(children: list[tuple], slot: int, min_n: float) -> list[tuple]:
    """Reference for open_by_amaf on (move, prior, rave_n, rave_w) tuples."""
    closed = children[slot:]
    eligible = [c for c in closed if c[2] >= min_n]
    if not eligible:
        return children
    best = max(eligible, key=lambda c: c[3] / c[2])  # the first of equals
    return children[:slot] + [best] + [c for c in closed if c is not best]


def ranked_tree(children: list[tuple]):
    t = new_tree(64)
    root = reset_tree(t, WHITE)
    moves = np.array([c[0] for c in children])
    add_children(t, root, moves, np.array([c[1] for c in children]), len(children), True)
    f = int(t.first[root])
    t.rave_n[f : f + len(children)] = [c[2] for c in children]
    t.rave_w[f : f + len(children)] = [c[3] for c in children]
    # virtual visits and wins that travel with their child: functions of its prior
    t.vn[f : f + len(children)] = [7 * c[1] for c in children]
    t.vw[f : f + len(children)] = [3 * c[1] for c in children]
    return t, root, f


def children_of(t, f: int, k: int) -> list[tuple]:
    for c in range(f, f + k):
        assert t.vn[c] == 7 * t.prior[c] and t.vw[c] == 3 * t.prior[c]
    return [(int(t.move[c]), float(t.prior[c]), float(t.rave_n[c]), float(t.rave_w[c]))
            for c in range(f, f + k)]  # fmt: skip


def test_open_by_amaf_equals_the_reference():
    rnd = random.Random(4)
    for _ in range(300):
        k = rnd.randrange(1, 12)
        samples = [rnd.choice((0, 3, 10, 25, 40)) for _ in range(k)]
        children = [(10 + i, 1.0 / (i + 1), float(n), float(rnd.randrange(n + 1)))
                    for i, n in enumerate(samples)]  # fmt: skip
        t, root, f = ranked_tree(children)
        slot, min_n = rnd.randrange(k), rnd.choice((1.0, 10.0, 20.0))
        open_by_amaf(t, root, slot, min_n)
        assert children_of(t, f, k) == amaf_order(children, slot, min_n)


def test_select_child_opens_by_amaf():
    # five moves in the model's order; 13 has the best AMAF rate over 20 samples, 12
    # a better one over too few, 14 a worse one
    children = [(10, 0.5, 0.0, 0.0), (11, 0.2, 0.0, 0.0), (12, 0.1, 10.0, 10.0),
                (13, 0.1, 30.0, 24.0), (14, 0.1, 40.0, 20.0)]  # fmt: skip
    for amaf, want in ((0.0, [10, 11, 12, 13, 14]), (20.0, [10, 13, 14, 11, 12])):
        t, root, f = ranked_tree(children)
        t.visits[root] = 100  # three open by the schedule (t(2) = 96)
        params = np.zeros(N_PARAMS)
        params[PW_AMAF] = amaf
        select_child(t, root, params, pw_schedule(5), new_rng(0))
        assert int(t.nopen[root]) == 3
        assert [int(m) for m in t.move[f : f + 5]] == want


def test_search_opens_by_amaf(capture_model):
    cfg = SearchConfig(playouts="uniform", pw=True, rave=True, sims=400, resign=0, pw_amaf=5)
    s = Search(cfg, predictor=capture_model)
    s.run(new_board(9), BLACK, 7.5)
    t, r = s.tree, s.root
    f, k, n_open = int(t.first[r]), int(t.nchild[r]), int(t.nopen[r])
    assert n_open == open_count(s.schedule, 399, k)
    assert np.all(t.visits[f : f + n_open] > 0) and np.all(t.visits[f + n_open : f + k] == 0)
    assert np.any(t.rave_n[f + n_open : f + k] > 0)  # closed moves gather AMAF samples
    with pytest.raises(ValueError, match="pw_amaf"):
        SearchConfig(pw_amaf=-1).validate()


def test_tree_prior_by_distance_from_the_last_move(capture_model):
    size = 9
    board = new_board(size)
    moves = parse_moves("B E5 W E6 B D6 W F5 B F6")
    play_moves(board, [(c, gtp_to_loc(v, size)) for c, v in moves])
    last = gtp_to_loc("F6", size)
    cfg = SearchConfig(playouts="uniform", sims=1, resign=0, prior_even=14, prior_local=45)
    s = Search(cfg, predictor=capture_model)
    s.run(board, WHITE, 7.5)
    t, r = s.tree, s.root
    f, k = int(t.first[r]), int(t.nchild[r])
    dist = ref.cfg_distance(board.color, last, size)
    met = set()
    for ch in range(f, f + k):
        loc = int(t.move[ch])
        d = dist.get(loc, 99) if loc != PASS else 99
        bonus = {1: 45.0, 2: 40.0, 3: 15.0}.get(d, 0.0)
        assert t.vn[ch] == pytest.approx(14 + bonus) and t.vw[ch] == pytest.approx(7 + bonus)
        met.add(d if d <= 3 else 99)
    assert met == {1, 2, 3, 99}
    # nothing without the priors
    s = Search(replace(cfg, prior_even=0, prior_local=0), predictor=capture_model)
    s.run(board, WHITE, 7.5)
    f, k = int(s.tree.first[s.root]), int(s.tree.nchild[s.root])
    assert not s.tree.vn[f : f + k].any() and not s.tree.vw[f : f + k].any()
    for name in ("prior_even", "prior_local"):
        with pytest.raises(ValueError, match=name):
            SearchConfig(**{name: -1}).validate()


# --- passing: the board as it stands against the board without its dead stones --------

LOCS9 = to_loc(*np.divmod(np.arange(81), 9), 9)  # every point, [row, col] order
SPOILED = "\n".join(["O . . . X O . . ."] + [". . . . X O . . ."] * 8)  # white A9 is dead


def test_area_score_judged_removes_dead_stones():
    """area_score_judged equals area_score of the board with the stones the ownership
    map gives to the other colour taken off, and of the board itself when it calls
    every stone alive."""
    b = board_from(SPOILED)
    alive = np.where(b.color[LOCS9] == BLACK, 1.0, -1.0).reshape(9, 9)
    alive[b.color[LOCS9].reshape(9, 9) == 0] = 0.0
    dead = alive.copy()
    dead[8, 0] = 0.8  # black owns A9 in most playouts
    owner = np.zeros(81, np.int8)
    without = board_from(SPOILED.replace("O", ".", 1))
    assert area_score_judged(b, 7.5, dead) == area_score(without, 7.5, owner) == 45 - 36 - 7.5
    assert area_score_judged(b, 7.5, alive) == area_score(b, 7.5, owner) == 9 - 37 - 7.5


def test_judged_dead_decides_each_string_whole():
    """A string whose stones the map is split on lives or dies as one: by the mean of
    its stones' ownership, against a reference that walks each string by hand."""
    rows = ["O O . . X O . . ."] + [". . . . X O . . ."] * 8  # white A9-B9: one string
    b = board_from("\n".join(rows))
    own = np.where(b.color[LOCS9] == BLACK, 1.0, -1.0).reshape(9, 9)
    own[b.color[LOCS9].reshape(9, 9) == 0] = 0.0
    own[8, 0], own[8, 1] = 0.9, -0.3  # black owns A9 surely, white B9 weakly: mean 0.6 black
    dead = judged_dead(b, own).reshape(9, 9)
    assert dead[8, 0] and dead[8, 1] and dead.sum() == 2
    own[8, 0] = 0.2  # mean 0.05 for white: the string lives, both stones
    assert not judged_dead(b, own).any()
    rnd = np.random.default_rng(3)
    for _ in range(20):
        noisy = own + rnd.normal(0, 0.8, own.shape)
        got = judged_dead(b, noisy)
        for i, loc in enumerate(LOCS9):
            if b.color[loc] in (BLACK, WHITE):
                string = [j for j, q in enumerate(LOCS9) if b.head[q] == b.head[loc]]
                sign = 1.0 if b.color[loc] == BLACK else -1.0
                assert got[i] == (sign * noisy.reshape(-1)[string].sum() < 0)
            else:
                assert not got[i]


def test_checked_pass_plays_on_when_the_referee_would_disagree():
    """With a dead white stone in black's area, passing (the game scored as it stands:
    white wins) and the referee's count (the stone removed: black wins) disagree, so
    the search plays its most visited other move; when they agree it passes."""
    b = board_from(SPOILED)
    moves = [
        MoveInfo(PASS, 900, 0.9, 0.1, 0.0, []),
        MoveInfo(gtp_to_loc("B8", 9), 0, 0.5, 0.1, 0.0, []),
        MoveInfo(gtp_to_loc("A8", 9), 80, 0.6, 0.1, 0.0, []),
    ]
    own = np.zeros((9, 9))
    own[8, 0] = 0.8
    assert checked_pass(b, 7.5, own, moves).loc == gtp_to_loc("A8", 9)
    own[8, 0] = -0.8  # the stone lives: both counts say white wins
    assert checked_pass(b, 7.5, own, moves).loc == PASS
    assert SearchConfig().pass_check


@pytest.mark.parametrize("config", [
    dict(playouts="uniform", pw=False, rave=False),
    dict(playouts="pattern", pw=True, rave=True, pw_base=0, promote_at=4, prior_even=4),
])  # fmt: skip
def test_scores_are_those_of_the_simulations_through_each_node(capture_model, config):
    """A search run one simulation at a time: each simulation's nodes are those whose
    visits grew, its final score is re-counted from its owner map (the search's
    ownership of that one simulation, reference.score_of_owners). Every node's score
    sums are those simulations' (reference.node_scores), each root move's score_mean
    and score_stdev their mean and spread for White, the colour to move, and
    root_view's the root's own: all the simulations, pooled from the moves."""
    size, komi = 9, 6.5
    board = new_board(size)
    for color, v in ((BLACK, "E5"), (WHITE, "C3"), (BLACK, "G7")):
        play(board, gtp_to_loc(v, size), color)
    s = Search(SearchConfig(sims=1, resign=0, seed=5, **config), PatternPolicy.neutral(),
               capture_model)  # fmt: skip
    sims, before = [], np.zeros(0, np.int64)
    for _ in range(150):
        res = s.run(board, WHITE, komi)
        visits = s.tree.visits[: s.tree.info[N_NODES]].copy()
        grew = visits > np.pad(before, (0, len(visits) - len(before)))
        score = ref.score_of_owners(res.ownership.ravel(), komi)
        sims.append((np.nonzero(grew)[0].tolist(), score))
        before = visits
    assert len({score for _, score in sims}) > 5  # the scores vary
    want = ref.node_scores(sims)
    t = s.tree
    for n, (count, mean, stdev) in want.items():
        assert t.visits[n] == count
        assert t.score_sum[n] / count == pytest.approx(mean, abs=1e-9)
        assert np.sqrt(t.score_sq[n] / count - mean**2) == pytest.approx(stdev, abs=1e-6)
    f, k = int(t.first[s.root]), int(t.nchild[s.root])
    moves = s.root_moves()
    assert sum(m.visits for m in moves) == 150 and len(moves) > 1
    for m in moves:
        child = f + int(np.nonzero(t.move[f : f + k] == m.loc)[0][0])
        count, mean, stdev = want[child]
        assert m.visits == count
        assert m.score_mean == pytest.approx(-mean, abs=1e-9)  # White's view
        assert m.score_stdev == pytest.approx(stdev, abs=1e-6)
    root = root_view(moves)
    count, mean, stdev = want[s.root]
    assert root.visits == count == 150
    assert root.score_mean == pytest.approx(-mean, abs=1e-9)
    assert root.score_stdev == pytest.approx(stdev, abs=1e-6)
    wins = sum(m.visits * m.winrate for m in moves) / 150
    assert root.winrate == pytest.approx(wins) == pytest.approx(1 - t.wins[s.root] / 150)


def test_root_view_pools_the_moves():
    """The pooled spread is the moves' spreads and the spread of their means together
    (the variance of all their simulations); no visits: no view."""
    a = MoveInfo(PASS, 3, 0.2, 0.1, 0.0, [], score_mean=1.0, score_stdev=2.0)
    b = MoveInfo(PASS, 1, 0.6, 0.1, 0.0, [], score_mean=5.0, score_stdev=0.0)
    v = root_view([a, b])  # E[x^2]: a's 4 + 1 three times, b's 25 once
    assert v.visits == 4 and v.winrate == pytest.approx(0.3) and v.score_mean == pytest.approx(2)
    var = (3 * (4 + 1) + 1 * 25) / 4 - 2**2
    assert v.score_stdev == pytest.approx(np.sqrt(var))
    assert root_view([replace(a, visits=0)]) is None
