"""FeatureExtractor: a whole game -> per-candidate feature levels, and the registry they use.

Terms:
- position: the board before one move of the game, with that move's player to move.
- candidate: a legal move of that player, or pass (always the last candidate).
- winner: the candidate the game's move played.

The registry holds the enabled tactical groups (in tactical.py's order) or,
with ``light``, the light groups (light.py's LIGHT_GROUPS), then
``mc_owner`` when on (Coulom's 9th feature, mc_owner.py) and, when shapes are
on, one ``shape`` group whose levels are the harvested patterns, then ``small``
(Stern's small vector, small.py) when on.
"""

from __future__ import annotations

import numpy as np

from gomove.board.board import SIZE, Board
from gomove.board.replay import game_arrays, replay, start_board
from gomove.board.scoring import default_max_moves
from gomove.data.visitor import FeatureVisitor, visit_position
from gomove.features.config import FeatureConfig
from gomove.features.light import LIGHT_GROUPS, light_level_names
from gomove.features.light import pattern_levels as light_pattern_levels
from gomove.features.mc_owner import level_names as mc_owner_level_names
from gomove.features.pattern_table import PatternTable
from gomove.features.patterns import make_templates
from gomove.features.registry import SHAPE_GROUP, Group, Registry
from gomove.features.small import level_names as small_level_names
from gomove.features.tactical import TACTICAL_GROUPS, TACTICAL_LEVELS, Reader, new_reader


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
            groups.append(Group(SHAPE_GROUP, self.table.level_names()))
        if cfg.small:
            groups.append(Group("small", small_level_names()))
        self.registry = Registry(groups)
        self._position_visitors: dict[int, FeatureVisitor] = {}
        self._readers: dict[int, Reader] = {}  # the ladder reader's scratch, by board size

    def shape_radius(self) -> np.ndarray:
        """int64[F]: the radius of each shape feature's pattern, 0 for other features."""
        out = np.zeros(self.registry.n_features, dtype=np.int64)
        if self.table is not None:
            g = self.registry.group_index(SHAPE_GROUP)
            o = self.registry.offsets[g]
            out[o : o + len(self.table)] = self.table.radius
        return out

    def small_levels(self, shape: np.ndarray, small: np.ndarray) -> np.ndarray:
        """Stern's small vector where the largest matched shape is small (radius <=
        small_max_radius) or none matched, 0 (absent) elsewhere (Wistuba et al. 2012)."""
        radius = np.concatenate([[0], self.table.radius])[shape]
        return np.where(radius <= self.cfg.small_max_radius, small, 0).astype(np.uint16)

    def visitor(self, size: int, n_moves: int) -> FeatureVisitor:
        """The replay visitor (gomove.data.visitor) filling this config's groups for a game;
        the visitors of one size share one ladder reader (its boards are scratch, and
        allocating them cost more than a short game's reading)."""
        cfg = self.cfg
        reader = self._readers.get(size)
        if reader is None and cfg.tactical:
            reader = self._readers[size] = new_reader((size + 2) ** 2)
        return FeatureVisitor.new(
            size,
            n_moves,
            self.templates,
            self.tkeys,
            self.tvals,
            light_pattern_levels()[1],
            superko=cfg.superko,
            tactical=bool(cfg.tactical),
            light=cfg.light,
            shapes=self.table is not None,
            mc_owner=cfg.mc_owner,
            small=cfg.small,
            n_playouts=cfg.mc_owner_playouts,
            owner_seed=cfg.mc_owner_seed,
            max_moves=default_max_moves(size),
            reader=reader,
        )

    def _columns(self, v: FeatureVisitor, total: int) -> dict[str, np.ndarray]:
        """{group: level per row} of the first total rows a visitor filled, by group name."""
        cols = {
            g: v.tac_out[:total, c]
            for g, c in zip(self.cfg.tactical, self.tactical_cols, strict=True)
        }
        if self.cfg.light:
            cols.update({g: v.light_out[:total, j] for j, g in enumerate(LIGHT_GROUPS)})
        if self.cfg.mc_owner:
            cols["mc_owner"] = v.owner_out[:total]
        if self.table is not None:
            cols[SHAPE_GROUP] = v.shape_out[:total]
        if self.cfg.small:
            cols["small"] = self.small_levels(cols[SHAPE_GROUP], v.small_out[:total])
        return cols

    def position(self, board: Board, color: int) -> tuple[np.ndarray, np.ndarray]:
        """One position's candidates and their feature levels, for prediction and search.

        board (its TO_MOVE set to color, nothing else changed) with color to play.
        Returns (locs int64[n], levels int64[n, G] in the registry's group order,
        0 = absent); pass is the last candidate. The visitor is built once per size.
        """
        size = int(board.info[SIZE])
        v = self._position_visitors.get(size)
        if v is None:
            v = self._position_visitors[size] = self.visitor(size, 1)
        n = visit_position(v, board, int(color))
        cols = self._columns(v, n)
        levels = np.empty((n, len(self.registry.groups)), np.int64)
        for g, name in enumerate(self.registry.group_names):
            levels[:, g] = cols[name]
        return v.cand_out[:n].astype(np.int64), levels

    def game(self, game) -> dict[str, np.ndarray]:
        """Every position of one game as compact arrays, from one replay.

        Returns columns {group: level per candidate} (uint8/int32 by group
        width), cand[N] int16 locs, n_cand[P], winner[P] (index within the
        position), move[P], and the number of positions skipped.
        """
        ga = game_arrays(game)
        v = self.visitor(ga.size, len(ga.locs))
        replay(start_board(ga), ga.locs, ga.colors, v)
        kept = v.winner >= 0
        total = v.n_rows
        counts = np.diff(v.pos_start)[kept]
        return {
            "columns": self._columns(v, total),
            "cand": v.cand_out[:total].copy(),
            "n_cand": counts.astype(np.int32),
            "winner": v.winner[kept].astype(np.int16),
            "move": np.nonzero(kept)[0].astype(np.int16),
            "skipped": int((~kept).sum()),
        }
