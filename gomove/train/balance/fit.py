"""Simulation balancing (Silver and Tesauro 2009; Huang, Coulom and Lin 2010): playout
gammas tuned so that the playouts' mean outcome matches a position's value.

MM fits the playout policy to predict expert moves; the playouts only need to
be right on average. Huang, Coulom and Lin took Erica's MM gammas and let it
label 9x9 positions by its own searches; balancing the gammas on those labels
raised its win rate against Fuego from 69% to 78%. This module does the same
for a gomove policy:

- labels: positions sampled from SGF games, each with a value from a search or
  another engine (gomove.play.labelling writes them, gomove.data.value_labels reads them).
- ``balance``: policy-gradient simulation balancing (Silver and Tesauro's
  algorithm 1) over the labelled positions: per position, M playouts estimate
  V = P(BLACK wins), N more the gradient g of V by REINFORCE with V as
  baseline (gomove.train.balance.gradient), and the log-gammas move by
  lr x (V* - V) x g, a step down the squared error (V* - V)^2.
- ``playout_error``: the mean squared error of the playouts' V against the
  labels, the objective (reported before and after, on held-out positions).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from tqdm.auto import tqdm

from gomove.board.board import SIZE, Board
from gomove.board.scoring import default_max_moves
from gomove.data.value_labels import Labelled
from gomove.features.light import pattern_levels
from gomove.features.light_gammas import LightGammas
from gomove.playout.policy import PatternPolicy
from gomove.playout.rng import seed_state
from gomove.train.balance.gradient import (
    Games,
    Gradient,
    Reinforce,
    balance_games,
    zero_gradient,
)
from gomove.train.schemas import BalanceConfig


class LevelParams:
    """A policy's log-gammas by level, the parameters balancing moves (pattern.balance)."""

    def __init__(self, gammas: LightGammas):
        level_codes, self._raw_to_level = pattern_levels()
        self.pattern = np.concatenate([[0.0], np.log(gammas.pattern[level_codes])])
        self.capture = np.log(gammas.capture)
        self.extension = np.log(gammas.extension)
        self.self_atari = np.log(gammas.self_atari)
        self.contiguity = np.log(gammas.contiguity)
        self.pass_ = gammas.pass_.copy()

    def groups(self) -> tuple[np.ndarray, ...]:
        return self.pattern, self.capture, self.extension, self.self_atari, self.contiguity

    def step(self, g: Gradient, scale: float, clip: float) -> None:
        """Every parameter += scale x its gradient, each change clipped to [-clip, clip];
        level 0 (absent, gamma 1) stays put."""
        for p, d in zip(self.groups(), g, strict=True):
            p[1:] += np.clip(scale * d[1:], -clip, clip)

    def gammas(self) -> PatternPolicy:
        return PatternPolicy(
            np.exp(self.pattern)[self._raw_to_level],  # level 0 stays log 0: gamma 1
            *(np.concatenate([[1.0], np.exp(p[1:])]) for p in self.groups()[1:]),
            self.pass_,
        )


Position = tuple[Board, int, float]  # board, colour to move, V* = P(BLACK wins)


def positions_of(labels: Sequence[Labelled]) -> list[Position]:
    return [(*x.board(), x.value) for x in labels]


def playout_values(policy: PatternPolicy, positions: Sequence[Position], n: int,
                   komi: float, seed: int) -> np.ndarray:  # fmt: skip
    """P(BLACK wins) of each position by n playouts of policy."""
    player = policy.player()
    g = zero_gradient(player.tables)
    out = np.empty(len(positions))
    wins = np.empty(n)
    for i, (b, color, _) in enumerate(positions):
        games = Games(n, np.uint64(seed_state(seed, i)), _max_moves(b), komi)
        balance_games(b, color, games, player, wins, Reinforce(g, 0.0, 0.0))
        out[i] = wins.mean()
    return out


def _max_moves(b: Board) -> int:
    return default_max_moves(int(b.info[SIZE]))


def playout_error(policy: PatternPolicy, positions: Sequence[Position], n: int,
                  komi: float, seed: int) -> float:  # fmt: skip
    """Mean over positions of (V* - V)^2, V by n playouts: the balancing objective."""
    v = playout_values(policy, positions, n, komi, seed)
    target = np.array([p[2] for p in positions])
    return float(np.mean((target - v) ** 2))


def balance(
    gammas: LightGammas,
    train: Sequence[Position],
    cfg: BalanceConfig,
    progress: bool = True,
    on_epoch=None,
) -> PatternPolicy:
    """Simulation balancing from gammas over train (module docstring); on_epoch(epoch,
    policy) is called after each epoch (checkpoints, validation)."""
    cfg.validate()
    params = LevelParams(gammas)
    rng = np.random.default_rng(cfg.seed)
    m, n = cfg.value_playouts, cfg.grad_playouts
    wins = np.empty(max(m, n))
    game_seed = 0
    policy = params.gammas()
    for epoch in range(cfg.epochs):
        order = rng.permutation(len(train))
        for i in tqdm(order, desc=f"balance {epoch + 1}/{cfg.epochs}", disable=not progress):
            b, color, target = train[i]
            player = policy.player()
            g = zero_gradient(player.tables)
            mm = _max_moves(b)
            game_seed += 1
            games = Games(m, np.uint64(seed_state(cfg.seed, 2 * game_seed)), mm, cfg.komi)
            balance_games(b, color, games, player, wins, Reinforce(g, 0.0, 0.0))
            v = float(wins[:m].mean())
            games = Games(n, np.uint64(seed_state(cfg.seed, 2 * game_seed + 1)), mm, cfg.komi)
            balance_games(b, color, games, player, wins, Reinforce(g, v, 1.0 / n))
            params.step(g, cfg.lr * (target - v), cfg.clip)
            policy = params.gammas()
        if on_epoch is not None:
            on_epoch(epoch + 1, policy)
    return policy
