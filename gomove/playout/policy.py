"""PatternPolicy: the learnt light-feature gammas as the playouts use them.

Terms:
- policy file: gomove.features.light_gammas (``policy.npz``); a PatternPolicy
  is a LightGammas, so ``PatternPolicy.load`` reads it.
- kernel tables (``tables()``): gomove.playout.pattern.tables, built once.
- playouts: the playout driver (gomove.playout.driver.run_games) with
  this policy's PatternPlayer (gomove.playout.pattern.playout).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gomove import pretrained
from gomove.features.light_gammas import LightGammas
from gomove.playout.pattern.playout import PatternPlayer, pattern_player
from gomove.playout.pattern.tables import PolicyTables, build_tables


@dataclass
class PatternPolicy(LightGammas):
    """The gammas of a policy file plus the kernel tables built from them (once)."""

    _tables: PolicyTables | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def default(cls) -> PatternPolicy:
        """The light policy shipped with gomove (gomove.pretrained, docs/model-card.md)."""
        if not pretrained.POLICY.is_file():
            raise FileNotFoundError(pretrained.missing(pretrained.POLICY))
        return cls.load(pretrained.POLICY)

    def tables(self) -> PolicyTables:
        """The arrays the playout kernels read, built once."""
        if self._tables is None:
            self._tables = build_tables(self)
        return self._tables

    def player(self, check: bool = False, **options: Any) -> PatternPlayer:
        """This policy for the playout driver: pattern_player of its tables, with check and
        the options (replies, tactics, nakade, selfatari_max, local, local_min) that
        gomove.playout.pattern.playout.pattern_player describes."""
        return pattern_player(self.tables(), check, **options)
