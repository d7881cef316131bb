"""FeatureExtractor: a whole game -> per-candidate feature levels, and the registry they use.

Terms:
- position: the board before one move of the game, with that move's player to move.
- candidate: a legal move of that player, or pass (always the last candidate).
- winner: the candidate the game's move played.

The registry holds the enabled tactical groups (in tactical.py's order) or,
with ``light``, the light groups (light.py's LIGHT_GROUPS), then
``mc_owner`` when on (Coulom's 9th feature, mc_owner.py) and, when shapes are
on, one ``shape`` group whose levels are the harvested patterns.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gomove.board.board import SIZE, TO_MOVE, play
from gomove.board.replay import game_arrays, start_board
from gomove.features.config import FeatureConfig
from gomove.features.harvest import PatternTable
from gomove.features.light import LIGHT_GROUPS, N_LIGHT, extract_light_game, light_level_names
from gomove.features.light import pattern_levels as light_pattern_levels
from gomove.features.mc_owner import level_names as mc_owner_level_names
from gomove.features.mc_owner import owner_column
from gomove.features.patterns import make_templates
from gomove.features.position import candidate_index, extract_position
from gomove.features.registry import Group, Registry
from gomove.features.tactical import N_TACTICAL, TACTICAL_GROUPS, TACTICAL_LEVELS


@njit(cache=True)
def extract_game(
    b,
    locs,
    colors,
    superko,
    dx,
    dy,
    ends,
    perm,
    keys,
    tkeys,
    tvals,
    use_shapes,
    tac_out,
    shape_out,
    cand_out,
    pos_start,
    winner,
) -> int:
    """Replay a game, writing every position's candidates; return the number of positions kept.

    A position whose played move is not among its candidates (a superko
    violation the reader let through) is left out, shown by winner == -1.
    """
    npts = b.info[SIZE] * b.info[SIZE] + 1
    cands = np.empty(npts, dtype=np.int64)
    tac = np.empty((npts, N_TACTICAL), dtype=np.int64)
    shape = np.empty(npts, dtype=np.int64)
    memo = np.empty(b.color.shape[0], dtype=np.int64)
    total = 0
    kept = 0
    pos_start[0] = 0
    for i in range(locs.shape[0]):
        loc = locs[i]
        color = colors[i]
        b.info[TO_MOVE] = color
        n = extract_position(
            b,
            color,
            superko,
            dx,
            dy,
            ends,
            perm,
            keys,
            tkeys,
            tvals,
            use_shapes,
            cands,
            tac,
            shape,
            memo,
        )
        w = candidate_index(cands, n, loc)
        winner[i] = w
        if w >= 0:
            for j in range(n):
                for g in range(N_TACTICAL):
                    tac_out[total + j, g] = tac[j, g]
                shape_out[total + j] = shape[j]
                cand_out[total + j] = cands[j]
            total += n
            kept += 1
        pos_start[i + 1] = total
        play(b, loc, color)
    return kept


class FeatureExtractor:
    """Holds what extraction needs (templates, pattern lookup) and builds the registry."""

    def __init__(self, cfg: FeatureConfig, table: PatternTable | None = None):
        cfg.validate()
        if cfg.shapes and table is None:
            raise ValueError("shape features need a harvested PatternTable")
        self.cfg = cfg
        self.table = table if cfg.shapes else None
        self.templates = make_templates(cfg.min_radius, cfg.max_radius)
        if self.table is not None:
            self.tkeys, self.tvals = self.table.lookup()
        else:
            self.tkeys = np.zeros(16, dtype=np.uint64)
            self.tvals = np.zeros(16, dtype=np.int32)
        self.tactical_cols = np.array(
            [TACTICAL_GROUPS.index(g) for g in cfg.tactical], dtype=np.int64
        )
        groups = [Group(g, TACTICAL_LEVELS[g]) for g in cfg.tactical]
        if cfg.light:
            names = light_level_names()
            groups += [Group(g, names[g]) for g in LIGHT_GROUPS]
        if cfg.mc_owner:
            groups.append(Group("mc_owner", mc_owner_level_names(cfg.mc_owner_playouts)))
        if self.table is not None:
            groups.append(Group("shape", self.table.level_names()))
        self.registry = Registry(groups)

    def shape_radius(self) -> np.ndarray:
        """int64[F]: the radius of each shape feature's pattern, 0 for other features."""
        out = np.zeros(self.registry.n_features, dtype=np.int64)
        if self.table is not None:
            g = self.registry.group_index("shape")
            o = self.registry.offsets[g]
            out[o : o + len(self.table)] = self.table.radius
        return out

    def game(self, game) -> dict[str, np.ndarray]:
        """Every position of one game as compact arrays.

        Returns levels[N, G] (uint8/int32 by group width), cand[N] int16 locs,
        pos_start[P + 1], winner[P] (index within the position), move[P].
        """
        ga = game_arrays(game)
        b = start_board(ga)
        n_moves = len(ga.locs)
        npts = ga.size * ga.size + 1
        cap = n_moves * npts
        tac = np.empty((cap, N_TACTICAL), dtype=np.uint8)
        shape = np.empty(cap, dtype=np.int32)
        cand = np.empty(cap, dtype=np.int16)
        pos_start = np.empty(n_moves + 1, dtype=np.int64)
        winner = np.empty(n_moves, dtype=np.int64)
        t = self.templates
        light = None
        if self.cfg.light:
            light = np.empty((cap, N_LIGHT), dtype=np.int32)
            levels = light_pattern_levels()[1]
            extract_light_game(
                b, ga.locs, ga.colors, self.cfg.superko, levels, light, cand, pos_start, winner
            )
        else:
            extract_game(
                b,
                ga.locs,
                ga.colors,
                self.cfg.superko,
                t.dx,
                t.dy,
                t.ends,
                t.perm,
                t.keys,
                self.tkeys,
                self.tvals,
                self.table is not None,
                tac,
                shape,
                cand,
                pos_start,
                winner,
            )
        kept = winner >= 0
        total = int(pos_start[-1])
        counts = np.diff(pos_start)[kept]
        cols = {
            g: tac[:total, c] for g, c in zip(self.cfg.tactical, self.tactical_cols, strict=True)
        }
        if light is not None:
            cols.update({g: light[:total, j] for j, g in enumerate(LIGHT_GROUPS)})
        if self.cfg.mc_owner:
            cols["mc_owner"] = owner_column(
                start_board(ga),
                ga.locs,
                ga.colors,
                cand[:total],
                pos_start,
                self.cfg.mc_owner_playouts,
                self.cfg.mc_owner_seed,
            )
        if self.table is not None:
            cols["shape"] = shape[:total]
        return {
            "columns": cols,
            "cand": cand[:total].copy(),
            "n_cand": counts.astype(np.int32),
            "winner": winner[kept].astype(np.int16),
            "move": np.nonzero(kept)[0].astype(np.int16),
            "skipped": int((~kept).sum()),
        }
