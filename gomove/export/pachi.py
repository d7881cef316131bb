"""Pachi's pattern files from a gomove MM model: ``patterns_mm.spat`` and ``patterns_mm.gamma``.

Terms (Pachi's ``pattern/spatial.[ch]``, ``pattern/pattern.[ch]``, ``pattern/prob.c``):
- gridcular order: Pachi's order of the points of a spatial pattern, the
  centre first (listed as d=1), then by distance d = |x| + |y| + max(|x|, |y|) (Coulom's
  distance, the same as gomove's templates), within a distance by y from
  d // 2 down to 0, each point followed by its mirror images (-x, y),
  (x, -y), (-x, -y); ``point_order`` reproduces ``ptcoords_init``.
- spatial dictionary (``.spat``): a header of comments (``# Pachi spatial
  patterns dictionary v1.1 maxdist 10`` and one ``# Point order: d=D ...``
  line per distance, which Pachi writes but never reads), then
  ``INDEX DIST STONES``: indices 1, 2, ... in order (Pachi's index 0 is a
  dummy), sorted by distance, STONES one of ``.XO#`` (empty, black, white,
  off board) per point of the gridcular order up to DIST, black to play.
  gomove's own/opponent become X/O: Pachi hashes every pattern black to play
  and reverses colours for white, as gomove's own/opponent states do.
- gamma file (``.gamma``): ``GAMMA (feature:payload)`` lines, one per
  feature and payload; every payload Pachi knows needs one (it dies
  otherwise). Spatial payloads are ``s<D>:<n>``, n the pattern's rank among
  the dictionary's patterns of distance D. Pachi needs at least one pattern
  of every distance 3..10: a distance gomove kept none of gets a placeholder
  no board can show (``placeholder``), gamma 1.

Shapes. gomove scores a candidate by the gamma of its largest harvested
pattern; Pachi (``spat_largest`` off, its default) multiplies the gammas of
every dictionary pattern that matches, one per distance. So each pattern P
is written with gamma(P) / gamma(Q), Q the largest kept pattern inside P
(the same stones at a smaller radius, found by hashing P's stones), and the
product Pachi forms along the chain is gamma(P) exactly: gomove's model.

Tactical features, Pachi name <- gomove level (``FEATURE_MAP``); Pachi
features gomove has no equivalent for keep the values of a stock
``patterns_mm.gamma`` given as base (Pachi's own), or 1 without one:
- capture:ataridef <- capture:atari_defence; capture:peep <-
  capture:prevent_connection; capture:ladder, capture:noladder <- the same;
  capture2:last <- capture:recapture (Pachi matches it besides its capture
  level; gomove's recapture level stands alone); take_ko, end_ko: Pachi's.
- atariescape:new_noladder, new_ladder <- extension:new_atari,
  new_atari_ladder; atariescape:noladder, ladder, fill_ko: Pachi's.
- selfatari:bad and selfatari:good <- self_atari (gomove does not tell a
  good self-atari from a bad one); selfatari:twolibs: Pachi's.
- atari:ladder, atari:ko, atari:some <- atari:ladder, ko, other; the other
  atari payloads (snapback, ladders of big groups, atari and capture...): Pachi's.
- border:0..3 <- border:1..4 (Pachi counts lines from 0); border:4 (fifth
  line) <- gomove's absent border, gamma 1.
- dist:p (gridcular distance p + 1 to the previous move) and dist2:p
  (distance p to the move before) <- dist_prev and dist_prev2: distance
  <= 2 -> level <=2, 3..16 -> that level, >= 17 -> >=17.
- mcowner:k (k of 8 eighths of the playouts owned) <- mc_owner level k + 1
  (level 8 for k = 8) when the model has it; Pachi's otherwise.
- nospat:0 <- gomove's absent shape, gamma 1.
- net, defence, cut, wedge, l1_blunder_punish, double_snapback, eyefill: Pachi's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gomove.atomic import atomic_write_text
from gomove.features.pattern_table import PatternTable
from gomove.features.patterns import S_EMPTY, S_OFF, S_OPP, S_OWN, make_templates, states_hash
from gomove.features.registry import SHAPE_GROUP, Registry

MAX_DIST = 10  # Pachi's MAX_PATTERN_DIST
SPAT_HEADER = f"# Pachi spatial patterns dictionary v1.1 maxdist {MAX_DIST}"
STONE_CHARS = {S_EMPTY: ".", S_OWN: "X", S_OPP: "O", S_OFF: "#"}

# Pachi's features and payloads in its enum order (pattern/pattern.h), spatials apart.
PACHI_FEATURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("capture", ("ataridef", "peep", "ladder", "noladder", "take_ko", "end_ko")),
    ("capture2", ("last",)),
    ("atariescape", ("new_noladder", "new_ladder", "noladder", "ladder", "fill_ko")),
    ("selfatari", ("bad", "good", "twolibs")),
    (
        "atari",
        (
            "snapback",
            "ladder_big",
            "ladder_last",
            "and_cap",
            "and_cap2",
            "double",
            "ladder_safe",
            "ladder_cut",
            "ladder",
            "ko",
            "some",
        ),
    ),  # fmt: skip
    ("net", ("last", "cut", "some", "dead")),
    ("defence", ("line2", "silly")),
    ("cut", ("dangerous",)),
    ("wedge", ("line3",)),
    ("l1_blunder_punish", ("0",)),
    ("double_snapback", ("0",)),
    ("eyefill", ("0",)),
    ("border", tuple(str(i) for i in range(5))),
    ("dist", tuple(str(i) for i in range(19))),
    ("dist2", tuple(str(i) for i in range(19))),
    ("mcowner", tuple(str(i) for i in range(9))),
    ("nospat", ("0",)),
)
ONE = "1"  # a Pachi payload that is gomove's absent level: gamma 1


def _dist_level(d: int) -> str:
    """gomove's dist_prev level name for Coulom distance d (tactical.py)."""
    return "<=2" if d <= 2 else ">=17" if d >= 17 else str(d)


def feature_map() -> dict[str, str]:
    """{Pachi feature:payload: gomove group:level or ONE} (module docstring)."""
    m = {
        "capture:ataridef": "capture:atari_defence",
        "capture:peep": "capture:prevent_connection",
        "capture:ladder": "capture:ladder",
        "capture:noladder": "capture:no_ladder",
        "capture2:last": "capture:recapture",
        "atariescape:new_noladder": "extension:new_atari",
        "atariescape:new_ladder": "extension:new_atari_ladder",
        "selfatari:bad": "self_atari:self_atari",
        "selfatari:good": "self_atari:self_atari",
        "atari:ladder": "atari:ladder",
        "atari:ko": "atari:ko",
        "atari:some": "atari:other",
        "border:4": ONE,
        "nospat:0": ONE,
    }
    m |= {f"border:{i}": f"border:{i + 1}" for i in range(4)}
    # dist: payload p is distance p + 1 (pattern.c, pattern_match_distance), 18 means >= 18
    m |= {f"dist:{p}": f"dist_prev:{_dist_level(p + 1)}" for p in range(19)}
    # dist2: payload p is distance p, capped at 17
    m |= {f"dist2:{p}": f"dist_prev2:{_dist_level(p)}" for p in range(19)}
    m |= {f"mcowner:{k}": f"mc_owner:{min(k, 7) + 1}" for k in range(9)}
    return m


FEATURE_MAP = feature_map()


def point_order(max_dist: int = MAX_DIST) -> list[list[tuple[int, int]]]:
    """[d] -> the (x, y) points Pachi lists at distance d, in its order (ptcoords_init):
    none at d = 0, the centre at d = 1 (a pattern of distance D has the points of 1..D)."""
    order: list[list[tuple[int, int]]] = [[], [(0, 0)]]
    for d in range(2, max_dist + 1):
        pts = []
        for y in range(d // 2, -1, -1):
            if y > d // 3:
                x = d - 2 * y
                if x + 2 * y != d:
                    continue
            else:
                x = (d - y) // 2
                if 2 * x + y != d:
                    continue
            pts.append((x, y))
            if x:
                pts.append((-x, y))
            if y:
                pts.append((x, -y))
            if x and y:
                pts.append((-x, -y))
        order.append(pts)
    return order


def spat_header(max_dist: int = MAX_DIST) -> list[str]:
    """The comment lines Pachi writes at the top of a dictionary (spatial_dict_writeinfo)."""
    lines = [SPAT_HEADER]
    for d, pts in enumerate(point_order(max_dist)):
        lines.append(f"# Point order: d={d} " + "".join(f"{x},{y} " for x, y in pts))
    return lines


def stones_string(states: np.ndarray, radius: int, dx: np.ndarray, dy: np.ndarray) -> str:
    """A gomove configuration (states in template order, dx/dy its offsets) as Pachi's
    STONES string up to distance radius: centre '.', then the gridcular order."""
    where = {(int(x), int(y)): i for i, (x, y) in enumerate(zip(dx, dy, strict=True))}
    chars = ["."]
    for pts in point_order(radius)[2:]:
        for x, y in pts:
            chars.append(STONE_CHARS[int(states[where[(x, y)]])])
    return "".join(chars)


@dataclass(frozen=True)
class SpatialEntry:
    """One dictionary line and its spatial gamma feature."""

    index: int  # INDEX, 1-based, in file order
    dist: int
    stones: str
    payload: int  # rank among the patterns of its distance
    pattern: int  # the gomove pattern (shape level - 1)


def spatial_entries(table: PatternTable) -> list[SpatialEntry]:
    """The dictionary lines of every harvested pattern (the table is sorted by radius)."""
    if table.stones is None:
        raise ValueError(
            "the pattern table has no stone configurations (harvested before table "
            "format 2): train again to write a Pachi dictionary"
        )
    if table.max_radius > MAX_DIST or table.min_radius < 3:
        raise ValueError(f"Pachi's spatials have radii 3..{MAX_DIST}")
    if np.any(np.diff(table.radius) < 0):
        raise ValueError("the pattern table is not sorted by radius")
    t = make_templates(table.min_radius, table.max_radius)
    out, per_dist = [], {}
    for i, (r, st) in enumerate(zip(table.radius, table.stones, strict=True)):
        r = int(r)
        rank = per_dist.get(r, 0)
        per_dist[r] = rank + 1
        out.append(SpatialEntry(i + 1, r, stones_string(st, r, t.dx, t.dy), rank, i))
    return out


def placeholder(dist: int) -> str:
    """A configuration no board shows (the empty centre and every other point off the
    board) for a distance without patterns: Pachi needs one of each distance 3..10."""
    n = sum(len(p) for p in point_order(dist))
    return "." + "#" * (n - 1)


def with_placeholders(
    entries: list[SpatialEntry], gammas: np.ndarray
) -> tuple[list[SpatialEntry], list[float]]:
    """entries and their gammas, a placeholder (gamma 1) added for every distance 3..10
    without a pattern, indices renumbered in distance order."""
    rows = [(e.dist, e.stones, float(gammas[e.pattern]), e.pattern) for e in entries]
    have = {e.dist for e in entries}
    rows += [(d, placeholder(d), 1.0, -1) for d in range(3, MAX_DIST + 1) if d not in have]
    rows.sort(key=lambda r: r[0])  # stable: the table's order within a distance
    out, per_dist = [], {}
    for i, (d, stones, _, pattern) in enumerate(rows):
        rank = per_dist.get(d, 0)
        per_dist[d] = rank + 1
        out.append(SpatialEntry(i + 1, d, stones, rank, pattern))
    return out, [r[2] for r in rows]


def inner_patterns(table: PatternTable) -> np.ndarray:
    """int64[P]: for each pattern, the largest kept pattern inside it (its stones at
    a smaller radius), -1 for none."""
    t = make_templates(table.min_radius, table.max_radius)
    index = {int(h): i for i, h in enumerate(table.hashes)}
    out = np.full(len(table), -1, dtype=np.int64)
    for i, (r, st) in enumerate(zip(table.radius, table.stones, strict=True)):
        k = t.radii.index(int(r))
        for j in range(k - 1, -1, -1):
            h = states_hash(t, st[: int(t.ends[j])])
            if h in index:
                out[i] = index[h]
                break
    return out


def spatial_gammas(table: PatternTable, shape_log_gamma: np.ndarray) -> np.ndarray:
    """float64[P]: each pattern's gamma for Pachi's product over distances (module
    docstring): gamma(P) / gamma(largest kept pattern inside P)."""
    inner = inner_patterns(table)
    lg = np.asarray(shape_log_gamma, dtype=np.float64)
    return np.exp(lg - np.where(inner >= 0, lg[np.maximum(inner, 0)], 0.0))


# Pachi reads up to the ')' and ignores the rest of the line (comments)
_GAMMA_LINE = re.compile(r"\s*(\S+)\s+\(([A-Za-z0-9_]+):([A-Za-z0-9_]+)\).*")


def read_gamma_file(path: str | Path) -> dict[str, float]:
    """{feature:payload: gamma} of a Pachi gamma file; ValueError naming the line."""
    out: dict[str, float] = {}
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read ({e})") from None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = _GAMMA_LINE.fullmatch(line)
        if m is None:
            raise ValueError(f"{path}:{lineno}: not 'GAMMA (feature:payload)': {line!r}")
        try:
            gamma = float(m.group(1))
        except ValueError:
            raise ValueError(f"{path}:{lineno}: bad gamma {m.group(1)!r}") from None
        out[f"{m.group(2)}:{m.group(3)}"] = gamma
    return out


def tactical_gammas(
    reg: Registry,
    log_gamma: np.ndarray,
    base: dict[str, float] | None,
    spatial_only: bool = False,
) -> tuple[dict[str, float], dict[str, str]]:
    """Every non-spatial Pachi feature's gamma, and where each came from ("gomove
    group:level", "gomove absent", "pachi" or "none"). spatial_only: Pachi's own value
    (base) for every feature base has, but ``nospat``, whose gamma belongs with the
    dictionary written (gomove's)."""
    names = {name: i for i, name in enumerate(reg.names())}
    gammas, source = {}, {}
    for feat, payloads in PACHI_FEATURES:
        for p in payloads:
            key = f"{feat}:{p}"
            g = FEATURE_MAP.get(key)
            if spatial_only and feat != "nospat" and base is not None and key in base:
                gammas[key], source[key] = base[key], "pachi"
            elif g == ONE:
                gammas[key], source[key] = 1.0, "gomove absent"
            elif g is not None and g in names:
                gammas[key], source[key] = math.exp(float(log_gamma[names[g]])), f"gomove {g}"
            elif base is not None and key in base:
                gammas[key], source[key] = base[key], "pachi"
            else:
                gammas[key], source[key] = 1.0, "none"
    return gammas, source


def gamma_lines(
    gammas: dict[str, float], spatial: Iterable[tuple[SpatialEntry, float]]
) -> list[str]:
    """The gamma file's lines: tactical features first, then spatials by distance."""
    lines = [f"{g!r} ({key})" for key, g in gammas.items()]
    lines += [f"{g!r} (s{e.dist}:{e.payload})" for e, g in spatial]
    return lines


def write_pachi(
    out_dir: str | Path,
    reg: Registry,
    table: PatternTable,
    log_gamma: np.ndarray,
    base_gamma: str | Path | None = None,
    spatial_only: bool = False,
) -> dict[str, object]:
    """Write patterns_mm.spat and patterns_mm.gamma of an MM model into out_dir; return
    a summary (pattern counts, where each tactical gamma came from). spatial_only:
    gomove's spatial patterns with Pachi's own tactical gammas (base_gamma's), to
    measure what gomove's tactical gammas add."""
    if spatial_only and base_gamma is None:
        raise ValueError(
            "spatial-only keeps Pachi's tactical gammas: give Pachi's patterns_mm.gamma (--base)"
        )
    if SHAPE_GROUP not in reg.group_names:
        raise ValueError("the model has no shape group: nothing to write a dictionary of")
    g = reg.group_index(SHAPE_GROUP)
    off, size = int(reg.offsets[g]), int(reg.sizes[g])
    if size != len(table):
        raise ValueError(f"the registry has {size} shapes, the pattern table {len(table)}")
    spat_g = spatial_gammas(table, np.asarray(log_gamma)[off : off + size])
    entries, gammas = with_placeholders(spatial_entries(table), spat_g)
    base = None if base_gamma is None else read_gamma_file(base_gamma)
    tac, source = tactical_gammas(reg, np.asarray(log_gamma), base, spatial_only)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    spat = spat_header() + [f"{e.index} {e.dist} {e.stones}" for e in entries]
    atomic_write_text(out / "patterns_mm.spat", "\n".join(spat) + "\n")
    lines = gamma_lines(tac, zip(entries, gammas, strict=True))
    atomic_write_text(out / "patterns_mm.gamma", "\n".join(lines) + "\n")
    return {
        "patterns": len(table),
        "placeholders": len(entries) - len(table),
        "per_dist": {int(r): int(np.sum(table.radius == r)) for r in np.unique(table.radius)},
        "sources": source,
    }
