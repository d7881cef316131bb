"""What a data config group (gomove/configs/data) names: its inputs and how to read them.

Shared by training runs (gomove.train.move_models) and the exports that reopen a
run's data (gomove.export.source).
"""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from gomove.reading.games import ReadConfig


def read_config(data: DictConfig, max_games: int | None) -> ReadConfig:
    """How the games of a data config are read and filtered (at most max_games)."""
    return ReadConfig(
        sizes=tuple(data.sizes),
        handicap=data.handicap,
        min_moves=data.min_moves,
        max_games=max_games,
        strict=data.strict,
        superko=data.superko,
    )


def paths(value: Any) -> Any:
    """A config path or list of paths as plain Python."""
    if OmegaConf.is_config(value):
        return OmegaConf.to_container(value, resolve=True)
    return value
