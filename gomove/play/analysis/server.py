"""The analysis loop: one JSON request per input line, its responses one JSON object per
line on the output, flushed; nothing else on the output (logs go to stderr).

``serve(engine, workers=N)`` reads requests while N worker processes analyse the
turns of earlier queries (gomove.play.analysis.pool), as KataGo's engine does:
responses come as turns finish, possibly out of order. ``workers=0`` answers each
request in turn in this process (deterministic order: tests, debugging).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from multiprocessing import Pipe
from multiprocessing.connection import wait
from typing import IO, Any

from gomove.play.analysis.engine import AnalysisEngine
from gomove.play.analysis.pool import Pool


def line_writer(out: IO[str]):
    def write(response: dict[str, Any]) -> None:
        out.write(json.dumps(response, separators=(",", ":")) + "\n")
        out.flush()

    return write


def serve(
    engine: AnalysisEngine,
    inp: IO[str] = sys.stdin,
    out: IO[str] = sys.stdout,
    workers: int = 0,
    ready: Callable[[], None] | None = None,
) -> int:
    """Answer requests until the input ends and every queued turn is answered; returns how
    many requests were read. ready() is waited for before the first query (the warm-up:
    the workers are forked after it, so that they inherit its compiled code)."""
    write = line_writer(out)
    if workers <= 0:
        n = 0
        for line in inp:
            if not line.strip():
                continue
            for response in engine.handle_line(line, write):
                write(response)
            n += 1
        return n
    return _serve_pool(engine, inp, write, workers, ready)


def _serve_pool(engine: AnalysisEngine, inp: IO[str], write, workers: int, ready) -> int:
    pool: Pool | None = None  # forked at the first query, after ready()
    lines, send = Pipe(duplex=False)
    if inp is sys.stdin:
        # A forked process closes sys.stdin as it starts, which waits for the lock the
        # reading thread holds while it waits for a line: the thread keeps the stream,
        # sys.stdin becomes an empty one.
        sys.stdin = open(os.devnull)  # noqa: SIM115 (lives as long as the process)

    def read() -> None:
        try:
            for line in inp:
                if line.strip():
                    send.send(line)
        finally:
            send.send(None)

    threading.Thread(target=read, daemon=True).start()
    n, reading = 0, True
    try:
        while reading or (pool is not None and pool.busy()):
            conns = pool.connections() if pool is not None else []
            for conn in wait(([lines] if reading else []) + conns):
                if conn is not lines:
                    pool.receive(conn)
                    continue
                line = lines.recv()
                if line is None:
                    reading = False
                    continue
                n += 1
                request = engine.prepare(line)
                for response in request.responses:
                    write(response)
                if request.query is not None:
                    if pool is None:
                        if ready is not None:
                            ready()
                        pool = Pool(engine, workers, write)
                    pool.submit(request.query, request.positions)
                elif pool is None:
                    continue
                elif request.action == "clear_cache":
                    pool.clear_cache()
                elif request.action in ("terminate", "terminate_all"):
                    pool.terminate(request.terminate_id, request.turn_numbers)
    finally:
        if pool is not None:
            pool.close()
    return n
