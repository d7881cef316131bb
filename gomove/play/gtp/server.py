"""The GTP loop: read commands, answer each (never crash), let streaming commands run
until the next command arrives.

Input is read from the raw file descriptor with our own line buffer, so that
``select`` can tell whether a command is waiting while an analysis streams
(Python's buffered stdin would hide lines it has already read ahead).
"""

from __future__ import annotations

import logging
import os
import select
import sys
import traceback
from typing import IO

from gomove.play.gtp.engine import GtpEngine
from gomove.play.gtp.protocol import GtpError, parse_command, response

log = logging.getLogger(__name__)


class LineReader:
    """Lines from a stream; ``ready()`` without blocking: is a whole line waiting?"""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None
        self.buf = b""
        self.eof = False

    def _fill(self, block: bool) -> None:
        if self.eof:
            return
        if not block and not select.select([self.fd], [], [], 0)[0]:
            return
        chunk = os.read(self.fd, 65536)
        if not chunk:
            self.eof = True
        self.buf += chunk

    def readline(self) -> str | None:
        """The next line (without its newline), None at the end of the input."""
        if self.fd is None:
            line = self.stream.readline()
            return line.rstrip("\n") if line else None
        while b"\n" not in self.buf and not self.eof:
            self._fill(block=True)
        if b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
        elif self.buf:
            line, self.buf = self.buf, b""
        else:
            return None
        return line.decode("utf-8", errors="replace")

    def ready(self) -> bool:
        if self.fd is None:
            pos = self.stream.tell()
            more = bool(self.stream.readline())
            self.stream.seek(pos)
            return more
        if b"\n" not in self.buf:
            self._fill(block=False)
        return b"\n" in self.buf or self.eof


def answer(engine: GtpEngine, line: str, write, ready) -> None:
    """Answer one input line (nothing for an empty one) through write."""
    cmd = parse_command(line)
    if cmd is None:
        return
    if not cmd.name:
        write(response(cmd.id, "syntax error: no command", ok=False))
        return
    if cmd.name in engine.streaming:
        if engine.search is None:
            write(response(cmd.id, "analysis needs the search (mode search)", ok=False))
            return
        write(f"={cmd.id}\n")
        try:
            final = engine.streaming[cmd.name](cmd.args, write, ready)
        except (GtpError, ValueError) as e:
            final = f"error: {e}"
        except Exception:  # answer, log and stay up: a GUI must never see the engine die
            log.error("%s failed:\n%s", cmd.name, traceback.format_exc())
            final = "error: internal error"
        write(f"{final}\n\n" if final else "\n")
        return
    handler = engine.commands.get(cmd.name)
    if handler is None:
        write(response(cmd.id, "unknown command", ok=False))
        return
    try:
        write(response(cmd.id, handler(cmd.args)))
    except GtpError as e:
        write(response(cmd.id, str(e), ok=False))
    except Exception as e:  # answer, log and stay up
        log.error("%s failed:\n%s", cmd.name, traceback.format_exc())
        write(response(cmd.id, f"internal error: {type(e).__name__}: {e}", ok=False))


def serve(engine: GtpEngine, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> None:
    """Answer commands until quit or the end of the input."""
    reader = LineReader(stdin or sys.stdin)
    out = stdout or sys.stdout

    def write(text: str) -> None:
        out.write(text)
        out.flush()

    while not engine.quit:
        line = reader.readline()
        if line is None:
            break
        answer(engine, line, write, reader.ready)
