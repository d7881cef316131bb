"""Helpers shared by the test modules: synthetic batches, models, positions, configs, boards.

(Fixtures live in conftest.py; slow, obviously-correct oracles in reference.py.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import reference as ref
import torch
from hydra import compose, initialize_config_dir

from gomove.board.board import (
    NMOVES,
    SIZE,
    TO_MOVE,
    Board,
    copy_board,
    is_legal,
    legal_moves,
    new_board,
    play,
)
from gomove.board.coords import NO_MOVE, PASS
from gomove.board.scoring import default_max_moves
from gomove.data.batch import Batch
from gomove.data.flat import FlatData
from gomove.features.light import LIGHT_LEVELS, pattern_levels
from gomove.features.light_gammas import LEVEL_GROUPS
from gomove.models.fbt import FactorizationBT
from gomove.playout.driver import play_game, start_state
from gomove.playout.policy import PatternPolicy
from gomove.playout.rng import new_rng
from gomove.train.trainers import register

F64 = torch.float64


def recorded_game(player, start: Board, color: int, seed: int) -> tuple[list[int], Board]:
    """One playout of player from start (unchanged), color first, komi 7.5: its moves
    (PASS for a pass) and the final board."""
    size = int(start.info[SIZE])
    b = copy_board(start)
    max_moves = default_max_moves(size)
    moves_out = np.full(max_moves, -99, np.int32)
    play_game(b, color, 7.5, new_rng(seed), max_moves, player, start_state(player, b),
              np.zeros(size * size, np.int8), moves_out)  # fmt: skip
    return moves_out[: int(b.info[NMOVES] - start.info[NMOVES])].tolist(), b


def check_replay(start: Board, color: int, moves: list[int], final: Board) -> None:
    """Replay moves on a fresh copy: legal, no own-eye fills, passes only when forced."""
    size = int(start.info[SIZE])
    b = copy_board(start)
    for i, loc in enumerate(moves):
        if loc == PASS:
            playable = [
                p
                for p in ref.board_points(size)
                if is_legal(b, p, color) and not ref.oracle_is_eye(b.color, p, color, size)
            ]
            assert playable == [], f"move {i}: passed with {len(playable)} moves available"
        else:
            assert is_legal(b, loc, color), f"move {i}: illegal move {loc}"
            assert not ref.oracle_is_eye(b.color, loc, color, size), f"move {i}: filled own eye"
        play(b, loc, color)
        color = 3 - color
    assert np.array_equal(b.color, final.color)


EYES = """
. X . X O . O . .
X X X X O . X O X
. . X . X O X . X
. . X X X . X X .
. . . . . . . . .
. X X X . O O O .
X X . X . O . O .
. O X X . O O O O
O . X . . . X . .
"""


CORNER = """
. X O . . . . . .
X X O . . . . . .
O O O . . . . . .
""" + "\n".join([". . . . . . . . ."] * 6)


CONFIGS = str(Path(__file__).resolve().parents[1] / "gomove" / "configs")


def cfg_of(overrides: list[str]):
    """The composed config of gomove/configs with these overrides (schemas registered)."""
    register()
    with initialize_config_dir(config_dir=CONFIGS, version_base="1.3"):
        return compose(config_name="config", overrides=overrides)


def tiny_overrides(games, tmp_path) -> list[str]:
    """Overrides for a tiny run on the ``games`` fixture (9x9, small shapes), any model."""
    train, test = games
    return [
        f"data.train={train}",
        f"data.test={test}",
        "data.sizes=[9]",
        "data.workers=1",
        f"data.cache_dir={tmp_path / 'cache'}",
        "features.min_count=2",
        "features.max_radius=6",
        "progress=false",
    ]


def tiny(games, tmp_path, extra=()):
    """A tiny mm run (2 iterations) on the ``games`` fixture."""
    return cfg_of([*tiny_overrides(games, tmp_path), "model.max_iters=2", *extra])


def random_position(rnd, size: int, n_moves: int):
    """Play up to n_moves random legal moves (pass 1 time in 15) on a fresh board.

    Returns (board, last, last2, ko) with the previous moves and the simple-ko
    point recomputed by the oracle (reference.ko_after) as the game went.
    """
    b = new_board(size)
    out = np.zeros(size * size + 1, np.int64)
    last = last2 = NO_MOVE
    ko = -1
    for _ in range(n_moves):
        color = int(b.info[TO_MOVE])
        n = legal_moves(b, color, False, out)
        loc = PASS if n == 0 or rnd.random() < 1 / 15 else int(out[rnd.randrange(n)])
        ko = -1 if loc == PASS else ref.ko_after(b.color, loc, color, size)
        play(b, loc, color)
        last, last2 = loc, last
    return b, last, last2, ko


def random_game(rnd, size: int, n_moves: int, superko: bool):
    """Play up to n_moves random legal moves (passes 1 time in 20); yield
    (board before, loc, color) before each move is played on the board."""
    b = new_board(size)
    out = np.zeros(b.color.shape[0], np.int64)
    for _ in range(n_moves):
        color = int(b.info[TO_MOVE])
        n = legal_moves(b, color, superko, out)
        loc = PASS if n == 0 or rnd.random() < 0.05 else int(out[rnd.randrange(n)])
        yield b, loc, color
        play(b, loc, color)


def random_policy(seed: int, sigma: float = 1.5) -> PatternPolicy:
    """Log-normal gammas for every pattern level and every other level."""
    rs = np.random.default_rng(seed)
    level_codes, raw_to_level = pattern_levels()
    level_gamma = np.concatenate([[1.0], np.exp(rs.normal(0, sigma, len(level_codes)))])
    others = [
        np.concatenate([[1.0], np.exp(rs.normal(0, sigma, len(LIGHT_LEVELS[g])))])
        for g in LEVEL_GROUPS
    ]
    return PatternPolicy(level_gamma[raw_to_level], *others)


def random_fbt(n_features: int, k: int, seed: int, scale: float = 0.5) -> FactorizationBT:
    """A float64 model with w ~ N(0, 1) and v ~ N(0, scale^2), index 0 zero."""
    gen = torch.Generator().manual_seed(seed)
    model = FactorizationBT(n_features, k, init_std=scale, dtype=F64, generator=gen)
    with torch.no_grad():
        model.w.copy_(torch.randn(n_features, generator=gen, dtype=F64))
        model.w[0] = 0.0
    return model


def make_groups(sizes: list[int]) -> list[tuple[str, int, int]]:
    offsets = [1 + sum(sizes[:g]) for g in range(len(sizes))]
    return [(f"g{g}", o, s) for g, (o, s) in enumerate(zip(offsets, sizes, strict=True))]


def make_data(
    true_log_gamma: torch.Tensor,
    groups: list[tuple[str, int, int]],
    n_batches: int,
    batch_size: int,
    max_cands: int,
    seed: int,
    present: float = 0.6,
) -> list[Batch]:
    """Positions of random teams (each group present with prob. ``present``), the
    winner drawn from the true Bradley-Terry probabilities; every batch has its
    own M and padding rows are zeros."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for k in range(n_batches):
        m = int(torch.randint(2, max_cands + 1, (), generator=gen))
        feat = torch.zeros(batch_size, m, len(groups), dtype=torch.long)
        for g, (_, offset, size) in enumerate(groups):
            level = torch.randint(0, size, (batch_size, m), generator=gen) + offset
            keep = torch.rand(batch_size, m, generator=gen) < present
            feat[:, :, g] = torch.where(keep, level, 0)
        n_legal = torch.randint(1, m + 1, (batch_size,), generator=gen)
        mask = torch.arange(m)[None, :] < n_legal[:, None]
        feat[~mask] = 0
        logits = true_log_gamma[feat].sum(-1).masked_fill(~mask, float("-inf"))
        winner = torch.multinomial(torch.softmax(logits, 1), 1, generator=gen)[:, 0]
        game = torch.arange(batch_size) // 10 + 1000 * k
        move = torch.arange(batch_size) % 10 * 7
        out.append(Batch(feat, mask, winner, game, move))
    return out


def random_log_gamma(n_features: int, seed: int, scale: float = 1.0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    lg = torch.randn(n_features, generator=gen, dtype=torch.float64) * scale
    lg[0] = 0.0
    return lg


def flat_of(batches: list[Batch], groups) -> FlatData:
    """The positions of padded batches as FlatData (level = index - offset + 1)."""
    levels: list[list[np.ndarray]] = [[] for _ in groups]
    starts, winners = [0], []
    for b in batches:
        for j in range(len(b)):
            m = int(b.mask[j].sum())
            for g, (_, offset, _) in enumerate(groups):
                f = b.feat[j, :m, g]
                levels[g].append(torch.where(f > 0, f - offset + 1, 0).numpy())
            starts.append(starts[-1] + m)
            winners.append(int(b.winner[j]))
    return FlatData.from_levels(
        [np.concatenate(lv) for lv in levels],
        [o for _, o, _ in groups],
        [s for _, _, s in groups],
        np.array(starts),
        np.array(winners),
    )


def padded(batches: list[Batch]) -> Batch:
    """One Batch of all positions (padded to the largest M)."""
    m = max(b.feat.shape[1] for b in batches)

    def pad(t: torch.Tensor) -> torch.Tensor:
        widths = (0, 0, 0, m - t.shape[1]) if t.dim() == 3 else (0, m - t.shape[1])
        return torch.nn.functional.pad(t, widths)

    return Batch(
        torch.cat([pad(b.feat) for b in batches]),
        torch.cat([pad(b.mask) for b in batches]),
        *(torch.cat([getattr(b, f) for b in batches]) for f in ("winner", "game", "move")),
    )
