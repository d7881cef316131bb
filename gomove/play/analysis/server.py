"""The analysis loop: one JSON request per input line, its responses one JSON object per
line on the output, flushed; nothing else on the output (logs go to stderr)."""

from __future__ import annotations

import json
import sys
from typing import IO

from gomove.play.analysis.engine import AnalysisEngine


def serve(engine: AnalysisEngine, inp: IO[str] = sys.stdin, out: IO[str] = sys.stdout) -> int:
    """Answer requests until the input ends; returns how many were answered."""

    def write(response: dict) -> None:
        out.write(json.dumps(response, separators=(",", ":")) + "\n")
        out.flush()

    n = 0
    for line in inp:
        if not line.strip():
            continue
        for response in engine.handle_line(line, write):
            write(response)
        n += 1
    return n
