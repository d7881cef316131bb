"""gomove analysis: KataGo's JSON analysis protocol (gomove.play.analysis)."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys

import numpy as np
import pytest

from gomove.board.board import BLACK, WHITE, copy_board, play
from gomove.board.coords import PASS, gtp_to_loc
from gomove.cli.analysis import main as analysis_main
from gomove.models.territory.crf import TerritoryCRF
from gomove.play.analysis.engine import AnalysisEngine, policy_array, setup_board
from gomove.play.analysis.query import Query, QueryError
from gomove.play.analysis.server import serve
from gomove.play.ownership import crf_ownership, ownership
from gomove.play.predict import Prediction
from gomove.play.search.search import Search
from gomove.play.search.settings import SearchConfig
from gomove.playout.policy import PatternPolicy


def make_engine(predictor=None, visits: int = 16, territory=None) -> AnalysisEngine:
    cfg = SearchConfig(sims=visits, pw=predictor is not None, resign=0.0, seed=0)
    policy = PatternPolicy.neutral()
    return AnalysisEngine(lambda size: Search(cfg, policy, predictor), predictor, policy,
                          default_visits=visits, territory=territory)  # fmt: skip


def answers(engine: AnalysisEngine, **query) -> list[dict]:
    return engine.handle({"id": "q", "boardXSize": 9, "boardYSize": 9, **query})


def test_a_query_gets_katago_fields_for_the_last_turn(capture_model):
    engine = make_engine(capture_model)
    (r,) = answers(engine, moves=[["B", "E5"], ["W", "C3"]], maxVisits=24, includePolicy=True,
                   includeOwnership=True, includePVVisits=True, komi=6.5)  # fmt: skip
    assert r["id"] == "q" and r["turnNumber"] == 2 and r["isDuringSearch"] is False
    root = r["rootInfo"]
    assert root["currentPlayer"] == "B" and root["visits"] == 24
    assert 0.0 <= root["winrate"] <= 1.0
    assert len(r["ownership"]) == 81 and all(-1.0 <= x <= 1.0 for x in r["ownership"])
    assert len(r["policy"]) == 82
    # the occupied points are illegal (-1), the rest a distribution
    assert r["policy"][(9 - 5) * 9 + 4] == -1.0 and r["policy"][(9 - 3) * 9 + 2] == -1.0
    assert sum(p for p in r["policy"] if p >= 0) == pytest.approx(1.0)
    infos = r["moveInfos"]
    assert [m["order"] for m in infos] == list(range(len(infos)))
    assert sum(m["visits"] for m in infos) <= 24
    assert infos == sorted(infos, key=lambda m: -m["visits"])
    for m in infos:
        assert set(m) >= {"move", "visits", "winrate", "scoreLead", "scoreMean", "scoreStdev",
                          "prior", "lcb", "utility", "pv", "pvVisits", "order"}  # fmt: skip
        assert m["pv"][0] == m["move"] and m["pvVisits"][0] == m["visits"]
        assert m["lcb"] <= m["winrate"] + 1e-12
        assert m["utility"] == pytest.approx(2 * m["winrate"] - 1)
        assert m["scoreMean"] == m["scoreLead"] and m["scoreStdev"] >= 0


@pytest.mark.parametrize("perspective, sign", [("BLACK", 1.0), ("WHITE", -1.0)])
def test_scores_are_the_searchs_and_the_root_pools_the_moves(capture_model, perspective, sign):
    """A move's scoreMean = scoreLead and scoreStdev are the mean and spread of the final
    scores of the simulations the search played through it (the tree's sums, Black's
    view, in the query's perspective). rootInfo's winrate, scoreLead and scoreStdev are
    the moves' pooled by their visits, as KataGo's are, and so the root node's own: every
    simulation passes through one of its moves."""
    engine = make_engine(capture_model)
    (r,) = answers(engine, moves=[["B", "E5"], ["W", "C3"]], maxVisits=200, komi=6.5,
                   overrideSettings={"reportAnalysisWinratesAs": perspective})  # fmt: skip
    s = engine.searches[9]
    t, root = s.tree, s.root
    f, k = int(t.first[root]), int(t.nchild[root])
    infos = r["moveInfos"]
    visits = np.array([m["visits"] for m in infos])
    assert visits.sum() == t.visits[root] == 200 and len(infos) > 1
    for m in infos:
        child = f + int(np.nonzero(t.move[f : f + k] == gtp_to_loc(m["move"], 9))[0][0])
        n = t.visits[child]
        mean = t.score_sum[child] / n
        assert m["visits"] == n and m["scoreMean"] == m["scoreLead"]
        assert m["scoreLead"] == pytest.approx(sign * mean, abs=1e-9)
        assert m["scoreStdev"] == pytest.approx(np.sqrt(t.score_sq[child] / n - mean**2))
    assert len({m["scoreLead"] for m in infos}) > 1
    info = r["rootInfo"]
    pooled = visits @ [m["scoreLead"] for m in infos] / 200
    assert info["scoreLead"] == pytest.approx(pooled, abs=1e-9)
    assert info["winrate"] == pytest.approx(visits @ [m["winrate"] for m in infos] / 200)
    mean = t.score_sum[root] / 200
    assert info["scoreLead"] == pytest.approx(sign * mean, abs=1e-9)
    assert info["scoreStdev"] == pytest.approx(np.sqrt(t.score_sq[root] / 200 - mean**2))


def test_before_a_visit_the_root_is_128_playouts():
    """A search stopped before its first simulation: no moves, and the root's scores and
    map are those of 128 playouts from the position (seeded by the turn)."""
    engine = make_engine()
    q = Query.parse({"id": "q", "boardXSize": 9, "boardYSize": 9, "moves": [["B", "E5"]],
                     "komi": 6.5, "includeOwnership": True}, 16)  # fmt: skip
    ((turn, board, passes),) = engine.positions(q)
    r = engine.analyse_turn(q, turn, board, passes, lambda x: None, stop=lambda: True)
    assert r["moveInfos"] == [] and r["rootInfo"]["visits"] == 0
    want = ownership(board, WHITE, 128, 6.5, seed=turn, policy=engine.policy)
    assert r["rootInfo"]["scoreLead"] == want.mean_score
    assert r["rootInfo"]["scoreStdev"] == want.score_stdev
    assert r["ownership"] == pytest.approx((want.black - want.white)[::-1].reshape(-1), abs=1e-6)


def test_policy_array_is_top_row_first_then_pass():
    a9, j1 = gtp_to_loc("A9", 9), gtp_to_loc("J1", 9)
    p = policy_array(Prediction(np.array([a9, j1, PASS]), np.array([0.5, 0.25, 0.25]), 9))
    assert len(p) == 82 and p[0] == 0.5 and p[80] == 0.25 and p[81] == 0.25
    assert p.count(-1.0) == 79


def test_ownership_is_top_row_first():
    # Black walls off the top three rows, White the bottom three: the top is Black's
    stones = [["B", f"{c}{r}"] for c in "ABCDEFGHJ" for r in (7,)]
    stones += [["W", f"{c}{r}"] for c in "ABCDEFGHJ" for r in (3,)]
    (r,) = answers(make_engine(), initialStones=stones, includeOwnership=True, maxVisits=8)
    own = r["ownership"]
    assert min(own[:18]) > 0.5 and max(own[-18:]) < -0.5


def test_perspectives_mirror_each_other():
    q = {"moves": [["B", "E5"]], "maxVisits": 12}
    (b,) = answers(make_engine(), **q, overrideSettings={"reportAnalysisWinratesAs": "BLACK"})
    (w,) = answers(make_engine(), **q, overrideSettings={"reportAnalysisWinratesAs": "WHITE"})
    (s,) = answers(make_engine(), **q, overrideSettings={"reportAnalysisWinratesAs": "SIDETOMOVE"})
    assert b["rootInfo"]["currentPlayer"] == "W"
    for mb, mw, ms in zip(b["moveInfos"], w["moveInfos"], s["moveInfos"], strict=True):
        assert mb["move"] == mw["move"] == ms["move"]
        assert mb["winrate"] == pytest.approx(1 - mw["winrate"])
        assert ms["winrate"] == pytest.approx(mw["winrate"])  # White is to move
        assert mb["scoreLead"] == pytest.approx(-mw["scoreLead"])


def test_analyze_turns_answers_each_turn_with_its_player():
    moves = [["B", "E5"], ["W", "C3"], ["B", "pass"]]
    out = answers(make_engine(), moves=moves, analyzeTurns=[3, 0, 1], maxVisits=4)
    assert [r["turnNumber"] for r in out] == [0, 1, 3]
    assert [r["rootInfo"]["currentPlayer"] for r in out] == ["B", "W", "W"]


def test_initial_player_and_first_move_set_who_moves_first():
    q = Query.parse({"id": "x", "moves": [["W", "D4"]]}, 10)
    assert q.player_at(0) == WHITE and q.player_at(1) == BLACK
    q = Query.parse({"id": "x", "initialPlayer": "W"}, 10)
    assert q.player_at(0) == WHITE


@pytest.mark.parametrize(
    "query, field",
    [
        ({"boardXSize": 9, "boardYSize": 13}, "boardYSize"),
        ({"boardXSize": 25}, "boardXSize"),
        ({"moves": [["B", "Z1"]]}, "moves"),
        ({"moves": [["X", "D4"]]}, "moves"),
        ({"moves": "D4"}, "moves"),
        ({"komi": "7.5"}, "komi"),
        ({"rules": "go-moku"}, "rules"),
        ({"analyzeTurns": [5]}, "analyzeTurns"),
        ({"maxVisits": 0}, "maxVisits"),
        ({"maxVisits": 1.5}, "maxVisits"),
        ({"includeOwnership": "yes"}, "includeOwnership"),
        ({"overrideSettings": {"reportAnalysisWinratesAs": "RED"}}, "overrideSettings"),
        ({"initialPlayer": "X"}, "initialPlayer"),
        ({"moves": [["B", "D4"], ["W", "D4"]]}, "moves"),
        ({"initialStones": [["B", "pass"]]}, "initialStones"),
        ({"avoidMoves": [{"player": "B", "moves": ["D4"]}]}, "avoidMoves"),
        ({"allowMoves": [{"player": "X", "moves": [], "untilDepth": 1}]}, "allowMoves"),
        ({"allowMoves": [{"player": "B", "moves": ["D4"], "untilDepth": 1}] * 2}, "allowMoves"),
    ],
)
def test_a_bad_field_is_an_error_on_its_id(query, field):
    (r,) = make_engine().handle({"id": "bad", **query})
    assert r == {"id": "bad", "error": r["error"], "field": field}


@pytest.mark.parametrize("rules", ["new zealand", "stone_scoring", "Tromp_Taylor", "NZ", "korean"])
def test_katago_rule_spellings_and_katrains_pondering_visits_parse(rules):
    q = Query.parse({"id": "k", "rules": rules, "maxVisits": 10_000_000}, 16)
    assert q.max_visits == 10_000_000 and not q.warnings


def test_reports_during_the_search_come_first_and_grow():
    out = answers(make_engine(), moves=[["B", "E5"]], maxVisits=10**6, reportDuringSearchEvery=0.1,
                  overrideSettings={"maxTime": 2.0})  # fmt: skip
    assert len(out) >= 3 and out[-1]["isDuringSearch"] is False
    assert all(r["isDuringSearch"] for r in out[:-1])
    visits = [r["rootInfo"]["visits"] for r in out]
    assert visits == sorted(visits) and visits[0] > 0
    # the tree goes on growing across the reports: its moves' visits add up to the total
    assert sum(m["visits"] for m in out[-1]["moveInfos"]) == pytest.approx(visits[-1], rel=0.05)


def test_unknown_and_unsupported_fields_warn_and_the_query_is_answered():
    avoid = [{"player": "B", "moves": ["E5"], "untilDepth": 3}]
    out = answers(make_engine(), foo=1, avoidMoves=avoid, maxVisits=4)
    assert out[0] == {"id": "q", "warning": "unknown field 'foo' ignored", "field": "foo"}
    assert out[1]["field"] == "avoidMoves" and "first move" in out[1]["warning"]
    assert out[2]["turnNumber"] == 0


def test_allow_and_avoid_moves_restrict_the_first_move():
    allow = [{"player": "B", "moves": ["C3", "G7"], "untilDepth": 1}]
    (r,) = answers(make_engine(visits=40), allowMoves=allow, maxVisits=40)
    assert {m["move"] for m in r["moveInfos"]} <= {"C3", "G7", "pass"}
    assert {m["move"] for m in r["moveInfos"]} >= {"C3", "G7"}
    avoid = [{"player": "B", "moves": ["C3", "G7", "E5"], "untilDepth": 1}]
    (r,) = answers(make_engine(visits=200), avoidMoves=avoid, maxVisits=200)
    played = {m["move"] for m in r["moveInfos"]}
    assert played and not played & {"C3", "G7", "E5"}
    # an entry for the other player leaves the first move alone
    (r,) = answers(make_engine(visits=40), allowMoves=[{**allow[0], "player": "W"}], maxVisits=40)
    assert len(r["moveInfos"]) > 3


def test_actions():
    e = make_engine()
    (v,) = e.handle({"id": "v", "action": "query_version"})
    assert v["action"] == "query_version" and v["version"]
    assert e.handle({"id": "c", "action": "clear_cache"}) == [{"id": "c", "action": "clear_cache"}]
    (t,) = e.handle({"id": "t", "action": "terminate", "terminateId": "q"})
    assert t["terminateId"] == "q"
    assert "error" in e.handle({"id": "t", "action": "terminate"})[0]
    assert e.handle({"id": "z", "action": "dance"})[0]["field"] == "action"


def test_random_and_malformed_queries_never_crash_the_engine():
    rng = random.Random(0)
    e = make_engine(visits=2)
    values = [None, True, 0, -3, 2.5, "", "x", "B", "D4", "pass", [], {}, [["B", "D4"]],
              [["W", "Q16"], ["B", "pass"]], [0, 1], {"reportAnalysisWinratesAs": "WHITE"}, 9,
              19, 1e9, [["B"]], [[1, 2]]]  # fmt: skip
    keys = ["id", "moves", "initialStones", "initialPlayer", "rules", "komi", "boardXSize",
            "boardYSize", "analyzeTurns", "maxVisits", "includeOwnership", "includePolicy",
            "overrideSettings", "action", "terminateId", "priority"]  # fmt: skip
    lines = ["", "{", "[]", "null", '"q"', "{}", '{"id": 1}']
    for _ in range(400):
        q = {"id": "r", "boardXSize": rng.choice([2, 5, 9])}
        for k in rng.sample(keys, rng.randint(1, 4)):
            q[k] = rng.choice(values)
        lines.append(json.dumps(q))
    for line in lines:
        out = e.handle_line(line)
        assert out, line
        for r in out:
            assert json.loads(json.dumps(r)) == r
            assert "error" in r or "warning" in r or "turnNumber" in r or "action" in r


def test_serve_writes_one_json_object_per_line():
    inp = io.StringIO(
        '{"id":"a","boardXSize":9,"maxVisits":4}\nnot json\n\n{"id":"v","action":"query_version"}\n'
    )
    out = io.StringIO()
    assert serve(make_engine(), inp, out) == 3
    rows = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [r.get("id") for r in rows] == ["a", None, "v"]


def test_gomove_analysis_command_answers_on_stdout_only():
    query = '{"id":"a","boardXSize":9,"maxVisits":8,"moves":[["B","E5"]]}\n'
    done = subprocess.run([sys.executable, "-m", "gomove.cli", "analysis"], input=query,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (r,) = [json.loads(x) for x in done.stdout.splitlines()]
    assert r["id"] == "a" and r["rootInfo"]["currentPlayer"] == "W"


def test_query_error_names_its_field():
    with pytest.raises(QueryError) as e:
        Query.parse({"id": "x", "komi": None}, 10)
    assert e.value.field == "komi"


def test_workers_answer_every_turn_and_terminate_stops_a_query(capture_model):
    """serve(workers=2): the turns of queries analysed in worker processes, each answered
    once with isDuringSearch false; terminate answers a queued turn noResults and stops
    a running one with the search so far; errors and actions are answered at once."""
    engine = make_engine(capture_model)
    queries = [
        {"id": "a", "moves": [["B", "E5"], ["W", "C3"]], "analyzeTurns": [0, 1, 2]},
        {"id": "long", "moves": [["B", "E5"]], "maxVisits": 10**9, "analyzeTurns": [0, 1]},
        {"id": "bad", "moves": [["B", "E5"], ["W", "E5"]]},
        {"id": "t", "action": "terminate", "terminateId": "long"},
        {"id": "v", "action": "query_version"},
    ]
    board = {"boardXSize": 9, "boardYSize": 9}
    lines = "".join(json.dumps(q if "action" in q else board | q) + "\n" for q in queries)
    out = io.StringIO()
    assert serve(engine, io.StringIO(lines), out, workers=2) == 5
    rows = [json.loads(x) for x in out.getvalue().splitlines()]
    finals = sorted((r["id"], r["turnNumber"]) for r in rows if r.get("isDuringSearch") is False)
    assert finals == [("a", 0), ("a", 1), ("a", 2), ("long", 0), ("long", 1)]
    for r in rows:
        if r.get("id") == "a":
            assert r["rootInfo"]["visits"] == 16
        if r.get("id") == "long":  # stopped early (searched a little) or never started
            assert r.get("noResults") or 0 < r["rootInfo"]["visits"] < 10**9
    assert {"id": "bad", "error": "moves[1]: illegal move (E5)", "field": "moves"} in rows
    assert {"id": "t", "action": "terminate", "terminateId": "long"} in rows
    assert any(r.get("version") for r in rows if r.get("id") == "v")


def test_a_human_profile_gets_the_models_policy_as_human_policy(capture_model):
    """KaTrain's human-like AIs ask with humanSLProfile and read humanPolicy: gomove's
    model is a model of human moves, so it answers its policy (and warns)."""
    engine = make_engine(capture_model)
    out = answers(engine, moves=[["B", "E5"]], overrideSettings={"humanSLProfile": "rank_5k"})
    warning, r = out
    assert warning["field"] == "overrideSettings" and "humanSLProfile" in warning["warning"]
    assert len(r["humanPolicy"]) == 82 and "policy" not in r
    plain = answers(engine, moves=[["B", "E5"]], includePolicy=True)[0]
    assert r["humanPolicy"] == plain["policy"]


# Black walls off rows 1-5, White rows 7-9; the white stone on E1 is dead.
WALLS = [["B", f"{c}5"] for c in "ABCDEFGHJ"] + [["W", f"{c}7"] for c in "ABCDEFGHJ"]
WALLS += [["W", "E1"]]


def test_the_crf_makes_the_ownership_maps(territory_path):
    """--ownership crf: includeOwnership is the CRF's map of the position and a move's
    ownership its map after the move (the engine's seeds: the turn, then turn * 1000 +
    the move's order), top row first, in the query's perspective; a forked worker
    answers the same."""
    crf = TerritoryCRF.load(territory_path)
    engine = make_engine(territory=crf)
    q = {"id": "q", "boardXSize": 9, "boardYSize": 9, "initialStones": WALLS, "komi": 0.5,
         "includeOwnership": True, "includeMovesOwnership": True, "maxVisits": 8}  # fmt: skip
    (r,) = engine.handle(q)
    board = setup_board(Query.parse(q, 8))
    own = crf_ownership(board, BLACK, 0.5, crf, seed=0)
    assert r["ownership"] == pytest.approx((own.black - own.white)[::-1].reshape(-1), abs=1e-6)
    assert np.mean(r["ownership"][:27]) < -0.8 and np.mean(r["ownership"][-45:]) > 0.8
    assert r["moveInfos"]
    for order, m in enumerate(r["moveInfos"]):
        b = copy_board(board)
        play(b, gtp_to_loc(m["move"], 9), BLACK)
        after = crf_ownership(b, WHITE, 0.5, crf, seed=order)
        want = (after.black - after.white)[::-1].reshape(-1)
        assert m["ownership"] == pytest.approx(want, abs=1e-6)
    (w,) = engine.handle(q | {"overrideSettings": {"reportAnalysisWinratesAs": "WHITE"}})
    assert w["ownership"] == pytest.approx([-x for x in r["ownership"]], abs=1e-6)
    out = io.StringIO()
    assert serve(engine, io.StringIO(json.dumps(q) + "\n"), out, workers=1) == 1
    (forked,) = [json.loads(x) for x in out.getvalue().splitlines()]
    assert forked["ownership"] == r["ownership"]


def test_a_bad_territory_model_is_a_one_line_exit(tmp_path):
    (tmp_path / "bad.pt").write_text("not a model\n")
    for bad in (tmp_path / "bad.pt", tmp_path / "none.pt"):
        with pytest.raises(SystemExit) as e:
            analysis_main(["--model", "none", "--policy", "none", "--ownership", "crf",
                           "--territory", str(bad)])  # fmt: skip
        msg = str(e.value.code)
        assert msg.startswith("gomove analysis: ") and str(bad) in msg and "\n" not in msg, msg
