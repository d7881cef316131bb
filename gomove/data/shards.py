"""Shards: the on-disk format of extracted positions.

A shard is one ``.npz`` (written atomically) holding the positions of a run of
games, candidates stored flat:
- ``col_<group>``: level of that group per candidate (0 = absent), in the
  narrowest unsigned type that holds the group (uint8 for tactical groups,
  uint16/int32 for shapes);
- ``cand``: int16 loc of each candidate (PASS = -1);
- ``pos_start``: int64[P + 1], candidates of position p are
  ``pos_start[p]:pos_start[p + 1]``;
- ``winner``: int16[P] index of the played candidate within its position;
- ``game``: int32[P] game id (index of the game in the dataset);
- ``move``: int16[P] move number in the game (0 = first move).

Bytes per position: about (G_tactical + shape bytes + 2) per candidate, about
250 candidates on 19x19: (8 + 4 + 2) * 250 + 16 ~ 3.5 KB with int32 shapes
(3 KB when fewer than 65,536 shapes are kept). 2.5 million positions
(10,000 games) take ~8 GB: they fit in 24 GB, and the loader streams shard
by shard anyway.

The JSON sidecar ``dataset.json`` of a dataset folder (format_version,
registry, cache key, zobrist seeds, shard list and counts) is written last,
so a folder without it is an unfinished extraction whose finished shards are
reused.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gomove.atomic import atomic_save_npz

FORMAT_VERSION = 1


def level_dtype(n_levels: int) -> np.dtype:
    if n_levels < 256:
        return np.dtype(np.uint8)
    if n_levels < 65536:
        return np.dtype(np.uint16)
    return np.dtype(np.int32)


@dataclass
class Shard:
    columns: dict[str, np.ndarray]
    cand: np.ndarray
    pos_start: np.ndarray
    winner: np.ndarray
    game: np.ndarray
    move: np.ndarray

    @property
    def n_positions(self) -> int:
        return len(self.winner)

    @property
    def n_candidates(self) -> int:
        return int(self.pos_start[-1])

    def nbytes(self) -> int:
        arrays = [*self.columns.values(), self.cand, self.pos_start, self.winner, self.game]
        return sum(a.nbytes for a in arrays) + self.move.nbytes

    def levels(self, group_names: tuple[str, ...]) -> np.ndarray:
        """int64[N, G] levels in registry order."""
        return np.stack([self.columns[g].astype(np.int64) for g in group_names], axis=1)


def concat_games(parts: list[dict], game_ids: list[int], sizes: dict[str, int]) -> Shard:
    """Join FeatureExtractor.game outputs into one shard."""
    cols = {
        g: np.concatenate([p["columns"][g] for p in parts]).astype(level_dtype(n))
        for g, n in sizes.items()
    }
    n_cand = np.concatenate([p["n_cand"] for p in parts]) if parts else np.zeros(0, np.int32)
    pos_start = np.zeros(len(n_cand) + 1, dtype=np.int64)
    np.cumsum(n_cand, out=pos_start[1:])
    return Shard(
        columns=cols,
        cand=np.concatenate([p["cand"] for p in parts]).astype(np.int16),
        pos_start=pos_start,
        winner=np.concatenate([p["winner"] for p in parts]).astype(np.int16),
        game=np.concatenate(
            [
                np.full(len(p["winner"]), gid, dtype=np.int32)
                for p, gid in zip(parts, game_ids, strict=True)
            ]
        ),
        move=np.concatenate([p["move"] for p in parts]).astype(np.int16),
    )


def save_shard(path: str | Path, shard: Shard) -> None:
    atomic_save_npz(
        path,
        **{f"col_{g}": a for g, a in shard.columns.items()},
        cand=shard.cand,
        pos_start=shard.pos_start,
        winner=shard.winner,
        game=shard.game,
        move=shard.move,
        format_version=np.array([FORMAT_VERSION]),
    )


def load_shard(path: str | Path) -> Shard:
    with np.load(path) as z:
        version = int(z["format_version"][0])
        if version != FORMAT_VERSION:
            raise ValueError(f"{path}: shard format {version}, expected {FORMAT_VERSION}")
        cols = {k[4:]: z[k] for k in z.files if k.startswith("col_")}
        return Shard(cols, z["cand"], z["pos_start"], z["winner"], z["game"], z["move"])
