"""Benchmarks of playouts: uniform, pattern and rule playouts a second (``playout``), the
Monte-Carlo owner feature (``mc-owner``) and the territory CRF against playouts
(``territory``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial

from gomove.bench.common import bench_config, emit, playout_positions, timed
from gomove.board.board import SIZE, copy_board
from gomove.board.replay import board_at
from gomove.data.extractor import FeatureExtractor
from gomove.features.config import FeatureConfig
from gomove.models.territory.crf import SWEEPS as CRF_SWEEPS
from gomove.models.territory.crf import TerritoryCRF
from gomove.play.ownership import ownership
from gomove.playout.driver import run_playouts
from gomove.playout.policy import PatternPolicy
from gomove.playout.rule import RULES


def bench_playout(
    games: list,
    seconds: float = 1.0,
    repeats: int = 5,
    policy=None,
    label: str = "uniform",
    runner: Callable | None = None,
) -> list[dict]:
    """Uniform playouts per second on one core, best of ``repeats`` runs of ~``seconds``;
    with ``policy`` (gomove.playout.policy.PatternPolicy) the pattern policy's instead,
    with ``runner`` (run_playouts' arguments) another policy's, with no target.

    ``playouts_per_s`` counts the process's CPU time (one core's work, what the
    targets ask), ``wall_playouts_per_s`` the wall clock, which on a shared
    machine also counts the time others hold the core.
    """

    configured = bench_config().targets
    if runner is not None:
        targets: dict[int, float] = {}
    elif policy is None:
        runner, targets = run_playouts, configured.playouts_per_s
    else:
        runner = partial(run_playouts, policy=policy.player())
        targets = configured.pattern_playouts_per_s
    out = []
    for name, board, to_move in playout_positions(games):
        size = int(board.info[SIZE])
        runner(board, to_move, 7.5, 4, 0)  # compile
        n = 64
        while True:  # size the run to ~seconds
            t = time.perf_counter()
            runner(board, to_move, 7.5, n, 1)
            dt = time.perf_counter() - t
            if dt > seconds / 4:
                break
            n *= 4
        n = max(int(n * seconds / dt), 1)
        best_cpu = best_wall = 0.0
        for r in range(repeats):
            b = copy_board(board)
            t = time.perf_counter()
            c = time.process_time()
            runner(b, to_move, 7.5, n, 100 + r)
            best_cpu = max(best_cpu, n / max(time.process_time() - c, 1e-9))
            best_wall = max(best_wall, n / (time.perf_counter() - t))
        record = {"bench": "playout", "policy": label, "position": name, "size": size}
        record["playouts_per_s"] = round(best_cpu)
        record["wall_playouts_per_s"] = round(best_wall)
        if name.endswith("empty") and size in targets:
            record["target_per_core"] = targets[size]
            record["ok"] = best_cpu >= targets[size]
        out.append(emit(record))
    return out


def bench_pattern_playout(games: list, policy_path: str | None = None) -> list[dict]:
    """Pattern-policy playouts per second (gomove.playout.pattern) on the
    positions of bench_playout; the policy file of ``train.py features=light``,
    or all gammas 1 (``neutral``) when none is given."""

    if policy_path:
        return bench_playout(games, policy=PatternPolicy.load(policy_path), label="pattern")
    return bench_playout(games, policy=PatternPolicy.neutral(), label="pattern (neutral)")


def bench_rule_playout(games: list) -> list[dict]:
    """Rule playouts per second (gomove.playout.rule, the rmc territory features')."""
    return bench_playout(games, label="rules", runner=partial(run_playouts, policy=RULES))


def bench_territory(
    games: list, sweeps: int = CRF_SWEEPS, playouts: tuple[int, ...] = (63, 500)
) -> list[dict]:
    """The territory CRF's ownership map against the playouts': CPU ms a position (process
    time, one core) at moves 50, 100, 150 and 200 of the games, and the ratio to each
    playout count (issue 37's target: 20 times less than 500 playouts)."""
    crf = TerritoryCRF.default()
    boards = [board_at(g, m) for g in games for m in (50, 100, 150, 200) if len(g.moves) >= m]
    crf.predict(*boards[0], 6.5, sweeps=2)  # compile
    ownership(boards[0][0], boards[0][1], 2)

    def per_position(fn: Callable) -> float:
        t0 = time.process_time()
        for board, colour in boards:
            fn(board, colour)
        return 1000 * (time.process_time() - t0) / len(boards)

    crf_ms = per_position(lambda b, c: crf.predict(b, c, 6.5, sweeps=sweeps))
    record = {"bench": "territory", "positions": len(boards),
              "crf_features": crf.features, "crf_sweeps": 0 if crf.independent else sweeps,
              "crf_ms_per_position": round(crf_ms, 3)}  # fmt: skip
    for n in playouts:
        ms = per_position(lambda b, c, n=n: ownership(b, c, n, 6.5))
        record[f"playouts{n}_ms_per_position"] = round(ms, 2)
        record[f"crf_speedup_vs_{n}"] = round(ms / crf_ms, 1)
    return [emit(record)]


def bench_mc_owner(games: list, n_playouts: int = 63) -> list[dict]:
    """The Monte-Carlo owner feature: positions/s on one core, and what it adds to extraction."""
    cfg = FeatureConfig(shapes=False, superko=False)
    owner_cfg = FeatureConfig(
        shapes=False, superko=False, mc_owner=True, mc_owner_playouts=n_playouts
    )
    plain, with_owner = FeatureExtractor(cfg), FeatureExtractor(owner_cfg)
    plain.game(games[0])
    with_owner.game(replace(games[0], moves=games[0].moves[:4]))  # compile
    n, dt_plain = timed(lambda: sum(len(plain.game(g)["winner"]) for g in games))
    _, dt_owner = timed(lambda: sum(len(with_owner.game(g)["winner"]) for g in games))
    owner_rate = n / (dt_owner - dt_plain)
    return [
        emit(
            {
                "bench": "mc-owner",
                "playouts_per_position": n_playouts,
                "games": len(games),
                "positions": n,
                "positions_per_s": round(owner_rate, 1),
                "ms_per_position": round(1000 / owner_rate, 2),
                "playouts_per_s": round(owner_rate * n_playouts),
                "tactical_positions_per_s": round(n / dt_plain),
                "tactical_with_owner_positions_per_s": round(n / dt_owner, 1),
            }
        )
    ]
