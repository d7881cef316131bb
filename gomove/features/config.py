"""FeatureConfig: which groups a dataset has and how shapes are harvested."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from gomove.features.tactical import TACTICAL_GROUPS

# Bump when what a feature level means changes: it is part of every cache key,
# so datasets and pattern tables extracted by older code are rebuilt.
FEATURES_VERSION = 1

# Optional groups: when the switch (first field) is off, their fields are left
# out of cache keys, so adding an optional group keeps the keys of existing
# datasets (a dataset without the group does not depend on its settings).
OPTIONAL_FIELDS = {
    "mc_owner": ("mc_owner", "mc_owner_playouts", "mc_owner_seed"),
    "light": ("light",),
    "small": ("small", "small_max_radius"),
}


@dataclass
class FeatureConfig:
    name: str = "full"
    # tactical groups of Coulom's Table 1, by name (see features/tactical.py)
    tactical: list[str] = field(default_factory=lambda: list(TACTICAL_GROUPS))
    # true: each candidate's largest harvested shape is a feature; "all": every
    # pattern of its chain (features.hierarchy) is a member of its team in training,
    # from the same extracted levels; false: no shapes
    # (Any: OmegaConf 2.3 fails on a Union field inside the composed config; validate checks it)
    shapes: Any = True
    min_radius: int = 3
    max_radius: int = 10
    # harvest: keep shapes played at least min_count times in the training games
    # (Stern et al. keep patterns "played more than n times"; Wistuba et al. use 10)
    min_count: int = 10
    harvest_max_games: int | None = None
    # a Bloom filter in front of the exact counts: a pattern enters the counts
    # on its second sighting, so memory grows with repeated patterns only
    bloom_bits: int = 1 << 27
    bloom_hashes: int = 4
    # the most patterns the harvest counts in memory at once (about 80 bytes each: the
    # default just fits numba dicts of 2**25 slots, 1.8 GB); past it the harvest
    # counts its saved sightings again in shards by hash (gomove.data.harvest)
    harvest_max_patterns: int = 22_000_000
    superko: bool = True
    # Monte-Carlo owner (Coulom 2007, Table 1; features/mc_owner.py): costly,
    # ~63 playouts per position, so off unless asked for
    mc_owner: bool = False
    mc_owner_playouts: int = 63
    mc_owner_seed: int = 0
    # Coulom's light features for playouts (2007, 4.1; features/light.py) in
    # place of the tactical groups and shapes (features=light)
    light: bool = False
    # Stern's small feature vector (features/small.py) on candidates whose largest
    # matched shape has radius <= small_max_radius or none (Wistuba et al. 2012, Fig. 9)
    small: bool = False
    small_max_radius: int = 4

    def key_dict(self) -> dict:
        """The fields extracted levels depend on, for dataset cache keys.

        ``name``, ``harvest_max_games`` and ``harvest_max_patterns`` are None (they
        change no level, and the pattern table is keyed apart); the fields of optional groups that
        are off are left out (OPTIONAL_FIELDS).
        """
        # "all" changes training, not the levels: the same dataset as true
        d = asdict(self) | {
            "name": None,
            "harvest_max_games": None,
            "harvest_max_patterns": None,
            "shapes": bool(self.shapes),
        }
        for switch, fields in OPTIONAL_FIELDS.items():
            if not d[switch]:
                for f in fields:
                    del d[f]
        return d

    @property
    def all_shapes(self) -> bool:
        """features.shapes=all: every pattern of a candidate's chain is a team member."""
        return self.shapes == "all"

    def validate(self) -> None:
        if self.shapes not in (True, False, "all"):
            raise ValueError(f"features.shapes is true, false or all, not {self.shapes!r}")
        unknown = [g for g in self.tactical if g not in TACTICAL_GROUPS]
        if unknown:
            raise ValueError(f"unknown tactical groups {unknown}; known: {list(TACTICAL_GROUPS)}")
        if not 2 <= self.min_radius <= self.max_radius <= 10:
            raise ValueError(
                f"pattern radii must satisfy 2 <= min <= max <= 10, got "
                f"{self.min_radius}..{self.max_radius}"
            )
        if self.min_count < 1:
            raise ValueError("min_count must be >= 1")
        if self.harvest_max_patterns < 1000:
            # each shard reads every saved sighting again: a tiny cap means thousands
            raise ValueError(
                f"harvest_max_patterns must be >= 1000, not {self.harvest_max_patterns}"
            )
        if self.light and (self.tactical or self.shapes):
            raise ValueError(
                "light features replace the tactical groups and shapes: "
                "set tactical=[] and shapes=false (configs/features/light.yaml)"
            )
        if self.small and not self.shapes:
            raise ValueError("small features go with shape patterns: set shapes=true")
        if self.mc_owner and self.mc_owner_playouts < 1:
            raise ValueError(f"mc_owner_playouts must be >= 1, not {self.mc_owner_playouts}")
