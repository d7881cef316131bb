"""Search: a Monte-Carlo tree search over real positions, budgets, tree reuse and analysis.

Terms:
- root: the position searched, a board with a colour to move and the number of
  passes that ended the game record so far (two: the game is over).
- promotion (progressive widening): the compiled loop stops at a leaf that has
  earned the full model's ranking; ``Search`` ranks it with the Predictor and
  resumes (gomove.play.search.kernels).
- reuse: ``advance(loc)`` after each move played keeps the subtree below it;
  a search of any other position starts a fresh tree.
- replies (``SearchConfig.lgr``): the playouts' last good replies, learned by
  every simulation and kept from move to move until ``clear()``.
- result: the most visited root move (robust child), ``resign`` when its win
  rate is below ``resign``; win rates are for the colour to move at the root.
- scores: a root move's mean and spread of the final area scores (komi
  included) of the simulations the search played through it (tree.score_sum,
  score_sq), for the colour to move at the root as its win rate is; the root's
  (``root_view``) pools its moves, each weighted by its visits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gomove.board.board import BLACK, LAST, SIZE, WHITE, Board, copy_board, is_superko
from gomove.board.coords import PASS
from gomove.board.distance import cfg_distances
from gomove.board.scoring import area_score, area_score_judged, default_max_moves
from gomove.play.predict import Predictor
from gomove.play.search.kernels import (
    C_UCT,
    EXPAND_AT,
    FPU,
    MAX_MOVES,
    N_PARAMS,
    PRIOR_ABSOLUTE,
    PRIOR_EQEX,
    PRIOR_MIN,
    PROMOTE_AT,
    PW,
    PW_AMAF,
    PW_SINCE_PROMOTION,
    RAVE,
    RAVE_K,
    simulate,
    tree_moves,
)
from gomove.play.search.settings import SearchConfig
from gomove.play.search.tree import (
    N_NODES,
    PENDING,
    Tree,
    add_children,
    new_tree,
    pw_schedule,
    reset_tree,
)
from gomove.playout.driver import start_state
from gomove.playout.pattern.playout import PatternPlayer
from gomove.playout.pattern.replies import new_replies, no_replies, replies_width
from gomove.playout.policy import PatternPolicy
from gomove.playout.rng import new_rng
from gomove.playout.uniform import UNIFORM

RESIGN = "resign"
# virtual wins at CFG distance 1, 2, 3 from the last move, per unit of prior_local
# (Pachi's small-board cfgd prior, 45/40/15 wins)
LOCAL_PROFILE = np.array([0.0, 1.0, 40.0 / 45.0, 15.0 / 45.0])


@dataclass
class MoveInfo:
    """One root move as analysis shows it; winrate and scores for the colour to move at
    the root (score_mean: the mean final score of the simulations through the move,
    score_stdev: their spread, the population standard deviation)."""

    loc: int
    visits: int
    winrate: float
    prior: float
    rave_visits: float
    pv: list[int]
    pv_visits: list[int] = field(default_factory=list)  # each pv move's node visits
    score_mean: float = 0.0
    score_stdev: float = 0.0

    def lcb(self) -> float:
        """A lower confidence bound of the win rate (normal approximation, z = 1.96)."""
        n = max(self.visits, 1)
        return self.winrate - 1.96 * np.sqrt(max(self.winrate * (1 - self.winrate), 1e-9) / n)


@dataclass(frozen=True)
class RootView:
    """The root as its moves make it (root_view): visits, and the win rate, mean score and
    score spread of all their simulations together, for the colour to move."""

    visits: int
    winrate: float
    score_mean: float
    score_stdev: float


def root_view(moves: list[MoveInfo]) -> RootView | None:
    """The moves pooled, each weighted by its visits: the win rate and mean score are the
    visit-weighted means of the moves', the spread that of all their simulations (the
    moves' spreads and the spread of their means); None when no move has a visit."""
    n = np.array([m.visits for m in moves], np.float64)
    total = n.sum()
    if total == 0:
        return None
    w = n / total
    wr = float(w @ [m.winrate for m in moves])
    mean = np.array([m.score_mean for m in moves])
    sq = np.array([m.score_stdev for m in moves]) ** 2 + mean**2
    score = float(w @ mean)
    return RootView(int(total), wr, score, float(np.sqrt(max(w @ sq - score * score, 0.0))))


@dataclass
class SearchResult:
    move: int | str  # a loc, PASS, or RESIGN
    winrate: float
    sims: int
    seconds: float
    moves: list[MoveInfo] = field(default_factory=list)
    ownership: np.ndarray | None = None  # float64[size, size]: P(black) - P(white), sgfmill order
    tree_nodes: int = 0
    promotions: int = 0


def checked_pass(board: Board, komi: float, own: np.ndarray, moves: list[MoveInfo]) -> MoveInfo:
    """The pass at moves[0], unless the board as it stands and the board without the
    stones own calls dead (area_score_judged) have different winners: then the most
    visited other move (SearchConfig.pass_check)."""
    size = int(board.info[SIZE])
    stands = area_score(board, komi, np.zeros(size * size, np.int8))
    judged = area_score_judged(board, komi, own)
    if (stands > 0) == (judged > 0):
        return moves[0]
    return next((m for m in moves if m.loc != PASS and m.visits > 0), moves[0])


class Search:
    """MCTS with the pattern (or uniform) playouts and, when on, progressive widening."""

    def __init__(
        self,
        cfg: SearchConfig,
        policy: PatternPolicy | None = None,
        predictor: Predictor | None = None,
    ):
        cfg.validate()
        if cfg.playouts == "pattern" and policy is None:
            raise ValueError("pattern playouts need a policy (policy.npz); or playouts=uniform")
        if cfg.pw and predictor is None:
            raise ValueError("progressive widening needs the full model (model.pt); or pw=false")
        self.cfg = cfg
        self.predictor = predictor
        if policy is not None and cfg.playout_power != 1.0:
            policy = policy.tempered(cfg.playout_power)
        self.policy = policy
        pattern = cfg.playouts == "pattern"
        self.player = self._player() if pattern else UNIFORM
        self.replies = no_replies()  # sized to the board at the first search (cfg.lgr)
        self.tree: Tree = new_tree(cfg.capacity)
        self.rng = new_rng(cfg.seed)
        self.root = -1  # no tree yet
        self.root_key: tuple[int, int, int] | None = None
        self.schedule = pw_schedule(362, cfg.pw_base, cfg.pw_growth)
        # the root's moves, when restricted (gomove analysis's avoidMoves and allowMoves):
        # a mask over board points, PASS always allowed
        self.root_allowed: np.ndarray | None = None

    def _player(self, replies: np.ndarray | None = None) -> PatternPlayer:
        c = self.cfg
        return self.policy.player(
            replies=replies,
            tactics=c.tactics,
            nakade=c.nakade,
            selfatari_max=c.selfatari_max,
            local=c.local,
            local_min=c.local_min,
        )

    # the tree between searches

    def clear(self) -> None:
        """A new game or another position: drop the tree and the learned replies."""
        self._drop_tree()
        self.replies.fill(-1)

    def _drop_tree(self) -> None:
        self.root = -1
        self.root_key = None

    def advance(self, loc: int) -> None:
        """The move loc was played from the root position: keep its subtree when there is one."""
        t, r = self.tree, self.root
        if r < 0 or not self.cfg.reuse or t.first[r] < 0:
            self._drop_tree()
            return
        f = int(t.first[r])
        hit = np.nonzero(t.move[f : f + t.nchild[r]] == loc)[0]
        if len(hit) == 0 or t.first[f + hit[0]] < 0:
            self._drop_tree()
            return
        self.root = int(f + hit[0])
        t.parent[self.root] = -1
        self.root_key = None  # checked against the next search's position

    def _params(self, size: int) -> np.ndarray:
        c = self.cfg
        p = np.zeros(N_PARAMS, np.float64)
        p[C_UCT] = c.c_uct
        p[EXPAND_AT] = c.expand_at
        p[PW] = float(c.pw)
        p[PROMOTE_AT] = size * size if c.promote_at is None else c.promote_at
        p[RAVE] = float(c.rave)
        p[RAVE_K] = c.rave_k
        p[MAX_MOVES] = default_max_moves(size)
        p[PW_SINCE_PROMOTION] = float(c.pw_count == "promotion")
        p[FPU] = c.fpu
        p[PRIOR_EQEX] = c.prior_eqex
        p[PRIOR_ABSOLUTE] = float(c.prior_scale == "absolute")
        p[PRIOR_MIN] = c.prior_min
        p[PW_AMAF] = c.pw_amaf
        return p

    def _root_moves(self, board: Board, color: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """The root's children: the model's candidates by probability (progressive
        widening), else every superko-legal move that fills no own eye, and pass; only
        those root_allowed allows, when set."""
        if self.cfg.pw:
            pred = self.predictor.predict(board, color)
            order = pred.order()
            locs, priors, ranked = pred.locs[order], pred.probs[order], True
        else:
            size = int(board.info[SIZE])
            out = np.empty(size * size + 1, np.int64)
            n = tree_moves(board, color, True, out)
            locs, priors, ranked = out[:n], np.full(n, 1.0 / n), False
        if self.root_allowed is not None:
            keep = (locs == PASS) | self.root_allowed[np.maximum(locs, 0)]
            locs, priors = locs[keep], priors[keep]
        return locs, priors, ranked

    def _prepare_replies(self, board: Board) -> None:
        """With cfg.lgr, a table of replies for this board's size (a new one, and a
        player that reads it, when the size changes)."""
        if not self.cfg.lgr:
            return
        n, order = board.color.shape[0], int(self.cfg.lgr)
        if self.replies.shape[1] != replies_width(n, order):
            self.replies = new_replies(n, order)
            self.player = self._player(self.replies)

    def _prepare_root(self, board: Board, color: int) -> None:
        t = self.tree
        key = (int(board.zhash[0]), int(color), int(board.info[SIZE]))
        fresh = (
            self.root < 0
            or not self.cfg.reuse
            or (self.root_key is not None and self.root_key != key)
            or t.info[N_NODES] > 0.8 * t.capacity
            or 3 - t.color[self.root] != color
        )
        if fresh:
            self.root = reset_tree(t, 3 - color)
        self.root_key = key
        if t.first[self.root] < 0:
            locs, priors, ranked = self._root_moves(board, color)
            if not add_children(t, self.root, locs, priors, len(locs), ranked):
                self.root = reset_tree(t, 3 - color)
                add_children(t, self.root, locs, priors, len(locs), ranked)
            if ranked:
                self._tree_prior(self.root, board)

    # searching

    def run(
        self,
        board: Board,
        color: int,
        komi: float,
        passes: int = 0,
        sims: int | None = None,
        seconds: float | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> SearchResult:
        """Search the position (board unchanged) within the budget (default: the config's);
        stop, asked between chunks of simulations, ends the search early when it says so."""
        if color not in (BLACK, WHITE):
            raise ValueError(f"color must be BLACK or WHITE, not {color}")
        cfg = self.cfg
        sims = cfg.sims if sims is None and seconds is None else sims
        seconds = cfg.seconds if seconds is None and sims is None else seconds
        size = int(board.info[SIZE])
        start = time.perf_counter()
        self._prepare_replies(board)
        self._prepare_root(board, color)
        t = self.tree
        params = self._params(size)
        state = start_state(self.player, board)
        scratch = copy_board(board)
        pending = copy_board(board)
        owner_counts = np.zeros((3, size * size), np.int64)
        done = 0
        promotions = 0
        while True:
            if sims is not None and done >= sims:
                break
            if seconds is not None and time.perf_counter() - start >= seconds:
                break
            if stop is not None and stop():
                break
            want = cfg.chunk if sims is None else min(cfg.chunk, sims - done)
            done += simulate(
                t, self.root, board, int(color), int(passes), float(komi), int(want), params,
                self.schedule, self.player, state, scratch, self.rng, owner_counts, pending,
                self.replies,
            )  # fmt: skip
            node = int(t.info[PENDING])
            if node >= 0:
                self._promote(node, pending)
                promotions += 1
        return self._result(
            board, color, komi, done, time.perf_counter() - start, owner_counts, promotions
        )

    def _promote(self, node: int, board: Board) -> None:
        """Rank a pending leaf's moves by the full model and open them by the schedule."""
        t = self.tree
        color = 3 - int(t.color[node])
        pred = self.predictor.predict(board, color)
        order = pred.order()
        add_children(t, node, pred.locs[order], pred.probs[order], len(order), True)
        self._tree_prior(node, board)
        t.info[PENDING] = -1

    def _tree_prior(self, node: int, board: Board) -> None:
        """The virtual visits and wins of a ranked node's children (board: its position):
        prior_even visits at 1/2 each, and prior_local x LOCAL_PROFILE[d] wins for the
        moves at CFG distance d = 1..3 from the last move."""
        c, t = self.cfg, self.tree
        if not (c.prior_even or c.prior_local):
            return
        f, k = int(t.first[node]), int(t.nchild[node])
        vn = np.full(k, float(c.prior_even))
        vw = 0.5 * vn
        last = int(board.info[LAST])
        if c.prior_local and last >= 0:
            dist = np.empty(board.color.shape[0], np.int64)
            cfg_distances(board, last, len(LOCAL_PROFILE) - 1, dist)
            locs = t.move[f : f + k].astype(np.int64)
            d = np.where(locs >= 0, dist[np.maximum(locs, 0)], -1)
            bonus = np.where(d > 0, c.prior_local * LOCAL_PROFILE[np.maximum(d, 0)], 0.0)
            vn += bonus
            vw += bonus
        t.vn[f : f + k] = vn
        t.vw[f : f + k] = vw

    def _pv(self, node: int, max_len: int = 20) -> tuple[list[int], list[int]]:
        """The principal variation from node (most visited children) and their visits."""
        t = self.tree
        pv, pv_visits = [int(t.move[node])], [int(t.visits[node])]
        while len(pv) < max_len and t.first[node] >= 0:
            f, k = int(t.first[node]), int(t.nchild[node])
            visits = t.visits[f : f + k]
            if visits.max() == 0:
                break
            node = f + int(np.argmax(visits))
            pv.append(int(t.move[node]))
            pv_visits.append(int(t.visits[node]))
        return pv, pv_visits

    def root_moves(self) -> list[MoveInfo]:
        """The root's visited moves, most visited first."""
        t, r = self.tree, self.root
        if r < 0 or t.first[r] < 0:
            return []
        f, k = int(t.first[r]), int(t.nchild[r])
        sign = 1.0 if t.color[f] == BLACK else -1.0  # the tree's scores are Black's
        out = []
        for ch in range(f, f + k):
            n = int(t.visits[ch])
            if n == 0:
                continue
            pv, pv_visits = self._pv(ch)
            mean = float(t.score_sum[ch] / n)
            stdev = float(np.sqrt(max(t.score_sq[ch] / n - mean * mean, 0.0)))
            info = MoveInfo(int(t.move[ch]), n, float(t.wins[ch] / n), float(t.prior[ch]),
                            float(t.rave_n[ch]), pv, pv_visits, sign * mean, stdev)  # fmt: skip
            out.append(info)
        out.sort(key=lambda m: (-m.visits, -m.winrate))
        return out

    def _result(self, board, color, komi, done, seconds, owner_counts, promotions) -> SearchResult:
        size = int(board.info[SIZE])
        moves = self.root_moves()
        total = owner_counts.sum(axis=0)
        own = None
        if total.max() > 0:
            own = ((owner_counts[BLACK] - owner_counts[WHITE]) / np.maximum(total, 1)).reshape(
                size, size
            )
        playable = [m for m in moves if m.loc == PASS or not is_superko(board, m.loc, color)]
        if not playable:
            move, winrate = PASS, 0.5
        else:
            best = playable[0]
            cfg = self.cfg
            if best.loc == PASS and cfg.pass_check and own is not None:
                best = checked_pass(board, komi, own, playable)
            move, winrate = best.loc, best.winrate
            if (
                cfg.resign > 0
                and self.tree.visits[self.root] >= cfg.resign_min_sims
                and winrate < cfg.resign
            ):
                move = RESIGN
        return SearchResult(
            move, winrate, done, seconds, moves, own, int(self.tree.info[N_NODES]), promotions
        )
