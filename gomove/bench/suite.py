"""The benchmarks by name, and the suites of them that ``gomove bench`` runs.

``BENCHMARKS`` names every benchmark and what it measures with (``Options``: the games,
the training games, the models); a suite (gomove/configs/experiment/bench.yaml,
``suites``) is a list of names, ``default`` the one a bare ``gomove bench`` runs.
``run`` takes any mix of names and suites, in the suites' order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gomove.bench.common import bench_config, emit, games_path, load_games
from gomove.bench.engine_speed import bench_analysis, bench_predict, bench_search
from gomove.bench.extraction import bench_extract, bench_replay
from gomove.bench.playouts import (
    bench_mc_owner,
    bench_pattern_playout,
    bench_playout,
    bench_rule_playout,
    bench_territory,
)
from gomove.bench.training import bench_fbt, bench_mm, bench_rankers, bench_scale
from gomove.memory import peak_rss_mb


@dataclass
class Options:
    """What the benchmarks read: ``path`` the games (``games_path``), ``games`` the first
    n_games of them (loaded once), the training games and iterations of the training
    benchmarks, the models of the engine's."""

    path: str
    games: list
    harvest_games: int = 1000
    mm_games: int = 1000
    mm_iters: int = 2
    cache_dir: str = "cache"
    owner_games: int = 5
    policy_path: str | None = None
    model_path: str | None = None
    fbt_batch: int | None = None


def _extract(o: Options) -> list[dict]:
    n = len(o.games)
    hv = load_games(o.path, o.harvest_games) if o.harvest_games > n else o.games
    return bench_extract(o.games, hv, path=o.path)


def _playout(o: Options) -> list[dict]:
    return (
        bench_playout(o.games)
        + bench_pattern_playout(o.games, o.policy_path)
        + bench_rule_playout(o.games)
    )


BENCHMARKS: dict[str, Callable[[Options], list[dict]]] = {
    "replay": lambda o: bench_replay(o.games),
    "extract": _extract,
    "mm": lambda o: bench_mm(o.path, o.mm_games, o.mm_iters, o.cache_dir),
    "fbt": lambda o: bench_fbt(o.path, o.mm_games, o.cache_dir, batch_size=o.fbt_batch),
    "rankers": lambda o: bench_rankers(o.path, o.mm_games, o.cache_dir),
    "scale": lambda o: bench_scale(o.path, o.mm_games, str(Path(o.cache_dir) / "scale")),
    "playout": _playout,
    "mc-owner": lambda o: bench_mc_owner(o.games[: o.owner_games]),
    "territory": lambda o: bench_territory(o.games[: o.owner_games]),
    "search": lambda o: bench_search(o.games, o.policy_path, o.model_path),
    "predict": lambda o: bench_predict(o.games, o.model_path),
    "analysis": lambda o: bench_analysis(o.games, o.policy_path, o.model_path),
}


def suites() -> dict[str, list[str]]:
    """The config's suites, each a list of benchmark names."""
    return {name: list(rows) for name, rows in bench_config().suites.items()}


def expand(which: list[str]) -> list[str]:
    """The benchmarks of names and suites (a bare list: the default suite), each once, in
    order; a clear error for a name that is neither."""
    known = suites()
    out: list[str] = []
    for name in which or ["default"]:
        names = known.get(name, [name])
        for n in names:
            if n not in BENCHMARKS:
                raise ValueError(
                    f"unknown benchmark {n!r}; benchmarks: {', '.join(BENCHMARKS)}; "
                    f"suites: {', '.join(known)}"
                )
            if n not in out:
                out.append(n)
    return out


def run(
    which: list[str],
    data: str | None = None,
    n_games: int = 200,
    **options,
) -> list[dict]:
    """The benchmarks and suites named in which (``expand``), on the first n_games of the
    games of data (``games_path``); options: the other fields of ``Options``."""
    names = expand(which)
    path, why = games_path(data)
    setup = {"bench": "setup", "data": path, "games": n_games}
    emit(setup if why is None else setup | {"note": why})
    o = Options(path, load_games(path, n_games), **options)
    out: list[dict] = []
    for name in names:
        out += BENCHMARKS[name](o)
    out.append(emit({"bench": "memory", "peak_rss_mb": round(peak_rss_mb())}))
    return out
