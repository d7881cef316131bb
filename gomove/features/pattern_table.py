"""PatternTable: the shape patterns a harvest kept, the shape group's levels.

Terms:
- PatternTable: the kept patterns (seen at least min_count times in the training
  games, gomove.data.harvest), ordered by radius then by decreasing count; pattern
  i is shape level i + 1. Its ``lookup`` is the open-addressing hash table the
  extraction matches candidates with (gomove.features.patterns.build_table).
- stones: one stone configuration per kept pattern (the sighting that put it
  in the exact counts), the point states (patterns.S_*) of its template in
  template order, so a pattern can be drawn or written for another program
  (gomove.export.pachi) and its parent found (``parents``).
- table file: ``patterns-<key>.npz`` of the dataset cache, versioned by
  TABLE_FORMAT_VERSION.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from gomove.atomic import atomic_save_npz
from gomove.features.patterns import build_table, make_templates, pattern_parents

TABLE_FORMAT_VERSION = 2  # 2: stones


def level_name(h: int, radius: int) -> str:
    """A shape level's name: its template radius and canonical hash."""
    return f"r{radius}:0x{int(h):016x}"


def pattern_names(hashes: np.ndarray, radius: np.ndarray) -> tuple[str, ...]:
    """(level_name(h, r) for each pattern), written as bytes by numpy, rows of one width
    at a time, and split once."""
    h = np.asarray(hashes, dtype=np.uint64)
    r = np.asarray(radius, dtype=np.int64)
    if len(h) == 0:
        return ()
    if r.min() < 0 or r.max() > 99:
        return tuple(level_name(a, b) for a, b in zip(h, r, strict=True))
    hexes = np.frombuffer(h.astype(">u8").tobytes().hex().encode("ascii"), np.uint8)
    hexes = hexes.reshape(len(h), 16)
    names = np.empty(len(h), dtype=object)
    for wide in (False, True):
        rows = np.flatnonzero((r >= 10) == wide)
        if len(rows) == 0:
            continue
        d = 2 if wide else 1  # radius digits
        out = np.empty((len(rows), 21 + d), dtype=np.uint8)  # r, digits, ":0x", hex, newline
        out[:, 0] = ord("r")
        if wide:
            out[:, 1] = ord("0") + r[rows] // 10
        out[:, d] = ord("0") + r[rows] % 10
        out[:, d + 1 : d + 4] = np.frombuffer(b":0x", np.uint8)
        out[:, d + 4 : d + 20] = hexes[rows]
        out[:, -1] = ord("\n")
        names[rows] = out.tobytes().decode("ascii").split("\n")[:-1]
    return tuple(names)


@dataclass(frozen=True)
class PatternTable:
    hashes: np.ndarray  # uint64[P]
    radius: np.ndarray  # int64[P]
    count: np.ndarray  # int64[P]
    min_radius: int
    max_radius: int
    min_count: int
    # uint8[P, N]: pattern i's point states in template order, its first
    # templates.ends[radius] points (the rest 0); None for tables rebuilt from names
    stones: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.hashes)

    @cached_property
    def parents(self) -> np.ndarray:
        """int32[P]: every pattern's parent level (patterns.pattern_parents: the harvested
        pattern of the next smaller radius inside it, 0 for none), derived from the
        stones when first asked for, so the table's file holds nothing more."""
        if self.stones is None:
            raise ValueError("this pattern table has no stones (rebuilt from names): no parents")
        t = make_templates(self.min_radius, self.max_radius)
        return pattern_parents(t, self.hashes, self.radius, self.stones)

    def level_names(self) -> tuple[str, ...]:
        """Every pattern's name, ``r<radius>:0x<hash, 16 hex digits>`` (level_name's), built
        as one byte string: a model's names are made at every load (849,928 in a tenth of
        the time of formatting each)."""
        return pattern_names(self.hashes, self.radius)

    def lookup(self) -> tuple[np.ndarray, np.ndarray]:
        return build_table(self.hashes)

    def to_dict(self) -> dict:
        """The table as plain arrays and numbers (a checkpoint's ``patterns``)."""
        return {
            "hashes": self.hashes,
            "radius": self.radius,
            "count": self.count,
            "min_radius": self.min_radius,
            "max_radius": self.max_radius,
            "min_count": self.min_count,
            "stones": self.stones,
        }

    @classmethod
    def from_dict(cls, d: dict) -> PatternTable:
        return cls(
            np.asarray(d["hashes"], dtype=np.uint64),
            np.asarray(d["radius"], dtype=np.int64),
            np.asarray(d["count"], dtype=np.int64),
            int(d["min_radius"]),
            int(d["max_radius"]),
            int(d["min_count"]),
            None if d.get("stones") is None else np.asarray(d["stones"], dtype=np.uint8),
        )

    def save(self, path: str | Path) -> None:
        """The table file (``patterns-<key>.npz`` of the cache): to_dict plus a format version."""
        d = self.to_dict()
        if d["stones"] is None:
            d["stones"] = np.zeros((len(self), 0), np.uint8)
        meta = [TABLE_FORMAT_VERSION, d.pop("min_radius"), d.pop("max_radius"), d.pop("min_count")]
        atomic_save_npz(path, **d, meta=np.array(meta))

    @classmethod
    def load(cls, path: str | Path) -> PatternTable:
        with np.load(path) as z:
            version, rmin, rmax, mc = (int(v) for v in z["meta"])
            if version != TABLE_FORMAT_VERSION:
                raise ValueError(
                    f"{path}: pattern table format {version}, expected {TABLE_FORMAT_VERSION}"
                )
            stones = z["stones"] if z["stones"].shape[1] else None
            return cls.from_dict(
                {"hashes": z["hashes"], "radius": z["radius"], "count": z["count"]}
                | {"min_radius": rmin, "max_radius": rmax, "min_count": mc, "stones": stones}
            )

    def summary(self) -> dict:
        per_radius = {int(r): int(np.sum(self.radius == r)) for r in np.unique(self.radius)}
        return {"patterns": len(self), "min_count": self.min_count, "per_radius": per_radius}
