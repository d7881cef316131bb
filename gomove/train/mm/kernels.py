"""Numba kernels of MM's compiled engine over the flat layout (gomove.data.flat).

Team strengths are kept as products of gammas (``team[c]``, float32 or float64),
not logs: an update of one group multiplies each candidate by that group's gamma
ratio, and a pass needs no exp at all. Sums are float64. Positions are split into
chunks handled in parallel, each with its own partial sums, added up in a fixed
order (chunk by chunk). Where the partial sums of every chunk at once would take
much memory (the 4.9 million patterns of all sizes on the large split: 32 chunks,
1.25 GB), the chunks run in waves, each wave's sums added before the next starts:
the same additions in the same order, so the same bits (``parts_wave``). A group's
levels are read by gomove.data.fields.field_level.

Sparse groups (most candidates at level 0, like atari or capture): their
candidates of level > 0 are listed once as entries (each position's from
``ent_start[p]`` on, the candidate's offset in its position in ``ent_off``), and
with every position's sum of strengths kept (``e``), updating or gathering such
a group visits only its entries, not every candidate.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit, prange

from gomove.data.fields import (
    NARROW,
    Records,
    field_level,
    held,
    narrow_level,
    plain,
    record_bits,
    record_level,
    wide_level,
)

# A sum of strengths or a level's sum in a pass is a chain of float adds, each
# waiting for the last (4 cycles and more): kept in 4 running sums (candidate c
# adds to sum c % 4) the adds overlap; the sums are added in a fixed order, so a
# pass gives the same bits every time.
GATHER_LANES = 4
LANE_LEVELS = 256  # more levels rarely repeat in a row, and 4 sums each would crowd the cache
PART_BYTES = 256 << 20  # the most a pass's partial sums take at once (parts_wave)


def parts_wave(n_chunks: int, n_levels: int, part_bytes: int = PART_BYTES) -> int:
    """How many chunks' partial sums a pass over n_levels levels holds at once: all of
    them where they fit part_bytes, else as many as fit, at least one a thread."""
    lanes = GATHER_LANES if n_levels <= LANE_LEVELS else 1
    fit = part_bytes // (8 * lanes * max(n_levels, 1))
    return int(max(1, min(n_chunks, max(fit, get_num_threads()))))


class Strengths(NamedTuple):
    """What the kernels keep and update of the candidates (gomove.train.mm.compiled.NumbaMM)."""

    team: np.ndarray  # float32 or float64[C] each candidate's team strength
    e: np.ndarray  # float64[P] each position's sum of team strengths


class Positions(NamedTuple):
    """The positions as the passes walk them."""

    pos_start: np.ndarray  # int64[P + 1] position p's candidates: pos_start[p]:pos_start[p + 1]
    win_flat: np.ndarray  # int64[P] the expert move's candidate (flat index) of each position
    chunk_pos: np.ndarray  # int64[K + 1] chunk k (summed in parallel): its positions from here


class Group(NamedTuple):
    """A group's levels as fields.field_level reads them (flat.FlatData.field)."""

    arr: Records  # every candidate's record
    field: np.ndarray  # int64[4] (kind, word, shift, mask)


class Entries(NamedTuple):
    """A sparse group's candidates of level > 0 (module docstring)."""

    start: np.ndarray  # uint32 or int64[P + 1] position p's entries: start[p]:start[p + 1]
    off: np.ndarray  # uint16 or int64[E] each entry's candidate, by its offset in its position


class Change(NamedTuple):
    """A group's change that mm_pass multiplies in first (when ``apply``), as dense_scale does."""

    group: Group  # the changed group's levels
    factor: np.ndarray  # float64[levels + 1] each level's strength factor (level 0: 1)
    apply: bool  # False: nothing to multiply in (the other fields only need the right types)


@njit(cache=True, inline="always")
def strength_sum(team: np.ndarray, lo: int, hi: int) -> float:
    """team[lo:hi] summed in float64, in 4 running sums."""
    s0 = s1 = s2 = s3 = 0.0
    c = lo
    while c + 3 < hi:
        s0 += team[c]
        s1 += team[c + 1]
        s2 += team[c + 2]
        s3 += team[c + 3]
        c += 4
    while c < hi:
        s0 += team[c]
        c += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True)
def keyed_factor(arr: tuple, field: tuple, factor: np.ndarray) -> tuple:
    """(table, shift, mask): factor[level] of a candidate is table[(rec >> shift) & mask]
    of its record rec (fields.record_bits). A wide group's level is that key, so the
    table is factor; a narrow group's level is looked up by the record's code, so the
    table is factor composed with the code's level, one float a code: one lookup a
    candidate instead of two, the same float."""
    if field[0] == NARROW:
        levels = arr[3][field[1]]
        table = np.empty(levels.shape[0])
        for k in range(levels.shape[0]):
            table[k] = factor[levels[k]]
        return table, np.uint64(0), np.uint64(arr[4])
    return np.ascontiguousarray(factor), np.uint64(field[2]), np.uint64(field[3])


@njit(cache=True, inline="always")
def most_candidates(pos_start: np.ndarray, chunk_pos: np.ndarray, k: int) -> int:
    """The most candidates of a position of chunk k: the room scale_sum_keep's records need."""
    longest = 0
    for p in range(chunk_pos[k], chunk_pos[k + 1]):
        longest = max(longest, pos_start[p + 1] - pos_start[p])
    return longest


@njit(cache=True, inline="always")
def scale_sum_keep(
    team: np.ndarray, lo: int, hi: int, arr: tuple, key: tuple, recs: np.ndarray
) -> float:
    """team[c] *= factor[level] for c in lo..hi-1 (key: keyed_factor's), and their new
    sum as strength_sum sums it (the same lanes, the same bits), keeping the candidates'
    records in recs[0:hi - lo]: the pass that gathers the next group reads them there
    instead of decoding them from the stream again. Scaling and summing in one loop
    rather than scaling and calling strength_sum: the two loops made the passes that
    fold in a change about 4% slower."""
    table, shift, mask = key
    s0 = s1 = s2 = s3 = 0.0
    c = lo
    while c + 3 < hi:
        for j in range(4):
            rec = record_bits(arr, c + j)
            recs[c + j - lo] = rec
            team[c + j] = team[c + j] * table[(rec >> shift) & mask]
        s0 += team[c]
        s1 += team[c + 1]
        s2 += team[c + 2]
        s3 += team[c + 3]
        c += 4
    while c < hi:
        rec = record_bits(arr, c)
        recs[c - lo] = rec
        team[c] = team[c] * table[(rec >> shift) & mask]
        s0 += team[c]
        c += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True)
def drain_parts(out: np.ndarray, part: np.ndarray, n: int) -> None:
    """out += part[chunk, lane, level] of the first n chunks, over chunks and lanes in
    that fixed order (a pass's waves added one after the other: the order of adding
    all its chunks at once), each sum zeroed as it is added, ready for the next wave."""
    for k in range(n):
        for j in range(part.shape[1]):
            for i in range(part.shape[2]):
                out[i] += part[k, j, i]
                part[k, j, i] = 0.0


@njit(parallel=True, cache=True)
def mm_pass(
    s: Strengths, pos: Positions, group: Group, n_levels: int, change: Change, wave: int
) -> tuple[float, np.ndarray]:
    """Log-likelihood and, per level of one group, sum of P(candidate) over its candidates.

    The MM denominator of level l is that sum divided by gamma_l (Coulom 2007, 2.5.3):
    sum_j C_ij / E_j = sum over candidates c with level l of P(c) / gamma_l.
    With ``change.apply``, first team[c] *= factor[level] of the changed group as
    dense_scale does (the last update's group, whose levels sit in the same rows):
    one pass over the candidates instead of two, the same numbers, and then e[p]
    the sum of position p's new strengths (as dense_scale leaves it). Both groups
    read the same records (a FlatData's), so each is decoded once (scale_sum_keep).
    wave: the chunks whose sums are held at once (parts_wave; any gives the same bits).
    """
    team = s.team
    e_out = s.e
    pos_start, win_flat, chunk_pos = pos
    arr, field = plain(group.arr), held(group.field)
    scale_arr, scale_field = plain(change.group.arr), held(change.group.field)
    scale = change.apply
    key = keyed_factor(scale_arr, scale_field, change.factor)
    narrow = field[0] == NARROW
    n_chunks = chunk_pos.shape[0] - 1
    mask = GATHER_LANES - 1 if n_levels <= LANE_LEVELS else 0
    wave = max(1, min(wave, n_chunks))
    part = np.zeros((wave, mask + 1, n_levels))
    out = np.zeros(n_levels)
    ll = np.zeros(n_chunks)
    for w0 in range(0, n_chunks, wave):
        n = min(wave, n_chunks - w0)
        for i in prange(n):
            k = w0 + i
            acc = 0.0
            # the records of a position, as the change decoded them (one decode a candidate)
            recs = np.empty(most_candidates(pos_start, chunk_pos, k) if scale else 0, np.uint64)
            for p in range(chunk_pos[k], chunk_pos[k + 1]):
                lo = pos_start[p]
                hi = pos_start[p + 1]
                if scale:
                    e = scale_sum_keep(team, lo, hi, scale_arr, key, recs)
                    e_out[p] = e
                else:
                    e = strength_sum(team, lo, hi)
                inv = 1.0 / e
                acc += math.log(team[win_flat[p]] * inv)
                # the kind's branch out of the candidates' loops
                if scale:
                    for c in range(lo, hi):
                        level = record_level(arr, recs[c - lo], field)
                        part[i, c & mask, level] += team[c] * inv
                elif narrow:
                    for c in range(lo, hi):
                        level = narrow_level(arr, record_bits(arr, c), field)
                        part[i, c & mask, level] += team[c] * inv
                else:
                    for c in range(lo, hi):
                        level = wide_level(record_bits(arr, c), field)
                        part[i, c & mask, level] += team[c] * inv
            ll[k] = acc
        drain_parts(out, part, n)
    return ll.sum(), out


@njit(parallel=True, cache=True)
def dense_scale(s: Strengths, pos: Positions, group: Group, factor: np.ndarray) -> None:
    """team[c] *= factor[level] (factor[0] is 1 for a change), and e[p] each position's
    new sum of strengths, summed as mm_pass sums it (scale_sum_keep; the records it
    keeps go unread here)."""
    team = s.team
    e = s.e
    pos_start = pos.pos_start
    chunk_pos = pos.chunk_pos
    arr = plain(group.arr)
    key = keyed_factor(arr, held(group.field), factor)
    for k in prange(chunk_pos.shape[0] - 1):
        recs = np.empty(most_candidates(pos_start, chunk_pos, k), np.uint64)
        for p in range(chunk_pos[k], chunk_pos[k + 1]):
            e[p] = scale_sum_keep(team, pos_start[p], pos_start[p + 1], arr, key, recs)


@njit(parallel=True, cache=True)
def count_entries(
    arr: Records,
    field: np.ndarray,
    pos_start: np.ndarray,
    chunk_pos: np.ndarray,
    counts: np.ndarray,
) -> None:
    """counts[p + 1]: how many candidates of position p have a level > 0 in (arr, field)."""
    rt, fld = plain(arr), held(field)
    for k in prange(chunk_pos.shape[0] - 1):
        for p in range(chunk_pos[k], chunk_pos[k + 1]):
            n = 0
            for c in range(pos_start[p], pos_start[p + 1]):
                if field_level(rt, fld, c) > 0:
                    n += 1
            counts[p + 1] = n


@njit(parallel=True, cache=True)
def fill_entries(
    arr: Records,
    field: np.ndarray,
    pos_start: np.ndarray,
    chunk_pos: np.ndarray,
    ent_start: np.ndarray,
    ent_off: np.ndarray,
) -> None:
    """The offsets in their position of the group's candidates of level > 0, position
    p's from ent_start[p] on (the prefix sums of count_entries)."""
    rt, fld = plain(arr), held(field)
    for k in prange(chunk_pos.shape[0] - 1):
        for p in range(chunk_pos[k], chunk_pos[k + 1]):
            lo = pos_start[p]
            i = ent_start[p]
            for c in range(lo, pos_start[p + 1]):
                if field_level(rt, fld, c) > 0:
                    ent_off[i] = c - lo
                    i += 1


@njit(parallel=True, cache=True)
def sparse_scale(
    s: Strengths, pos: Positions, ent: Entries, group: Group, factor: np.ndarray
) -> None:
    """team[c] *= factor[level] over a sparse group's entries only (level 0 keeps its
    strength), each position's sum e[p] moved by its candidates' change."""
    team = s.team
    e = s.e
    pos_start = pos.pos_start
    chunk_pos = pos.chunk_pos
    ent_start, ent_off = ent
    arr, field = plain(group.arr), held(group.field)
    for k in prange(chunk_pos.shape[0] - 1):
        for p in range(chunk_pos[k], chunk_pos[k + 1]):
            lo = pos_start[p]
            for i in range(ent_start[p], ent_start[p + 1]):
                c = lo + ent_off[i]
                old = np.float64(team[c])
                team[c] = team[c] * factor[field_level(arr, field, c)]
                e[p] += np.float64(team[c]) - old


@njit(parallel=True, cache=True)
def sparse_pass(
    s: Strengths, pos: Positions, ent: Entries, group: Group, n_levels: int, wave: int
) -> tuple[float, np.ndarray]:
    """mm_pass for a sparse group, from the kept sums e: the log-likelihood over the
    positions, and per level the sum of P(candidate) over the group's entries
    (level 0, never visited, stays 0: its gamma is fixed); wave as for mm_pass."""
    team = s.team
    e = s.e
    pos_start, win_flat, chunk_pos = pos
    ent_start, ent_off = ent
    arr, field = plain(group.arr), held(group.field)
    n_chunks = chunk_pos.shape[0] - 1
    wave = max(1, min(wave, n_chunks))
    part = np.zeros((wave, 1, n_levels))
    out = np.zeros(n_levels)
    ll = np.zeros(n_chunks)
    for w0 in range(0, n_chunks, wave):
        n = min(wave, n_chunks - w0)
        for j in prange(n):
            k = w0 + j
            acc = 0.0
            for p in range(chunk_pos[k], chunk_pos[k + 1]):
                ep = e[p]
                acc += math.log(team[win_flat[p]] / ep)
                lo = pos_start[p]
                for i in range(ent_start[p], ent_start[p + 1]):
                    c = lo + ent_off[i]
                    part[j, 0, field_level(arr, field, c)] += team[c] / ep
            ll[k] = acc
        drain_parts(out, part, n)
    return ll.sum(), out


@njit(parallel=True, cache=True)
def stream_pass(
    r: Records,
    pos_start: np.ndarray,
    win: np.ndarray,
    chunk_pos: np.ndarray,
    code_gamma: np.ndarray,
    fieldsw: np.ndarray,
    wide_gamma: np.ndarray,
    field: np.ndarray,
    n_levels: int,
    max_cands: int,
) -> tuple[float, np.ndarray]:
    """mm_pass without kept strengths (gomove.train.mm.stream): every candidate's strength
    computed from the gammas, the code's product of the narrow groups' gammas
    (code_gamma, float64[K]) times each wide group's gamma (wide_gamma[i, level],
    level 0 at 1), for the positions of chunk_pos's chunks (summed in parallel, in a
    fixed order); win: each position's expert move, by its offset in its position.
    Returns the log-likelihood and, per level of field's group, sum of P(candidate)."""
    rt, fld = plain(r), held(field)
    code_mask = np.uint64(r.code_mask)
    n_chunks = chunk_pos.shape[0] - 1
    part = np.zeros((n_chunks, 1, n_levels))
    ll = np.zeros(n_chunks)
    for k in prange(n_chunks):
        strength = np.empty(max_cands)
        level = np.empty(max_cands, np.int64)
        acc = 0.0
        for p in range(chunk_pos[k], chunk_pos[k + 1]):
            lo = pos_start[p]
            e = 0.0
            for c in range(lo, pos_start[p + 1]):
                rec = record_bits(rt, c)
                s = code_gamma[rec & code_mask]
                for i in range(fieldsw.shape[0]):
                    s *= wide_gamma[i, wide_level(rec, fieldsw[i])]
                strength[c - lo] = s
                e += s
                level[c - lo] = record_level(rt, rec, fld)
            inv = 1.0 / e
            acc += math.log(strength[win[p]] * inv)
            for j in range(pos_start[p + 1] - lo):
                part[k, 0, level[j]] += strength[j] * inv
        ll[k] = acc
    out = np.zeros(n_levels)
    drain_parts(out, part, n_chunks)
    return ll.sum(), out
