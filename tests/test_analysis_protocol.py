"""gomove analysis against KataGo's documented protocol: a transcript and fuzzed input.

Every output line is read by katago_protocol.py, a reader written from KataGo's
docs/Analysis_Engine.md that imports nothing from gomove, so these tests check the
formats and conventions (field types and ranges, the top-row-first order of
``ownership`` and ``policy``, -1 exactly at illegal points, the perspective of
``reportAnalysisWinratesAs``, whose turn it is) against the documentation rather
than against gomove's own idea of them.

- transcript: tests/fixtures/analysis_transcript.jsonl (9x9, 13x13, 19x19, non-square
  boards, ko and suicide points, actions, warnings, errors) through the real line
  server in one run: each query answered on its id, in order, nothing but JSON out;
- fuzz: FUZZ_CASES queries from a fixed seed (bad JSON, non-objects, wrong types and
  values for every field, illegal moves, junk), each through the server: an answer on
  its id (an error naming a field, or a valid response), never a crash or an
  "internal error", and a valid query is still answered afterwards.
"""

from __future__ import annotations

import io
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from katago_protocol import (
    COLUMNS,
    Position,
    ProtocolError,
    check_mirror,
    check_response,
    parse_line,
    vertex_index,
)

from gomove.play.analysis.engine import AnalysisEngine
from gomove.play.analysis.query import MAX_VISITS
from gomove.play.analysis.server import serve
from gomove.play.search.search import Search
from gomove.play.search.settings import SearchConfig
from gomove.playout.policy import PatternPolicy

TRANSCRIPT = Path(__file__).parent / "fixtures" / "analysis_transcript.jsonl"
FUZZ_CASES = 2500
# the transcript's queries that must fail, and the fields their errors may name
ERRORS = {"ko-recapture": {"moves"}, "suicide": {"moves"}, "off-board": {"moves"},
          "nonsquare-9x13": {"boardXSize", "boardYSize"},
          "nonsquare-19x9": {"boardXSize", "boardYSize"}}  # fmt: skip


def make_engine(predictor=None, visits: int = 2) -> AnalysisEngine:
    """A small, fast engine (the neutral playout policy, no model unless given)."""
    cfg = SearchConfig(sims=visits, pw=predictor is not None, resign=0.0, seed=0)
    policy = PatternPolicy.neutral()
    return AnalysisEngine(lambda size: Search(cfg, policy, predictor), predictor, policy,
                          default_visits=visits)  # fmt: skip


def served(engine: AnalysisEngine, text: str) -> list[dict[str, Any]]:
    """The server's output for text, every line read by the protocol reader."""
    out = io.StringIO()
    serve(engine, io.StringIO(text), out)
    return [parse_line(line) for line in out.getvalue().splitlines()]


def request(line: str) -> Any:
    """What a line asks, as Python's json reads it (None: not JSON)."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


# the transcript


@pytest.fixture(scope="module")
def transcript(capture_model) -> tuple[list[dict], list[dict], str]:
    """(queries, responses, what else reached stdout) of one run of the transcript."""
    text = TRANSCRIPT.read_text()
    queries = [json.loads(line) for line in text.splitlines()]
    with pytest.MonkeyPatch.context() as mp:
        stdout = io.StringIO()
        mp.setattr("sys.stdout", stdout)
        responses = served(make_engine(capture_model, visits=4), text)
    return queries, responses, stdout.getvalue()


def test_transcript_answers_every_query_on_its_id_in_order(transcript):
    queries, responses, stray = transcript
    assert stray == ""  # nothing but the server's JSON lines
    by_id = {q["id"]: q for q in queries}
    assert len(by_id) == len(queries)
    kinds: dict[str, list[str]] = defaultdict(list)
    for r in responses:
        kinds[r["id"]].append(check_response(r, by_id[r["id"]]))
    # the server answers one request at a time: the ids come in the queries' order
    order = list(dict.fromkeys(r["id"] for r in responses))
    assert order == [q["id"] for q in queries]
    for q in queries:
        got = kinds[q["id"]]
        if q["id"] in ERRORS:
            (r,) = [r for r in responses if r["id"] == q["id"]]
            assert got == ["error"] and r["field"] in ERRORS[q["id"]], r
        elif "action" in q:
            assert got == ["action"]
        else:
            n = len(q.get("analyzeTurns", [0]))
            assert got[-n:] == ["analysis"] * n and set(got[:-n]) <= {"warning"}, got


def test_transcript_turns_come_in_order_with_one_final_answer_each(transcript):
    queries, responses, _ = transcript
    for q in queries:
        rows = [r for r in responses if r["id"] == q["id"] and "turnNumber" in r]
        if "action" in q or q["id"] in ERRORS:
            assert not rows
            continue
        n_moves = len(q["moves"])
        turns = sorted(q.get("analyzeTurns", [n_moves]))
        assert [r["turnNumber"] for r in rows] == turns
        assert not any(r["isDuringSearch"] for r in rows)


def answer(transcript, qid: str, turn: int | None = None) -> dict[str, Any]:
    _, responses, _ = transcript
    (r,) = [r for r in responses if r["id"] == qid and turn in (None, r.get("turnNumber"))]
    return r


def test_board_arrays_are_top_row_first(transcript):
    # Black's wall on row 7 holds the top, White's on row 3 the bottom: A9 is Black's
    own = answer(transcript, "rows", 0)["ownership"]
    assert own[vertex_index("A9", 9, 9)] > 0.5 and own[vertex_index("J1", 9, 9)] < -0.5
    assert own[0] > 0.5 and own[-1] < -0.5  # index 0 is A9, the last J1
    # ... and Black's wall on column C the left side, White's on G the right
    own = answer(transcript, "columns", 0)["ownership"]
    for row in range(1, 10):
        assert own[vertex_index(f"A{row}", 9, 9)] > 0.5
        assert own[vertex_index(f"J{row}", 9, 9)] < -0.5
    # the policy puts -1 on the stones: the row of index 0 is the top one
    policy = answer(transcript, "rows", 0)["policy"]
    assert [policy[vertex_index(f"{c}7", 9, 9)] for c in COLUMNS[:9]] == [-1.0] * 9
    assert policy[2 * 9 : 3 * 9] == [-1.0] * 9  # row 7 is the third from the top


def test_policy_is_minus_one_exactly_at_the_ko_and_suicide_points(transcript):
    q = next(q for q in transcript[0] if q["id"] == "ko")
    pos = Position(q, 11)
    ko, suicide = vertex_index("E5", 9, 9), vertex_index("A9", 9, 9)
    assert {ko, suicide} <= pos.illegal_indices()  # the reader's own board agrees
    policy = answer(transcript, "ko", 11)["policy"]
    assert policy[ko] == -1.0 and policy[suicide] == -1.0
    assert policy[-1] >= 0  # a pass is always legal
    # a turn earlier E5 is White's stone and A9 Black's own point to fill
    policy = answer(transcript, "ko", 10)["policy"]
    assert policy[ko] == -1.0 and policy[suicide] >= 0


def test_current_player_follows_the_moves_and_initial_player(transcript):
    players = [answer(transcript, "white-first", t)["rootInfo"]["currentPlayer"] for t in (0, 1, 2)]
    assert players == ["W", "B", "W"]
    assert answer(transcript, "white-to-play")["rootInfo"]["currentPlayer"] == "W"
    assert answer(transcript, "ko", 11)["rootInfo"]["currentPlayer"] == "W"


def test_actions_echo_the_request(transcript):
    v = answer(transcript, "version")
    assert v["note"] == "echoed" and v["version"] and v["git_hash"]
    stop = answer(transcript, "stop")
    assert stop == {"id": "stop", "action": "terminate", "terminateId": "nine",
                    "turnNumbers": [1, 2]}  # fmt: skip


def test_unused_fields_warn_and_allow_moves_restrict(transcript):
    _, responses, _ = transcript
    warned = {r["field"] for r in responses if r["id"] == "warned" and "warning" in r}
    assert {"fooBar", "whiteHandicapBonus", "overrideSettings", "rules"} <= warned
    moves = {m["move"] for m in answer(transcript, "allowed")["moveInfos"]}
    assert moves and moves <= {"C3", "G7", "pass"}


# perspective

PERSPECTIVE_GAMES = [([["B", "E5"]], "W"), ([["B", "E5"], ["W", "C3"]], "B")]  # moves, to move


@pytest.mark.parametrize("moves, to_move", PERSPECTIVE_GAMES)
def test_white_perspective_mirrors_black_for_the_same_search(capture_model, moves, to_move):
    q = {"id": "p", "moves": moves, "rules": "chinese", "komi": 6.5, "boardXSize": 9,
         "boardYSize": 9, "maxVisits": 6, "includeOwnership": True,
         "includeMovesOwnership": True, "includePolicy": True}  # fmt: skip
    seen = {}
    for side in ("BLACK", "WHITE", "SIDETOMOVE"):
        query = q | {"overrideSettings": {"reportAnalysisWinratesAs": side}}
        (r,) = served(make_engine(capture_model, visits=6), json.dumps(query) + "\n")
        assert check_response(r, query) == "analysis"
        seen[side] = r
    assert seen["BLACK"]["rootInfo"]["currentPlayer"] == to_move
    check_mirror(seen["BLACK"], seen["WHITE"])
    mover = seen["BLACK" if to_move == "B" else "WHITE"]
    assert seen["SIDETOMOVE"] == mover
    with pytest.raises(ProtocolError):  # the check has teeth: the same view is no mirror
        check_mirror(seen["BLACK"], seen["BLACK"])


# bad input the fuzz found answered wrongly: an internal error, NaN written out, a
# non-string id echoed, an illegal move missed, the server stopped (field None: {"error"})

DEEP = "[" * 100_000 + "]" * 100_000
FOUND = [
    ('{"id":"a","boardXSize":5,"moves":[[["B"],"C3"]]}', "moves"),
    ('{"id":"a","boardXSize":5,"initialPlayer":[1]}', "initialPlayer"),
    ('{"id":"a","boardXSize":5,"avoidMoves":[{"player":{},"moves":[],"untilDepth":1}]}',
     "avoidMoves"),
    ('{"id":"a","boardXSize":5,"maxVisits":null}', "maxVisits"),
    ('{"id":"a","boardXSize":null}', "boardXSize"),
    ('{"id":"a","boardXSize":5,"komi":NaN}', "komi"),
    ('{"id":"a","boardXSize":5,"komi":1e400}', "komi"),
    ('{"id":"a","boardXSize":5,"overrideSettings":{"maxTime":NaN}}', "overrideSettings"),
    ('{"id":"a","action":"terminate","terminateId":NaN}', "terminateId"),
    ('{"id":"a","action":"terminate","terminateId":["q"]}', "terminateId"),
    ('{"id":"a","boardXSize":5,"moves":[["B","A\u0661"]]}', "moves"),
    ('{"id":"a","boardXSize":5,"moves":[["B","C3"],["W","C3"]],"analyzeTurns":[0]}', "moves"),
    ('{"id":7,"action":"clear_cache"}', None),
    ('{"id":[1],"boardXSize":5}', None),
    (DEEP, None),
    ('{"id":"a","x":' + DEEP + "}", None),
]  # fmt: skip


@pytest.mark.parametrize("line, field", FOUND, ids=range(len(FOUND)))
def test_bad_input_the_fuzz_found_is_a_clean_error(line, field):
    engine = make_engine()
    (r,) = served(engine, line + "\n")
    check_response(r, request(line))
    assert "internal error" not in r["error"]
    assert r == ({"error": r["error"]} if field is None else {"id": "a", "error": r["error"],
                                                             "field": field})  # fmt: skip
    q = {"id": "next", "boardXSize": 5, "boardYSize": 5, "maxVisits": 2}
    (r,) = served(engine, json.dumps(q) + "\n")  # the server goes on
    assert check_response(r, q) == "analysis"


# fuzz

JUNK = [None, True, False, 0, 1, -1, 2.5, -0.0, 1e9, 10**30, "", "x", "B", "W", "pass", "D4",
        "\u00e9\u6f22\U0001f600", [], {}, [1, 2], ["B"], [["B"]], [[1, 2]], [["B", 3]],
        [["X", "C3"]], [["B", "C3", "x"]], {"a": [None]}, [[[[]]]], "NaN"]  # fmt: skip
# raw JSON text put in place of a value: numbers Python reads as NaN or infinity
RAW = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"]
FIELD_VALUES: dict[str, list[Any]] = {
    "boardXSize": [0, 1, 20, 25, 26, -1, 10**9, 1e9, 9.0, "9", "19x19", None, True, [9]],
    "boardYSize": [0, 1, 20, 26, -1, 10**9, 9.5, "9", True, [5], {}],
    "komi": ["7.5", None, True, [7.5], {}, 10**9, -(10**9)],
    "rules": [None, 1, True, [], "go-moku", "", ["chinese"]],
    "maxVisits": [0, -1, -(10**9), MAX_VISITS + 1, 10**30, 2.0, 1.5, "4", None, True, [4]],
    "analyzeTurns": [[], [-1], [99], [0, 99], [1.0], ["0"], [True], 0, "0", None, {}, [[0]]],
    "initialPlayer": ["X", "", "black", 1, True, ["B"], {"B": 1}, []],
    "moves": ["D4", 1, {}, [["B"]], [["B", "Z9"]], [["B", "A0"]], [["B", "T20"]], [["X", "C3"]],
             [[["B"], "C3"]], [[{"p": 1}, "C3"]], [["B", ["C3"]]], [["B", 3]], [["B", ""]],
             [["B", "C3"], ["W", "C3"]], [["B", "c\u0661"]], [None], [[]]],
    "initialStones": ["C3", 1, {}, [["B", "pass"]], [["B", "C3"], ["W", "C3"]], [["B"]],
                      [[{}, "C3"]], [["B", "Z1"]]],
    "includeOwnership": [1, 0, "true", None, [], {}],
    "includeMovesOwnership": [1, "yes", None, [True]],
    "includePolicy": [1, "true", None, {}],
    "includePVVisits": [0, "false", None],
    "priority": [1.5, "1", True, []],
    "reportDuringSearchEvery": [0, -1, "1", True, [], {}],
    "overrideSettings": [[], "x", 1, None, {"reportAnalysisWinratesAs": "RED"},
                         {"reportAnalysisWinratesAs": ["BLACK"]},
                         {"reportAnalysisWinratesAs": {}}, {"maxTime": 0}, {"maxTime": -1},
                         {"maxTime": "1"}, {"maxTime": True}, {"maxTime": []}],
    "avoidMoves": ["C3", 1, {}, [1], [{}], [{"player": "X", "moves": [], "untilDepth": 1}],
                   [{"player": ["B"], "moves": [], "untilDepth": 1}],
                   [{"player": {}, "moves": [], "untilDepth": 1}],
                   [{"player": "B", "moves": "C3", "untilDepth": 1}],
                   [{"player": "B", "moves": [1], "untilDepth": 1}],
                   [{"player": "B", "moves": ["Z9"], "untilDepth": 1}],
                   [{"player": "B", "moves": ["C3"], "untilDepth": 0}],
                   [{"player": "B", "moves": ["C3"], "untilDepth": -1}],
                   [{"player": "B", "moves": ["C3"], "untilDepth": 1.5}],
                   [{"player": "B", "moves": ["C3"], "untilDepth": "1"}],
                   [{"player": "B", "moves": ["C3"]}]],
}  # fmt: skip
FIELD_VALUES["allowMoves"] = FIELD_VALUES["avoidMoves"] + [
    [{"player": "B", "moves": ["C3"], "untilDepth": 1}] * 2
]
# values that are right for a field (the fuzz may draw them too)
GOOD: dict[str, list[Any]] = {
    "rules": ["chinese", "tromp-taylor", "japanese", {"koRule": "SIMPLE"}],
    "komi": [7.5, 0, -3.5, 6, 150],
    "includeOwnership": [True, False],
    "includeMovesOwnership": [True, False],
    "includePolicy": [True, False],
    "includePVVisits": [True, False],
    "overrideSettings": [{}, {"reportAnalysisWinratesAs": "WHITE"},
                         {"reportAnalysisWinratesAs": "SIDETOMOVE"}, {"maxTime": 1e-9},
                         {"unknownParam": [1]}],
    "reportDuringSearchEvery": [0.0001, 5],
    "priority": [0, -3, 10],
    "initialPlayer": ["B", "W", "b", "w"],
}  # fmt: skip


def random_game(rng: random.Random, size: int, n: int) -> tuple[list, Position]:
    """Up to n legal moves (and passes) on an empty board, by the reader's own rules."""
    query = {"id": "g", "boardXSize": size, "boardYSize": size, "moves": []}
    pos = Position(query, 0)
    moves, color = [], "B"
    for _ in range(n):
        cand = [(x, y) for x in range(size) for y in range(size) if pos.legal(color, (x, y))]
        xy = rng.choice(cand) if cand and rng.random() < 0.9 else None
        pos.play(color, xy)
        moves.append([color, "pass" if xy is None else f"{COLUMNS[xy[0]]}{size - xy[1]}"])
        color = "W" if color == "B" else "B"
    pos.to_move = color
    return moves, pos


def illegal_move(rng: random.Random, size: int) -> tuple[list, str] | None:
    """A game whose last move is illegal by the reader's rules: occupied, suicide or ko."""
    moves, pos = random_game(rng, size, rng.randint(1, 3 * size * size // 2))
    color = pos.to_move
    kinds = {
        "occupied": list(pos.stones),
        "ko": [pos.ko] if pos.ko else [],
        "suicide": [
            (x, y)
            for x in range(size)
            for y in range(size)
            if (x, y) not in pos.stones and (x, y) != pos.ko and not pos.legal(color, (x, y))
        ],  # fmt: skip
    }
    kind = rng.choice([k for k, v in kinds.items() if v] or ["none"])
    if kind == "none":
        return None
    x, y = rng.choice(kinds[kind])
    return moves + [[color, f"{COLUMNS[x]}{size - y}"]], kind


def base_query(rng: random.Random, qid: str) -> dict[str, Any]:
    """A valid, cheap query: a tiny board, a short legal game, 1 to 4 visits."""
    size = rng.choice([2, 3, 4, 5])
    moves, _ = random_game(rng, size, rng.randint(0, size * size))
    q = {"id": qid, "boardXSize": size, "boardYSize": size, "moves": moves,
         "rules": rng.choice(["chinese", "tromp-taylor"]), "komi": rng.choice([7.5, 0.5, -2]),
         "maxVisits": rng.randint(1, 4)}  # fmt: skip
    if rng.random() < 0.5:
        q["analyzeTurns"] = sorted(rng.sample(range(len(moves) + 1), min(len(moves) + 1, 2)))
    for k in ("includeOwnership", "includeMovesOwnership", "includePolicy", "includePVVisits"):
        if rng.random() < 0.3:
            q[k] = True
    return q


def fuzz_id(rng: random.Random, i: int) -> str:
    return rng.choice([f"q{i}", f"\u00e9t\u00e9-{i}-\U0001f600", f"\u6f22{i}", "dup", f" {i} "])


def fuzz_case(rng: random.Random, i: int) -> tuple[str, str | None]:
    """(line, expect): expect "ok" (answers), "general" ({"error"}), a field (an error
    naming it), or None (an error or answers)."""
    qid = fuzz_id(rng, i)
    r = rng.random()
    if r < 0.15:  # not JSON: a valid query cut short or with junk put in, or noise
        line = json.dumps(base_query(rng, qid))
        cut = rng.randrange(1, len(line))
        line = rng.choice([line[:cut], line[:cut] + "}" + line[cut:], line + ",",
                           "{" + line, "".join(rng.choice("{}[]\",:0aN\\ ") for _ in range(20)),
                           "{'id': 'x'}", '{"id":"a",}', "nul", "\ufeff{}", "\x00"])  # fmt: skip
        return line, "general" if request(line) is None else None
    if r < 0.20:  # JSON, but not an object
        line = json.dumps(rng.choice([None, 1, -2.5, "q", [], [{"id": "a"}], True]))
        return line, "general"
    if r < 0.23:  # deeply nested
        depth = rng.choice([50, 500, 5000])
        junk = "[" * depth + "]" * depth
        line = rng.choice([junk, f'{{"id":"{qid}","x":{junk}}}'])
        return line, None
    if r < 0.27:  # actions, right and wrong
        q: dict[str, Any] = {"id": qid, "action": rng.choice(["query_version", "clear_cache",
                             "terminate", "terminate_all", "dance", 1, None, [], {}])}  # fmt: skip
        if rng.random() < 0.6:
            q["terminateId"] = rng.choice(["q1", "", 1, None, ["q"], {"a": 1}])
        if rng.random() < 0.3:
            q["turnNumbers"] = rng.choice([[1], "x", [None]])
        if rng.random() < 0.2:
            q["id"] = rng.choice([None, 1, [], ""])
        return json.dumps(q), None
    q = base_query(rng, qid)
    if r < 0.30:  # the id wrong or missing
        q["id"] = rng.choice([None, 1, 2.5, True, [], {}, ["q"], ""])
        if rng.random() < 0.3:
            del q["id"]
        # KataGo takes any string id; gomove answers an empty one with an error on it
        return json.dumps(q), "id" if q.get("id") == "" else "general"
    if r < 0.36:  # an illegal move
        bad = illegal_move(rng, q["boardXSize"])
        if bad is not None:
            q["moves"], _ = bad
            q.pop("analyzeTurns", None)
            if rng.random() < 0.5:  # even when the turns asked for come before it
                q["analyzeTurns"] = [0]
            return json.dumps(q), "moves"
    if r < 0.39:  # NaN, infinity, or numbers that overflow to them
        key = rng.choice(["komi", "maxVisits", "boardXSize", "priority", "foo", "analyzeTurns"])
        raw = rng.choice(RAW)
        q[key] = "@"
        line = json.dumps(q).replace('"@"', f"[{raw}]" if key == "analyzeTurns" else raw)
        return line, key
    if r < 0.45:  # unknown fields, unicode keys, junk in them: warned, still answered
        for _ in range(rng.randint(1, 3)):
            key = rng.choice(["foo", "\u00e9\U0001f600", "MAXVISITS", "", "x" * 300])
            q[key] = rng.choice(JUNK)
        return json.dumps(q), "ok"
    if r < 0.55:  # a field missing: defaults stand in, except for a missing board size
        key = rng.choice(sorted(q))
        del q[key]
        if key == "moves":
            q.pop("analyzeTurns", None)
        # without boardXSize, KataGo's 19 meets the small boardYSize: either size's error
        return json.dumps(q), {"id": "general", "boardXSize": None}.get(key, "ok")
    if r < 0.62:  # a right value in some field
        key = rng.choice(sorted(GOOD))
        q[key] = rng.choice(GOOD[key])
        return json.dumps(q), "ok"
    # a wrong value in one field, two or three times at random
    expect: str | None = None
    for n in range(rng.choice([1, 1, 1, 2, 3])):
        key = rng.choice(sorted(FIELD_VALUES))
        q[key] = rng.choice(FIELD_VALUES[key] + JUNK if n else FIELD_VALUES[key])
        expect = key if n == 0 else None
        if key == "moves":  # the turns asked for may be past the new moves
            q.pop("analyzeTurns", None)
    if expect in ("boardXSize", "boardYSize"):
        expect = None  # either size's error
    return json.dumps(q), expect


def check_case(line: str, expect: str | None, out: list[dict[str, Any]]) -> None:
    """One fuzz case's responses, by the reader and against expect."""
    query = request(line)
    assert out, "no answer"
    kinds = [check_response(r, query) for r in out]
    assert all("internal error" not in r.get("error", "") for r in out), out
    qid = query.get("id") if isinstance(query, dict) else None
    if not isinstance(qid, str):
        assert expect in (None, "general")
        assert len(out) == 1 and set(out[0]) == {"error"}, out
        return
    assert all(r["id"] == qid for r in out)
    if expect == "general":
        raise AssertionError(f"answered on an id it should not have: {out}")
    if "action" in query:
        assert kinds in (["action"], ["error"]), kinds
        return
    if kinds[-1] == "error":
        assert len(out) == 1 and "field" in out[0], out
        assert expect != "ok", out
        if expect is not None:
            assert out[0]["field"] == expect, (out, expect)
        return
    assert expect in (None, "ok"), (out, expect)
    turns = query.get("analyzeTurns", [len(query.get("moves", []))])
    final = [r["turnNumber"] for r in out if "turnNumber" in r and not r["isDuringSearch"]]
    assert final == sorted(set(turns))
    assert set(kinds) <= {"warning", "analysis"}


def test_fuzzed_queries_are_each_answered_on_their_id_and_never_crash(capsys):
    rng = random.Random(35)
    engine = make_engine(visits=2)
    tally: dict[str, int] = defaultdict(int)
    for i in range(FUZZ_CASES):
        line, expect = fuzz_case(rng, i)
        assert "\n" not in line
        out = served(engine, line + "\n")
        try:
            check_case(line, expect, out)
        except AssertionError as e:
            raise AssertionError(f"case {i}: {line[:300]!r} -> {out}: {e}") from None
        tally["error" if "error" in out[-1] else "answered"] += 1
    assert capsys.readouterr().out == ""  # nothing but the server's lines
    # the fuzz reaches both sides, and the server still answers a plain query
    assert tally["error"] > FUZZ_CASES // 2 and tally["answered"] > FUZZ_CASES // 10, tally
    q = {"id": "last", "boardXSize": 9, "boardYSize": 9, "moves": [["B", "E5"]], "maxVisits": 2}
    (r,) = served(engine, json.dumps(q) + "\n")
    assert check_response(r, q) == "analysis"
