"""AnalysisEngine: KataGo's JSON analysis protocol answered by gomove's search and model.

``handle(obj)`` answers one request (a query or an action) with a list of JSON
objects: one per analysed turn, or ``{"id", "error", "field"}`` (``{"error"}`` when
the request has no string id to answer on), preceded by
``{"id", "warning", "field"}`` for each field gomove ignores. The responses
follow KataGo's docs/Analysis_Engine.md:

- ``moveInfos``: every root move the search visited, most visited first:
  ``move`` (GTP vertex or "pass"), ``order``, ``visits``, ``winrate``
  (the search's), ``lcb`` (its normal lower bound), ``utility`` (2 winrate - 1),
  ``prior`` (the full model's probability, else the tree's), ``scoreMean`` =
  ``scoreLead`` and ``scoreStdev`` (the mean and spread of the final scores of
  the simulations the search played through the move: gomove has no separate
  lead estimate), ``pv``, and ``pvVisits`` / ``ownership`` when asked;
- ``rootInfo``: ``winrate``, ``scoreLead`` and ``scoreStdev`` (the moves' pooled,
  each weighted by its visits, as KataGo's root values are: search.root_view),
  ``utility``, ``visits``, ``currentPlayer``;
- ``ownership`` (size x size, row by row from the top, A19 first) and
  ``policy`` (size x size + 1, the same order then pass, -1 where illegal).

Winrates, scores, lcb, utility and ownership are from the perspective the query
names (``reportAnalysisWinratesAs``; BLACK by default). The ownership maps are the
search's (the root's) and, for a move's (``includeMovesOwnership``), playouts after
the move, as many as its visits, 8 to 64; or, when the engine holds a territory CRF
(``--ownership crf``), the CRF's of the position and of the position after each
move. The scores stay the search's. Before the search has a visit, the root's
scores and map are those of 128 playouts from the position.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gomove import __version__
from gomove.board.board import BLACK, KO, LAST, LAST2, WHITE, Board, copy_board, new_board, play
from gomove.board.coords import NO_MOVE, PASS, loc_to_gtp, top_row_first
from gomove.board.replay import move_error
from gomove.models.territory.crf import TerritoryCRF
from gomove.play.analysis.query import ACTIONS, Query, QueryError, query_id
from gomove.play.ownership import OwnershipMap, crf_ownership, ownership
from gomove.play.predict import Prediction, Predictor, probability_grid
from gomove.play.search.search import MoveInfo, Search, root_view
from gomove.playout.policy import PatternPolicy

log = logging.getLogger(__name__)

Write = Callable[[dict[str, Any]], None]  # takes one response as it is made
MAX_DEPTH = 64  # how deeply a request may nest: an action echoes it, json.dumps recurses
ROOT_PLAYOUTS = 128  # the root's scores and map before the search has a visit
MOVE_PLAYOUTS = (8, 64)  # a move's map without the CRF: playouts, its visits clipped to this


class AnalysisEngine:
    """Holds the model, the light policy and one search per board size."""

    def __init__(
        self,
        new_search: Callable[[int], Search],
        predictor: Predictor | None = None,
        policy: PatternPolicy | None = None,
        default_visits: int = 100,
        seed: int = 0,
        territory: TerritoryCRF | None = None,
    ):
        """new_search(size): a fresh search for a board size (its settings);
        territory: the CRF that makes the ownership maps (None: the playouts)."""
        self.new_search = new_search
        self.predictor = predictor
        self.policy = policy
        self.territory = territory
        self.default_visits = default_visits
        self.seed = seed
        self.searches: dict[int, Search] = {}

    # requests

    def handle_line(self, line: str, write: Write | None = None) -> list[dict[str, Any]]:
        """The responses to one input line (never raises); write as handle takes it."""
        obj, error = _parse(line)
        return [error] if error is not None else self.handle(obj, write)

    def handle(self, obj: dict[str, Any], write: Write | None = None) -> list[dict[str, Any]]:
        """The responses to one request object (never raises). The reports during a search
        (reportDuringSearchEvery) go to write as they are made; without write, into the
        list before the final responses. A request without a string id gets KataGo's
        general error, {"error"}: no id to answer on."""
        out: list[dict[str, Any]] = []

        def answer() -> list[dict[str, Any]]:
            req = self.read(obj)
            out.extend(req.responses)
            for t, board, passes in req.positions:
                out.append(self.analyse_turn(req.query, t, board, passes, write or out.append))
            return out

        return self.guarded(obj, answer)

    def prepare(self, line: str) -> Request:
        """One input line read and checked, nothing analysed (never raises): what to answer
        now, and the query whose turns to analyse or the action to apply."""
        obj, error = _parse(line)
        if error is not None:
            return Request([error])
        got = self.guarded(obj, lambda: [self.read(obj)])  # [the Request], or [its error]
        return got[0] if isinstance(got[0], Request) else Request(got)

    def read(self, obj: dict[str, Any]) -> Request:
        """A request object checked (QueryError when it cannot be answered): an action's
        answer, or a query's warnings and the positions of its turns."""
        _check_values(obj)
        if "action" in obj:
            return Request([self._action(obj)], action=obj["action"],
                           terminate_id=obj.get("terminateId"),
                           turn_numbers=obj.get("turnNumbers"))  # fmt: skip
        query = Query.parse(obj, self.default_visits)
        warnings = [{"id": query.id, "warning": msg, "field": f} for f, msg in query.warnings]
        return Request(warnings, query, positions=self.positions(query))

    def guarded(self, obj: dict[str, Any], answer: Callable[[], list]) -> list[dict[str, Any]]:
        """answer(), or the error response on the request's id when it raises."""
        qid = obj.get("id") if isinstance(obj.get("id"), str) else None
        try:
            return answer()
        except QueryError as e:
            if qid is None:
                return [{"error": str(e)}]
            err = {"id": qid, "error": str(e)}
            return [err | {"field": e.field}] if e.field else [err]
        except Exception as e:  # keep serving: an engine bug is one query's error
            log.exception("analysis query %r failed", qid)
            err = {"error": f"internal error: {type(e).__name__}: {e}"}
            return [err if qid is None else {"id": qid} | err]

    def _action(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The action done and its answer: the request echoed, as KataGo does, with
        version and git_hash for query_version. Terminating is the server's (it knows
        what runs): here the fields are checked."""
        query_id(obj)
        action = obj["action"]
        if action not in ACTIONS:
            raise QueryError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}", "action")
        if action == "query_version":
            return obj | {"version": __version__, "git_hash": "gomove"}
        if action == "clear_cache":
            self.searches.clear()
            return dict(obj)
        if action == "terminate" and not isinstance(obj.get("terminateId"), str):
            raise QueryError("terminate needs terminateId, a string", "terminateId")
        turns = obj.get("turnNumbers")
        if turns is not None and not (
            isinstance(turns, list) and all(type(t) is int for t in turns)
        ):
            raise QueryError("turnNumbers must be a list of integers", "turnNumbers")
        return dict(obj)

    # analysis

    def positions(self, q: Query) -> list[tuple[int, Board, int]]:
        """(turn, board, passes before it) of each turn of q, in turn order. Every move is
        checked first, as KataGo does: an illegal move, even after the last turn asked
        for, makes the query one error (QueryError)."""
        board = setup_board(q)
        want = set(q.turns)
        out = []
        passes = 0
        for t in range(len(q.moves) + 1):
            if t in want:
                out.append((t, copy_board(board), passes))
            if t < len(q.moves):
                color, loc = q.moves[t]
                why = move_error(board, loc, color)
                if why is not None:
                    raise QueryError(f"moves[{t}]: {why} ({loc_to_gtp(loc, q.size)})", "moves")
                play(board, loc, color)
                passes = passes + 1 if loc == PASS else 0
        return out

    def _search(self, size: int) -> Search:
        s = self.searches.get(size)
        if s is None:
            s = self.searches[size] = self.new_search(size)
        return s

    def analyse_turn(
        self,
        q: Query,
        turn: int,
        board: Board,
        passes: int,
        write: Write,
        stop: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """The response for the position board (unchanged), q.player_at(turn) to move;
        with q.report_every, the search runs in slices of that many seconds (continuing
        its tree) and each slice but the last is reported to write. stop (terminate)
        ends the search early: the response is the search so far."""
        v = self._view(q, turn, board)
        color = v.color
        search = self._search(q.size)
        search.clear()
        search.root_allowed = root_mask(q, color, board)
        start = time.perf_counter()
        done, own = 0, None
        every = q.report_every if search.cfg.reuse else None
        while True:
            left = None if q.max_time is None else q.max_time - (time.perf_counter() - start)
            seconds = left if every is None else min(every, left if left is not None else every)
            res = search.run(copy_board(board), color, q.komi, passes,
                             sims=q.max_visits - done, seconds=seconds, stop=stop)  # fmt: skip
            if res.ownership is not None:  # the slices' maps, weighted by their simulations
                own = res.ownership * res.sims if own is None else own + res.ownership * res.sims
            done += res.sims
            out_of_time = q.max_time is not None and time.perf_counter() - start >= q.max_time
            stopped = stop is not None and stop()
            if done >= q.max_visits or out_of_time or stopped or res.sims == 0 or every is None:
                break
            write(self._response(q, v, board, res, done, own, during=True))
        return self._response(q, v, board, res, done, own, during=False)

    def _view(self, q: Query, turn: int, board: Board) -> TurnView:
        """What the turn's responses share, computed once for its reports and its answer."""
        color = q.player_at(turn)
        pred = self.predictor.predict(board, color) if self.predictor is not None else None
        probs, wants_policy = None, q.include_policy or q.human_policy
        if pred is not None:
            probs = dict(zip(pred.locs.tolist(), pred.probs.tolist(), strict=True))
        return TurnView(
            turn,
            color,
            {"BLACK": BLACK, "WHITE": WHITE}.get(q.perspective, color),
            probs,
            policy_array(pred) if pred is not None and wants_policy else None,
            self._crf(board, color, q.komi, turn) if q.include_ownership else None,
        )

    def _response(self, q: Query, v: TurnView, board: Board, res, done: int, own,
                  during: bool) -> dict[str, Any]:  # fmt: skip
        """A response from the search so far: res's root moves (the whole tree), done
        simulations, own the sum of the slices' ownership maps times their simulations."""
        infos = [self._move_info(q, v, board, m, order) for order, m in enumerate(res.moves)]
        root = root_view(res.moves)
        before = None  # nothing searched yet: playouts from the position
        if root is None or (q.include_ownership and v.crf is None and (own is None or not done)):
            before = self._playouts(board, v.color, q.komi, ROOT_PLAYOUTS, v.turn)
        if root is None:
            wr, lead, stdev = v.frac(0.5), v.sign * before.mean_score, before.score_stdev
        else:
            wr, lead, stdev = v.frac(root.winrate), v.lead(root.score_mean), root.score_stdev
        out: dict[str, Any] = {
            "id": q.id,
            "turnNumber": v.turn,
            "isDuringSearch": during,
            "moveInfos": infos,
            "rootInfo": {
                "winrate": wr,
                "scoreLead": lead,
                "scoreStdev": stdev,
                "utility": 2.0 * wr - 1.0,
                "visits": int(done),
                "currentPlayer": "B" if v.color == BLACK else "W",
            },
        }
        if q.include_ownership and v.crf is not None:
            out["ownership"] = _top_rows(v.sign * v.crf)
        elif q.include_ownership:
            own = own / done if own is not None and done > 0 else before.black - before.white
            out["ownership"] = _top_rows(v.sign * own)
        if q.human_policy and v.policy is not None:
            out["humanPolicy"] = v.policy  # gomove's model is a model of human moves
        if q.include_policy:
            if v.policy is None:
                out["policyWarning"] = "no model loaded (--model): no policy"
            else:
                out["policy"] = v.policy
        return out

    def _move_info(self, q: Query, v: TurnView, board: Board, m: MoveInfo, order: int) -> dict:
        lead = v.lead(m.score_mean)
        info = {
            "move": loc_to_gtp(m.loc, q.size),
            "order": order,
            "visits": m.visits,
            "winrate": v.frac(m.winrate),
            "lcb": v.frac(min(max(m.lcb(), 0.0), 1.0)),
            "utility": 2.0 * v.frac(m.winrate) - 1.0,
            "prior": v.probs.get(m.loc, 0.0) if v.probs is not None else m.prior,
            "scoreMean": lead,
            "scoreLead": lead,
            "scoreStdev": m.score_stdev,
            "pv": [loc_to_gtp(x, q.size) for x in m.pv],
        }
        if q.include_pv_visits:
            info["pvVisits"] = list(m.pv_visits)
        if q.include_moves_ownership:
            b = copy_board(board)
            play(b, m.loc, v.color)
            seed = v.turn * 1000 + order
            own = self._crf(b, 3 - v.color, q.komi, seed)
            if own is None:
                n = int(np.clip(m.visits, *MOVE_PLAYOUTS))
                after = self._playouts(b, 3 - v.color, q.komi, n, seed)
                own = after.black - after.white
            info["ownership"] = _top_rows(v.sign * own)
        return info

    def _playouts(self, board: Board, color: int, komi: float, n: int, seed: int) -> OwnershipMap:
        """n playouts from board (unchanged), color to move (the policy's, else uniform)."""
        return ownership(board, color, n, komi, self.seed * 1_000_003 + seed, policy=self.policy)

    def _crf(self, board: Board, color: int, komi: float, seed: int) -> np.ndarray | None:
        """The territory CRF's P(black) - P(white) of board, color to move (None: no CRF)."""
        if self.territory is None:
            return None
        own = crf_ownership(board, color, komi, self.territory, seed=self.seed * 1_000_003 + seed)
        return own.black - own.white


@dataclass
class Request:
    """A request read (AnalysisEngine.prepare / read): the responses to write now, and
    a query with the positions of its turns, or an action with its fields."""

    responses: list[dict[str, Any]]
    query: Query | None = None
    positions: list[tuple[int, Board, int]] = field(default_factory=list)
    action: str | None = None
    terminate_id: str | None = None
    turn_numbers: list[int] | None = None


@dataclass(frozen=True)
class TurnView:
    """What the responses of one turn share (AnalysisEngine._view)."""

    turn: int
    color: int  # the colour to move
    viewer: int  # whose winrates, scores and ownership: BLACK or WHITE (the perspective)
    probs: dict[int, float] | None  # the model's move probabilities (None: no model)
    policy: list[float] | None  # KataGo's policy array, when asked for
    crf: np.ndarray | None  # the territory CRF's P(black) - P(white), when it makes the map

    @property
    def sign(self) -> float:
        """Black's scores and ownership -> the viewer's."""
        return 1.0 if self.viewer == BLACK else -1.0

    def frac(self, x: float) -> float:
        """The side to move's fraction (a winrate) -> the viewer's."""
        return float(x) if self.viewer == self.color else 1.0 - float(x)

    def lead(self, x: float) -> float:
        """The side to move's score -> the viewer's."""
        return float(x) if self.viewer == self.color else -float(x)


def _check_values(obj: dict[str, Any]) -> None:
    """QueryError naming the field of a request that holds a number JSON cannot write
    (NaN, infinity: Python's json reads NaN, Infinity and 1e400) or nests deeper than
    MAX_DEPTH: either would break the one-JSON-object-per-line output."""
    stack = [(k, v, 1) for k, v in obj.items()]
    while stack:
        key, v, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise QueryError(f"{key}: nested more than {MAX_DEPTH} deep", key)
        if isinstance(v, float) and not math.isfinite(v):
            raise QueryError(f"{key}: {v} is not a JSON number", key)
        if isinstance(v, dict | list):
            items = v.values() if isinstance(v, dict) else v
            stack += [(key, x, depth + 1) for x in items]


def _parse(line: str) -> tuple[dict[str, Any], None] | tuple[None, dict[str, Any]]:
    """(the request object, None), or (None, the error response) for a line that is not
    a JSON object."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        return None, {"error": f"could not parse JSON: {e}"}
    except RecursionError:  # json.loads recurses once per [ or {
        return None, {"error": "could not parse JSON: nested too deeply"}
    if not isinstance(obj, dict):
        return None, {"error": "a request must be a JSON object"}
    return obj, None


def setup_board(q: Query) -> Board:
    """The board of q's initial stones (no previous move, no ko), each checked."""
    b = new_board(q.size)
    for i, (color, loc) in enumerate(q.initial_stones):
        why = "a pass" if loc == PASS else move_error(b, loc, color, superko=False)
        if why is not None:
            raise QueryError(f"initialStones[{i}]: {why} ({loc_to_gtp(loc, q.size)})",
                             "initialStones")  # fmt: skip
        play(b, loc, color)
    b.info[LAST] = NO_MOVE
    b.info[LAST2] = NO_MOVE
    b.info[KO] = -1
    return b


def root_mask(q: Query, color: int, board: Board) -> np.ndarray | None:
    """Which points color may play at the root under q's allowMoves and avoidMoves for
    color (None: all); PASS stays allowed."""
    entries = [(locs, True) for p, locs in q.allow if p == color]
    entries += [(locs, False) for p, locs in q.avoid if p == color]
    if not entries:
        return None
    allowed = np.ones(board.color.shape[0], np.bool_)
    for locs, allow in entries:
        pts = [x for x in locs if x != PASS]
        if allow:
            only = np.zeros_like(allowed)
            only[pts] = True
            allowed &= only
        else:
            allowed[pts] = False
    return allowed


def policy_array(pred: Prediction) -> list[float]:
    """KataGo's policy: size * size + 1 values, row by row from the top, then pass; -1 for
    the illegal points."""
    grid = np.nan_to_num(top_row_first(probability_grid(pred)), nan=-1.0)
    passes = pred.probs[pred.locs == PASS]
    return [*grid.tolist(), float(passes[0]) if len(passes) else -1.0]


def _top_rows(own: np.ndarray) -> list[float]:
    """[size, size] in sgfmill order (row 0 at the bottom) as KataGo's list, top row first.
    An exact 0 (as many playouts won by each side) is sent as 1e-6: KaTrain 1.20
    (gui/badukpan.py, draw_stone) takes an ownership of 0 under a stone for a missing one,
    raises a TypeError and leaves the rest of the board undrawn."""
    return [round(float(x), 6) or 1e-6 for x in top_row_first(own)]
