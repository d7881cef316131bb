"""Datasets on disk: harvesting and extraction with a cache, and the Dataset handle.

Terms:
- cache key: a hash of everything an extraction depends on: the input files
  (name, size, content hash), the reading config, the feature config, the harvested
  pattern table, the shard format and the Zobrist seeds. Same key, same shards.
- dataset folder: ``<cache_dir>/<kind>-<key>/``: the flat layout's files,
  appended a chunk of games at a time, and, written last, ``dataset.json``
  (gomove.data.store). An interrupted extraction resumes after its last committed
  chunk; runs started at once on one cache take turns at the build (a lock file
  ``<kind>-<key>.lock`` beside the folder) and the later ones open what the first
  built; a file that fails its checksum is reported in one line and the dataset
  rebuilt.
- pattern table: ``<cache_dir>/patterns-<key>.npz``; while harvesting, the
  finished chunks' sightings in ``patterns-<key>.parts/``, reused by a harvest
  that was killed and deleted once the table is written.
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing as mp
import os
import shutil
import zipfile
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from tqdm import tqdm

from gomove.atomic import atomic_write_json, exclusive
from gomove.board.zobrist import PATTERN_SEED, POSITION_SEED
from gomove.data.extractor import FeatureExtractor
from gomove.data.flat import FlatData
from gomove.data.harvest import harvest
from gomove.data.store import (
    FORMAT_VERSION,
    Appender,
    CorruptCache,
    chunk_rows,
    disk_full,
    disk_full_message,
    map_files,
    read_progress,
    verify_files,
    write_progress,
)
from gomove.features.config import FEATURES_VERSION, FeatureConfig
from gomove.features.pattern_table import TABLE_FORMAT_VERSION, PatternTable
from gomove.features.registry import Registry
from gomove.reading.games import ReadConfig, ReadStats, expand_paths, iter_games

T = TypeVar("T")
log = logging.getLogger(__name__)


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
    table = _load_table(path, repair=False)
    if table is not None:
        return table
    with exclusive(path.with_name(path.name + ".lock")):
        table = _load_table(path, repair=True)  # another run may have harvested it meanwhile
        if table is not None:
            return table
        return _harvest(paths, harvest_read, feat_cfg, path, workers, progress)


def _load_table(path: Path, repair: bool) -> PatternTable | None:
    """The table cached at path; None when absent or unreadable (with repair, under the
    lock: said in a warning and the file removed, to be harvested anew)."""
    if not path.exists():
        return None
    try:
        return PatternTable.load(path)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
        if repair:
            log.warning("%s: unreadable (%s); harvesting it anew", path.name, e)
            path.unlink(missing_ok=True)
        return None


def _harvest(
    paths: Any,
    harvest_read: ReadConfig,
    feat_cfg: FeatureConfig,
    path: Path,
    workers: int | None,
    progress: bool,
) -> PatternTable:
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
        feat_cfg.harvest_max_patterns,  # past it, shards: the filter's false positives differ
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
    """A finished dataset folder (gomove.data.store)."""

    path: Path
    registry: Registry
    n_positions: int
    n_candidates: int
    n_games: int
    meta: dict

    @classmethod
    def open(
        cls, path: str | Path, verify: bool = True, registry: Registry | None = None
    ) -> Dataset:
        """The dataset in folder path; verify checks every file's length and checksum
        (store.verify_files: CorruptCache names the first that fails).

        registry: the extractor's, which the dataset's must equal (CorruptCache if
        not); the dataset then holds that one object. Its level names are the
        shape patterns' (4.9 million on the large split, about 0.4 GB as Python
        strings): a run's train, validation and test sets each holding their own
        copy cost 1.3 GB. ``meta`` keeps everything but the registry.
        """
        path = Path(path)
        meta = json.loads((path / "dataset.json").read_text())
        if meta.get("format_version") != FORMAT_VERSION:
            raise CorruptCache(
                f"{path}: dataset format {meta.get('format_version')}, expected {FORMAT_VERSION}"
            )
        if verify:
            verify_files(path, meta["files"])
        spec = meta.pop("registry")
        if registry is None:
            registry = Registry.from_dict(spec)
        elif spec != registry.to_dict():
            raise CorruptCache(f"{path}: its features differ from the extractor's")
        return cls(
            path,
            registry,
            meta["n_positions"],
            meta["n_candidates"],
            meta["n_games"],
            meta,
        )

    def flat(self) -> FlatData:
        """The positions, memory-mapped (no copy; pos_start and winner as int64 in memory)."""
        reg = self.registry
        a = map_files(self.path, reg.sizes, self.meta["files"], self.n_candidates)
        pos_start = np.zeros(self.n_positions + 1, dtype=np.int64)
        np.cumsum(a["n_cand"], out=pos_start[1:])
        return FlatData(
            a["records"],
            a["combos"],
            reg.offsets,
            reg.sizes,
            pos_start,
            a["winner"].astype(np.int64),
            reg,
            game=a["game"],
            move=a["move"],
            source=self.path / "records.bin",
            group_max=self.meta.get("group_max"),
        )

    @property
    def nbytes(self) -> int:
        """The bytes of its files on disk."""
        return sum(length for length, _ in self.meta["files"].values())

    @property
    def bytes_per_position(self) -> float:
        return self.nbytes / max(self.n_positions, 1)


# worker state, set before the pool forks
_EXTRACTOR: FeatureExtractor | None = None


def _extract_chunk(games: list[tuple[int, Any]]) -> tuple[dict, dict]:
    """The file rows of a chunk of (game id, game) and its counts."""
    ex = _EXTRACTOR
    assert ex is not None
    parts = [ex.game(g) for _, g in games]
    reg = ex.registry
    rows = chunk_rows(parts, [gid for gid, _ in games], reg.group_names, reg.sizes)
    counts = {
        "games": len(games),
        "positions": len(rows["winner"]),
        "candidates": len(rows["code"]),
        "skipped_positions": sum(p["skipped"] for p in parts),
    }
    return rows, counts


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
    """Extract every position of the games under paths into a dataset, or reuse it.

    shard_games: the games of one chunk, the unit an interrupted extraction resumes
    after. part: (rank, size) keeps only the games i (in reading order, after the
    filters) with i % size == rank, each with its global index as game id: one
    rank's share of a run on several processes (gomove.train.world).
    """
    n_parts = part[1] if part else 1
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
    ds, why = _finished(folder, extractor.registry)
    if ds is not None:
        return ds
    if why:
        log.warning("%s; rebuilding the dataset", why)
    with exclusive(folder.with_name(folder.name + ".lock")):
        # another run may have built it while this one waited
        ds, why = _finished(folder, extractor.registry)
        if ds is not None:
            return ds
        if why:
            shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            job = _Extraction(paths, read_cfg, extractor, kind, shard_games, workers, part)
            _extract(job, folder, key, progress)
        except OSError as e:
            if disk_full(e):
                raise OSError(e.errno, disk_full_message(folder)) from e
            raise
    return Dataset.open(folder, verify=False, registry=extractor.registry)


def _finished(folder: Path, registry: Registry) -> tuple[Dataset | None, str | None]:
    """(the finished, intact dataset in folder, None), or (None, why it cannot be used;
    None when it is not there)."""
    if not (folder / "dataset.json").exists():
        return None, None
    try:
        return Dataset.open(folder, registry=registry), None
    except (CorruptCache, ValueError, KeyError, OSError) as e:
        return None, f"{folder.name}: {e}"


@dataclass
class _Extraction:
    """What build_dataset extracts (its arguments)."""

    paths: Any
    read_cfg: ReadConfig
    extractor: FeatureExtractor
    kind: str
    shard_games: int
    workers: int | None
    part: tuple[int, int] | None


def _extract(job: _Extraction, folder: Path, key: str, progress: bool) -> None:
    """Append the chunks not yet committed to folder's files, then write dataset.json."""
    global _EXTRACTOR
    paths, read_cfg, extractor, kind = job.paths, job.read_cfg, job.extractor, job.kind
    shard_games, workers, part = job.shard_games, job.workers, job.part
    n_parts = part[1] if part else 1
    reg = extractor.registry
    done = read_progress(folder)
    if done is not None and done.get("key") != key:
        done = None
    try:
        appender = Appender(folder, reg.sizes, *((done["files"], done["carry"]) if done else ()))
    except (CorruptCache, OSError, KeyError):  # committed rows missing: start the files anew
        done, appender = None, Appender(folder, reg.sizes)
    totals: Counter = Counter(done["totals"] if done else {})
    n_done = done["chunks"] if done else 0
    group_max = np.array(done.get("group_max", []) if done else [], dtype=np.int64)
    if len(group_max) != len(reg.sizes):
        group_max = np.zeros(len(reg.sizes), dtype=np.int64)
    stats = ReadStats()
    sources: list[str] = []

    def chunks():
        chunk: list[tuple[int, Any]] = []
        for i, game in share(iter_games(paths, read_cfg, stats), part):
            chunk.append((i, game))
            sources.append(game.source)
            if len(chunk) == shard_games:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    total = -(-read_cfg.max_games // n_parts) if read_cfg.max_games else None
    bar = tqdm(total=total, desc=f"extract {kind}", unit="game", disable=not progress)
    positions = 0  # extracted by this run, for the bar's rate

    def todo():
        for index, chunk in enumerate(chunks()):
            if index < n_done:  # committed by an earlier, interrupted run
                bar.update(len(chunk))
                continue
            yield chunk

    _EXTRACTOR = extractor
    workers = workers or default_workers()
    pool = mp.get_context("fork").Pool(workers) if workers > 1 else None
    try:
        results = pool.imap(_extract_chunk, todo()) if pool else map(_extract_chunk, todo())
        for rows, counts in results:
            appender.append(rows)
            totals.update(counts)
            np.maximum(group_max, rows["group_max"], out=group_max)
            n_done += 1
            files = appender.commit()
            write_progress(folder, {"key": key, "chunks": n_done, "files": files,
                                    "carry": appender.carry_state(), "totals": totals,
                                    "group_max": group_max.tolist()})  # fmt: skip
            positions += counts["positions"]
            elapsed = bar.format_dict["elapsed"]
            if elapsed > 0:
                bar.set_postfix_str(f"{positions / elapsed:,.0f} positions/s", refresh=False)
            bar.update(counts["games"])
        appender.finish()
        appender.commit()
    finally:
        bar.close()
        appender.close()
        if pool:
            pool.close()
            pool.join()
        _EXTRACTOR = None
    meta = {
        "format_version": FORMAT_VERSION,
        "key": key,
        "kind": kind,
        "registry": reg.to_dict(),
        "files": {n: list(v) for n, v in appender.state.items()},
        "n_positions": totals["positions"],
        "n_candidates": totals["candidates"],
        "group_max": group_max.tolist(),
        "layout": {
            "width": appender.layout.width,
            "code_bits": appender.layout.code_bits,
            "combinations": len(appender.dictionary.rows),
        },  # fmt: skip
        "n_games": len(sources),
        "skipped_positions": totals["skipped_positions"],
        "games": sources,
        "read": stats.summary(),
        "features": asdict(extractor.cfg),
        "zobrist_seeds": {"position": POSITION_SEED, "pattern": PATTERN_SEED},
    }
    atomic_write_json(folder / "dataset.json", meta)
    (folder / "progress.json").unlink(missing_ok=True)
