"""The compiled simulation loop of the search: descend, expand, play out, back up.

One simulation (``simulate``): from the root position, descend the tree by
the selection rule (UCT, with RAVE when on) among each node's open children,
playing the moves through the playout policy's ``policy_play`` hook so that
its incremental state follows; at a leaf, either expand it (plain UCT: every
legal move that does not fill one's own eye, and pass, once the leaf has
``expand_at`` visits), or stop for a promotion (progressive widening: a leaf
with as many visits as the board has points waits for the full model's
ranking, which only Python can compute: the loop returns with the node in
``info[PENDING]`` and its position copied out), or play the game out with the
policy; score it by area with komi, count the owners, and back the result and
the score up the path (and the result into the AMAF statistics of the path's
children and, when on, into the playouts' last good replies).
Two passes in a row in the tree end the game there: it is scored as it stands.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import NMOVES, SIZE, Board, W, legal_moves, restore_board, restore_position
from gomove.board.coords import PASS
from gomove.board.scoring import area_score_into, eye_at
from gomove.play.search.tree import (
    N_NODES,
    PENDING,
    Tree,
    add_children,
    open_by_amaf,
    open_count,
)
from gomove.playout.hooks import policy_moves, policy_play, policy_reset
from gomove.playout.pattern.replies import learn_replies
from gomove.playout.rng import random_below

# params slots (float64): the switches of SearchConfig the loop reads
C_UCT = 0  # exploration constant
EXPAND_AT = 1  # plain UCT: visits of a leaf before it is expanded
PW = 2  # 1: progressive widening (promotion by the full model)
PROMOTE_AT = 3  # visits of a leaf before its promotion (the number of points)
RAVE = 4  # 1: AMAF statistics in the selection value
RAVE_K = 5  # RAVE equivalence parameter (Silver's beta schedule)
MAX_MOVES = 6  # playout length limit
PW_SINCE_PROMOTION = 7  # 1: the schedule counts simulations since promotion, 0: in total
FPU = 8  # selection value of a child never visited (first-play urgency)
PRIOR_EQEX = 9  # virtual wins of the model prior: of the best child, or of p = 1 (0: off)
PW_AMAF = 10  # AMAF samples for a closed child to be opened before the model's next (0: off)
PRIOR_ABSOLUTE = 11  # 1: eqex x sqrt(p) (Pachi), 0: eqex x sqrt(p / p_best)
PRIOR_MIN = 12  # children below this probability get no eqex wins
N_PARAMS = 13

MAX_DEPTH = 2048


@njit(cache=True)
def tree_moves(b: Board, color: int, superko: bool, out: np.ndarray) -> int:
    """The moves a node of the tree offers: color's legal moves (board.legal_moves) that
    fill none of its own eyes, in loc order, then PASS; returns their number."""
    n = legal_moves(b, color, superko, out)
    w = b.info[W]
    k = 0
    for j in range(n):
        if not eye_at(b.color, w, out[j], color):
            out[k] = out[j]
            k += 1
    out[k] = PASS
    return k + 1


@njit(cache=True)
def expand_all(
    t: Tree, node: int, b: Board, color: int, moves: np.ndarray, priors: np.ndarray
) -> bool:
    """Plain expansion: the node's tree_moves (superko left to the root), priors 1/n."""
    n = tree_moves(b, color, False, moves)
    for j in range(n):
        priors[j] = 1.0 / n
    return add_children(t, node, moves, priors, n, False)


@njit(cache=True)
def select_child(t: Tree, node: int, params: np.ndarray, schedule: np.ndarray, rng) -> int:
    """The open child of node with the best selection value (ties broken at random).

    In a node ranked by the full model, each child with p >= prior_min starts with
    prior_eqex x sqrt(p / p_best) virtual wins (p: its probability, p_best: the first
    child's), or prior_eqex x sqrt(p) with prior_scale="absolute", as Pachi seeds its
    tree from pattern probabilities: the values start from the model's opinion and
    the real visits outweigh it as they come. A child's virtual visits
    and wins (tree.vn, tree.vw: SearchConfig.prior_even and prior_local) count the
    same way.
    """
    f = t.first[node]
    eqex = params[PRIOR_EQEX] if t.ranked[node] and t.prior[f] > 0 else 0.0
    p_unit = 1.0 if params[PRIOR_ABSOLUTE] > 0 else t.prior[f]
    p_min = params[PRIOR_MIN]
    if t.ranked[node]:
        sims = t.visits[node]
        if params[PW_SINCE_PROMOTION] > 0:
            sims -= params[PROMOTE_AT]
        k = open_count(schedule, sims, t.nchild[node])
        if params[PW_AMAF] > 0:
            for slot in range(t.nopen[node], k):
                open_by_amaf(t, node, slot, params[PW_AMAF])
        t.nopen[node] = k
    k = t.nopen[node]
    c = params[C_UCT]
    rave = params[RAVE] > 0
    rave_k = params[RAVE_K]
    fpu = params[FPU]
    log_n = np.log(max(t.visits[node], 1))
    off = random_below(rng, k)
    best = f + off
    best_v = -1e300
    for i in range(k):
        ch = f + (off + i) % k
        n = t.visits[ch]
        pn = eqex * np.sqrt(t.prior[ch] / p_unit) if eqex > 0 and t.prior[ch] >= p_min else 0.0
        ne = n + pn + t.vn[ch]  # real and virtual visits, the eqex ones all wins
        w = t.wins[ch] + pn + t.vw[ch]
        if rave and t.rave_n[ch] > 0:
            rn = t.rave_n[ch]
            q = w / ne if ne > 0 else 0.0
            beta = rn / (rn + ne + rn * ne / rave_k)
            v = (1.0 - beta) * q + beta * t.rave_w[ch] / rn + c * np.sqrt(log_n / (n + 1))
        elif ne == 0:
            v = fpu
        else:
            v = w / ne + c * np.sqrt(log_n / max(n, 1))
        if v > best_v:
            best_v = v
            best = ch
    return best


@njit(cache=True)
def simulate(
    t: Tree,
    root: int,
    root_board: Board,
    root_color: int,
    root_passes: int,
    komi: float,
    n_sims: int,
    params: np.ndarray,
    schedule: np.ndarray,
    policy,
    state,
    scratch: Board,
    rng: np.ndarray,
    owner_counts: np.ndarray,
    pending_board: Board,
    replies: np.ndarray,
) -> int:
    """Run up to n_sims simulations from root (its position root_board, root_color to
    move, after root_passes consecutive passes); returns the number completed, fewer
    when one stopped for a promotion (info[PENDING], its position in pending_board).

    state: policy_state(policy, root_board). owner_counts: int64[3, size*size], +1 per
    simulation at [final owner, point]. scratch: a board of root_board's shape.
    replies: the last good replies the simulations learn into (pattern.replies;
    shape [2, 0]: none). The arguments stay apart: bundled into NamedTuples (root,
    playouts, buffers) the search ran at 0.79-0.90 of this speed with self-atari
    playouts, and simulate allocates, so it cannot drop numba's reference counting.
    """
    size = root_board.info[SIZE]
    npts = size * size
    max_moves = int(params[MAX_MOVES])
    moves = np.empty(npts + 1, np.int64)
    priors = np.empty(npts + 1, np.float64)
    path = np.empty(MAX_DEPTH + 1, np.int64)
    seq = np.empty(MAX_DEPTH + max_moves + 1, np.int64)
    first_idx = np.full(root_board.color.shape[0], -1, np.int64)
    first_col = np.zeros(root_board.color.shape[0], np.int8)
    playout_moves = np.empty(max_moves, np.int32)
    owner = np.zeros(npts, np.int8)
    seen = np.zeros(root_board.color.shape[0], np.bool_)
    region = np.empty(npts, np.int64)
    pw = params[PW] > 0
    rave = params[RAVE] > 0
    expand_at = params[EXPAND_AT]
    promote_at = params[PROMOTE_AT]
    done = 0
    while done < n_sims:
        restore_position(scratch, root_board)
        policy_reset(policy, state)
        node = root
        color = root_color
        passes = root_passes
        depth = 0
        path[0] = root
        n_seq = 0
        stop = False
        while passes < 2:
            if t.first[node] < 0:
                if node == root or depth >= MAX_DEPTH:
                    break
                if pw:
                    if (
                        t.visits[node] >= promote_at
                        and t.info[N_NODES] + npts + 1 <= t.move.shape[0]
                    ):
                        t.info[PENDING] = node
                        restore_board(pending_board, scratch)
                        stop = True
                    break
                if t.visits[node] < expand_at or not expand_all(
                    t, node, scratch, color, moves, priors
                ):
                    break
            node = select_child(t, node, params, schedule, rng)
            loc = np.int64(t.move[node])
            policy_play(policy, state, scratch, loc, color)
            passes = passes + 1 if loc == PASS else 0
            depth += 1
            path[depth] = node
            seq[n_seq] = loc
            n_seq += 1
            color = 3 - color
        if stop:
            break
        if passes < 2:
            before = scratch.info[NMOVES]
            policy_moves(policy, state, scratch, color, rng, max_moves, playout_moves)
            n_play = scratch.info[NMOVES] - before
            for j in range(min(n_play, max_moves)):
                seq[n_seq] = playout_moves[j]
                n_seq += 1
        score = area_score_into(scratch, komi, owner, seen, region)
        for pt in range(npts):
            owner_counts[owner[pt], pt] += 1
        black = 1.0 if score > 0 else (0.5 if score == 0 else 0.0)
        learn_replies(replies, seq, n_seq, root_color, black, root_board.color.shape[0])
        for d in range(depth + 1):
            n = path[d]
            t.visits[n] += 1
            t.wins[n] += black if t.color[n] == 1 else 1.0 - black
            t.score_sum[n] += score
            t.score_sq[n] += score * score
        if rave:
            # first play of each point in the simulation: its index and colour; the
            # colours alternate from root_color along seq
            c = root_color
            for j in range(n_seq):
                loc = seq[j]
                if loc != PASS and first_idx[loc] < 0:
                    first_idx[loc] = j
                    first_col[loc] = c
                c = 3 - c
            for d in range(depth + 1):
                n = path[d]
                f = t.first[n]
                if f < 0:
                    continue
                mover = 3 - t.color[n]
                r = black if mover == 1 else 1.0 - black
                # closed children too when they may open by AMAF (tree.open_by_amaf)
                n_amaf = t.nchild[n] if params[PW_AMAF] > 0 else t.nopen[n]
                for ch in range(f, f + n_amaf):
                    loc = t.move[ch]
                    if loc != PASS and first_idx[loc] >= d and first_col[loc] == mover:
                        t.rave_n[ch] += 1.0
                        t.rave_w[ch] += r
            for j in range(n_seq):
                loc = seq[j]
                if loc != PASS:
                    first_idx[loc] = -1
        done += 1
    return done
