"""The feature registry: every group, its levels and their global indices.

Terms:
- group: a feature with mutually exclusive levels (Coulom's "feature").
- level: 1..L within a group; 0 means the group is absent from a candidate.
- global index: 0 is the shared ``none`` index; level l of group g is
  ``feature_index(offsets[g], l)`` = ``offsets[g] + l - 1``. Offsets are computed
  from the groups, never kept by hand.
- span: (name, offset, size) of a group, ``Registry.group_spans()``: its
  levels are the global indices [offset, offset + size).
- name: ``group:level_name`` (``capture:ladder``, ``shape:r6:0x1f3a...``),
  so any model's parameters print as a readable table.

Adding a group (say Monte-Carlo owner) means adding one Group to the list the
extraction builds; nothing here changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

NONE_INDEX = 0
SHAPE_GROUP = "shape"  # the group of harvested shape patterns (gomove.data.extractor)


@njit(cache=True, inline="always")
def feature_index(offset, level):
    """The global index of level (>= 1) of the group at offset (scalars or arrays)."""
    return offset + level - 1


class GroupSpan(NamedTuple):
    """A group's place among the global indices: [offset, offset + size)."""

    name: str
    offset: int
    size: int


@dataclass(frozen=True)
class Group:
    name: str
    levels: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.levels)


class Registry:
    def __init__(self, groups: Sequence[Group]):
        names = [g.name for g in groups]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate feature groups in {names}")
        self.groups = tuple(groups)
        sizes = np.array([len(g) for g in groups], dtype=np.int64)
        self.offsets = 1 + np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.sizes = sizes
        self.n_features = int(1 + sizes.sum())

    @property
    def group_names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.groups)

    def group_spans(self) -> list[GroupSpan]:
        """(name, offset, size) of every group, in order (group g is column g of feat)."""
        return [
            GroupSpan(g.name, int(o), int(s))
            for g, o, s in zip(self.groups, self.offsets, self.sizes, strict=True)
        ]

    def group_index(self, name: str) -> int:
        try:
            return self.group_names.index(name)
        except ValueError:
            raise KeyError(f"no feature group {name!r}; groups: {self.group_names}") from None

    def index(self, group: str, level: int | str) -> int:
        g = self.group_index(group)
        if isinstance(level, str):
            level = self.groups[g].levels.index(level) + 1
        if not 1 <= level <= self.sizes[g]:
            raise ValueError(f"group {group!r} has levels 1..{self.sizes[g]}, not {level}")
        return int(feature_index(self.offsets[g], level))

    def name(self, index: int) -> str:
        if index == NONE_INDEX:
            return "none"
        g = int(np.searchsorted(self.offsets, index, side="right") - 1)
        group = self.groups[g]
        return f"{group.name}:{group.levels[index - self.offsets[g]]}"

    def names(self) -> list[str]:
        return [self.name(i) for i in range(self.n_features)]

    def group_of(self) -> np.ndarray:
        """int64[F]: the group of each global index (-1 for none)."""
        out = np.full(self.n_features, -1, dtype=np.int64)
        for g, (o, s) in enumerate(zip(self.offsets, self.sizes, strict=True)):
            out[o : o + s] = g
        return out

    def global_indices(self, levels: np.ndarray) -> np.ndarray:
        """levels[..., G] (0 = absent) -> global indices[..., G]."""
        levels = np.asarray(levels, dtype=np.int64)
        return np.where(levels > 0, feature_index(self.offsets, levels), NONE_INDEX)

    def to_dict(self) -> dict:
        return {"groups": [{"name": g.name, "levels": list(g.levels)} for g in self.groups]}

    @classmethod
    def from_dict(cls, d: dict) -> Registry:
        return cls([Group(g["name"], tuple(g["levels"])) for g in d["groups"]])

    def spec_hash(self) -> str:
        text = json.dumps(self.to_dict(), sort_keys=True).encode()
        return hashlib.sha256(text).hexdigest()[:16]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Registry) and self.to_dict() == other.to_dict()
