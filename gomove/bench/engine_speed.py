"""Benchmarks of the engine: search simulations a second for each configuration of the
config's ``search_rows`` (``search``), one position's prediction (``predict``) and a
whole game through KataGo's analysis protocol (``analysis``).
"""

from __future__ import annotations

import io
import json
import os
import time
from functools import partial
from typing import Any

from omegaconf import OmegaConf

from gomove import pretrained
from gomove.bench.common import bench_config, emit, playout_positions
from gomove.board.board import BLACK, SIZE
from gomove.board.coords import loc_to_gtp, move_to_loc
from gomove.board.replay import board_at
from gomove.play.analysis.engine import AnalysisEngine
from gomove.play.analysis.server import serve
from gomove.play.predict import Predictor
from gomove.play.search.presets import tree_settings
from gomove.play.search.search import Search
from gomove.play.search.settings import SearchConfig
from gomove.playout.driver import run_playouts
from gomove.playout.policy import PatternPolicy


def search_rows() -> list[str]:
    """The names of the search benchmark's rows (the config's ``search_rows``)."""
    return list(bench_config().search_rows)


def search_row(name: str, size: int) -> dict[str, Any]:
    """A row's SearchConfig fields for a board size: its own, and the settings its
    ``tree`` gives that size (gomove.play.search.presets.tree_settings)."""
    row = OmegaConf.to_container(bench_config().search_rows[name])
    tree = row.pop("tree", None)
    return {**row, **(tree_settings(tree, size) if tree else {})}


def bench_search(
    games: list, policy_path: str | None, model_path: str | None, seconds: float = 2.0
) -> list[dict]:
    """Search simulations per second (CPU time) from the positions of bench_playout, each
    configuration, next to the raw pattern-playout rate of the same position (the
    tree must not be the bottleneck: the target's share of it on 19x19 with pattern
    playouts, search_ratio_to_raw); the rows are the config's ``search_rows``."""
    policy = PatternPolicy.load(policy_path) if policy_path else PatternPolicy.neutral()
    predictor = Predictor.from_checkpoint(model_path) if model_path else None
    out = []
    for name, board, to_move in playout_positions(games):
        size = int(board.info[SIZE])
        pattern_playouts = partial(run_playouts, policy=policy.player())
        pattern_playouts(board, to_move, 7.5, 4, 0)
        n = 2000 if size == 19 else 8000
        c = time.process_time()
        pattern_playouts(board, to_move, 7.5, n, 1)
        raw = n / max(time.process_time() - c, 1e-9)
        for row in search_rows():
            kw = search_row(row, size)
            if kw["pw"] and predictor is None:
                continue
            cfg = SearchConfig(sims=None, seconds=seconds, resign=0, **kw)
            Search(cfg, policy, predictor).run(board, to_move, 7.5, sims=200)  # compile
            search = Search(cfg, policy, predictor)
            c = time.process_time()
            res = search.run(board, to_move, 7.5)
            rate = res.sims / max(time.process_time() - c, 1e-9)
            record = {"bench": "search", "config": row, "position": name, "size": size,
                      "sims_per_s": round(rate), "raw_pattern_playouts_per_s": round(raw),
                      "ratio_to_raw_pattern": round(rate / raw, 3), "promotions": res.promotions,
                      "tree_nodes": res.tree_nodes}  # fmt: skip
            # the target is the tree's cost over the same playouts: tactics, nakade,
            # selfatari_max and local change the playouts themselves, so their ratio
            # also holds their own cost and has none
            changed = any(kw.get(k) for k in ("tactics", "nakade", "selfatari_max", "local"))
            if row != "uniform" and not changed and size == 19:
                target = bench_config().targets.search_ratio_to_raw
                record["target_ratio"] = target
                record["ok"] = rate >= target * raw
            out.append(emit(record))
    return out


def bench_predict(games: list, model_path: str | None, n_positions: int = 300) -> list[dict]:
    """Full-feature prediction of single positions (Predictor: extraction and scoring),
    positions per second and microseconds each, on positions of real games."""
    if model_path is None:
        return [emit({"bench": "predict", "skipped": "needs --model RUN/model.pt"})]
    predictor = Predictor.from_checkpoint(model_path)
    positions = []
    for g in games:
        for move in range(10, len(g.moves), 25):
            positions.append(board_at(g, move + 1))
            if len(positions) >= n_positions:
                break
        if len(positions) >= n_positions:
            break
    predictor.predict(*positions[0])  # compile
    c = time.process_time()
    for board, color in positions:
        predictor.extractor.position(board, color)
    dt_extract = time.process_time() - c
    c = time.process_time()
    for board, color in positions:
        predictor.predict(board, color)
    dt = time.process_time() - c
    n = len(positions)
    return [emit({"bench": "predict", "model": model_path, "positions": n,
                  "positions_per_s": round(n / dt, 1), "us_per_position": round(1e6 * dt / n),
                  "us_extraction_per_position": round(1e6 * dt_extract / n)})]  # fmt: skip


def bench_analysis(
    games: list, policy_path: str | None, model_path: str | None, stride_1000: int = 10
) -> list[dict]:
    """``gomove analysis`` on a whole real 19x19 game (the first of 200 moves or more):
    every turn at 100 visits, in this process and then by the server's worker pool (one
    worker a core), every stride_1000-th turn at 1,000 visits, and the model's prediction
    alone (``gomove predict``) on every turn; turns per second (wall clock), the score
    playouts included. The models: --policy and --model, else the shipped ones."""
    if policy_path is None and pretrained.POLICY.is_file():
        policy_path = str(pretrained.POLICY)
    if model_path is None and pretrained.MODEL.is_file():
        model_path = str(pretrained.MODEL)
    if policy_path is None or model_path is None:
        return [emit({"bench": "analysis", "skipped": "needs --policy and --model"})]
    game = next((g for g in games if g.size == 19 and len(g.moves) >= 200), None)
    if game is None:
        return [emit({"bench": "analysis", "skipped": "no 19x19 game of 200 moves"})]
    predictor = Predictor.from_checkpoint(model_path)
    policy = PatternPolicy.load(policy_path)
    moves = [["B" if c == BLACK else "W", loc_to_gtp(move_to_loc(m, 19), 19)]
             for c, m in game.moves]  # fmt: skip
    out = []
    for visits, turns in ((100, list(range(len(moves) + 1))),
                          (1000, list(range(0, len(moves) + 1, stride_1000)))):  # fmt: skip
        cfg = SearchConfig(sims=visits, resign=0.0, seed=0)
        engine = AnalysisEngine(lambda size, cfg=cfg: Search(cfg, policy, predictor), predictor,
                                policy, default_visits=visits)  # fmt: skip
        query = {"id": "bench", "moves": moves, "komi": game.komi, "analyzeTurns": turns,
                 "includeOwnership": True, "includePolicy": True}  # fmt: skip
        engine.handle({**query, "analyzeTurns": [10]})  # compile
        t0 = time.perf_counter()
        answers = engine.handle(query)
        dt = time.perf_counter() - t0
        assert all("turnNumber" in r for r in answers), answers[:1]
        out.append(emit({"bench": "analysis", "visits": visits, "turns": len(turns),
                         "seconds": round(dt, 1), "turns_per_s": round(len(turns) / dt, 2),
                         "game_moves": len(moves)}))  # fmt: skip
        if visits == 100:
            workers = os.cpu_count() or 1
            sink = io.StringIO()
            t0 = time.perf_counter()
            serve(engine, io.StringIO(json.dumps(query) + "\n"), sink, workers=workers)
            dt = time.perf_counter() - t0
            assert sink.getvalue().count('"turnNumber"') == len(turns)
            out.append(emit({"bench": "analysis", "visits": visits, "workers": workers,
                             "turns": len(turns), "seconds": round(dt, 1),
                             "turns_per_s": round(len(turns) / dt, 2)}))  # fmt: skip
    boards = [board_at(game, t + 1) for t in range(len(moves) + 1)]  # after t moves
    predictor.predict(*boards[1])
    t0 = time.perf_counter()
    for board, color in boards:
        predictor.predict(board, color)
    dt = time.perf_counter() - t0
    out.append(emit({"bench": "analysis", "visits": 0, "policy_only": True,
                     "turns": len(boards), "seconds": round(dt, 2),
                     "turns_per_s": round(len(boards) / dt, 1)}))  # fmt: skip
    return out
