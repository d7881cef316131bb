"""AnalysisEngine: KataGo's JSON analysis protocol answered by gomove's search and model.

``handle(obj)`` answers one request (a query or an action) with a list of JSON
objects: one per analysed turn, or ``{"id", "error", "field"}``, preceded by
``{"id", "warning", "field"}`` for each field gomove ignores. The responses
follow KataGo's docs/Analysis_Engine.md:

- ``moveInfos``: every root move the search visited, most visited first:
  ``move`` (GTP vertex or "pass"), ``order``, ``visits``, ``winrate``
  (the search's), ``lcb`` (its normal lower bound), ``utility`` (2 winrate - 1),
  ``prior`` (the full model's probability, else the tree's), ``scoreMean`` =
  ``scoreLead`` and ``scoreStdev`` (the mean and spread of the final scores of
  playouts after the move: gomove has no separate lead estimate), ``pv``, and
  ``pvVisits`` / ``ownership`` when asked;
- ``rootInfo``: ``winrate`` (the visit-weighted mean of the moves'),
  ``scoreLead`` (playouts from the position), ``visits``, ``currentPlayer``;
- ``ownership`` (size x size, row by row from the top, A19 first) and
  ``policy`` (size x size + 1, the same order then pass, -1 where illegal).

Winrates, scores, lcb, utility and ownership are from the perspective the query
names (``reportAnalysisWinratesAs``; BLACK by default). Score playouts: 128 from
the position, and after each reported move as many as its visits, 8 to 64.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from gomove import __version__
from gomove.board.board import BLACK, KO, LAST, LAST2, WHITE, Board, copy_board, new_board, play
from gomove.board.coords import NO_MOVE, PASS, from_loc, loc_to_gtp
from gomove.board.replay import move_error
from gomove.play.analysis.query import ACTIONS, Query, QueryError
from gomove.play.predict import Predictor
from gomove.play.search.search import MoveInfo, Search
from gomove.playout.driver import run_playouts
from gomove.playout.policy import PatternPolicy

log = logging.getLogger(__name__)

Write = Callable[[dict[str, Any]], None]  # takes one response as it is made
ROOT_SCORE_PLAYOUTS = 128
MOVE_SCORE_PLAYOUTS = (8, 64)  # a move's score playouts: its visits, clipped to this


class AnalysisEngine:
    """Holds the model, the light policy and one search per board size."""

    def __init__(
        self,
        new_search: Callable[[int], Search],
        predictor: Predictor | None = None,
        policy: PatternPolicy | None = None,
        default_visits: int = 100,
        seed: int = 0,
    ):
        """new_search(size): a fresh search for a board size (its settings)."""
        self.new_search = new_search
        self.predictor = predictor
        self.policy = policy
        self.default_visits = default_visits
        self.seed = seed
        self.searches: dict[int, Search] = {}

    # requests

    def handle_line(self, line: str, write: Write | None = None) -> list[dict[str, Any]]:
        """The responses to one input line (never raises); write as handle takes it."""
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            return [{"error": f"could not parse JSON: {e}"}]
        if not isinstance(obj, dict):
            return [{"error": "a request must be a JSON object"}]
        return self.handle(obj, write)

    def handle(self, obj: dict[str, Any], write: Write | None = None) -> list[dict[str, Any]]:
        """The responses to one request object (never raises). The reports during a search
        (reportDuringSearchEvery) go to write as they are made; without write, into the
        list before the final responses."""
        qid = obj.get("id")
        out: list[dict[str, Any]] = []
        try:
            if "action" in obj:
                return [self._action(obj)]
            query = Query.parse(obj, self.default_visits)
            out += [{"id": query.id, "warning": msg, "field": f} for f, msg in query.warnings]
            return out + self.analyse(query, write or out.append)
        except QueryError as e:
            err = {"id": qid, "error": str(e)}
            return [err | {"field": e.field}] if e.field else [err]
        except Exception as e:  # keep serving: an engine bug is one query's error
            log.exception("analysis query %r failed", qid)
            return [{"id": qid, "error": f"internal error: {type(e).__name__}: {e}"}]

    def _action(self, obj: dict[str, Any]) -> dict[str, Any]:
        action = obj["action"]
        if action not in ACTIONS:
            raise QueryError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}", "action")
        qid = obj.get("id")
        if action == "query_version":
            return {"id": qid, "action": action, "version": __version__, "git_hash": "gomove"}
        if action == "clear_cache":
            self.searches.clear()
            return {"id": qid, "action": action}
        if "terminateId" not in obj:
            raise QueryError("terminate needs terminateId", "terminateId")
        # queries are answered in turn, so none is running while this is read
        return {"id": qid, "action": action, "terminateId": obj["terminateId"]}

    # analysis

    def analyse(self, q: Query, write: Write) -> list[dict[str, Any]]:
        """One response per turn of q.turns, in turn order (reports during the searches
        to write)."""
        board = setup_board(q)
        out = []
        want = set(q.turns)
        passes = 0
        for t in range(max(want) + 1):
            if t in want:
                out.append(self.analyse_turn(q, t, board, passes, write))
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
        self, q: Query, turn: int, board: Board, passes: int, write: Write
    ) -> dict[str, Any]:
        """The response for the position board (unchanged), q.player_at(turn) to move;
        with q.report_every, the search runs in slices of that many seconds (continuing
        its tree) and each slice but the last is reported to write."""
        color = q.player_at(turn)
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
                             sims=q.max_visits - done, seconds=seconds)  # fmt: skip
            if res.ownership is not None:  # the slices' maps, weighted by their simulations
                own = res.ownership * res.sims if own is None else own + res.ownership * res.sims
            done += res.sims
            out_of_time = q.max_time is not None and time.perf_counter() - start >= q.max_time
            if done >= q.max_visits or out_of_time or res.sims == 0 or every is None:
                break
            write(self._response(q, turn, board, color, res, done, own, during=True))
        return self._response(q, turn, board, color, res, done, own, during=False)

    def _response(self, q: Query, turn: int, board: Board, color: int, res, done: int, own,
                  during: bool) -> dict[str, Any]:  # fmt: skip
        """A response from the search so far: res's root moves (the whole tree), done
        simulations, own the sum of the slices' ownership maps times their simulations."""
        size = q.size
        flip = _flip(q.perspective, color)  # the side to move's fractions -> the perspective's
        sign = -1.0 if q.perspective == "WHITE" else 1.0  # Black's scores -> the perspective's
        if q.perspective == "SIDETOMOVE" and color == WHITE:
            sign = -1.0
        probs = self.predictor.probs(board, color) if self.predictor is not None else None
        infos = []
        for order, m in enumerate(res.moves):
            infos.append(self._move_info(q, board, color, m, order, probs, flip, sign, turn))
        root_scores, root_counts = self._playouts(board, color, q.komi, ROOT_SCORE_PLAYOUTS, turn)
        total = sum(m.visits for m in res.moves)
        wr = sum(m.visits * m.winrate for m in res.moves) / total if total else 0.5
        out: dict[str, Any] = {
            "id": q.id,
            "turnNumber": turn,
            "isDuringSearch": during,
            "moveInfos": infos,
            "rootInfo": {
                "winrate": flip(wr),
                "scoreLead": sign * float(np.mean(root_scores)),
                "scoreStdev": float(np.std(root_scores)),
                "utility": 2.0 * flip(wr) - 1.0,
                "visits": int(done),
                "currentPlayer": "B" if color == BLACK else "W",
            },
        }
        if q.include_ownership:
            own = own / done if own is not None and done > 0 else _owner(root_counts)
            out["ownership"] = _top_rows(sign * own)
        if q.include_policy:
            if probs is None:
                out["policyWarning"] = "no model loaded (--model): no policy"
            else:
                out["policy"] = policy_array(probs, size)
        return out

    def _move_info(self, q, board, color, m: MoveInfo, order, probs, flip, sign, turn) -> dict:
        b = copy_board(board)
        play(b, m.loc, color)
        n = int(np.clip(m.visits, *MOVE_SCORE_PLAYOUTS))
        scores, counts = self._playouts(b, 3 - color, q.komi, n, turn * 1000 + order)
        mean = sign * float(np.mean(scores))
        info = {
            "move": loc_to_gtp(m.loc, q.size),
            "order": order,
            "visits": m.visits,
            "winrate": flip(m.winrate),
            "lcb": flip(min(max(m.lcb(), 0.0), 1.0)),
            "utility": 2.0 * flip(m.winrate) - 1.0,
            "prior": float(probs.get(m.loc, 0.0)) if probs is not None else m.prior,
            "scoreMean": mean,
            "scoreLead": mean,
            "scoreStdev": float(np.std(scores)),
            "pv": [loc_to_gtp(x, q.size) for x in m.pv],
        }
        if q.include_pv_visits:
            info["pvVisits"] = list(m.pv_visits)
        if q.include_moves_ownership:
            info["ownership"] = _top_rows(sign * _owner(counts))
        return info

    def _playouts(self, board: Board, color: int, komi: float, n: int, seed: int):
        """(final scores, Black minus White minus komi; owner counts) of n playouts."""
        seed = self.seed * 1_000_003 + seed
        if self.policy is not None:
            return self.policy.run_playouts(board, color, komi, n, seed)
        return run_playouts(board, color, komi, n, seed)


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


def policy_array(probs: dict[int, float], size: int) -> list[float]:
    """KataGo's policy: size * size + 1 values, row by row from the top, then pass; -1 for
    the illegal points."""
    out = np.full(size * size + 1, -1.0)
    for loc, p in probs.items():
        if loc == PASS:
            out[-1] = p
        else:
            r, c = from_loc(loc, size)
            out[(size - 1 - r) * size + c] = p
    return out.tolist()


def _flip(perspective: str, color: int) -> Callable[[float], float]:
    """The side to move's fraction x in the perspective's view."""
    if perspective == "SIDETOMOVE" or (perspective == "BLACK") == (color == BLACK):
        return lambda x: float(x)
    return lambda x: 1.0 - float(x)


def _owner(counts: np.ndarray) -> np.ndarray:
    """P(black) - P(white) from playout owner counts [3, size, size]."""
    n = counts.sum(axis=0)
    return (counts[BLACK] - counts[WHITE]) / np.maximum(n, 1)


def _top_rows(own: np.ndarray) -> list[float]:
    """[size, size] in sgfmill order (row 0 at the bottom) as KataGo's list, top row first."""
    return [round(float(x), 6) for x in own[::-1].reshape(-1)]
