"""SGF game records -> Game: the main line of one SGF file, read through sgfmill.

Terms:
- Game: what a trainer needs from one record (size, komi, handicap setup stones,
  the main line's moves, result, ranks), in sgfmill coordinates: (row, col) with
  row 0 at the bottom, None for a pass; colours BLACK = 1, WHITE = 2.
- move number: 1-based index into ``Game.moves`` (move 1 is the first B/W node);
  0 names the setup stones.
- GameError: why one record cannot be used, as a short ``reason``:
  ``parse`` (not SGF; or KM, HA, RE, PB, ... malformed or given several values),
  ``encoding`` (a CA[] charset that is unknown or that no SGF file can be written
  in, being no text encoding or not reading ASCII as ASCII, like UTF-16; or bytes
  the charset cannot decode in the root properties read here), ``size`` (SZ[]
  missing from the allowed sizes, or not a number), ``move`` (a move value off the
  board or malformed), ``setup`` (a bad AB/AW value, or setup stones after the root).
  gomove.reading.games adds ``illegal``, ``read`` and the filter reasons.

This module checks only the record's form; the rules (occupied points, suicide,
ko) are gomove.board's job.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sgfmill import sgf, sgf_grammar, sgf_properties

from gomove.board.board import BLACK, WHITE
from gomove.board.coords import SUPPORTED_SIZES

Point = tuple[int, int]
Move = tuple[int, Point | None]

# sgfmill interprets move values only up to 26x26 (letters a-z).
SGFMILL_MAX_SIZE = 26
_COLORS = {"b": BLACK, "w": WHITE}
# a GameError message quotes values from the record, which can be megabytes long
MAX_MESSAGE = 200
# SGF's own syntax is ASCII, so a record's charset must read these bytes unchanged
_ASCII_PROBE = b"(;GM[1]SZ[19]PB[Lee Sedol 9d]RE[W+2.5];B[pd]) 0123456789 xyz XYZ .,:-_"


class GameError(ValueError):
    """One record that cannot be used; ``reason`` is the short key counted in stats."""

    def __init__(
        self, reason: str, source: str, move_number: int | None = None, message: str = ""
    ) -> None:
        message = _clip(message)
        # args mirror the signature so the error pickles (worker processes)
        super().__init__(reason, source, move_number, message)
        self.reason = reason
        self.source = source
        self.move_number = move_number
        self.message = message

    def __str__(self) -> str:
        where = self.source
        if self.move_number is not None:
            where += f": move {self.move_number}"
        return f"{where}: {self.reason}" + (f": {self.message}" if self.message else "")


def _clip(message: str) -> str:
    """At most MAX_MESSAGE characters (and unchanged when clipped again)."""
    if len(message) <= MAX_MESSAGE:
        return message
    tail = f"... ({len(message)} characters)"
    return message[: MAX_MESSAGE - len(tail)] + tail


@dataclass(frozen=True)
class Game:
    """One game's main line; moves alternate in real games, but nothing here assumes it."""

    source: str  # file name, or "archive.zip:member"
    size: int
    komi: float
    handicap: int  # HA[], or the count of AB stones when HA is absent and there is no AW
    setup: list[tuple[int, int, int]]  # (color, row, col) from the root's AB/AW
    moves: list[Move]  # (color, (row, col) or None for a pass)
    result: str | None = None
    black_rank: str | None = None
    white_rank: str | None = None
    date: str | None = None
    black: str | None = None  # player names
    white: str | None = None

    @property
    def first_color(self) -> int:
        """The colour of the first move (white after handicap stones when there is none)."""
        if self.moves:
            return self.moves[0][0]
        return WHITE if self.is_handicap else BLACK

    @property
    def is_handicap(self) -> bool:
        """Handicap or any other setup stones: the game does not start from an empty board."""
        return self.handicap > 0 or bool(self.setup)

    @property
    def passes(self) -> int:
        return sum(1 for _, move in self.moves if move is None)


def parse_game(data: bytes, source: str, sizes: Collection[int] | None = SUPPORTED_SIZES) -> Game:
    """Read the main line of the first game in ``data``; GameError when it cannot be used.

    ``sizes=None`` allows any size sgfmill reads (1..26).
    """
    try:
        coarse = sgf_grammar.parse_sgf_game(data)
    except ValueError as e:
        raise GameError("parse", source, None, str(e)) from e
    size = _size(coarse.sequence[0], source)
    if sizes is not None and size not in sizes:
        allowed = ", ".join(str(s) for s in sorted(sizes))
        raise GameError("size", source, None, f"SZ[{size}] is not one of {allowed}")
    try:
        # a bad SZ was caught above, so what is left is the CA[] charset
        game = sgf.Sgf_game.from_coarse_game_tree(coarse)
    except ValueError as e:
        raise GameError("encoding", source, None, str(e)) from e
    charset = _charset(game, source)
    root = game.get_root()
    komi = _root_value(root, "KM", 0.0, source)
    setup = _setup(root, source)
    handicap = int(_root_value(root, "HA", 0, source))
    if "HA" not in root.get_raw_property_map() and not any(c == WHITE for c, _, _ in setup):
        handicap = len(setup)
    text = {
        ident: _text(root, ident, charset, source) for ident in ("RE", "BR", "WR", "DT", "PB", "PW")
    }
    return Game(
        source=source,
        size=size,
        komi=float(komi),
        handicap=handicap,
        setup=setup,
        moves=_moves(game, size, source),
        result=text["RE"],
        black_rank=text["BR"],
        white_rank=text["WR"],
        date=text["DT"],
        black=text["PB"],
        white=text["PW"],
    )


def _size(root_props: dict[str, list[bytes]], source: str) -> int:
    raw = root_props.get("SZ", [b"19"])[0]
    try:
        size = int(raw)
    except ValueError:
        # covers rectangular boards, SZ[19:13]
        raise GameError("size", source, None, f"bad SZ[{raw.decode('ascii', 'replace')}]") from None
    if not 1 <= size <= SGFMILL_MAX_SIZE:
        raise GameError("size", source, None, f"SZ[{size}] is out of range")
    return size


def _charset(game: sgf.Sgf_game, source: str) -> str:
    """The record's charset (normalised name), when it is one an SGF file can be written in.

    sgfmill accepts any Python codec name: binary codecs (hex, rot13) then raise
    LookupError when text is decoded, and UTF-16 turns ASCII text into CJK.
    """
    charset = game.presenter.encoding
    try:
        ok = _ASCII_PROBE.decode(charset) == _ASCII_PROBE.decode("ascii")
    except (UnicodeError, LookupError):
        ok = False
    if not ok:
        raise GameError("encoding", source, None, f"CA[{charset}] does not read ASCII as ASCII")
    return charset


def _root_value(root: sgf.Tree_node, ident: str, default: float, source: str) -> float:
    """A numeric root property (KM, HA); malformed values make the record unusable."""
    try:
        return root.get(ident)
    except KeyError:
        return default
    except ValueError as e:
        raise GameError("parse", source, None, f"bad {ident}[]: {e}") from e


def _text(root: sgf.Tree_node, ident: str, charset: str, source: str) -> str | None:
    """A text root property (RE, PB, ...), None when absent or blank."""
    try:
        return root.get(ident).strip() or None
    except KeyError:
        return None
    except UnicodeError as e:  # UnicodeDecodeError, or a codec's own (idna: xn--zz)
        raise GameError("encoding", source, None, f"{ident}[]: {e} (CA[{charset}])") from e
    except ValueError as e:  # PB[a][b] or PB[a]PB[b]: several values where SGF allows one
        raise GameError("parse", source, None, f"bad {ident}[]: {e}") from e


def _setup(root: sgf.Tree_node, source: str) -> list[tuple[int, int, int]]:
    """AB/AW stones, sorted (sgfmill gives sets) so that replays are deterministic."""
    try:
        black, white, _ = root.get_setup_stones()
    except ValueError as e:
        raise GameError("setup", source, 0, f"bad AB/AW value: {e}") from e
    return [(BLACK, r, c) for r, c in sorted(black)] + [(WHITE, r, c) for r, c in sorted(white)]


def _moves(game: sgf.Sgf_game, size: int, source: str) -> list[Move]:
    """B/W values of the main line, the root's included (as sgf_moves.get_setup_and_moves)."""
    moves: list[Move] = []
    for i, node in enumerate(game.main_sequence_iter()):
        if i > 0 and node.has_setup_stones():
            raise GameError("setup", source, len(moves) + 1, "AB/AW/AE after the root node")
        colour, raw = node.get_raw_move()
        if colour is None:
            continue
        try:
            point = sgf_properties.interpret_go_point(raw, size)
        except ValueError:
            value = f"{colour.upper()}[{raw.decode('ascii', 'replace')}]"
            message = f"{value} is not a point of a {size}x{size} board"
            raise GameError("move", source, len(moves) + 1, message) from None
        moves.append((_COLORS[colour], point))
    return moves
