"""GTP version 2 framing: preprocessing, command parsing and response formatting.

Preprocessing (GTP 2 draft, 2.2): control characters other than HT and LF are
removed, HT becomes a space, everything after '#' is a comment, and a line
left empty is ignored. A command is an optional numeric id, a name and
arguments; a response is '=' (or '?' for an error), the id, a space, the
text, then an empty line.
"""

from __future__ import annotations

from typing import NamedTuple


class GtpError(Exception):
    """A command failed; its message is the '?' response's text."""


class Command(NamedTuple):
    id: str  # '' when the command has none
    name: str
    args: list[str]


def preprocess(line: str) -> str:
    line = "".join(ch for ch in line if ch in "\t\n" or (ord(ch) >= 32 and ord(ch) != 127))
    line = line.replace("\t", " ")
    return line.split("#", 1)[0].strip()


def parse_command(line: str) -> Command | None:
    """The command on a line, None for a line with none (empty or a comment)."""
    tokens = preprocess(line).split()
    if not tokens:
        return None
    cid = ""
    if tokens[0].isdigit():
        cid = tokens.pop(0)
        if not tokens:
            return Command(cid, "", [])
    return Command(cid, tokens[0].lower(), tokens[1:])


def response(cid: str, text: str, ok: bool = True) -> str:
    """The full response block, ending with the empty line."""
    text = text.rstrip("\n")
    head = ("=" if ok else "?") + cid
    return f"{head} {text}\n\n" if text else f"{head}\n\n"
