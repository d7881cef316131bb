"""Every enabled feature group of every position of a game, in one replay.

``FeatureVisitor`` is the replay driver's visitor (gomove.board.replay): before
each move it fills, for the position with that move to play, what its switches
ask for, so the full and the light features share one compiled pass over the
game (the harvest has a visitor of its own, gomove.data.harvest.HarvestVisitor:
a visitor's every field goes along each call of the replay's hook, so a job's
visitor holds that job's arrays alone):

- candidates: every legal move of the player to move (superko optional), in
  loc order, then pass last; the played move's index among them is the
  position's ``winner`` (-1, and no rows, when it is not a candidate: a
  superko violation the reader let through).
- per candidate, one row of each enabled group (the groups of gomove.features):
  ``tactical`` (Coulom's groups, tactical.py's columns; its ladders read on the
  visitor's tactical.Reader), ``light`` (light.py's
  groups, the pattern column as its level), ``shapes`` (the largest harvested
  pattern, patterns.match_largest, 0 for none and for pass; every point's
  hashes kept along the replay in a pattern_state.PatternState, so that a
  position costs the points its move changed), ``mc_owner`` (the
  Monte-Carlo owner level, mc_owner.py; its uniform playouts, ``owner_counts``, run
  on a copy before anything else touches the position, seeded by position),
  ``small`` (Stern's small vector + 1, small.py; 0 for pass).

Rows of kept positions go back to back into the ``*_out`` arrays;
``pos_start[i]:pos_start[i + 1]`` are move i's. ``FeatureVisitor.new`` sizes
them for a game; groups that are off get empty arrays of the same types.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from gomove.board.board import LAST, SIZE, TO_MOVE, W, legal_moves
from gomove.board.coords import PASS
from gomove.board.replay import is_visitor, visit
from gomove.features.levels import CAPTURE_COL, EXTENSION_COL, PASS_COL, SELF_ATARI_COL
from gomove.features.light import CONTIGUITY_COL, N_LIGHT, PATTERN_COL, light_levels
from gomove.features.mc_owner import owner_level
from gomove.features.pattern_state import (
    PatternState,
    new_pattern_state,
    shape_level,
    sync_pattern_state,
)
from gomove.features.patterns import Templates
from gomove.features.small import small_vector
from gomove.features.tactical import N_TACTICAL, Reader, new_reader, tactical_into
from gomove.playout.driver import run_games
from gomove.playout.rng import position_seed
from gomove.playout.uniform import UNIFORM


@njit(cache=True)
def owner_counts(b, color: int, n_playouts: int, seed: np.uint64, max_moves: int, out) -> None:
    """out[pt] (size*size) = playouts of n whose final owner of pt is color; b unchanged:
    the Monte-Carlo owner feature's counts (gomove.features.mc_owner), n uniform
    playouts of the one playout driver."""
    size = b.info[SIZE]
    counts = np.zeros((3, size * size), np.int64)
    run_games(b, color, 0.0, n_playouts, seed, max_moves, UNIFORM, counts)
    out[:] = counts[color]


@njit(cache=True, inline="always")
def candidate_index(cands: np.ndarray, n: int, loc: int) -> int:
    """The index of the played move loc among cands[:n], -1 when it is not a candidate."""
    for j in range(n):
        if cands[j] == loc:
            return j
    return -1


class FeatureVisitor(NamedTuple):
    """What one replay fills (module docstring): switches, tables, outputs and scratch."""

    superko: bool
    tactical: bool
    light: bool
    shapes: bool
    mc_owner: bool
    # the harvested patterns' lookup table
    tkeys: np.ndarray
    tvals: np.ndarray
    raw_to_level: np.ndarray  # int32[light.N_RAW]: pattern3x3 level of a raw 3x3 code
    n_playouts: int
    owner_seed: int
    max_moves: int
    # outputs, one row per candidate of the kept positions
    tac_out: np.ndarray  # uint8[C, N_TACTICAL]
    light_out: np.ndarray  # int32[C, N_LIGHT]
    shape_out: np.ndarray  # int32[C]
    owner_out: np.ndarray  # uint8[C]
    cand_out: np.ndarray  # int16[C]
    pos_start: np.ndarray  # int64[N + 1]
    winner: np.ndarray  # int64[N]
    # scratch
    cands: np.ndarray  # int64[size * size + 1]
    tac: np.ndarray  # int64[size * size + 1, N_TACTICAL]
    memo: np.ndarray  # int64[L] ladder memo of tactical_levels
    counts: np.ndarray  # int64[size * size] MC-owner counts
    total: np.ndarray  # int64[1] rows written so far
    small: bool  # Stern's small vector (small.py), level = vector + 1, 0 for pass
    small_out: np.ndarray  # uint16[C]
    pattern: PatternState  # every point's pattern hashes (shapes; a 0-point board without)
    reader: Reader  # the ladder reader's scratch boards (tactical)

    @classmethod
    def new(
        cls,
        size: int,
        n_moves: int,
        templates: Templates,
        tkeys: np.ndarray,
        tvals: np.ndarray,
        raw_to_level: np.ndarray,
        *,
        superko: bool,
        tactical: bool = False,
        light: bool = False,
        shapes: bool = False,
        mc_owner: bool = False,
        small: bool = False,
        n_playouts: int = 0,
        owner_seed: int = 0,
        max_moves: int = 0,
        reader: Reader | None = None,
    ) -> FeatureVisitor:
        """A visitor for a game of n_moves on a size x size board, its outputs sized.

        reader: the ladder reader's scratch boards for this size (a new one when None):
        the visitors of one process may share one, in turn, as their scratch.
        """
        npts = size * size + 1
        rows = n_moves * npts if (tactical or light or shapes or mc_owner or small) else 0

        def rows_of(on: bool, dtype, width: int | None = None) -> np.ndarray:
            n = rows if on else 0
            return np.empty((n, width) if width else n, dtype=dtype)

        return cls(
            superko, tactical, light, shapes, mc_owner, tkeys, tvals, raw_to_level,
            int(n_playouts), int(owner_seed), int(max_moves),
            rows_of(tactical, np.uint8, N_TACTICAL),
            rows_of(light, np.int32, N_LIGHT),
            rows_of(shapes, np.int32),
            rows_of(mc_owner, np.uint8),
            rows_of(True, np.int16),
            np.zeros(n_moves + 1, np.int64),
            np.full(n_moves, -1, np.int64),
            np.empty(npts, np.int64),
            np.empty((npts, N_TACTICAL), np.int64),
            np.empty((size + 2) ** 2, np.int64),
            np.zeros(size * size, np.int64),
            np.zeros(1, np.int64),
            small,
            rows_of(small, np.uint16),
            new_pattern_state(size if shapes else 0, templates),
            reader if reader is not None else new_reader((size + 2) ** 2 if tactical else 0),
        )  # fmt: skip

    @property
    def n_rows(self) -> int:
        return int(self.total[0])


@overload(visit, jit_options={"cache": True})
def _visit_features(visitor, b, i, loc, color):
    if not is_visitor(visitor, FeatureVisitor):
        return None

    def impl(visitor, b, i, loc, color):
        v = visitor
        if v.mc_owner:
            # first, on the position as a replay leaves it (the playouts copy the board)
            seed = position_seed(v.owner_seed, b.zhash[0], i)
            owner_counts(b, color, v.n_playouts, seed, v.max_moves, v.counts)
        b.info[TO_MOVE] = color
        if not (v.tactical or v.light or v.shapes or v.mc_owner or v.small):
            return False
        cands = v.cands
        n = legal_moves(b, color, v.superko, cands)
        cands[n] = PASS
        n += 1
        total = v.total[0]
        w = candidate_index(cands, n, loc)
        v.winner[i] = w
        if w >= 0:
            if v.shapes:
                sync_pattern_state(v.pattern, b.color, b.info[SIZE])
            _fill_rows(v, b, color, cands, n, total)
            total += n
            v.total[0] = total
        v.pos_start[i + 1] = total
        return False

    return impl


@njit(cache=True)
def visit_position(v: FeatureVisitor, b, color: int) -> int:
    """Fill rows 0..n-1 for the position on b with color to move (b as it stands, its
    TO_MOVE set to color): one visit as if pass were played, so every candidate is kept.
    Returns n, the number of candidates (pass last)."""
    v.total[0] = 0
    visit(v, b, 0, PASS, color)
    return v.total[0]


@njit(cache=True)
def _fill_rows(v: FeatureVisitor, b, color: int, cands: np.ndarray, n: int, start: int) -> None:
    """Write rows start..start + n - 1: candidate locs and the enabled groups' levels."""
    if v.tactical:
        v.memo[:] = -1
        tactical_into(b, color, cands, n, v.memo, v.reader, v.tac)
    _fill_columns(v, b, color, cands, n, start)


@njit(cache=True, _nrt=False)
def _fill_columns(v: FeatureVisitor, b, color: int, cands: np.ndarray, n: int, start: int):
    """_fill_rows' loop over the candidates (the tactical levels already in v.tac);
    compiled without numba's reference counting (it allocates nothing), which cost
    more than reading a shape level."""
    last = b.info[LAST]
    width = b.info[W]
    size = width - 2
    for j in range(n):
        row = start + j
        loc = cands[j]
        v.cand_out[row] = loc
        if v.tactical:
            for g in range(N_TACTICAL):
                v.tac_out[row, g] = v.tac[j, g]
        if v.shapes:
            v.shape_out[row] = 0
            if loc != PASS:
                pt = (loc // width - 1) * size + loc % width - 1
                v.shape_out[row] = shape_level(v.pattern, color, pt, v.tkeys, v.tvals)
        if v.light:
            for g in range(N_LIGHT):
                v.light_out[row, g] = 0
            if loc == PASS:
                v.light_out[row, PASS_COL] = 2 if last == PASS else 1
            else:
                code, cap, ext, sa, cont = light_levels(b, loc, color, last)
                v.light_out[row, CAPTURE_COL] = cap
                v.light_out[row, EXTENSION_COL] = ext
                v.light_out[row, SELF_ATARI_COL] = sa
                v.light_out[row, CONTIGUITY_COL] = cont
                v.light_out[row, PATTERN_COL] = v.raw_to_level[code]
        if v.small:
            v.small_out[row] = 0 if loc == PASS else small_vector(b, loc, color) + 1
        if v.mc_owner:
            if loc == PASS:
                v.owner_out[row] = 0
            else:
                pt = (loc // width - 1) * size + loc % width - 1
                v.owner_out[row] = owner_level(v.counts[pt], v.n_playouts)
