"""gomove.reading.sgf: SGF records -> Game, and GameError for every kind of bad record.

Fixtures are the hand-made files in tests/fixtures/ (see test_games.py for replays)."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest
from sgfmill import sgf, sgf_moves

from gomove.board.board import BLACK, WHITE
from gomove.reading.sgf import MAX_MESSAGE, Game, GameError, parse_game

FIXTURES = Path(__file__).parent / "fixtures"
VALID = ["game9.sgf", "game19.sgf", "handicap19.sgf", "ko9.sgf", "pass9.sgf", "short9.sgf"]
COLOR = {"b": BLACK, "w": WHITE}


def read(name: str, **kw) -> Game:
    return parse_game((FIXTURES / name).read_bytes(), name, **kw)


@pytest.mark.parametrize("name", VALID + ["superko9.sgf"])
def test_moves_and_setup_match_sgfmill(name: str) -> None:
    """Every main-line move and setup stone equals sgfmill's own reading, colour for colour."""
    game = read(name)
    ref = sgf.Sgf_game.from_bytes((FIXTURES / name).read_bytes())
    board, moves = sgf_moves.get_setup_and_moves(ref)
    assert game.moves == [(COLOR[c], m) for c, m in moves]
    setup = {(COLOR[c], r, col) for c, (r, col) in board.list_occupied_points()}
    assert set(game.setup) == setup
    assert game.size == ref.get_size()
    assert game.source == name


def test_root_properties() -> None:
    """Size, komi, ranks, date, result and UTF-8 names come from the root; no handicap."""
    game = read("game19.sgf")
    assert (game.size, game.komi, game.handicap, game.setup) == (19, 6.5, 0, [])
    assert (game.black_rank, game.white_rank) == ("9d", "9d")
    assert (game.result, game.date) == ("W+2.5", "2006-01-01")
    assert (game.black, game.white) == ("이세돌 (lee)", "古力 (gu)")
    assert game.moves[0] == (BLACK, (15, 15))  # B[pd]: column p, fourth line from the top
    assert len(game.moves) == 20
    assert game.first_color == BLACK and not game.is_handicap


def test_handicap_game() -> None:
    """HA[4] with AB stones: four sorted black setup stones, white moves first."""
    game = read("handicap19.sgf")
    assert game.handicap == 4 and game.is_handicap
    assert game.setup == [(BLACK, 3, 3), (BLACK, 3, 15), (BLACK, 15, 3), (BLACK, 15, 15)]
    assert game.first_color == WHITE
    assert (game.komi, game.black_rank, game.white_rank) == (0.5, "3k", "2d")


def test_handicap_inferred_from_ab_without_ha() -> None:
    """Without HA, black-only setup stones count as the handicap; with AW they do not."""
    black_only = parse_game(b"(;SZ[9]AB[cc][gg];W[ee])", "x")
    assert black_only.handicap == 2 and black_only.first_color == WHITE
    mixed = parse_game(b"(;SZ[9]AB[cc]AW[gg];B[ee])", "y")
    assert mixed.handicap == 0 and mixed.is_handicap
    assert mixed.setup == [(BLACK, 6, 2), (WHITE, 2, 6)]


def test_passes_and_main_line_only() -> None:
    """Both pass forms (empty value, tt on boards up to 19) are None; variations are ignored."""
    game = read("pass9.sgf")
    assert game.moves[3] == (WHITE, None) and game.moves[6] == (BLACK, None)
    assert game.passes == 2
    assert len(game.moves) == 10
    assert game.moves[-1] == (WHITE, (2, 5))  # W[fg] of the first variation


def test_defaults_when_root_is_bare() -> None:
    """No SZ means 19, no KM means komi 0, missing text properties are None."""
    game = parse_game(b"(;;B[pd];W[dp])", "bare")
    assert (game.size, game.komi, game.handicap) == (19, 0.0, 0)
    assert game.result is game.black_rank is game.date is game.black is None
    assert game.moves == [(BLACK, (15, 15)), (WHITE, (3, 3))]


def test_game_is_frozen() -> None:
    game = read("game9.sgf")
    with pytest.raises(dataclasses.FrozenInstanceError):
        game.size = 13  # type: ignore[misc]


BAD = [
    ("bad_parse.sgf", "parse", None),
    ("bad_truncated.sgf", "parse", None),
    ("bad_encoding.sgf", "encoding", None),
    ("bad_charset.sgf", "encoding", None),
    ("bad_size7.sgf", "size", None),
    ("bad_size25.sgf", "size", None),
    ("bad_offboard.sgf", "move", 2),
    ("bad_movevalue.sgf", "move", 3),
    ("bad_setup.sgf", "setup", 3),
]


@pytest.mark.parametrize(("name", "reason", "move_number"), BAD)
def test_bad_records_raise_with_reason(name: str, reason: str, move_number: int | None) -> None:
    """Each bad kind raises GameError with its reason, source and (for moves) move number."""
    with pytest.raises(GameError) as info:
        read(name)
    err = info.value
    assert (err.reason, err.source, err.move_number) == (reason, name, move_number)
    assert name in str(err) and reason in str(err)
    if move_number is not None:
        assert f"move {move_number}" in str(err)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "parse"),
        (b"(;SZ[19:13];B[aa])", "size"),
        (b"(;SZ[big];B[aa])", "size"),
        (b"(;SZ[19]KM[six];B[aa])", "parse"),
        (b"(;SZ[9]AB[zz];B[aa])", "setup"),
        (b"(;SZ[9]CA[UTF-8]RE[\xc3];B[aa])", "encoding"),
        (b"(;SZ[9]PB[a][b];B[aa])", "parse"),  # found by test_sgf_fuzz.py: ValueError
        (b"(;SZ[9]RE[B+R]RE[W+R];B[aa])", "parse"),
        (b"(;SZ[9]KM[6.5][7.5];B[aa])", "parse"),
    ],
)
def test_other_bad_roots(data: bytes, reason: str) -> None:
    """Empty data, rectangular or non-numeric SZ, bad KM, off-board AB, bad bytes in RE,
    several values of a one-value property."""
    with pytest.raises(GameError) as info:
        parse_game(data, "inline")
    assert info.value.reason == reason


@pytest.mark.parametrize(
    "data",
    [
        b"(;SZ[9]CA[hex]RE[W+R];B[ee])",  # a binary codec: LookupError when decoding
        b"(;SZ[9]CA[rot13]PB[Lee];B[ee])",
        b"(;SZ[9]CA[UTF-16]PB[Lee];B[ee])",  # the error message decoded CA[] with UTF-16
        b"(;SZ[9]CA[utf-32]DT[\xff];B[ee])",
        b"(;SZ[9]CA[undefined]PB[Lee];B[ee])",  # UnicodeError, not UnicodeDecodeError
        b"(;SZ[9]CA[idna]PB[xn--zz];B[ee])",
    ],
)
def test_charsets_that_cannot_be_an_sgf_files(data: bytes) -> None:
    """Codecs that are no text charset, or do not read ASCII as ASCII: 'encoding' (found by
    tests/test_sgf_fuzz.py; these raised LookupError, ValueError or UnicodeError)."""
    with pytest.raises(GameError) as info:
        parse_game(data, "inline")
    assert info.value.reason == "encoding"


@pytest.mark.parametrize("charset", ["GB2312", "Big5", "Shift_JIS", "EUC-KR", "UTF-8", "hz"])
def test_cjk_charsets_are_read(charset: str) -> None:
    """The charsets real Go servers write read their names."""
    name = "李" if charset != "EUC-KR" else "이"
    data = b"(;SZ[9]CA[%s]PB[%s];B[ee])" % (charset.encode(), name.encode(charset))
    assert parse_game(data, "cjk").black == name


@pytest.mark.parametrize("prop", [b"SZ[%s]", b"KM[%s]", b"CA[%s]", b"SZ[9];B[%s]"])
def test_error_messages_are_clipped(prop: bytes) -> None:
    """A megabyte value is quoted in at most MAX_MESSAGE characters, and pickling keeps the
    clipped message (found by tests/test_sgf_fuzz.py: 1 MB messages, kept in ReadStats.errors
    and printed by gomove data)."""
    with pytest.raises(GameError) as info:
        parse_game(b"(;" + prop % (b"9" * (1 << 20) + b"x") + b")", "huge", sizes=None)
    err = info.value
    assert len(err.message) == MAX_MESSAGE and err.message.endswith(" characters)")
    assert pickle.loads(pickle.dumps(err)).message == err.message


def test_latin1_is_the_default_charset() -> None:
    """Without CA[], bytes are ISO-8859-1 (the SGF default), so any byte decodes."""
    game = parse_game(b"(;SZ[9]PB[J\xf6rg];B[ee])", "latin1")
    assert game.black == "Jörg"


def test_sizes_parameter() -> None:
    """Allowed sizes are a parameter; None allows anything sgfmill reads."""
    assert read("bad_size7.sgf", sizes=(7,)).size == 7
    assert read("bad_size25.sgf", sizes=None).size == 25
    with pytest.raises(GameError, match="SZ\\[19\\] is not one of 9"):
        read("game19.sgf", sizes=(9,))


def test_game_error_pickles() -> None:
    """GameError survives pickling (worker processes) with all its fields."""
    err = GameError("illegal", "a.zip:b.sgf", 7, "occupied point")
    back = pickle.loads(pickle.dumps(err))
    assert (back.reason, back.source, back.move_number, back.message) == (
        "illegal",
        "a.zip:b.sgf",
        7,
        "occupied point",
    )
    assert str(back) == "a.zip:b.sgf: move 7: illegal: occupied point"
