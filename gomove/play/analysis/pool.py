"""Turns analysed in parallel: worker processes forked from the engine, one turn a task.

KataGo's analysis engine is asynchronous: requests are read while earlier ones are
analysed, and responses come in any order, each query ending with one response per
turn whose ``isDuringSearch`` is false. Here the parent process reads requests,
answers actions and errors at once, and queues each turn of a query as a task; N
worker processes (forked, so they share the loaded model and compiled kernels) take
the tasks by priority (higher first, then arrival) and send back their reports and
final responses, which only the parent writes.

- terminate: a queued turn of the named query is dropped and answered
  ``{"id", "turnNumber", "isDuringSearch": false, "noResults": true}``; a running
  one is stopped between chunks of simulations and answered from the search so far.
- a worker that dies (a crash in a compiled kernel) costs its turn an error
  response; a new worker is forked in its place.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import multiprocessing as mp
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

import torch

from gomove.board.board import Board
from gomove.play.analysis.query import Query

log = logging.getLogger(__name__)

Write = Callable[[dict[str, Any]], None]


@dataclass(order=True)
class Task:
    """One turn of one query (its position), ordered by priority (higher first), then
    arrival."""

    rank: tuple[int, int]
    query: Query = field(compare=False)
    turn: int = field(compare=False)
    board: Board = field(compare=False)
    passes: int = field(compare=False)


class Worker:
    """A forked process analysing one task at a time; stop asks its search to end."""

    def __init__(self, ctx, engine) -> None:
        self.conn, child = ctx.Pipe()
        self.stop = ctx.RawValue("i", 0)
        self.proc = ctx.Process(target=_work, args=(engine, child, self.stop), daemon=True)
        self.proc.start()
        child.close()
        self.task: Task | None = None

    def give(self, task: Task) -> None:
        self.stop.value = 0
        self.task = task
        self.conn.send(("turn", task.query, task.turn, task.board, task.passes))

    def close(self) -> None:
        self.stop.value = 1  # a running search ends at its next chunk
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()


def _work(engine, conn: Connection, stop) -> None:
    """A worker's loop: ("turn", query, turn, board, passes) -> ("report", r)*,
    ("done", final); ("clear",) drops the searches' trees; None ends it."""
    torch.set_num_threads(1)  # one core a worker: the workers are the parallelism
    parent = os.getppid()

    def stopped() -> bool:
        """terminate, or the server gone (killed: its searches must not run on)."""
        return stop.value != 0 or os.getppid() != parent

    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        if msg[0] == "clear":
            engine.searches.clear()
            continue
        _, q, turn, board, passes = msg

        def answer(q=q, turn=turn, board=board, passes=passes) -> list[dict[str, Any]]:
            return [engine.analyse_turn(q, turn, board, passes, report, stopped)]

        def report(r: dict[str, Any]) -> None:
            try:
                conn.send(("report", r))
            except OSError:  # the server is gone: stop searching
                stop.value = 1

        (final,) = engine.guarded({"id": q.id}, answer)
        try:
            conn.send(("done", final | {"turnNumber": turn} if "error" in final else final))
        except OSError:  # the server is gone
            return


class Pool:
    """The parent's side: the queue of tasks and the workers that take them."""

    def __init__(self, engine, workers: int, write: Write) -> None:
        self.ctx = mp.get_context("fork")
        self.engine = engine
        self.write = write
        self.workers = [Worker(self.ctx, engine) for _ in range(max(1, workers))]
        self.queue: list[Task] = []
        self.arrival = itertools.count()

    # requests

    def submit(self, q: Query, positions: list[tuple[int, Board, int]]) -> None:
        """Queue the turns of q at their positions (turn, board, passes)."""
        for turn, board, passes in positions:
            rank = (-q.priority, next(self.arrival))
            heapq.heappush(self.queue, Task(rank, q, turn, board, passes))
        self.assign()

    def terminate(self, qid: str | None, turns: list[int] | None) -> None:
        """Drop the queued turns of query qid (every query when None), only those of turns
        when given, and stop the running ones."""

        def hit(t: Task) -> bool:
            return (qid is None or t.query.id == qid) and (turns is None or t.turn in turns)

        dropped = [t for t in self.queue if hit(t)]
        self.queue = [t for t in self.queue if not hit(t)]
        heapq.heapify(self.queue)
        for t in sorted(dropped):
            self.write({"id": t.query.id, "turnNumber": t.turn, "isDuringSearch": False,
                        "noResults": True})  # fmt: skip
        for w in self.workers:
            if w.task is not None and hit(w.task):
                w.stop.value = 1

    def clear_cache(self) -> None:
        for w in self.workers:
            w.conn.send(("clear",))

    # the loop's side

    def busy(self) -> bool:
        return bool(self.queue) or any(w.task is not None for w in self.workers)

    def connections(self) -> list[Connection]:
        return [w.conn for w in self.workers]

    def receive(self, conn: Connection) -> None:
        """A worker's message: write it; a finished or dead worker takes the next task."""
        i = next(i for i, w in enumerate(self.workers) if w.conn is conn)
        w = self.workers[i]
        try:
            kind, response = conn.recv()
        except (EOFError, OSError):
            self._replace(i)
            return
        self.write(response)
        if kind == "done":
            w.task = None
            self.assign()

    def assign(self) -> None:
        for w in self.workers:
            if w.task is None and self.queue:
                w.give(heapq.heappop(self.queue))

    def _replace(self, i: int) -> None:
        """Worker i died: its turn gets an error, a new worker takes its place."""
        w = self.workers[i]
        w.proc.join(timeout=1)
        code = w.proc.exitcode
        log.error("analysis worker %d died (exit code %s)", w.proc.pid, code)
        if w.task is not None:
            self.write({"id": w.task.query.id, "turnNumber": w.task.turn,
                        "error": f"internal error: the worker analysing this turn died "
                                 f"(exit code {code})"})  # fmt: skip
        w.conn.close()
        self.workers[i] = Worker(self.ctx, self.engine)
        self.assign()

    def close(self) -> None:
        for w in self.workers:
            w.close()
