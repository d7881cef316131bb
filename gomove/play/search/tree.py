"""The search tree as flat node arrays, and Coulom's progressive-widening schedule.

Terms:
- node: a position reached in the tree; node 0.. in creation order. A node's
  children are contiguous, ``first[n] .. first[n] + nchild[n] - 1``, created
  all at once when the node is expanded (``first`` is -1 before). Each child
  holds the move into it (``move``, PASS for a pass), the colour that played it
  (``color``), its visits and the sum of its results for that colour
  (``wins``: 1 a win, 0 a loss, 1/2 a jigo), its prior (the full model's
  probability when a promotion ranked it, else 1/nchild) and its AMAF (RAVE)
  statistics, and its virtual visits and wins (``vn``, ``vw``: the tree
  prior of SearchConfig.prior_even and prior_local, counted in the selection
  value as if they had been played; zero unless a ranked node set them).
- score statistics (``score_sum``, ``score_sq``): the sum and the sum of squares
  of the final scores (area, black minus white minus komi: Black's view, whoever
  played into the node) of the simulations that passed through the node, beside
  its wins; a node's mean score is score_sum / visits. They steer nothing.
- open children (``nopen``): the first nopen children are the ones the
  search may select. Unpruned nodes have all their children open; a node
  ranked by the full model (progressive widening) has its children sorted by
  the model's probability and opens them by the schedule.
- AMAF opening (``SearchConfig.pw_amaf``): the child opened next is the closed
  one whose AMAF win rate (over at least pw_amaf samples: closed children gather
  AMAF statistics from the playouts too) is best, else the model's next.
- schedule (Coulom 2007, journal version): the n-th best move is opened when
  t(n-1) simulations have been run, t(0) = 0, t(n+1) = t(n) + 40 x 1.4^n; so
  1 move at once, 2 after 40 simulations, 3 after 96, 4 after 174.4, ...
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from gomove.board.coords import NO_MOVE

# info slots
N_NODES = 0  # nodes in use
PENDING = 1  # a node waiting for the full model's ranking (-1: none)
N_INFO = 2


class Tree(NamedTuple):
    move: np.ndarray  # int32[C] the move into the node
    color: np.ndarray  # int8[C] the colour that played it
    parent: np.ndarray  # int32[C] (-1 for a root)
    first: np.ndarray  # int32[C] first child, -1 for a leaf
    nchild: np.ndarray  # int32[C]
    nopen: np.ndarray  # int32[C] the children open to selection
    ranked: np.ndarray  # bool[C] children ordered by the full model (progressive widening)
    visits: np.ndarray  # int64[C]
    wins: np.ndarray  # float64[C] results for color
    prior: np.ndarray  # float64[C]
    rave_n: np.ndarray  # float64[C]
    rave_w: np.ndarray  # float64[C] AMAF results for color
    vn: np.ndarray  # float64[C] virtual visits (the tree prior)
    vw: np.ndarray  # float64[C] virtual wins for color
    score_sum: np.ndarray  # float64[C] final scores, Black's view (B - W - komi)
    score_sq: np.ndarray  # float64[C] their squares
    info: np.ndarray  # int64[N_INFO]

    @property
    def capacity(self) -> int:
        return len(self.move)


def new_tree(capacity: int) -> Tree:
    """An empty tree of capacity nodes (about 100 bytes each)."""
    if capacity < 2:
        raise ValueError(f"a tree needs room for at least 2 nodes, not {capacity}")
    return Tree(
        np.full(capacity, NO_MOVE, np.int32),
        np.zeros(capacity, np.int8),
        np.full(capacity, -1, np.int32),
        np.full(capacity, -1, np.int32),
        np.zeros(capacity, np.int32),
        np.zeros(capacity, np.int32),
        np.zeros(capacity, np.bool_),
        np.zeros(capacity, np.int64),
        np.zeros(capacity, np.float64),
        np.zeros(capacity, np.float64),
        np.zeros(capacity, np.float64),
        np.zeros(capacity, np.float64),
        np.zeros(capacity, np.float64),
        np.zeros(capacity, np.float64),
        np.zeros(capacity, np.float64),
        np.zeros(capacity, np.float64),
        np.zeros(N_INFO, np.int64),
    )


@njit(cache=True)
def reset_tree(t: Tree, mover_of_root: int) -> int:
    """Empty the tree and create its root (node 0); mover_of_root: the colour that played
    into the root (the opponent of the player to move). Returns the root, 0."""
    t.info[N_NODES] = 1
    t.info[PENDING] = -1
    init_node(t, 0, NO_MOVE, mover_of_root, -1, 0.0)
    return 0


@njit(cache=True, inline="always")
def init_node(t: Tree, n: int, move: int, color: int, parent: int, prior: float) -> None:
    t.move[n] = move
    t.color[n] = color
    t.parent[n] = parent
    t.first[n] = -1
    t.nchild[n] = 0
    t.nopen[n] = 0
    t.ranked[n] = False
    t.visits[n] = 0
    t.wins[n] = 0.0
    t.prior[n] = prior
    t.rave_n[n] = 0.0
    t.rave_w[n] = 0.0
    t.vn[n] = 0.0
    t.vw[n] = 0.0
    t.score_sum[n] = 0.0
    t.score_sq[n] = 0.0


@njit(cache=True)
def add_children(
    t: Tree, node: int, moves: np.ndarray, priors: np.ndarray, n: int, ranked: bool
) -> bool:
    """Make moves[:n] (in that order) node's children, played by the player to move at
    node; False (nothing done) when the tree has no room."""
    start = t.info[N_NODES]
    if start + n > t.move.shape[0]:
        return False
    mover = 3 - t.color[node]
    for j in range(n):
        init_node(t, start + j, moves[j], mover, node, priors[j])
    t.info[N_NODES] = start + n
    t.first[node] = start
    t.nchild[node] = n
    t.ranked[node] = ranked
    t.nopen[node] = 1 if ranked else n
    return True


def pw_schedule(n_moves: int, base: float = 40.0, growth: float = 1.4) -> np.ndarray:
    """float64[n_moves]: t(0), t(1), ...: the n-th move (1-based) opens after t(n-1)
    simulations, t(0) = 0, t(n+1) = t(n) + base x growth^n."""
    t = np.zeros(max(n_moves, 1), np.float64)
    for n in range(1, len(t)):
        t[n] = t[n - 1] + base * growth ** (n - 1)
    return t


@njit(cache=True)
def open_by_amaf(t: Tree, node: int, slot: int, min_n: float) -> None:
    """Move the closed child of node with the best AMAF win rate over at least min_n
    AMAF samples into slot (the next to open), the closed children between keeping
    the model's order; none with min_n samples: the model's next stays. Closed
    children have no visits and no subtree, so only their move, prior, AMAF
    statistics and virtual visits move."""
    f = t.first[node]
    best = -1
    best_v = -1.0
    for ch in range(f + slot, f + t.nchild[node]):
        if t.rave_n[ch] >= min_n and t.rave_w[ch] / t.rave_n[ch] > best_v:
            best_v = t.rave_w[ch] / t.rave_n[ch]
            best = ch
    if best <= f + slot:
        return
    move, prior, rn, rw = t.move[best], t.prior[best], t.rave_n[best], t.rave_w[best]
    vn, vw = t.vn[best], t.vw[best]
    for ch in range(best, f + slot, -1):
        t.move[ch] = t.move[ch - 1]
        t.prior[ch] = t.prior[ch - 1]
        t.rave_n[ch] = t.rave_n[ch - 1]
        t.rave_w[ch] = t.rave_w[ch - 1]
        t.vn[ch] = t.vn[ch - 1]
        t.vw[ch] = t.vw[ch - 1]
    t.move[f + slot], t.prior[f + slot] = move, prior
    t.rave_n[f + slot], t.rave_w[f + slot] = rn, rw
    t.vn[f + slot], t.vw[f + slot] = vn, vw


@njit(cache=True, inline="always")
def open_count(schedule: np.ndarray, sims: float, nchild: int) -> int:
    """How many of a ranked node's children are open after sims simulations."""
    k = 0
    while k < schedule.shape[0] and k < nchild and schedule[k] <= sims:
        k += 1
    return max(k, 1)
