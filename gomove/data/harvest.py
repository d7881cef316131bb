"""Harvesting shape patterns from training games: the counts that make a PatternTable.

Terms:
- sighting: the canonical hash of one template radius around one played move.
- PatternTable (gomove.features.pattern_table): the kept patterns (seen at least
  min_count times), ordered by radius then by decreasing count.
- stones: the configuration of a pattern's sighting that put it in the exact
  counts, 2 bits a point packed in 3 words while counting.

Memory stays bounded when the number of distinct patterns explodes (Stern,
"Harvesting": a Bloom filter): a pattern's first sighting only sets bits of a
Bloom filter; it enters the exact counts on its second sighting (counted as 2).
Patterns seen once, the bulk of the large ones, never take a dict entry. A
Bloom false positive can overcount a pattern by one.

Resuming: the games are hashed in chunks of CHUNK_GAMES (in worker
processes) and counted in order; with a ``parts`` folder every chunk's
sightings are saved there as it finishes (``chunk-NNNNN.npz``, atomically),
and a later harvest of the same games reads them instead of replaying the
games, so a killed harvest continues where it stopped and gives the same
table (the counting, cheap, is redone in the same order).

Sharding: the exact counts take about 80 bytes a pattern and, on the large split
with all sizes, tens of millions of patterns are seen twice (8 GB). With a
``parts`` folder the counts stop at cfg.harvest_max_patterns: the games are then
only hashed (their parts saved), and the saved sightings counted again in shards
by hash, one pass each, every shard with a fresh Bloom filter of SHARD_BLOOM_BITS a
sighting (or bloom_bits if more), its kept patterns cut and its dicts let go before
the next. The table is the same but for the filter's false positives: fewer, since
the default filter of 2**27 bits fills up on the large split (the log says how full
a filter ended, and warns past FULL_FILTER).
"""

from __future__ import annotations

import logging
import math
import multiprocessing as mp
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload
from numba.typed import Dict
from tqdm import tqdm

from gomove.atomic import atomic_save_npz
from gomove.board.board import TO_MOVE
from gomove.board.coords import PASS
from gomove.board.replay import game_arrays, is_visitor, replay, start_board, visit
from gomove.features.config import FeatureConfig
from gomove.features.pattern_table import PatternTable
from gomove.features.patterns import Templates, make_templates, pattern_hashes, pattern_states

log = logging.getLogger(__name__)

CHUNK_GAMES = 25  # games hashed per task (and per saved part)
STONE_WORDS = 3  # 2 bits for each of the 72 points of radius 10
# shards enough that each sees at most 1/SHARD_MARGIN of the sightings counted before
# the cap: a share of the patterns' hashes holds that share of the distinct patterns,
# and the distinct patterns grow slower than the sightings, so each shard stays under it
SHARD_MARGIN = 1.25
SHARD_SHIFT = 32  # shards by the hash's high bits: the filter's and the dict's are its low
# a shard's Bloom filter has at least this many bits a sighting of it: with 4 hashes, at
# most 2.4% false positives at its end however many games (the sightings are known then)
SHARD_BLOOM_BITS = 8
FULL_FILTER = 0.05  # false positives at the filter's end past which the log warns


@njit(cache=True)
def _bloom_seen(bits: np.ndarray, key: np.uint64, k: int) -> bool:
    """Test-and-set: True when all k bits were already set."""
    nbits = np.uint64(bits.shape[0] * 64)
    h2 = (key * np.uint64(0x9E3779B97F4A7C15)) | np.uint64(1)
    seen = True
    for i in range(k):
        idx = (key + np.uint64(i) * h2) % nbits
        word = idx >> np.uint64(6)
        bit = np.uint64(1) << (idx & np.uint64(63))
        if bits[word] & bit == 0:
            seen = False
            bits[word] |= bit
    return seen


RADIUS_BITS = 8  # counts[h] = count << RADIUS_BITS | radius index


@njit(cache=True)
def _pack(states: np.ndarray, n: int) -> tuple[np.uint64, np.uint64, np.uint64]:
    """The first n point states (2 bits each) packed into STONE_WORDS words."""
    w = np.zeros(STONE_WORDS, dtype=np.uint64)
    for j in range(n):
        w[j >> 5] |= np.uint64(states[j]) << np.uint64(2 * (j & 31))
    return (w[0], w[1], w[2])


@njit(cache=True)
def shard_of(h: np.uint64, n_shards: int) -> int:
    """The shard of hash h among n_shards (its high bits)."""
    return int((h >> np.uint64(SHARD_SHIFT)) % np.uint64(n_shards))


@njit(cache=True)
def count_sightings(
    hashes: np.ndarray,
    states: np.ndarray,
    ends: np.ndarray,
    bits: np.ndarray,
    k: int,
    counts,
    stones,
    n_shards: int = 1,
    shard: int = 0,
) -> None:
    """Add hashes[N, R] (0 = none) to counts with the Bloom filter in front (k = 0: none);
    a pattern entering counts gets its configuration, states[N, P] packed, in stones.
    n_shards > 1: only the hashes of shard (``shard_of``) are counted."""
    one = 1 << RADIUS_BITS
    for i in range(hashes.shape[0]):
        for r in range(hashes.shape[1]):
            h = hashes[i, r]
            if h == 0:
                continue
            if n_shards > 1 and shard_of(h, n_shards) != shard:
                continue
            if h in counts:
                counts[h] += one
                continue
            if k == 0:
                counts[h] = one + r
            elif _bloom_seen(bits, h, k):
                counts[h] = 2 * one + r
            else:
                continue
            stones[h] = _pack(states[i], ends[r])


@njit(cache=True)
def _dump(counts, min_count: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The entries of counts seen at least min_count times, as (keys, packed values):
    counted first, so only the kept ones take arrays (on the large split's 147,329
    games the dict holds tens of millions of patterns, and 4.9 million are kept)."""
    least = min_count << RADIUS_BITS
    n = 0
    for v in counts.values():
        if v >= least:
            n += 1
    keys = np.empty(n, dtype=np.uint64)
    vals = np.empty(n, dtype=np.int64)
    i = 0
    for k, v in counts.items():
        if v >= least:
            keys[i] = k
            vals[i] = v
            i += 1
    return keys, vals


class HarvestVisitor(NamedTuple):
    """The harvest's replay visitor (gomove.board.replay): before each move, the
    canonical hash of every template radius around the move (patterns.pattern_hashes;
    0 for a pass) and the states of the largest template's points (pattern_states)."""

    dx: np.ndarray  # the templates (patterns.Templates)
    dy: np.ndarray
    ends: np.ndarray
    perm: np.ndarray
    keys: np.ndarray
    hashes_out: np.ndarray  # uint64[N, R]
    states_out: np.ndarray  # uint8[N, P]
    hashes: np.ndarray  # uint64[R]: scratch

    @classmethod
    def new(cls, n_moves: int, t: Templates) -> HarvestVisitor:
        n_radii = len(t.radii)
        return cls(
            t.dx, t.dy, t.ends, t.perm, t.keys,
            np.zeros((n_moves, n_radii), np.uint64),
            np.zeros((n_moves, int(t.ends[-1])), np.uint8),
            np.empty(n_radii, np.uint64),
        )  # fmt: skip


@overload(visit, jit_options={"cache": True})
def _visit_harvest(visitor, b, i, loc, color):
    if not is_visitor(visitor, HarvestVisitor):
        return None

    def impl(visitor, b, i, loc, color):
        v = visitor
        b.info[TO_MOVE] = color
        if loc == PASS:
            v.hashes_out[i, :] = 0
        else:
            pattern_hashes(b, loc, color, v.dx, v.dy, v.ends, v.perm, v.keys, v.hashes)
            v.hashes_out[i, :] = v.hashes
            pattern_states(b, loc, color, v.dx, v.dy, v.states_out[i])
        return False

    return impl


def played_hashes(game, t: Templates) -> tuple[np.ndarray, np.ndarray]:
    """uint64[N, R]: the canonical hash of every radius around every move (0 for a pass),
    and uint8[N, P] the largest template's point states, from one replay with the
    HarvestVisitor."""
    ga = game_arrays(game)
    v = HarvestVisitor.new(len(ga.locs), t)
    replay(start_board(ga), ga.locs, ga.colors, v)
    return v.hashes_out, v.states_out


def part_path(parts: Path, i: int) -> Path:
    """The saved sightings of chunk i of a harvest."""
    return parts / f"chunk-{i:05d}.npz"


def _game_hashes(args: tuple) -> tuple[int, np.ndarray, np.ndarray, bool]:
    """(games, hashes, states, reused) of one chunk: read from its part file when an
    earlier harvest saved it, else hashed (and saved when part is given)."""
    games, t, part = args
    if part is not None and part.exists():
        with np.load(part) as z:
            return int(z["n_games"]), z["hashes"], z["states"], True
    found = [played_hashes(game, t) for game in games]
    if found:
        hashes = np.concatenate([h for h, _ in found])
        states = np.concatenate([s for _, s in found])
    else:
        hashes = np.zeros((0, len(t.radii)), dtype=np.uint64)
        states = np.zeros((0, int(t.ends[-1])), dtype=np.uint8)
    if part is not None:
        atomic_save_npz(part, hashes=hashes, states=states, n_games=np.array(len(games)))
    return len(games), hashes, states, False


def _chunks(games: Iterable, n: int) -> Iterable[list]:
    chunk = []
    for g in games:
        chunk.append(g)
        if len(chunk) == n:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class Counted(NamedTuple):
    """count_patterns' result: the exact counts and configurations (numba dicts keyed
    by hash, ``count_sightings``; None once the cap let them go), the templates,
    and the sightings (nonzero hashes) seen and counted."""

    counts: Dict | None
    stones: Dict | None
    t: Templates
    sightings: int
    counted: int
    chunks: int


def harvest(
    games: Iterable,
    cfg: FeatureConfig,
    workers: int = 1,
    progress: bool = True,
    total: int | None = None,
    parts: Path | None = None,
) -> PatternTable:
    """Count the shapes of played moves over games; keep those seen >= cfg.min_count times.

    parts: a folder for the finished chunks' sightings, reused when present (module
    docstring); it must belong to these games and cfg alone (the caller keys it).
    With it the counts in memory stop at cfg.harvest_max_patterns and the rest is
    counted in shards from the saved sightings (module docstring).
    """
    cap = cfg.harvest_max_patterns if parts is not None else None
    c = count_patterns(games, cfg, workers, progress, total, parts=parts, max_patterns=cap)
    if c.counts is None:
        assert parts is not None
        n_shards = max(2, math.ceil(SHARD_MARGIN * c.sightings / max(c.counted, 1)))
        log.info(
            "harvest: more than %d patterns after %d of %d sightings: counting them in %d "
            "shards", cap, c.counted, c.sightings, n_shards,
        )  # fmt: skip
        keys, count, rad_idx, states = count_shards(
            parts, c.chunks, c.t, cfg, n_shards, progress, c.sightings
        )
    else:
        log.info("harvest: %d patterns counted, of %d sightings", len(c.counts), c.sightings)
        keys, count, rad_idx = count_arrays(c.counts, cfg.min_count)
        states = stone_states(c.stones, c.t, keys, rad_idx)
    return table_of(keys, count, rad_idx, states, c.t, cfg)


def _bloom(cfg: FeatureConfig, bloom: bool = True, least_bits: int = 0) -> tuple[np.ndarray, int]:
    """The Bloom filter's empty bits (cfg.bloom_bits, or least_bits if more) and its number
    of hashes (0: none, so that patterns seen once, to be kept or summed elsewhere, are
    counted from their first sighting)."""
    bits = np.zeros(max(max(cfg.bloom_bits, least_bits) // 64, 1), dtype=np.uint64)
    return bits, cfg.bloom_hashes if cfg.min_count >= 2 and bloom else 0


def false_positives(bits: np.ndarray, k: int) -> tuple[float, float]:
    """(the share of the filter's bits set, the chance that a pattern never seen passes
    as seen: that share to the k): how far its counts can be one too many."""
    ones = sum(int(np.unpackbits(bits[i : i + (1 << 20)].view(np.uint8)).sum())
               for i in range(0, len(bits), 1 << 20))  # fmt: skip
    share = ones / (64 * len(bits))
    return share, share**k


def _report_filter(bits: np.ndarray, k: int, what: str) -> None:
    """Log how full the filter ended; warn when its false positives pass FULL_FILTER."""
    if k == 0:
        return
    share, fp = false_positives(bits, k)
    say = log.warning if fp > FULL_FILTER else log.info
    say(
        "harvest%s: the Bloom filter ended %.0f%% full: a pattern's first sighting passed "
        "as its second %.1f%% of the time at the end (counted one too many; "
        "features.bloom_bits=%d)", what, 100 * share, 100 * fp, 64 * len(bits),
    )  # fmt: skip


def _new_dicts() -> tuple[Dict, Dict]:
    """Empty exact counts and configurations (count_sightings)."""
    counts = Dict.empty(types.uint64, types.int64)
    stones = Dict.empty(types.uint64, types.UniTuple(types.uint64, STONE_WORDS))
    return counts, stones


def count_patterns(
    games: Iterable,
    cfg: FeatureConfig,
    workers: int = 1,
    progress: bool = True,
    total: int | None = None,
    bloom: bool = True,
    parts: Path | None = None,
    max_patterns: int | None = None,
) -> Counted:
    """The sightings of games counted (``Counted``). bloom=False counts every
    pattern from its first sighting (partial counts to be summed: a pattern seen
    once here may be seen again elsewhere). parts: as for ``harvest``.
    max_patterns: once the counts hold more, they are let go (Counted.counts None) and
    the games only hashed, their sightings saved in parts (which it needs)."""
    if max_patterns is not None and parts is None:
        raise ValueError("a harvest that stops counting at max_patterns needs a parts folder")
    t = make_templates(cfg.min_radius, cfg.max_radius)
    if 2 * int(t.ends[-1]) > 64 * STONE_WORDS:
        raise ValueError(f"templates of {int(t.ends[-1])} points do not fit {STONE_WORDS} words")
    bits, bloom_k = _bloom(cfg, bloom)
    counts, stones = _new_dicts()
    tasks = (
        (chunk, t, None if parts is None else part_path(parts, i))
        for i, chunk in enumerate(_chunks(games, CHUNK_GAMES))
    )
    reused = chunks = sightings = counted = 0
    bar = tqdm(total=total, desc="harvest", unit="game", disable=not progress)
    pool = mp.get_context("fork").Pool(workers) if workers > 1 else None
    try:
        results = pool.imap(_game_hashes, tasks) if pool else map(_game_hashes, tasks)
        positions = 0
        for n_games, hashes, states, was_saved in results:
            seen = int(np.count_nonzero(hashes))
            sightings += seen
            if counts is not None:
                count_sightings(hashes, states, t.ends, bits, bloom_k, counts, stones)
                counted += seen
                if max_patterns is not None and len(counts) > max_patterns:
                    counts = stones = bits = None  # the rest in shards, from the parts
            positions += len(hashes)
            elapsed = bar.format_dict["elapsed"]
            if elapsed > 0:
                bar.set_postfix_str(f"{positions / elapsed:,.0f} positions/s", refresh=False)
            bar.update(n_games)
            reused += was_saved
            chunks += 1
    finally:
        bar.close()
        if pool:
            pool.close()
            pool.join()
    if reused:
        log.info("harvest: %d chunks of %d games reused from %s", reused, CHUNK_GAMES, parts)
    if counts is not None:
        _report_filter(bits, bloom_k, "")
    return Counted(counts, stones, t, sightings, counted, chunks)


def count_shards(
    parts: Path,
    chunks: int,
    t: Templates,
    cfg: FeatureConfig,
    n_shards: int,
    progress: bool,
    sightings: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The kept patterns of the sightings saved in parts (chunks 0..chunks-1), counted one
    shard of hashes at a time: (hashes, counts, radius indices, configurations), shard
    after shard (table_of orders them). sightings: of all shards, so that each filter
    has SHARD_BLOOM_BITS a sighting of its shard."""
    if n_shards < 1:
        raise ValueError(f"count_shards needs at least one shard, not {n_shards}")
    found = []
    least = SHARD_BLOOM_BITS * math.ceil(sightings / n_shards)
    for s in range(n_shards):
        bits, bloom_k = _bloom(cfg, least_bits=least)
        counts, stones = _new_dicts()
        bar = tqdm(range(chunks), desc=f"harvest shard {s + 1}/{n_shards}", disable=not progress)
        for i in bar:
            with np.load(part_path(parts, i)) as z:
                hashes, states = z["hashes"], z["states"]
            count_sightings(hashes, states, t.ends, bits, bloom_k, counts, stones, n_shards, s)
        _report_filter(bits, bloom_k, f" shard {s + 1}/{n_shards}")
        keys, count, rad_idx = count_arrays(counts, cfg.min_count)
        found.append((keys, count, rad_idx, stone_states(stones, t, keys, rad_idx)))
        del counts, stones  # before the next shard's
    return tuple(np.concatenate(a) for a in zip(*found, strict=True))  # type: ignore[return-value]


def count_arrays(counts, min_count: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The counts dict's patterns seen at least min_count times as arrays: hashes
    uint64[K], counts int64[K] and the index of each pattern's radius in the
    templates int64[K], in the dict's order."""
    keys, packed = _dump(counts, min_count)
    return keys, packed >> RADIUS_BITS, packed & ((1 << RADIUS_BITS) - 1)


def stone_states(stones, t: Templates, keys: np.ndarray, rad_idx: np.ndarray) -> np.ndarray:
    """uint8[K, N]: the configurations of keys (all in stones) as point states."""
    return _unpack(stones, keys, t.ends[rad_idx], int(t.ends[-1]))


@njit(cache=True)
def _unpack(stones, keys: np.ndarray, n_points: np.ndarray, width: int) -> np.ndarray:
    """uint8[len(keys), width]: the packed configurations of keys, n_points[i] points each."""
    out = np.zeros((keys.shape[0], width), dtype=np.uint8)
    for i in range(keys.shape[0]):
        w = stones[keys[i]]
        for j in range(n_points[i]):
            out[i, j] = (w[j >> 5] >> np.uint64(2 * (j & 31))) & np.uint64(3)
    return out


def table_of(
    keys: np.ndarray,
    count: np.ndarray,
    rad_idx: np.ndarray,
    states: np.ndarray,
    t: Templates,
    cfg: FeatureConfig,
) -> PatternTable:
    """The table of the kept patterns (count_arrays, stone_states), in table order:
    by radius, then decreasing count, then hash."""
    rad = np.asarray(t.radii, dtype=np.int64)[rad_idx]
    order = np.lexsort((keys, -count, rad))
    return PatternTable(
        keys[order], rad[order], count[order], t.radii[0], t.radii[-1], cfg.min_count, states[order]
    )
