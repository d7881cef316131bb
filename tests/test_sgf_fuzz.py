"""Property-based SGF fuzz of the reading layer: iter_games and ``gomove data``.

Inputs are SGF byte strings grown from seeds -- the embedded sample archives, the
hand-made fixtures and oddities, random legal games (gamegen.py) and random move
sequences on small boards (every kind of illegal move: occupied, suicide, ko, superko)
-- then mutated: truncations, byte flips, insertions and deletions; SZ, KM, HA, CA and
text values replaced (wrong sizes, junk, unknown or mismatched charsets, non-UTF-8
bytes); moves made malformed, off the board, copied onto occupied points, recoloured,
inserted or deleted; AB/AW setup stones in the root and after it; duplicate
properties; variations and deep nesting; re-encodings; several games in one file;
empty and huge files (MB of comment, move value, leading junk or pass nodes). Each
case puts one to three such records in a .sgf file, a folder, or a zip or tar archive
(some archives then truncated or flipped).

Invariants checked for every case:
- iter_games raises nothing; every record is one yielded game or one skip counted under
  a reason of REASONS, which the module docstrings name (files == games + skips); the
  failures it keeps are short lines, even for megabyte values;
- every yielded game fits the config (size, handicap, min_moves) and replays legally on
  sgfmill's board under the rules stated here (first_illegal: occupied point, suicide,
  simple ko, positional superko when asked, setup stones with liberties);
- when the archive is whole, each record's outcome is the predicted one: the game,
  equal to sgfmill's reading of its main line, when it parses, passes the filters and
  is legal; else a skip naming parse_game's reason, the filter, or ``illegal``; so no
  legal game is lost and none is invented;
- strict=True yields the same games up to the first failure and then raises GameError
  with that failure's reason; filters never raise;
- gomove.cli.data.main (what ``gomove data`` runs) returns 0, 1 under
  --strict at a failure, 2 for bad options; never raises; writes text a strict UTF-8
  stdout accepts; its JSON line equals the read's summary. A few real subprocess runs
  check the same from outside.

The default run executes FAST_EXAMPLES cases and every hand-made seed unmutated;
``pytest -m slow`` runs SLOW_EXAMPLES (10,000) cases and prints the tally (inputs,
records, games, skips by reason, illegal kinds, exit codes); add ``-s`` to see it.
"""

from __future__ import annotations

import bisect
import io
import itertools
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from gamegen import random_sgf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sgfmill import boards, sgf

import gomove.reading.games as games_module
import gomove.reading.sgf as sgf_module
from gomove.board.board import BLACK, WHITE
from gomove.cli.data import main
from gomove.reading.games import FILTER_REASONS, ReadConfig, ReadStats, iter_games
from gomove.reading.sgf import MAX_MESSAGE, Game, GameError, parse_game
from gomove.samples import SAMPLES, sample_path

FAST_EXAMPLES = 300
SLOW_EXAMPLES = 10_000
# every reason a skip may be counted under (gomove.reading.sgf and gomove.reading.games)
REASONS = frozenset({"read", "parse", "encoding", "size", "move", "setup", "illegal"}) | set(
    FILTER_REASONS
)
FIXTURES = Path(__file__).parent / "fixtures"
SUITE = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)


# --- seeds ------------------------------------------------------------------------------


def _zip_members(path: str) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(path) as zf:
        return [(f"{Path(path).stem}/{n}", zf.read(n)) for n in zf.namelist()]


REAL = [rec for name in SAMPLES for rec in _zip_members(sample_path(name))] + [
    (f"fixtures/{p.name}", p.read_bytes()) for p in sorted(FIXTURES.glob("*.sgf"))
]
HANDMADE = [
    b"",
    b" \r\n\t",
    b"()",
    b"(;)",
    b"(;;;)",
    b"(;SZ[9])",
    b"(;SZ[9];B[ee]",
    b"(;SZ[9];B[ee];W[ee])",  # occupied
    b"(;SZ[9]AB[ee];W[ee])",  # a move on a setup stone
    b"(;SZ[9]AB[ee]AW[ee];B[aa])",  # both colours on one point
    b"(;SZ[9]AB[ba][ab]AW[aa];W[ee])",  # a white setup stone without liberties
    b"(;SZ[9]AB[aa]AW[ba][ab];W[ee])",  # a black one, captured by the setup
    b"(;SZ[9]AB[aa:cc]AW[dd:ee];B[ff])",  # compressed point lists
    b"(;SZ[9]AE[ee];B[ee])",
    b"(;SZ[9];B[ee];AB[aa];W[cc])",  # setup after the root
    b"(;SZ[9]B[ee];W[cc])",  # a move in the root
    b"(;SZ[9];B[ee]W[cc];W[dd])",  # two moves in one node
    b"(;SZ[9];B[ee][cc];W[dd])",  # two values
    b"(;SZ[9]SZ[19];B[pd])",
    b"(;SZ[2];B[aa];W[bb];B[ba];W[ab])",
    b"(;SZ[3];B[ba];W[bb];B[ab];W[cb];B[bc];W[ac];B[ca];W[aa];B[ab])",
    b"(;SZ[9];B[ee](;W[cc];B[dd])(;W[gg]))",
    b"(;SZ[9];B[ee])(;SZ[19];B[pd])",  # two games in one file
    b"(;SZ[9];B[ee])\n(;SZ[9];B[zz])",
    b"(;SZ[9]CA[UTF-8]PB[\xff\xfe];B[ee])",
    b"(;SZ[9]CA[hex]RE[W+R];B[ee])",
    b"(;SZ[9]CA[UTF-16]PB[Lee];B[ee])",
    b"(;FF[4]GM[1]SZ[19:19];B[aa])",
    b"\xef\xbb\xbf(;SZ[9];B[ee])",
    "(;SZ[9]PB[李];B[ee])".encode("utf-16"),
    b"(;SZ[9]C[a \\] b \\\\];B[ee])",
    b"junk before (;SZ[9];B[ee]) junk after",
    b"(;SZ[9]KM[6.5]HA[2]AB[cc][gg];W[ee];B[tt];W[])",
]
GAMEGEN_SIZES = (2, 3, 5, 7, 9, 13, 19)


def _point(row: int, col: int, size: int) -> bytes:
    """sgfmill (row, col), row 0 at the bottom -> an SGF point value."""
    return bytes([97 + col, 97 + size - 1 - row])


def _suicide(board: boards.Board, row: int, col: int, colour: str) -> bool:
    trial = board.copy()
    trial.play(row, col, colour)
    return trial.get(row, col) is None


@st.composite
def small_board_games(draw) -> tuple[str, bytes]:
    """Random move sequences on small boards: mostly legal, then a stray move.

    A shadow sgfmill board keeps most moves on empty points that are not suicide, so
    that games live long enough for (on 2x2 to 4x4) positional superko repetitions;
    half the games on 4x4 and up open with a ko shape (the first player takes a ko at
    move 9); a ko just taken is retaken at once half the time (illegal); now and then
    a move is a suicide, lands on any point (occupied), is a pass, or the colours do
    not alternate.
    """
    size = draw(st.sampled_from((2, 2, 3, 3, 4, 4, 5, 6, 7, 9)))  # cycles come on tiny boards
    board = boards.Board(size)
    points = [(r, c) for r in range(size) for c in range(size)]
    out = [b"(;GM[1]FF[4]SZ[%d]" % size]
    for ident in (b"AB", b"AW") if draw(st.integers(0, 3)) == 0 else ():
        pts = draw(st.lists(st.sampled_from(points), max_size=3))
        if pts:
            out.append(ident + b"".join(b"[" + _point(r, c, size) + b"]" for r, c in pts))
            board.apply_setup(pts if ident == b"AB" else [], pts if ident == b"AW" else [], [])
    color = "w" if draw(st.booleans()) and len(out) > 1 else "b"
    plan: list = []  # moves played first: a ko shape, (r, c) taken by the stone at (r, c+1)
    if size >= 4 and len(out) == 1 and draw(st.booleans()):
        r, c = draw(st.integers(1, size - 2)), draw(st.integers(1, size - 3))
        plan = [(r, c - 1), (r - 1, c + 1), (r - 1, c), (r + 1, c + 1), (r + 1, c), (r, c + 2)]
        plan += [None, (r, c), (r, c + 1)]
    ko = None  # the point of a simple ko just taken: retaking it at once is illegal
    kinds = ("legal",) * 40 + ("empty", "any", "pass", "pass", "swap")
    for _ in range(len(plan) + draw(st.integers(0, 80))):
        kind = (
            "plan" if plan else draw(st.sampled_from(kinds if ko is None else ("retake", "legal")))
        )
        if kind == "swap":
            color = "w" if color == "b" else "b"
            continue
        empty = [p for p in points if board.get(*p) is None]
        legal = [p for p in empty if p != ko and not _suicide(board, *p, color)]
        pool = {"legal": legal, "empty": empty, "any": points, "retake": [ko]}.get(kind)
        move = plan.pop(0) if kind == "plan" else draw(st.sampled_from(pool)) if pool else None
        if move is None:
            value, ko = b"", None
        else:
            value = _point(*move, size)
            ko = board.play(*move, color) if board.get(*move) is None else None
        out.append(b";" + color.upper().encode() + b"[" + value + b"]")
        color = "w" if color == "b" else "b"
    return f"small{size}", b"".join(out) + b")"


def weighted(*choices: tuple[int, st.SearchStrategy]) -> st.SearchStrategy:
    """One of the strategies, drawn with the given integer weights."""
    bounds = list(itertools.accumulate(w for w, _ in choices))
    return st.integers(0, bounds[-1] - 1).flatmap(
        lambda p: choices[bisect.bisect_right(bounds, p)][1]
    )


SEEDS = weighted(
    (25, st.sampled_from(REAL)),
    (15, st.sampled_from(HANDMADE).map(lambda data: ("handmade", data))),
    (
        25,
        st.builds(
            lambda size, n, seed: (f"gamegen{size}", random_sgf(size, n, seed)),
            st.sampled_from(GAMEGEN_SIZES),
            st.integers(0, 120),
            st.integers(0, 2**16),
        ),
    ),
    (35, small_board_games()),
)


# --- mutations --------------------------------------------------------------------------

_VALUE = rb"\[(?:[^\]\\]|\\.)*\]"
_MOVE = re.compile(rb"(?<![A-Za-z])([BW])\s*(" + _VALUE + rb")", re.S)
_PROPS = re.compile(rb"(?:\s*[A-Za-z]+(?:\s*" + _VALUE + rb")+)*", re.S)

SZ_VALUES = [b"0", b"1", b"2", b"7", b"9", b"13", b"19", b"25", b"26", b"27", b"52", b"19:13"]
SZ_VALUES += [b"9:9", b"", b"x", b" 19 ", b"-9", b"1e1", b"19.0", b"9" * 30, b"\xff"]
KM_VALUES = [b"6.5", b"", b"x", b"nan", b"inf", b"1e400", b"-7", b"6,5", b"\xff", b"1_0"]
HA_VALUES = [b"0", b"2", b"9", b"-1", b"x", b"", b"1.5", b"9" * 30, b"\xff"]
CA_VALUES = [b"UTF-8", b"utf8", b"ISO-8859-1", b"latin1", b"GB2312", b"GBK", b"Big5"]
CA_VALUES += [b"Shift_JIS", b"EUC-KR", b"UTF-16", b"utf-32", b"utf-7", b"hex", b"rot13"]
CA_VALUES += [b"base64", b"zlib", b"undefined", b"idna", b"punycode", b"unicode_escape"]
CA_VALUES += [b"mbcs", b"nonsense", b"", b"\xff", b"cp037", b"hz"]
TEXT_VALUES = [b"\xff\xfe", b"\xc3", "中".encode(), "이세돌".encode(), "名人".encode("gb2312")]
TEXT_VALUES += ["名人".encode("shift_jis"), b"a\\]b", b"9d", b"30k", b"\x00", b"x" * 1000]
TEXT_VALUES += [b"B+R", b"W+2.5", b"\\", b"\xe4\xb8"]
MOVE_VALUES = [b"", b"tt", b"zz", b"ss", b"aa", b"a", b"abc", b"\xff\xff", b"A1", b"aa:bb"]
MOVE_VALUES += [b"ee", b"dd", b"pd", b"dp", b"qq", b"`a", b"a{", b" ee", b"E E"]
POINT_VALUES = [b"aa", b"ab", b"ba", b"bb", b"cc", b"ee", b"ss", b"tt", b"zz", b"aa:cc"]
POINT_VALUES += [b"cc:aa", b"aa:ss", b"a", b"", b"\xff\xff", b"pd", b"dp"]
PROPS = {b"SZ": SZ_VALUES, b"KM": KM_VALUES, b"HA": HA_VALUES, b"CA": CA_VALUES}
PROPS.update({ident: TEXT_VALUES for ident in (b"PB", b"PW", b"RE", b"BR", b"WR", b"DT")})
PROPS.update({b"FF": [b"1", b"3", b"4", b"x"], b"GM": [b"1", b"2", b"x"], b"C": TEXT_VALUES})
HUGE_BYTES = (1 << 20, 3 << 20, 8 << 20)
HUGE_NODES = (2_000, 5_000, 20_000)


def _root_span(data: bytes) -> tuple[int, int]:
    """Start and end of the first node's properties (just after its ';'), or (0, 0)."""
    i = data.find(b";")
    if i < 0:
        return 0, 0
    return i + 1, _PROPS.match(data, i + 1).end()


def _escape(value: bytes) -> bytes:
    return value.replace(b"\\", b"\\\\").replace(b"]", b"\\]")


def set_prop(data: bytes, ident: bytes, value: bytes, keep: bool = False) -> bytes:
    """Put IDENT[value] in the root, replacing the root's IDENT unless keep (a duplicate)."""
    start, end = _root_span(data)
    root = data[start:end]
    if not keep:
        root = re.sub(rb"(?<![A-Za-z])" + ident + rb"(?:\s*" + _VALUE + rb")+", b"", root)
    return data[:start] + ident + b"[" + value + b"]" + root + data[end:]


def _node_start(data: bytes, pos: int) -> int:
    i = data.rfind(b";", 0, pos)
    return pos if i < 0 else i


def mutate(data: bytes, op: tuple) -> bytes:
    """Apply one mutation (a tuple drawn by OP) that edits SGF bytes or properties."""
    kind, args = op[0], op[1:]
    n = len(data)
    moves = list(_MOVE.finditer(data))
    if kind == "truncate":
        return data[: int(n * args[0])]
    if kind == "flip":
        if not n:
            return data
        i = int(n * args[0]) % n
        return data[:i] + bytes([data[i] ^ args[1]]) + data[i + 1 :]
    if kind == "insert":
        i = int(n * args[0])
        return data[:i] + args[1] + data[i:]
    if kind == "delete":
        i = int(n * args[0])
        return data[:i] + data[i + args[1] :]
    if kind == "duplicate":
        i = int(n * args[0])
        return data[:i] + data[i : i + args[1]] * 2 + data[i + args[1] :]
    if kind in ("prop", "dup_prop"):
        return set_prop(data, args[0], args[1], keep=kind == "dup_prop")
    if kind == "setup":
        # AB/AW/AE[p1][p2]... in the root (beside any there), or in the node of move k
        ident, where, points = args
        if where == 0 or not moves:
            return set_prop(data, ident, b"][".join(points), keep=True)
        i = _node_start(data, moves[where % len(moves)].start()) + 1
        return data[:i] + ident + b"[" + b"][".join(points) + b"]" + data[i:]
    if not moves:
        return data
    m = moves[args[0] % len(moves)]
    if kind == "move":
        return data[: m.start(2)] + b"[" + _escape(args[1]) + b"]" + data[m.end(2) :]
    if kind == "copy_move":
        src = moves[args[1] % len(moves)].group(2)
        return data[: m.start(2)] + src + data[m.end(2) :]
    if kind == "recolour":
        other = b"W" if m.group(1) == b"B" else b"B"
        return data[: m.start(1)] + other + data[m.end(1) :]
    if kind == "insert_move":
        i = _node_start(data, m.start())
        return data[:i] + b";" + args[1] + b"[" + _escape(args[2]) + b"]" + data[i:]
    if kind == "delete_move":
        return data[: _node_start(data, m.start())] + data[m.end() :]
    if kind == "variation":
        # an alternative line after move k, first or second in the tree
        i = m.end()
        alt = b"(;" + args[1] + b"[" + _escape(args[2]) + b"])"
        end = data.rfind(b")")
        if end < i:
            return data
        rest = data[i:end]
        line = alt + b"(" + rest + b")" if args[3] else b"(" + rest + b")" + alt
        return data[:i] + line + data[end:]
    if kind == "nest":
        # every node from move k on opens a variation of its own: same main line, deep tree
        out, depth, last = [], 0, 0
        for mm in moves[args[0] % len(moves) :][: args[1]]:
            i = _node_start(data, mm.start())
            out += [data[last:i], b"("]
            last, depth = i, depth + 1
        end = data.rfind(b")")
        if end < last:
            return data
        return b"".join(out) + data[last:end] + b")" * depth + data[end:]
    raise AssertionError(kind)


def transform(data: bytes, op: tuple) -> bytes:
    """Mutations that do not look at the moves: encodings, other games, huge parts."""
    kind, args = op[0], op[1:]
    if kind == "utf16":
        return data.decode("latin-1").encode("utf-16")
    if kind == "latin1_as_utf8":
        return data.decode("latin-1").encode("utf-8")
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n").replace(b"]", b"]\r\n")
    if kind == "concat":
        return data + b"\n" + args[1] if args[0] else args[1] + b"\n" + data
    if kind == "huge_comment":
        return set_prop(data, b"C", b"x" * args[0], keep=True)
    if kind == "huge_value":
        return mutate(data, ("move", 0, b"a" * args[0]))
    if kind == "huge_junk":
        return bytes(range(256)) * (args[0] // 256) + data
    if kind == "huge_size":
        return set_prop(data, b"SZ", b"9" * args[0])
    if kind == "huge_passes":
        end = data.rfind(b")")
        end = len(data) if end < 0 else end
        return data[:end] + b";B[];W[]" * (args[0] // 2) + data[end:]
    return mutate(data, op)


FRAC = st.integers(0, 10_000).map(lambda k: k / 10_000)
INDEX = st.integers(0, 400)
COLOUR = st.sampled_from((b"B", b"W"))
MOVE_VALUE = st.one_of(st.sampled_from(MOVE_VALUES), st.binary(max_size=3))
BYTES_OP = st.one_of(
    st.tuples(st.just("truncate"), FRAC),
    st.tuples(st.just("flip"), FRAC, st.integers(1, 255)),
    st.tuples(st.just("insert"), FRAC, st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("insert"), FRAC, st.sampled_from((b"(", b")", b";", b"[", b"]", b"\\"))),
    st.tuples(st.just("delete"), FRAC, st.integers(1, 64)),
    st.tuples(st.just("duplicate"), FRAC, st.integers(1, 64)),
)
PROP_OP = st.sampled_from(sorted(PROPS)).flatmap(
    lambda ident: st.tuples(
        st.sampled_from(("prop", "dup_prop")),
        st.just(ident),
        st.one_of(st.sampled_from(PROPS[ident]), st.binary(max_size=6).map(_escape)),
    )
)
MOVE_OP = st.one_of(
    st.tuples(st.just("move"), INDEX, MOVE_VALUE),
    st.tuples(st.just("copy_move"), INDEX, INDEX),
    st.tuples(st.just("recolour"), INDEX),
    st.tuples(st.just("insert_move"), INDEX, COLOUR, MOVE_VALUE),
    st.tuples(st.just("delete_move"), INDEX),
    st.tuples(
        st.just("setup"),
        st.sampled_from((b"AB", b"AW", b"AE")),
        st.sampled_from((0, 0, 1, 5)),
        st.lists(st.sampled_from(POINT_VALUES), min_size=1, max_size=4),
    ),
    st.tuples(st.just("variation"), INDEX, COLOUR, MOVE_VALUE, st.booleans()),
    st.tuples(st.just("nest"), INDEX, st.sampled_from((1, 3, 50, 2_000))),
)
WHOLE_OP = st.one_of(
    st.tuples(st.sampled_from(("utf16", "latin1_as_utf8", "bom", "crlf"))),
    st.tuples(
        st.just("concat"),
        st.booleans(),
        st.one_of(st.sampled_from(REAL), SEEDS).map(lambda seed: seed[1]),
    ),
)
HUGE_OP = st.one_of(
    st.tuples(
        st.sampled_from(("huge_comment", "huge_value", "huge_junk")), st.sampled_from(HUGE_BYTES)
    ),
    st.tuples(st.just("huge_size"), st.sampled_from((5_000, 1 << 20))),
    st.tuples(st.just("huge_passes"), st.sampled_from(HUGE_NODES)),
)
OP = weighted((1, HUGE_OP), (15, BYTES_OP), (30, PROP_OP), (44, MOVE_OP), (10, WHOLE_OP))


class Record:
    """One fuzzed SGF record: its seed, the mutations applied, and the bytes."""

    def __init__(self, seed: str, ops: tuple, data: bytes) -> None:
        self.seed, self.ops, self.data = seed, ops, data

    def __repr__(self) -> str:
        ops = tuple(tuple(a if len(repr(a)) < 60 else f"<{len(a)}>" for a in op) for op in self.ops)
        return f"Record({self.seed!r}, ops={ops!r}, {len(self.data)} bytes: {self.data[:80]!r})"


@st.composite
def records(draw, huge: bool = True) -> Record:
    name, data = draw(SEEDS)
    ops = tuple(draw(st.lists(OP, max_size=3)))
    for op in ops:
        if not huge and op[0].startswith("huge"):
            continue
        data = transform(data, op)
    return Record(name, ops, data)


# --- containers -------------------------------------------------------------------------

ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
TAR_MODES = {".tar": "w", ".tar.gz": "w:gz", ".tgz": "w:gz", ".tar.bz2": "w:bz2", ".tar.xz": "w:xz"}
MEMBER_NAMES = ("g.sgf", "2006/1/g.sgf", "G.SGF", "notes.txt", "é/ü.sgf", "\udcff\udcfe.sgf")
SMALL = 1 << 18  # records above this go in plain files only (archiving MBs is slow)


@dataclass(frozen=True)
class Case:
    """Records in a container: 'sgf' (one file), 'folder', 'zip' or 'tar', maybe damaged."""

    records: tuple[Record, ...]
    kind: str
    suffix: str  # the file suffix of the container (or of the plain file)
    method: int = 0  # zip compression
    names: tuple[str, ...] = ()  # member or file names, one per record
    damage: tuple = ()  # ("cut", frac) or ("flip", frac, xor) applied to the archive bytes


@st.composite
def cases(draw) -> Case:
    recs = tuple(draw(st.lists(records(), min_size=1, max_size=3)))
    big = [r for r in recs if len(r.data) > SMALL]
    if big:
        return Case(big[:1], "sgf", ".sgf")
    kind = draw(st.sampled_from(("sgf",) * 5 + ("zip", "zip", "tar", "tar", "folder")))
    if kind == "sgf":
        return Case(recs[:1], "sgf", draw(st.sampled_from((".sgf", ".SGF", ".txt", ""))))
    names = tuple(
        f"{i}_{draw(st.sampled_from(MEMBER_NAMES if kind == 'tar' else MEMBER_NAMES[:-1]))}"
        for i in range(len(recs))
    )
    if kind == "folder":
        return Case(recs, "folder", "", names=names)
    damage = draw(
        st.one_of(
            st.just(()),
            st.just(()),
            st.tuples(st.just("cut"), FRAC),
            st.tuples(st.just("flip"), FRAC, st.integers(1, 255)),
        )
    )
    if kind == "zip":
        return Case(recs, "zip", ".zip", draw(st.sampled_from(ZIP_METHODS)), names, damage)
    return Case(recs, "tar", draw(st.sampled_from(sorted(TAR_MODES))), 0, names, damage)


def write_case(case: Case, root: Path) -> tuple[Path, list[tuple[str, bytes]]]:
    """Write the container under root; return its path and the (source, bytes) records
    iter_games should see, in order (empty when the archive is damaged: unknown)."""
    if case.kind == "sgf":
        path = root / f"input{case.suffix}"
        path.write_bytes(case.records[0].data)
        return path, [(str(path), case.records[0].data)]
    pairs = list(zip(case.names, (r.data for r in case.records), strict=True))
    if case.kind == "folder":
        path = root / "folder"
        for name, data in pairs:
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            (path / name).write_bytes(data)
        files = sorted(path / n for n, _ in pairs if n.lower().endswith(".sgf"))
        return path, [(str(p), p.read_bytes()) for p in files]
    path = root / f"archive{case.suffix}"
    if case.kind == "zip":
        with zipfile.ZipFile(path, "w", case.method) as zf:
            for name, data in pairs:
                zf.writestr(name, data)
    else:
        with tarfile.open(path, TAR_MODES[case.suffix]) as tf:
            for name, data in pairs:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    expected = [(f"{path}:{n}", d) for n, d in pairs if n.lower().endswith(".sgf")]
    if case.damage:
        raw = path.read_bytes()
        i = int(len(raw) * case.damage[1])
        if case.damage[0] == "cut":
            raw = raw[:i]
        elif raw:
            i %= len(raw)
            raw = raw[:i] + bytes([raw[i] ^ case.damage[2]]) + raw[i + 1 :]
        path.write_bytes(raw)
        expected = []
    return path, expected


# --- the oracle: rules checked on sgfmill's board ---------------------------------------


def first_illegal(game: Game, superko: bool) -> tuple[int, str] | None:
    """(move number, why) of the first illegal move, 0 for the setup; None when all are legal.

    Rules: setup stones on distinct points, each group with a liberty; a move on an empty
    point, not suicide, not retaking a simple ko at once, and (superko) not repeating
    any earlier position (stones only; passes never repeat anything new).
    """
    board = boards.Board(game.size)
    black = [(r, c) for color, r, c in game.setup if color == BLACK]
    white = [(r, c) for color, r, c in game.setup if color == WHITE]
    if len(set(black) | set(white)) != len(game.setup):
        return 0, "two setup stones on one point"
    if not board.apply_setup(black, white, []):
        return 0, "setup stones without liberties"
    seen = {tuple(map(tuple, board.board))}
    ko = None  # (point, colour) that may not play there now
    for number, (color, move) in enumerate(game.moves, 1):
        if move is None:
            ko = None
            continue
        colour = "b" if color == BLACK else "w"
        if board.get(*move) is not None:
            return number, "occupied point"
        if ko == (move, colour):
            return number, "ko recapture"
        ko_point = board.play(move[0], move[1], colour)
        if board.get(*move) is None:
            return number, "suicide"
        position = tuple(map(tuple, board.board))
        if superko and position in seen:
            return number, "positional superko"
        seen.add(position)
        ko = None if ko_point is None else (ko_point, "w" if colour == "b" else "b")
    return None


def sgfmill_reading(data: bytes) -> tuple[list, set]:
    """Main-line moves and root setup stones as sgfmill reads them (our colour numbers)."""
    game = sgf.Sgf_game.from_bytes(data)
    color = {"b": BLACK, "w": WHITE}
    moves = [(color[c], m) for c, m in (n.get_move() for n in game.main_sequence_iter()) if c]
    black, white, _ = game.get_root().get_setup_stones()
    return moves, {(BLACK, *p) for p in black} | {(WHITE, *p) for p in white}


def predict(source: str, data: bytes, cfg: ReadConfig) -> Game | str:
    """The outcome reading one whole record must have: the game, or the skip reason."""
    try:
        game = parse_game(data, source, cfg.sizes)
    except GameError as err:
        return err.reason
    if not cfg.handicap and (game.handicap > 0 or game.setup):
        return "handicap"
    if len(game.moves) < cfg.min_moves:
        return "short"
    if first_illegal(game, cfg.superko) is not None:
        return "illegal"
    return game


# --- the properties ---------------------------------------------------------------------


@dataclass
class Tally:
    """Counts over one fuzz run, for the closing report."""

    inputs: int = 0
    records: int = 0
    inputs_with_games: int = 0
    games: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    illegal: Counter[str] = field(default_factory=Counter)  # first_illegal's why, by kind
    kinds: Counter[str] = field(default_factory=Counter)  # containers
    huge: int = 0  # cases with a record over SMALL bytes
    max_bytes: int = 0  # the largest record
    strict_errors: Counter[str] = field(default_factory=Counter)
    cli_codes: Counter[int] = field(default_factory=Counter)
    exceptions: int = 0  # anything but GameError escaping a reader: the test fails at once

    def report(self) -> str:
        return json.dumps(
            {k: dict(v) if isinstance(v, Counter) else v for k, v in vars(self).items()}
        )


def check_read(case: Case, path: Path, expected: list, cfg: ReadConfig, tally: Tally) -> ReadStats:
    """iter_games on one case: the invariants of the module docstring, non-strict and strict."""
    stats = ReadStats()
    got = list(iter_games(path, cfg, stats))
    assert set(stats.skipped) <= REASONS, stats.skipped
    assert all(len(e) < 1_000 for e in stats.errors)  # messages clipped, even for huge values
    assert stats.files == stats.games + sum(stats.skipped.values()) and stats.games == len(got)
    assert cfg.max_games is None or len(got) <= cfg.max_games
    for game in got:
        assert game.size in cfg.sizes
        assert cfg.handicap or not game.is_handicap
        assert len(game.moves) >= cfg.min_moves
        assert first_illegal(game, cfg.superko) is None, (game.source, first_illegal(game, True))
    first_failure = None  # (reason, source, games before it), when the records are known
    if not case.damage:
        want_games, want_skips = [], Counter()
        for source, data in expected if cfg.max_games != 0 else []:
            outcome = predict(source, data, cfg)
            if isinstance(outcome, str):
                want_skips[outcome] += 1
                if outcome not in FILTER_REASONS and first_failure is None:
                    first_failure = (outcome, source, len(want_games))
                if outcome == "illegal":
                    game = parse_game(data, source, cfg.sizes)
                    tally.illegal[first_illegal(game, cfg.superko)[1]] += 1
                continue
            moves, setup = sgfmill_reading(data)
            assert (outcome.moves, set(outcome.setup)) == (moves, setup), source
            want_games.append(outcome)
            if cfg.max_games is not None and len(want_games) >= cfg.max_games:
                break
        assert got == want_games
        assert stats.skipped == want_skips
    # strict: the same games up to the first failure, then that failure's GameError
    strict = ReadConfig(**{**vars(cfg), "strict": True})
    strict_got: list[Game] = []
    try:
        for game in iter_games(path, strict):
            strict_got.append(game)
    except GameError as err:
        assert err.reason in REASONS and err.reason not in FILTER_REASONS, err
        assert len(err.message) <= MAX_MESSAGE
        assert stats.skipped.keys() - set(FILTER_REASONS), "strict raised, non-strict did not skip"
        tally.strict_errors[err.reason] += 1
        if not case.damage:
            assert first_failure is not None and (err.reason, err.source) == first_failure[:2]
            assert strict_got == got[: first_failure[2]]
    else:
        assert strict_got == got
        assert not (stats.skipped.keys() - set(FILTER_REASONS))
    tally.records += stats.files
    tally.games += len(got)
    tally.inputs_with_games += bool(got)
    tally.skipped.update(stats.skipped)
    return stats


BAD_OPTIONS = {"--sizes": "25", "--min-moves": "-1", "--max-games": "-3"}


def cli_args(path: Path, cfg: ReadConfig, strict: bool, bad: str | None) -> list[str]:
    args = [str(path), "--sizes", *map(str, cfg.sizes), "--min-moves", str(cfg.min_moves)]
    if cfg.max_games is not None:
        args += ["--max-games", str(cfg.max_games)]
    args += ["--no-handicap"] * (not cfg.handicap) + ["--no-superko"] * (not cfg.superko)
    args += ["--strict"] * strict
    if bad is not None:
        args += [bad, BAD_OPTIONS[bad]]
    return args


def run_main(args: list[str]) -> tuple[int, str, str]:
    """gomove.cli.data.main with a strict UTF-8 stdout (a terminal that rejects bad text)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    with redirect_stdout(out), redirect_stderr(err):
        code = main(args)
    out.flush()
    err.flush()
    return code, out.buffer.getvalue().decode(), err.buffer.getvalue().decode()


def check_cli(path: Path, cfg: ReadConfig, stats: ReadStats, strict: bool, bad, tally) -> None:
    """main's exit code, and its JSON line equal to the summary of the same read."""
    code, out, err = run_main(cli_args(path, cfg, strict, bad))
    tally.cli_codes[code] += 1
    failed = bool(stats.skipped.keys() - set(FILTER_REASONS))
    if bad is not None:
        assert code == 2 and "error:" in err
    elif strict and failed:
        assert code == 1 and "error:" in err
    else:
        assert code == 0, err
        assert json.loads(out.strip().splitlines()[-1]) == stats.summary()


CONFIGS = st.builds(
    ReadConfig,
    sizes=st.sampled_from((tuple(range(2, 20)),) * 6 + ((19,), (9, 13, 19), (9,), (2, 3, 4, 5))),
    handicap=st.sampled_from((True, True, False)),
    min_moves=st.sampled_from((0, 0, 0, 1, 10, 60)),
    max_games=st.sampled_from((None,) * 6 + (0, 1, 2)),
    superko=st.sampled_from((True, True, False)),
)
CLI_OPTIONS = st.tuples(st.booleans(), st.sampled_from((None,) * 30 + tuple(BAD_OPTIONS)))


def check_case(case: Case, cfg: ReadConfig, cli: tuple, tally: Tally) -> None:
    tally.inputs += 1
    tally.kinds[case.kind + ("/damaged" if case.damage else "")] += 1
    sizes = [len(r.data) for r in case.records]
    tally.huge += max(sizes) > SMALL
    tally.max_bytes = max(tally.max_bytes, *sizes)
    with tempfile.TemporaryDirectory() as tmp:
        path, expected = write_case(case, Path(tmp))
        try:
            stats = check_read(case, path, expected, cfg, tally)
            check_cli(path, cfg, stats, *cli, tally)
        except AssertionError:
            raise
        except Exception:
            tally.exceptions += 1
            raise


def run_fuzz(n: int) -> Tally:
    tally = Tally()

    @settings(SUITE, max_examples=n)
    @given(case=cases(), cfg=CONFIGS, cli=CLI_OPTIONS)
    def fuzz(case: Case, cfg: ReadConfig, cli: tuple) -> None:
        check_case(case, cfg, cli, tally)

    fuzz()
    return tally


def test_reasons_are_documented() -> None:
    """Every skip reason the fuzz accepts is named in a reading module's docstring."""
    docs = sgf_module.__doc__ + games_module.__doc__
    assert all(f"``{reason}``" in docs for reason in REASONS)


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("data", HANDMADE)
def test_handmade_seeds(data: bytes, strict: bool) -> None:
    """Every hand-made oddity, unmutated, through the same checks (random draws may miss one)."""
    case = Case((Record("handmade", (), data),), "sgf", ".sgf")
    check_case(case, ReadConfig(sizes=tuple(range(2, 20))), (strict, None), Tally())


def test_fuzz_read_and_cli() -> None:
    """FAST_EXAMPLES cases through iter_games (strict and not) and the CLI; see the module doc."""
    t0 = time.perf_counter()
    tally = run_fuzz(FAST_EXAMPLES)
    assert tally.inputs >= FAST_EXAMPLES and tally.exceptions == 0
    print(f"\nfuzz: {time.perf_counter() - t0:.1f} s {tally.report()}")


@pytest.mark.slow
def test_fuzz_read_and_cli_full() -> None:
    """The full SLOW_EXAMPLES (10,000) cases; prints the tally for the closing report."""
    t0 = time.perf_counter()
    tally = run_fuzz(SLOW_EXAMPLES)
    assert tally.inputs >= SLOW_EXAMPLES and tally.exceptions == 0
    print(f"\nfuzz: {time.perf_counter() - t0:.1f} s {tally.report()}")


# --- real processes ---------------------------------------------------------------------


def run_module(args: list[str]) -> subprocess.CompletedProcess:
    # PYTHONIOENCODING=utf-8: a strict stdout, as on a UTF-8 terminal
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    cmd = [sys.executable, "-m", "gomove.cli", "data", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, errors="replace")


def check_subprocess(recs: list[Record], tmp: Path) -> None:
    folder = tmp / "folder"
    folder.mkdir()
    for i, rec in enumerate(recs):
        (folder / f"{i:02d}.sgf").write_bytes(rec.data)
    with tarfile.open(folder / "named.tar", "w") as tf:
        for i, rec in enumerate(recs[:3]):
            info = tarfile.TarInfo(f"\udcff{i}.sgf")  # a member name that is not UTF-8
            info.size = len(rec.data)
            tf.addfile(info, io.BytesIO(rec.data))
    sizes = ["--sizes", *map(str, range(2, 20))]
    stats = ReadStats()
    list(iter_games(folder, ReadConfig(sizes=tuple(range(2, 20))), stats))
    done = run_module([str(folder), *sizes])
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == stats.summary()
    done = run_module([str(folder), *sizes, "--strict"])
    failed = bool(stats.skipped.keys() - set(FILTER_REASONS))
    assert done.returncode == (1 if failed else 0) and "Traceback" not in done.stderr, done.stderr


@settings(SUITE, max_examples=2)
@given(recs=st.lists(records(huge=False), min_size=12, max_size=12))
def test_fuzz_python_dash_m(recs: list[Record]) -> None:
    """``gomove data`` on a folder of fuzzed records (and a tar of them with
    non-UTF-8 member names): exit 0 with the JSON summary iter_games gives, exit 0 or 1
    under --strict, never a traceback."""
    with tempfile.TemporaryDirectory() as tmp:
        check_subprocess(recs, Path(tmp))
