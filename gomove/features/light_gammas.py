"""LightGammas: a light-feature model's gammas as the playouts read them, and ``policy.npz``.

Terms:
- policy file (``policy.npz``, written by ``train.py features=light`` next to
  model.pt): ``format_version``; ``pattern`` float64[light.N_RAW], the gamma
  of every raw 3x3 code (its canonical level's; 1 for a code no board shows);
  ``capture``, ``extension``, ``self_atari``, ``contiguity`` and ``pass``,
  float64[levels + 1], the gamma of each level with index 0 (absent) = 1.

gomove.playout.policy.PatternPolicy adds what the playouts need on top (kernel
tables, running playouts); this layer only defines the numbers and the file,
so that training can write it without knowing about playouts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gomove.atomic import atomic_save_npz
from gomove.features.light import LIGHT_LEVELS, N_RAW, PATTERN3X3_GROUP, pattern_levels
from gomove.features.registry import Registry

POLICY_VERSION = 1
LEVEL_GROUPS = ("capture", "extension", "self_atari", "contiguity", "pass")


@dataclass
class LightGammas:
    pattern: np.ndarray  # float64[N_RAW]
    capture: np.ndarray  # float64[5]
    extension: np.ndarray  # float64[2]
    self_atari: np.ndarray  # float64[2]
    contiguity: np.ndarray  # float64[2]
    pass_: np.ndarray  # float64[3], not used by the playouts

    def __post_init__(self) -> None:
        want = {g: len(LIGHT_LEVELS[g]) + 1 for g in LEVEL_GROUPS}
        for g, n in want.items():
            a = np.asarray(self.of(g), dtype=np.float64)
            if a.shape != (n,) or a[0] != 1.0 or not (np.isfinite(a) & (a > 0)).all():
                raise ValueError(f"policy {g} gammas must be float64[{n}], finite, > 0, [0] = 1")
        p = self.pattern
        if p.shape != (N_RAW,) or not (np.isfinite(p) & (p > 0)).all():
            raise ValueError(f"policy pattern gammas must be finite, > 0, float64[{N_RAW}]")

    def of(self, group: str) -> np.ndarray:
        """The gammas of one of LEVEL_GROUPS by level, [0] (absent) = 1."""
        return self.pass_ if group == "pass" else getattr(self, group)

    def tempered(self, power: float) -> LightGammas:
        """Every gamma raised to power: a move's gamma, a product, is raised with them.

        Below 1 flattens the policy, above 1 sharpens it, 0 is neutral(): the gammas
        MM learns predict expert moves, which is not the same as balanced playouts.
        """
        if not power >= 0:
            raise ValueError(f"the power of the playout gammas must be >= 0, not {power}")
        with np.errstate(over="ignore"):  # an overflow fails __post_init__'s finite check
            return type(self)(self.pattern**power, *(self.of(g) ** power for g in LEVEL_GROUPS))

    @classmethod
    def neutral(cls) -> LightGammas:
        """Every gamma 1: uniform over the legal moves that fill no own eye."""
        ones = {g: np.ones(len(LIGHT_LEVELS[g]) + 1) for g in LEVEL_GROUPS}
        return cls(np.ones(N_RAW), *(ones[g] for g in LEVEL_GROUPS))

    @classmethod
    def from_gammas(cls, registry: Registry, log_gamma: np.ndarray) -> LightGammas:
        """From a light-feature model: log_gamma[F] indexed as registry says."""
        log_gamma = np.asarray(log_gamma, dtype=np.float64)
        gamma = {}
        for g in (*LEVEL_GROUPS, PATTERN3X3_GROUP):
            o = int(registry.offsets[registry.group_index(g)])
            n = int(registry.sizes[registry.group_index(g)])
            gamma[g] = np.concatenate([[1.0], np.exp(log_gamma[o : o + n])])
        level_codes, raw_to_level = pattern_levels()
        if len(gamma[PATTERN3X3_GROUP]) != len(level_codes) + 1:
            raise ValueError("the registry's pattern3x3 levels are not light.pattern_levels()")
        return cls(gamma[PATTERN3X3_GROUP][raw_to_level], *(gamma[g] for g in LEVEL_GROUPS))

    def save(self, path: str | Path) -> None:
        atomic_save_npz(
            path,
            compress=True,  # most patterns are unseen, their gammas alike: 2.6 MB -> 40 KB
            format_version=np.array([POLICY_VERSION]),
            pattern=self.pattern,
            **{g: self.of(g) for g in LEVEL_GROUPS},
        )

    @classmethod
    def load(cls, path: str | Path) -> LightGammas:
        with np.load(path) as z:
            version = int(z["format_version"][0])
            if version != POLICY_VERSION:
                raise ValueError(f"{path}: policy format {version}, expected {POLICY_VERSION}")
            return cls(z["pattern"], *(z[g] for g in LEVEL_GROUPS))
