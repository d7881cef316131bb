"""Datasets on disk: harvesting and extraction with a cache, and the Dataset handle.

Terms:
- cache key: a hash of everything an extraction depends on: the input files
  (name, size, content hash), the reading config, the feature config, the harvested
  pattern table, the shard format and the Zobrist seeds. Same key, same shards.
- dataset folder: ``<cache_dir>/<kind>-<key>/`` with ``shard-NNNNN.npz`` files
  and, written last, ``dataset.json`` (see shards.py). Finished shards of an
  interrupted extraction are kept and reused.
- pattern table: ``<cache_dir>/patterns-<key>.npz``; while harvesting, the
  finished chunks' sightings in ``patterns-<key>.parts/``, reused by a harvest
  that was killed and deleted once the table is written.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import os
import shutil
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from tqdm import tqdm

from gomove.atomic import atomic_write_json
from gomove.board.zobrist import PATTERN_SEED, POSITION_SEED
from gomove.data.shards import FORMAT_VERSION, Shard, concat_games, load_shard, save_shard
from gomove.features.config import FEATURES_VERSION, FeatureConfig
from gomove.features.extractor import FeatureExtractor
from gomove.features.harvest import TABLE_FORMAT_VERSION, PatternTable, harvest
from gomove.features.registry import Registry
from gomove.reading.games import ReadConfig, ReadStats, expand_paths, iter_games

T = TypeVar("T")


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)


def input_fingerprint(paths: Any) -> list[list]:
    """(name, size, sha-256 of the content) of every file an input names, folders
    walked (names relative to the folder): the same games copied elsewhere, or
    given new times, keep their caches; changed games get new ones."""
    out = []
    for p in expand_paths(paths):
        files = sorted(q for q in p.rglob("*") if q.is_file()) if p.is_dir() else [p]
        for f in files:
            name = str(f.relative_to(p)) if p.is_dir() else f.name
            out.append([name, f.stat().st_size, file_digest(f)])
    return out


def file_digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def cache_key(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def _read_cfg_dict(cfg: ReadConfig) -> dict:
    return asdict(cfg)


def harvest_cached(
    paths: Any,
    read_cfg: ReadConfig,
    feat_cfg: FeatureConfig,
    cache_dir: str | Path,
    workers: int | None = None,
    progress: bool = True,
) -> PatternTable:
    """The pattern table harvested from paths, computed once per cache key."""
    path, harvest_read = harvest_source(paths, read_cfg, feat_cfg, cache_dir)
    if path.exists():
        return PatternTable.load(path)
    parts = path.with_suffix(".parts")  # a killed harvest's finished chunks
    stats = ReadStats()
    games = iter_games(paths, harvest_read, stats)
    table = harvest(
        games,
        feat_cfg,
        workers=workers or default_workers(),
        progress=progress,
        total=harvest_read.max_games,
        parts=parts,
    )
    table.save(path)
    shutil.rmtree(parts, ignore_errors=True)
    return table


def harvest_source(
    paths: Any, read_cfg: ReadConfig, feat_cfg: FeatureConfig, cache_dir: str | Path
) -> tuple[Path, ReadConfig]:
    """Where the table harvested from paths is cached (``patterns-<key>.npz``) and the
    reading config of the games it counts (feat_cfg.harvest_max_games applied)."""
    harvest_read = replace(read_cfg)
    if feat_cfg.harvest_max_games is not None:
        harvest_read.max_games = min(
            feat_cfg.harvest_max_games, read_cfg.max_games or feat_cfg.harvest_max_games
        )
    key = cache_key(
        "patterns",
        input_fingerprint(paths),
        _read_cfg_dict(harvest_read),
        [feat_cfg.min_radius, feat_cfg.max_radius, feat_cfg.min_count],
        [feat_cfg.bloom_bits, feat_cfg.bloom_hashes, PATTERN_SEED, FEATURES_VERSION],
        TABLE_FORMAT_VERSION,
    )
    return Path(cache_dir) / f"patterns-{key}.npz", harvest_read


def share(items: Iterable[T], part: tuple[int, int] | None) -> Iterator[tuple[int, T]]:
    """(i, item) of the items i with i % size == rank, part = (rank, size): one rank's
    share of the games of a run on several processes; every item without part."""
    rank, size = part or (0, 1)
    for i, item in enumerate(items):
        if i % size == rank:
            yield i, item


@dataclass
class Dataset:
    """A finished dataset folder."""

    path: Path
    registry: Registry
    shards: list[Path]
    n_positions: int
    n_candidates: int
    n_games: int
    meta: dict

    @classmethod
    def open(cls, path: str | Path) -> Dataset:
        path = Path(path)
        meta = json.loads((path / "dataset.json").read_text())
        if meta["format_version"] != FORMAT_VERSION:
            raise ValueError(
                f"{path}: dataset format {meta['format_version']}, "
                f"expected {FORMAT_VERSION}; delete it to rebuild"
            )
        return cls(
            path,
            Registry.from_dict(meta["registry"]),
            [path / s for s in meta["shards"]],
            meta["n_positions"],
            meta["n_candidates"],
            meta["n_games"],
            meta,
        )

    def load(self, i: int) -> Shard:
        return load_shard(self.shards[i])

    @property
    def bytes_per_position(self) -> float:
        size = sum(p.stat().st_size for p in self.shards)
        return size / max(self.n_positions, 1)


# worker state, set before the pool forks
_EXTRACTOR: FeatureExtractor | None = None


def _extract_shard(task: tuple[Path, list[tuple[int, Any]]]) -> dict:
    path, games = task
    ex = _EXTRACTOR
    assert ex is not None
    parts = [ex.game(g) for _, g in games]
    sizes = {g.name: len(g) for g in ex.registry.groups}
    shard = concat_games(parts, [gid for gid, _ in games], sizes)
    save_shard(path, shard)
    return {
        "games": len(games),
        "positions": shard.n_positions,
        "candidates": shard.n_candidates,
        "skipped_positions": sum(p["skipped"] for p in parts),
    }


def _shard_counts(path: Path) -> dict:
    with np.load(path) as z:
        return {"positions": len(z["winner"]), "candidates": int(z["pos_start"][-1])}


def build_dataset(
    paths: Any,
    read_cfg: ReadConfig,
    extractor: FeatureExtractor,
    cache_dir: str | Path,
    kind: str = "data",
    shard_games: int = 100,
    workers: int | None = None,
    progress: bool = True,
    part: tuple[int, int] | None = None,
) -> Dataset:
    """Extract every position of the games under paths into shards, or reuse them.

    part: (rank, size) keeps only the games i (in reading order, after the
    filters) with i % size == rank, each with its global index as game id: one
    rank's share of a run on several processes (gomove.train.world).
    """
    n_parts = part[1] if part else 1
    global _EXTRACTOR
    table = extractor.table
    table_hash = (
        hashlib.sha256(table.hashes.tobytes()).hexdigest()[:16] if table is not None else None
    )
    key = cache_key(
        kind,
        input_fingerprint(paths),
        _read_cfg_dict(read_cfg),
        extractor.cfg.key_dict(),
        table_hash,
        [FORMAT_VERSION, POSITION_SEED, PATTERN_SEED, FEATURES_VERSION],
        *([list(part)] if n_parts > 1 else []),  # one process: the key it always had
    )
    folder = Path(cache_dir) / f"{kind}-{key}"
    if (folder / "dataset.json").exists():
        return Dataset.open(folder)
    folder.mkdir(parents=True, exist_ok=True)
    workers = workers or default_workers()
    stats = ReadStats()
    sources: list[str] = []

    def tasks():
        chunk: list[tuple[int, Any]] = []
        index = 0
        for i, game in share(iter_games(paths, read_cfg, stats), part):
            chunk.append((i, game))
            sources.append(game.source)
            if len(chunk) == shard_games:
                yield folder / f"shard-{index:05d}.npz", chunk
                chunk, index = [], index + 1
        if chunk:
            yield folder / f"shard-{index:05d}.npz", chunk

    totals: Counter = Counter()
    shard_names: list[str] = []
    total = -(-read_cfg.max_games // n_parts) if read_cfg.max_games else None
    bar = tqdm(total=total, desc=f"extract {kind}", unit="game", disable=not progress)

    def todo():
        for path, chunk in tasks():
            shard_names.append(path.name)
            if path.exists():  # finished by an earlier, interrupted run
                totals.update(_shard_counts(path) | {"games": len(chunk), "reused_shards": 1})
                bar.update(len(chunk))
                continue
            yield path, chunk

    _EXTRACTOR = extractor
    pool = mp.get_context("fork").Pool(workers) if workers > 1 else None
    try:
        results = pool.imap(_extract_shard, todo()) if pool else map(_extract_shard, todo())
        for r in results:
            totals.update(r)
            bar.update(r["games"])
    finally:
        bar.close()
        if pool:
            pool.close()
            pool.join()
        _EXTRACTOR = None
    meta = {
        "format_version": FORMAT_VERSION,
        "key": key,
        "kind": kind,
        "registry": extractor.registry.to_dict(),
        "shards": shard_names,
        "n_positions": totals["positions"],
        "n_candidates": totals["candidates"],
        "n_games": len(sources),
        "skipped_positions": totals["skipped_positions"],
        "games": sources,
        "read": stats.summary(),
        "features": asdict(extractor.cfg),
        "zobrist_seeds": {"position": POSITION_SEED, "pattern": PATTERN_SEED},
    }
    atomic_write_json(folder / "dataset.json", meta)
    return Dataset.open(folder)
