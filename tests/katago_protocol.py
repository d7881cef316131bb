"""An independent reader of KataGo's analysis-engine formats, for the protocol tests.

Written from KataGo's docs/Analysis_Engine.md (lightvector/KataGo), not from gomove's
code: it imports nothing from gomove, so a convention gomove gets wrong (the row order
of ``policy`` and ``ownership``, the perspective of ``reportAnalysisWinratesAs``, the
colour to move) cannot be agreed with by construction. ``check_response(resp, query)``
checks one response to one query field by field and says which kind it is:

- ``analysis``: ``id``, ``isDuringSearch``, ``turnNumber``, ``moveInfos`` (``move``,
  ``visits``, ``winrate``, ``scoreMean``, ``scoreLead``, ``scoreStdev``, ``prior``,
  ``lcb``, ``utility``, ``order``, ``pv``; ``pvVisits`` and ``ownership`` when asked),
  ``rootInfo`` (``winrate``, ``scoreLead``, ``utility``, ``visits``,
  ``currentPlayer``), ``ownership`` and ``policy`` when asked;
- ``error``: ``{"error"}`` (a line that is no query), ``{"id", "error", "field"}``;
- ``warning``: ``{"id", "warning", "field"}``;
- ``action``: the query echoed, plus ``version`` and ``git_hash`` for query_version.

Board arrays (``ownership``, ``policy``) are row-major from the top-left, A19 first on
19x19 (A9 on 9x9), then the pass for ``policy``; ``Position`` replays a query on a
small board of its own (captures, suicide, simple ko) to know which points are
illegal, where the policy must be exactly -1.
"""

from __future__ import annotations

import json
import math
from typing import Any

COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # GTP: no I
# the documented query fields (an error's "field" names one of them or a key of the query)
QUERY_FIELDS = {"id", "action", "moves", "initialStones", "initialPlayer", "rules", "komi",
                "whiteHandicapBonus", "boardXSize", "boardYSize", "analyzeTurns", "maxVisits",
                "rootPolicyTemperature", "rootFpuReductionMax", "analysisPVLen",
                "includeOwnership", "includeOwnershipStdev", "includeMovesOwnership",
                "includeMovesOwnershipStdev", "includePolicy", "includePVVisits",
                "includeNoResultValue", "avoidMoves", "allowMoves", "overrideSettings",
                "reportDuringSearchEvery", "priority", "priorities", "terminateId",
                "turnNumbers"}  # fmt: skip
EPS = 1e-6


class ProtocolError(AssertionError):
    """A response that breaks KataGo's documented format."""


def ensure(cond: bool, what: str) -> None:
    if not cond:
        raise ProtocolError(what)


def _no_constant(name: str) -> Any:
    raise ProtocolError(f"{name} is not JSON (RFC 8259 has no NaN or Infinity)")


def parse_line(line: str) -> dict[str, Any]:
    """One output line as a JSON object: strict JSON (no NaN or Infinity), one line."""
    ensure("\n" not in line.rstrip("\n"), f"a response spans lines: {line[:200]!r}")
    try:
        obj = json.loads(line, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise ProtocolError(f"not JSON ({e}): {line[:200]!r}") from None
    ensure(isinstance(obj, dict), f"a response is not an object: {line[:200]!r}")
    return obj


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def board_size(query: dict[str, Any]) -> tuple[int, int]:
    """(X, Y) of a query; KataGo requires both, an engine that answers without them
    (gomove) plays 19, and Y = X."""
    xs = query.get("boardXSize", 19)
    return xs, query.get("boardYSize", xs)


def vertex_xy(vertex: str, xs: int, ys: int) -> tuple[int, int] | None:
    """GTP vertex -> (x, y) with y = 0 the TOP row ("A19" on 19x19 is (0, 0)); None for
    "pass"; ProtocolError when it is not a vertex of the board."""
    ensure(isinstance(vertex, str), f"a vertex must be a string, not {vertex!r}")
    v = vertex.upper()
    if v == "PASS":
        return None
    ensure(len(v) >= 2 and v[0] in COLUMNS and v[1:].isascii() and v[1:].isdigit(),
           f"{vertex!r} is not a GTP vertex")  # fmt: skip
    x, row = COLUMNS.index(v[0]), int(v[1:])
    ensure(x < xs and 1 <= row <= ys, f"{vertex!r} is off a {xs}x{ys} board")
    return x, ys - row


def vertex_index(vertex: str, xs: int, ys: int) -> int:
    """Index of a vertex in KataGo's board arrays (the pass: xs * ys, policy's last)."""
    xy = vertex_xy(vertex, xs, ys)
    return xs * ys if xy is None else xy[1] * xs + xy[0]


def player_at(query: dict[str, Any], turn: int) -> str:
    """Whose turn it is at turn: the player of moves[turn]; after the last move, the other
    colour; with no moves, initialPlayer (default B)."""
    moves = query.get("moves", [])
    if turn < len(moves):
        return moves[turn][0].upper()
    if moves:
        return "W" if moves[-1][0].upper() == "B" else "B"
    return query.get("initialPlayer", "B").upper()


class Position:
    """A query's position at a turn, replayed with captures and simple ko."""

    def __init__(self, query: dict[str, Any], turn: int):
        self.xs, self.ys = board_size(query)
        self.stones: dict[tuple[int, int], str] = {}
        self.ko: tuple[int, int] | None = None
        for color, v in query.get("initialStones", []):
            xy = vertex_xy(v, self.xs, self.ys)
            assert xy is not None, "a pass among initialStones"
            self.stones[xy] = color.upper()
        for color, v in query.get("moves", [])[:turn]:
            self.play(color.upper(), vertex_xy(v, self.xs, self.ys))
        self.to_move = player_at(query, turn)

    def neighbours(self, p: tuple[int, int]) -> list[tuple[int, int]]:
        x, y = p
        cand = ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1))
        return [(a, b) for a, b in cand if 0 <= a < self.xs and 0 <= b < self.ys]

    def group(self, p: tuple[int, int]) -> tuple[set, set]:
        """(stones, liberties) of the group at p."""
        color, stones, libs, todo = self.stones[p], {p}, set(), [p]
        while todo:
            for q in self.neighbours(todo.pop()):
                if q not in self.stones:
                    libs.add(q)
                elif self.stones[q] == color and q not in stones:
                    stones.add(q)
                    todo.append(q)
        return stones, libs

    def play(self, color: str, p: tuple[int, int] | None) -> None:
        """Play a move (asserted legal: the tests feed legal games to this board)."""
        self.ko = None
        if p is None:
            return
        assert self.legal(color, p), f"illegal move {color} {p}"
        opp = "W" if color == "B" else "B"
        self.stones[p] = color
        captured = []
        for q in self.neighbours(p):
            if self.stones.get(q) == opp:
                stones, libs = self.group(q)
                if not libs:
                    captured += stones
                    for s in stones:
                        del self.stones[s]
        stones, libs = self.group(p)
        if len(captured) == 1 and len(stones) == 1 and len(libs) == 1:
            self.ko = captured[0]

    def legal(self, color: str, p: tuple[int, int]) -> bool:
        """Empty, not the simple-ko point, and not suicide."""
        if p in self.stones or p == self.ko:
            return False
        opp = "W" if color == "B" else "B"
        self.stones[p] = color
        try:
            for q in self.neighbours(p):
                if self.stones.get(q) == opp and not self.group(q)[1]:
                    return True  # a capture
            return bool(self.group(p)[1])
        finally:
            del self.stones[p]

    def illegal_indices(self) -> set[int]:
        """Board-array indices the colour to move may not play."""
        return {y * self.xs + x for y in range(self.ys) for x in range(self.xs)
                if not self.legal(self.to_move, (x, y))}  # fmt: skip


def check_board_array(values: Any, n: int, lo: float, hi: float, what: str) -> None:
    ensure(isinstance(values, list) and len(values) == n, f"{what}: a list of {n} numbers")
    ensure(all(is_number(v) and lo - EPS <= v <= hi + EPS for v in values),
           f"{what}: values outside [{lo}, {hi}]")  # fmt: skip


def check_policy(policy: Any, query: dict[str, Any], turn: int) -> None:
    """X*Y+1 values: -1 exactly at the illegal points (occupied, suicide, ko), the rest
    (the pass included: it is always legal) >= 0 and summing to 1."""
    xs, ys = board_size(query)
    check_board_array(policy, xs * ys + 1, -1.0, 1.0, "policy")
    illegal = Position(query, turn).illegal_indices()
    for i, p in enumerate(policy):
        if i in illegal:
            ensure(p == -1, f"policy[{i}] = {p} at an illegal point, not -1")
        else:
            ensure(p >= 0, f"policy[{i}] = {p} at a legal point")
    ensure(abs(sum(p for p in policy if p >= 0) - 1.0) < 1e-4, "policy: does not sum to 1")


def check_move_info(m: Any, query: dict[str, Any], pos: Position) -> None:
    xs, ys = pos.xs, pos.ys
    ensure(isinstance(m, dict), "a moveInfo is not an object")
    need = {"move", "visits", "winrate", "scoreMean", "scoreLead", "scoreStdev", "prior",
            "lcb", "utility", "order", "pv"}  # fmt: skip
    ensure(need <= set(m), f"moveInfo lacks {sorted(need - set(m))}")
    xy = vertex_xy(m["move"], xs, ys)
    ensure(xy is None or pos.legal(pos.to_move, xy), f"moveInfo: illegal move {m['move']}")
    ensure(is_int(m["visits"]) and m["visits"] >= 0, "moveInfo: visits an int >= 0")
    ensure(is_number(m["winrate"]) and 0 <= m["winrate"] <= 1, "moveInfo: winrate in [0, 1]")
    ensure(is_number(m["prior"]) and 0 <= m["prior"] <= 1, "moveInfo: prior in [0, 1]")
    for k in ("scoreMean", "scoreLead", "scoreStdev", "lcb", "utility"):
        ensure(is_number(m[k]), f"moveInfo: {k} a finite number")
    ensure(m["scoreStdev"] >= 0, "moveInfo: scoreStdev >= 0")
    ensure(is_int(m["order"]), "moveInfo: order an int")
    pv = m["pv"]
    ensure(isinstance(pv, list) and pv and pv[0] == m["move"], "moveInfo: pv starts with move")
    for v in pv:
        vertex_xy(v, xs, ys)
    if query.get("includePVVisits"):
        pvv = m.get("pvVisits")
        ensure(isinstance(pvv, list) and len(pvv) == len(pv), "pvVisits: one per pv move")
        ensure(all(is_int(n) and n >= 0 for n in pvv), "pvVisits: ints >= 0")
    if query.get("includeMovesOwnership"):
        check_board_array(m.get("ownership"), xs * ys, -1.0, 1.0, "moveInfo ownership")


def check_analysis(resp: dict[str, Any], query: dict[str, Any]) -> None:
    """A response to an analysis query (the module docstring's fields)."""
    ensure(resp["id"] == query["id"], "analysis: not on the query's id")
    ensure(isinstance(resp.get("isDuringSearch"), bool), "isDuringSearch: a bool")
    turn = resp.get("turnNumber")
    n_moves = len(query.get("moves", []))
    ensure(is_int(turn), "turnNumber: an int")
    ensure(turn in query.get("analyzeTurns", [n_moves]), f"turnNumber {turn} was not asked for")
    pos = Position(query, turn)
    infos = resp.get("moveInfos")
    ensure(isinstance(infos, list), "moveInfos: a list")
    for m in infos:
        check_move_info(m, query, pos)
    ensure(sorted(m["order"] for m in infos) == list(range(len(infos))),
           "moveInfos: order is not 0..n-1")  # fmt: skip
    moves = [m["move"] for m in infos]
    ensure(len(set(moves)) == len(moves), "moveInfos: a move twice")
    root = resp.get("rootInfo")
    ensure(isinstance(root, dict), "rootInfo: an object")
    ensure(is_number(root.get("winrate")) and 0 <= root["winrate"] <= 1, "rootInfo: winrate")
    ensure(is_number(root.get("scoreLead")), "rootInfo: scoreLead")
    ensure(is_number(root.get("utility")), "rootInfo: utility")
    ensure(is_int(root.get("visits")) and root["visits"] >= 0, "rootInfo: visits")
    player = root.get("currentPlayer")
    ensure(player == pos.to_move, f"rootInfo: currentPlayer {player!r}, {pos.to_move} to move")
    if "scoreStdev" in root:
        ensure(is_number(root["scoreStdev"]) and root["scoreStdev"] >= 0, "rootInfo: scoreStdev")
    xs, ys = board_size(query)
    if query.get("includeOwnership"):
        check_board_array(resp.get("ownership"), xs * ys, -1.0, 1.0, "ownership")
    if query.get("includePolicy") and "policy" in resp:
        check_policy(resp["policy"], query, turn)


def check_error(resp: dict[str, Any], query: Any) -> None:
    """{"error"} or {"id", "error", "field"}: on the query's id when it has a string one."""
    ensure(set(resp) <= {"id", "error", "field"}, f"error: unexpected keys {sorted(resp)}")
    ensure(isinstance(resp["error"], str) and resp["error"], "error: a non-empty message")
    if "id" in resp:
        ensure(isinstance(resp["id"], str), f"error: id {resp['id']!r} is not a string")
    if "field" in resp:
        ensure("id" in resp, "a field's error names the query's id")
        f = resp["field"]
        ensure(isinstance(f, str), "error: field a string")
        keys = set(query) if isinstance(query, dict) else set()
        ensure(f in QUERY_FIELDS | keys, f"error: field {f!r} is no query field")
    if isinstance(query, dict) and isinstance(query.get("id"), str):
        ensure(resp.get("id") == query["id"], "error: not on the query's id")


def check_warning(resp: dict[str, Any], query: Any) -> None:
    ensure(set(resp) == {"id", "warning", "field"}, f"warning: keys {sorted(resp)}")
    ensure(all(isinstance(resp[k], str) for k in resp), "warning: string values")
    ensure(resp["id"] == query["id"], "warning: not on the query's id")


def check_action(resp: dict[str, Any], query: dict[str, Any]) -> None:
    """The query echoed with exactly its fields and data, plus version and git_hash
    (strings) for query_version; terminate's terminateId is a string."""
    extra = {"version", "git_hash"} if query["action"] == "query_version" else set()
    ensure(set(resp) == set(query) | extra, f"action: keys {sorted(resp)}, not the query's")
    ensure(all(resp[k] == query[k] for k in query), "action: the query is not echoed")
    for k in extra:
        ensure(isinstance(resp[k], str) and resp[k], f"query_version: {k} a string")
    if query["action"] == "terminate":
        ensure(isinstance(resp["terminateId"], str), "terminate: terminateId a string")


def check_response(resp: dict[str, Any], query: Any) -> str:
    """Check one response to query (the parsed request, any JSON value, or None when the
    line was no JSON); returns its kind: analysis, error, warning or action."""
    if "error" in resp:
        check_error(resp, query)
        return "error"
    ensure(isinstance(query, dict), "only an error answers a request that is no object")
    if "warning" in resp:
        check_warning(resp, query)
        return "warning"
    if "action" in resp:
        ensure("action" in query, "an action response to a query")
        check_action(resp, query)
        return "action"
    check_analysis(resp, query)
    return "analysis"


def check_mirror(black: dict[str, Any], white: dict[str, Any]) -> None:
    """The same search reported as BLACK and as WHITE (reportAnalysisWinratesAs): winrates
    w -> 1 - w, scores and ownership negated, the rest equal (ownership to 1e-5: an
    engine may round it, or nudge an exact 0 as gomove does for KaTrain)."""
    close = math.isclose
    ensure(black["turnNumber"] == white["turnNumber"], "mirror: other turns")
    rb, rw = black["rootInfo"], white["rootInfo"]
    ensure(close(rb["winrate"], 1 - rw["winrate"], abs_tol=1e-9), "mirror: root winrate")
    ensure(close(rb["scoreLead"], -rw["scoreLead"], abs_tol=1e-9), "mirror: root scoreLead")
    ensure(rb["currentPlayer"] == rw["currentPlayer"], "mirror: currentPlayer")
    ensure(len(black["moveInfos"]) == len(white["moveInfos"]), "mirror: other moveInfos")
    for mb, mw in zip(black["moveInfos"], white["moveInfos"], strict=True):
        ensure(mb["move"] == mw["move"] and mb["visits"] == mw["visits"], "mirror: moves")
        ensure(close(mb["winrate"], 1 - mw["winrate"], abs_tol=1e-9), "mirror: winrate")
        ensure(close(mb["utility"], -mw["utility"], abs_tol=1e-9), "mirror: utility")
        for k in ("scoreLead", "scoreMean"):
            ensure(close(mb[k], -mw[k], abs_tol=1e-9), f"mirror: {k}")
        ensure(close(mb["prior"], mw["prior"]), "mirror: prior")
        for a, b in zip(mb.get("ownership", []), mw.get("ownership", []), strict=True):
            ensure(close(a, -b, abs_tol=1e-5), "mirror: a move's ownership")
    for a, b in zip(black.get("ownership", []), white.get("ownership", []), strict=True):
        ensure(close(a, -b, abs_tol=1e-5), "mirror: ownership")
    ensure(black.get("policy") == white.get("policy"), "mirror: the policy is no one's view")
