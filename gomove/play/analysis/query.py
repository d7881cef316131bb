"""A query of KataGo's JSON analysis protocol, read and checked (``Query.parse``).

KataGo's analysis engine reads one JSON object per line; its documented fields
(docs/Analysis_Engine.md of KataGo) are mirrored here. A field that is wrong
raises ``QueryError`` naming it (the engine answers ``{"id", "error", "field"}``
and keeps serving); a field gomove does not act on gives a warning
(``{"id", "warning", "field"}``) and the query is still answered.

Terms:
- turn: the position after the first t moves of ``moves`` (t in 0..len(moves));
  ``analyzeTurns`` lists the turns to answer (default: the last, len(moves)).
- perspective (``reportAnalysisWinratesAs``): BLACK, WHITE or SIDETOMOVE, whose
  view winrates, scores and ownership are reported from (default BLACK, as
  KataGo's analysis_example.cfg).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from gomove.board.board import BLACK, WHITE
from gomove.board.coords import gtp_to_loc

# KataGo's rule names (and shorthands) that gomove scores as it always does: area
# counting; the playouts and search forbid positional superko (tromp-taylor, chinese).
# KataGo takes each name in any case, its words joined by "-", "_", " " or nothing
# (KaTrain sends "new zealand" and "stone_scoring"): compared by _rules_key
RULES = ("tromp-taylor", "chinese", "chinese-ogs", "chinese-kgs", "japanese", "korean",
         "stone-scoring", "ancient-area", "ancient-territory", "aga", "bga", "french",
         "new-zealand", "nz", "aga-button", "goe", "ing")  # fmt: skip
PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE")
PLAYERS = {"B": BLACK, "W": WHITE, "b": BLACK, "w": WHITE}
KNOWN = {"id", "action", "moves", "initialStones", "initialPlayer", "rules", "komi",
         "boardXSize", "boardYSize", "analyzeTurns", "maxVisits", "includeOwnership",
         "includeMovesOwnership", "includePolicy", "includePVVisits", "avoidMoves",
         "allowMoves", "overrideSettings", "reportDuringSearchEvery", "priority",
         "priorities", "whiteHandicapBonus"}  # fmt: skip
IGNORED = ("priorities", "whiteHandicapBonus")  # KataGo's fields that gomove does not act on
ACTIONS = ("query_version", "clear_cache", "terminate", "terminate_all")
MAX_VISITS = 2**50  # KataGo's bound (KaTrain's pondering asks for 10,000,000)


class QueryError(ValueError):
    """A query that cannot be answered: the message and the field at fault."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


@dataclass
class Query:
    """A checked analysis query (module docstring); locs are gomove's board points."""

    id: str
    size: int
    moves: list[tuple[int, int]]  # (colour, loc)
    initial_stones: list[tuple[int, int]]
    initial_player: int | None
    komi: float
    turns: list[int]
    max_visits: int | None
    max_time: float | None
    perspective: str = "BLACK"
    include_ownership: bool = False
    include_moves_ownership: bool = False
    include_policy: bool = False
    include_pv_visits: bool = False
    priority: int = 0
    report_every: float | None = None  # seconds between reports during the search
    avoid: list[tuple[int, list[int]]] = field(default_factory=list)  # (player, locs)
    allow: list[tuple[int, list[int]]] = field(default_factory=list)  # (player, locs)
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (field, message)
    human_policy: bool = False  # humanSLProfile: answer humanPolicy (the model's policy)

    def player_at(self, turn: int) -> int:
        """The colour to move at turn: the player of moves[turn]; after the last move,
        the other colour; with no moves, initialPlayer (default BLACK), as KataGo."""
        if turn < len(self.moves):
            return self.moves[turn][0]
        if self.moves:
            return WHITE if self.moves[-1][0] == BLACK else BLACK
        return BLACK if self.initial_player is None else self.initial_player

    @classmethod
    def parse(cls, obj: dict[str, Any], max_visits_default: int) -> Query:
        """Check every field of a query object (not an action); QueryError on the first
        wrong one."""
        qid = query_id(obj)
        warnings = [(k, f"unknown field {k!r} ignored") for k in obj if k not in KNOWN]
        warnings += [(k, f"{k} ignored: gomove does not act on it") for k in IGNORED if k in obj]
        x, y = _int(obj, "boardXSize", 19), _int(obj, "boardYSize", None)
        y = x if y is None else y
        if x != y:
            raise QueryError("gomove plays on square boards only", "boardYSize")
        if not 2 <= x <= 19:
            raise QueryError(f"board size {x} is not supported (2..19)", "boardXSize")
        rules = obj.get("rules", "tromp-taylor")
        if isinstance(rules, str):
            if _rules_key(rules) not in {_rules_key(r) for r in RULES}:
                raise QueryError(f"unknown rules {rules!r}; one of {', '.join(RULES)}", "rules")
        elif isinstance(rules, dict):
            warnings.append(("rules", "rules given as an object: gomove counts by area"))
        else:
            raise QueryError("rules must be a string or an object", "rules")
        komi = obj.get("komi", 7.5)
        if isinstance(komi, bool) or not isinstance(komi, int | float) or not abs(komi) <= 150:
            raise QueryError("komi must be a number in [-150, 150]", "komi")
        moves = _moves(obj, "moves", x)
        stones = _moves(obj, "initialStones", x)
        ip = obj.get("initialPlayer")
        if ip is not None and not _is_player(ip):
            raise QueryError('initialPlayer must be "B" or "W"', "initialPlayer")
        turns = obj.get("analyzeTurns", [len(moves)])
        if not isinstance(turns, list) or not turns:
            raise QueryError("analyzeTurns must be a non-empty list of turns", "analyzeTurns")
        for t in turns:
            if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t <= len(moves):
                raise QueryError(f"analyzeTurns: {t!r} is not a turn in 0..{len(moves)}",
                                 "analyzeTurns")  # fmt: skip
        visits = _int(obj, "maxVisits", max_visits_default)
        if not 1 <= visits <= MAX_VISITS:
            raise QueryError(f"maxVisits must be in 1..{MAX_VISITS}", "maxVisits")
        perspective, max_time, human = "BLACK", None, False
        override = obj.get("overrideSettings", {})
        if not isinstance(override, dict):
            raise QueryError("overrideSettings must be an object", "overrideSettings")
        for k, v in override.items():
            if k == "reportAnalysisWinratesAs":
                if v not in PERSPECTIVES:
                    raise QueryError(f"reportAnalysisWinratesAs must be one of {PERSPECTIVES}",
                                     "overrideSettings")  # fmt: skip
                perspective = v
            elif k == "maxTime":
                if not _is_positive(v):
                    raise QueryError("maxTime must be a positive number", "overrideSettings")
                max_time = float(v)
            elif k == "humanSLProfile":
                if not isinstance(v, str):
                    raise QueryError("humanSLProfile must be a string", "overrideSettings")
                human = True
                warnings.append(
                    (
                        "overrideSettings",
                        f"humanSLProfile {v!r}: gomove's human "
                        "policy is its model's, trained on 9-dan games, for any profile",
                    )
                )
            else:
                warnings.append(("overrideSettings", f"setting {k!r} ignored"))
        every = obj.get("reportDuringSearchEvery")
        if every is not None and not _is_positive(every):
            raise QueryError("reportDuringSearchEvery must be a positive number of seconds",
                             "reportDuringSearchEvery")  # fmt: skip
        avoid = _restrictions(obj, "avoidMoves", x, warnings)
        allow = _restrictions(obj, "allowMoves", x, warnings)
        if len(allow) > 1:
            raise QueryError("allowMoves takes one entry at most", "allowMoves")
        flags = {}
        for k in ("includeOwnership", "includeMovesOwnership", "includePolicy",
                  "includePVVisits"):  # fmt: skip
            v = obj.get(k, False)
            if not isinstance(v, bool):
                raise QueryError(f"{k} must be true or false", k)
            flags[k] = v
        priority = _int(obj, "priority", 0)
        return cls(
            qid, x, moves, stones, None if ip is None else PLAYERS[ip], float(komi),
            sorted(set(turns)), visits, max_time, perspective, flags["includeOwnership"],
            flags["includeMovesOwnership"], flags["includePolicy"], flags["includePVVisits"],
            priority, None if every is None else float(every), avoid, allow, warnings, human,
        )  # fmt: skip


def _rules_key(name: str) -> str:
    """A rules name as KataGo compares it: lower case, without "-", "_" and spaces."""
    return "".join(c for c in name.lower() if c not in "-_ ")


def _is_player(v: Any) -> bool:
    """A player string; the isinstance first, as a list or an object is not hashable."""
    return isinstance(v, str) and v in PLAYERS


def _is_positive(v: Any) -> bool:
    """A positive finite number of seconds (NaN and infinity are neither)."""
    return not isinstance(v, bool) and isinstance(v, int | float) and 0 < v < math.inf


def _loc(vertex: str, size: int) -> int:
    """A GTP vertex as a loc; ASCII only, as str.isdigit and int also take other digits
    (\"A\u0661\" would be A1)."""
    if not vertex.isascii():
        raise ValueError(f"{vertex!r} is not a vertex (ASCII letters and digits)")
    return gtp_to_loc(vertex, size)


def query_id(obj: dict[str, Any]) -> str:
    """The id of a query or an action: every request needs one, a non-empty string."""
    qid = obj.get("id")
    if not isinstance(qid, str) or not qid:
        raise QueryError("every query needs an id (a non-empty string)", "id")
    return qid


def _int(obj: dict[str, Any], key: str, default: int | None) -> int | None:
    """obj[key], an integer, or default when it is absent (null is no integer)."""
    if key not in obj:
        return default
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, int):
        raise QueryError(f"{key} must be an integer", key)
    return v


def _moves(obj: dict[str, Any], key: str, size: int) -> list[tuple[int, int]]:
    """[["B", "Q16"], ["W", "pass"], ...] as (colour, loc)."""
    raw = obj.get(key, [])
    if not isinstance(raw, list):
        raise QueryError(f'{key} must be a list of ["B" or "W", vertex] pairs', key)
    out = []
    for i, m in enumerate(raw):
        if not (isinstance(m, list) and len(m) == 2 and _is_player(m[0]) and isinstance(m[1], str)):
            raise QueryError(f'{key}[{i}]: {m!r} is not a ["B" or "W", vertex] pair', key)
        try:
            loc = _loc(m[1], size)
        except ValueError as e:
            raise QueryError(f"{key}[{i}]: {e}", key) from None
        out.append((PLAYERS[m[0]], loc))
    return out


def _restrictions(
    obj: dict[str, Any], key: str, size: int, warnings: list[tuple[str, str]]
) -> list[tuple[int, list[int]]]:
    """avoidMoves or allowMoves: [{"player": "B", "moves": ["C3", ...], "untilDepth": 1}]
    as (player, locs). gomove restricts the first move of the search only: a deeper
    untilDepth gets a warning."""
    raw = obj.get(key, [])
    if not isinstance(raw, list):
        raise QueryError(f"{key} must be a list of objects", key)
    out = []
    for i, e in enumerate(raw):
        if not isinstance(e, dict) or not _is_player(e.get("player")):
            raise QueryError(f'{key}[{i}] needs "player": "B" or "W"', key)
        moves, depth = e.get("moves"), e.get("untilDepth")
        if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
            raise QueryError(f"{key}[{i}].moves must be a list of vertices", key)
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise QueryError(f"{key}[{i}].untilDepth must be an integer >= 1", key)
        if depth > 1:
            warnings.append((key, f"{key}[{i}]: applied to the first move of the search only"))
        try:
            locs = [_loc(m, size) for m in moves]
        except ValueError as err:
            raise QueryError(f"{key}[{i}]: {err}", key) from None
        out.append((PLAYERS[e["player"]], locs))
    return out
