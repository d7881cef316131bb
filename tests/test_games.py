"""gomove.reading.games and its CLI: every input kind, skips by reason, filters, strict mode,
replays checked against sgfmill's board, and the summary the CLI prints."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from sgfmill import boards, sgf, sgf_moves

from gomove.board.board import BLACK, WHITE
from gomove.board.coords import to_loc
from gomove.cli.data import main
from gomove.reading.games import (
    FILTER_REASONS,
    MAX_ERRORS,
    ReadConfig,
    ReadStats,
    expand_paths,
    iter_games,
    load_game,
    rank_key,
    replay_game,
)
from gomove.reading.sgf import GameError, parse_game

FIXTURES = Path(__file__).parent / "fixtures"
DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
VALID = ["game19.sgf", "game9.sgf", "handicap19.sgf", "ko9.sgf", "pass9.sgf", "short9.sgf"]
ALL = sorted(p.name for p in FIXTURES.glob("*.sgf"))
# what reading every fixture with sizes (9, 19) must count
EXPECTED_SKIPS = {"encoding": 2, "illegal": 4, "move": 2, "parse": 2, "setup": 1, "size": 2}
NINE_NINETEEN = ReadConfig(sizes=(9, 19))


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def sources(games) -> list[str]:
    return [g.source for g in games]


def make_zip(path: Path, names: list[str], prefix: str = "") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in names:
            zf.writestr(prefix + name, fixture_bytes(name))
    return path


def make_tar(path: Path, names: list[str], mode: str, prefix: str = "") -> Path:
    with tarfile.open(path, mode) as tf:
        for name in names:
            tf.add(FIXTURES / name, arcname=prefix + name)
    return path


# --- input kinds ------------------------------------------------------------


@pytest.mark.parametrize(
    ("suffix", "mode"),
    [(".tar", "w"), (".tar.gz", "w:gz"), (".tgz", "w:gz"), (".tar.bz2", "w:bz2")],
)
def test_tar_archives(tmp_path: Path, suffix: str, mode: str) -> None:
    """KGS layout (folders of .sgf in a tar): member order kept, sources 'archive:member'."""
    names = ["pass9.sgf", "game9.sgf", "game19.sgf"]  # deliberately not sorted
    path = make_tar(tmp_path / f"kgs{suffix}", names, mode, prefix="2006/1/")
    games = list(iter_games(path, NINE_NINETEEN))
    assert sources(games) == [f"{path}:2006/1/{n}" for n in names]
    assert [g.moves for g in games] == [parse_game(fixture_bytes(n), n).moves for n in names]


def test_zip_keeps_namelist_order_and_ignores_other_members(tmp_path: Path) -> None:
    """Zip members are read in namelist order; folders and non-.sgf members are not records."""
    names = ["short9.sgf", "game9.sgf", "ko9.sgf"]
    path = make_zip(tmp_path / "month.zip", names)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("README.txt", "not a game")
        zf.writestr("sub/", "")
    stats = ReadStats()
    games = list(iter_games(path, NINE_NINETEEN, stats))
    assert sources(games) == [f"{path}:{n}" for n in names]
    assert stats.files == 3 and stats.games == 3


def test_nested_folder_sorted(tmp_path: Path) -> None:
    """A folder is read recursively in sorted order, archives inside it included."""
    (tmp_path / "b" / "c").mkdir(parents=True)
    (tmp_path / "a").mkdir()
    for rel, name in [("b/c/z.sgf", "game9.sgf"), ("a/y.sgf", "ko9.sgf"), ("x.SGF", "pass9.sgf")]:
        (tmp_path / rel).write_bytes(fixture_bytes(name))
    (tmp_path / "b" / "notes.txt").write_text("ignored")
    make_zip(tmp_path / "b" / "d.zip", ["game19.sgf"])
    games = list(iter_games(tmp_path, NINE_NINETEEN))
    expected = ["a/y.sgf", "b/c/z.sgf", "b/d.zip:game19.sgf", "x.SGF"]
    assert sources(games) == [str(tmp_path / e) for e in expected]


def test_single_file_list_and_glob(tmp_path: Path) -> None:
    """A single path, a list (kept in the given order) and a glob string all work."""
    z1 = make_zip(tmp_path / "m1.zip", ["game9.sgf"])
    z2 = make_zip(tmp_path / "m2.zip", ["ko9.sgf", "pass9.sgf"])
    one = FIXTURES / "game19.sgf"
    assert sources(iter_games(one, NINE_NINETEEN)) == [str(one)]
    listed = sources(iter_games([z2, str(one), z1], NINE_NINETEEN))
    assert listed == [f"{z2}:ko9.sgf", f"{z2}:pass9.sgf", str(one), f"{z1}:game9.sgf"]
    globbed = sources(iter_games(str(tmp_path / "m*.zip"), NINE_NINETEEN))
    assert globbed == [f"{z1}:game9.sgf", f"{z2}:ko9.sgf", f"{z2}:pass9.sgf"]


def test_missing_inputs_fail_at_once(tmp_path: Path) -> None:
    """A mistyped path or a glob matching nothing raises when iter_games is called."""
    with pytest.raises(FileNotFoundError):
        iter_games(tmp_path / "nope.zip")
    with pytest.raises(FileNotFoundError, match="no file matches"):
        expand_paths(str(tmp_path / "*.tgz"))


def test_unreadable_archives_are_skips(tmp_path: Path) -> None:
    """A corrupt zip, a truncated tar.gz: one 'read' skip each, the run goes on."""
    (tmp_path / "a_bad.zip").write_bytes(b"PK\x03\x04 garbage")
    good = make_tar(tmp_path / "b.tar.gz", ["game9.sgf", "ko9.sgf"], "w:gz")
    (tmp_path / "c_cut.tar.gz").write_bytes(good.read_bytes()[:60])
    stats = ReadStats()
    games = list(iter_games(tmp_path, NINE_NINETEEN, stats))
    assert len(games) == 2
    assert stats.skipped == {"read": 2}
    with pytest.raises(GameError) as info:
        list(iter_games(tmp_path / "a_bad.zip", ReadConfig(strict=True)))
    assert info.value.reason == "read"


def test_damaged_lzma_zip_member_is_a_read_skip(tmp_path: Path) -> None:
    """A corrupt LZMA-compressed zip member: one 'read' skip, the next member still read
    (found by tests/test_sgf_fuzz.py: lzma.LZMAError escaped)."""
    path = tmp_path / "lzma.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_LZMA) as zf:
        zf.writestr("a.sgf", fixture_bytes("game19.sgf"))
        zf.writestr("b.sgf", fixture_bytes("game9.sgf"))
    raw = bytearray(path.read_bytes())
    raw[50] ^= 1  # inside a.sgf's compressed data (its local header is 30 + 5 bytes)
    path.write_bytes(bytes(raw))
    stats = ReadStats()
    games = list(iter_games(path, NINE_NINETEEN, stats))
    assert sources(games) == [f"{path}:b.sgf"] and stats.skipped == {"read": 1}


def test_zip_member_name_not_utf8_is_a_read_skip(tmp_path: Path) -> None:
    """A zip name flagged UTF-8 whose bytes are not: in a member's own header, one 'read'
    skip and the next member read; in the central directory, the archive is one 'read' skip
    (found by tests/test_sgf_fuzz.py: UnicodeDecodeError escaped)."""
    path = tmp_path / "names.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("é.sgf", fixture_bytes("game9.sgf"))
        zf.writestr("b.sgf", fixture_bytes("ko9.sgf"))
    good = path.read_bytes()
    local, central = good.index("é".encode()), good.rindex("é".encode())
    assert local == 30 and central > local
    for pos, expect in [(local, [f"{path}:b.sgf"]), (central, [])]:
        path.write_bytes(good[:pos] + b"\xff" + good[pos + 1 :])
        stats = ReadStats()
        assert sources(iter_games(path, NINE_NINETEEN, stats)) == expect
        assert stats.skipped == {"read": 1}


# --- bad records, strict mode, filters --------------------------------------


def test_every_bad_kind_skipped_and_counted() -> None:
    """Reading all fixtures yields the valid games only and counts each skip by its reason."""
    stats = ReadStats()
    games = list(iter_games(FIXTURES, NINE_NINETEEN, stats))
    assert sorted(Path(g.source).name for g in games) == sorted(VALID)
    assert stats.skipped == EXPECTED_SKIPS
    assert stats.files == len(ALL) == stats.games + sum(stats.skipped.values())
    assert stats.positions == sum(len(g.moves) for g in games)
    assert stats.passes == 2
    assert stats.sizes == {9: 4, 19: 2}
    assert stats.handicap == {0: 5, 4: 1}
    assert stats.ranks == {"9d": 2, "1k": 1, "2k": 1, "3k": 1, "2d": 1}
    failures = sum(n for r, n in EXPECTED_SKIPS.items() if r not in FILTER_REASONS)
    assert len(stats.errors) == min(failures, MAX_ERRORS)
    assert any("bad_ko9.sgf: move 9: illegal" in e for e in stats.errors)


@pytest.mark.parametrize(
    ("name", "why", "move_number"),
    [
        ("bad_occupied.sgf", "occupied point", 5),
        ("bad_suicide.sgf", "suicide", 4),
        ("bad_ko9.sgf", "ko recapture", 9),
        ("superko9.sgf", "positional superko", 14),
    ],
)
def test_strict_raises_with_file_and_move(
    tmp_path: Path, name: str, why: str, move_number: int
) -> None:
    """strict=True: the first illegal move raises, naming the archive member and move number."""
    path = make_zip(tmp_path / "games.zip", ["game9.sgf", name])
    games = iter_games(path, ReadConfig(sizes=(9,), strict=True))
    assert next(games).source.endswith("game9.sgf")
    with pytest.raises(GameError) as info:
        next(games)
    err = info.value
    assert (err.reason, err.source, err.move_number) == ("illegal", f"{path}:{name}", move_number)
    assert why in str(err) and f"{path}:{name}: move {move_number}" in str(err)


def test_strict_raises_for_malformed_moves() -> None:
    with pytest.raises(GameError) as info:
        list(iter_games(FIXTURES / "bad_offboard.sgf", ReadConfig(sizes=(9,), strict=True)))
    assert (info.value.reason, info.value.move_number) == ("move", 2)


def test_strict_does_not_raise_for_filters() -> None:
    """Filters are choices, not bad input: strict mode still just counts them."""
    cfg = ReadConfig(sizes=(19,), min_moves=15, handicap=False, strict=True)
    stats = ReadStats()
    names = ["game9.sgf", "handicap19.sgf", "game19.sgf", "bad_size25.sgf"]
    games = list(iter_games([FIXTURES / n for n in names], cfg, stats))
    assert [Path(g.source).name for g in games] == ["game19.sgf"]
    assert stats.skipped == {"size": 2, "handicap": 1}


@pytest.mark.parametrize(
    ("cfg", "kept", "skipped"),
    [
        (ReadConfig(sizes=(19,)), ["game19.sgf", "handicap19.sgf"], {"size": 4}),
        (ReadConfig(sizes=(9, 19), handicap=False), VALID[:2] + VALID[3:], {"handicap": 1}),
        (
            ReadConfig(sizes=(9,), min_moves=5),
            ["game9.sgf", "ko9.sgf", "pass9.sgf"],
            {"size": 2, "short": 1},
        ),
        (
            ReadConfig(sizes=(9,), min_moves=3),
            ["game9.sgf", "ko9.sgf", "pass9.sgf", "short9.sgf"],
            {"size": 2},
        ),
    ],
)
def test_filters(cfg: ReadConfig, kept: list[str], skipped: dict[str, int]) -> None:
    """size, handicap and min_moves (passes count) filters, each counted under its reason."""
    stats = ReadStats()
    games = list(iter_games([FIXTURES / n for n in VALID], cfg, stats))
    assert sorted(Path(g.source).name for g in games) == sorted(kept)
    assert stats.skipped == skipped


def test_max_games_counts_yielded_games(tmp_path: Path) -> None:
    """max_games stops after that many games, skips not counted, without reading further."""
    path = make_zip(tmp_path / "g.zip", ["bad_parse.sgf", "game9.sgf", "ko9.sgf", "pass9.sgf"])
    stats = ReadStats()
    games = list(iter_games(path, ReadConfig(sizes=(9,), max_games=2), stats))
    assert sources(games) == [f"{path}:game9.sgf", f"{path}:ko9.sgf"]
    assert (stats.files, stats.games, stats.skipped) == (3, 2, {"parse": 1})
    assert list(iter_games(path, ReadConfig(sizes=(9,), max_games=0))) == []


def test_superko_switch() -> None:
    """A positional-superko repetition is illegal with superko=True and legal without."""
    path = FIXTURES / "superko9.sgf"
    assert list(iter_games(path, ReadConfig(sizes=(9,)))) == []
    (game,) = iter_games(path, ReadConfig(sizes=(9,), superko=False))
    assert len(game.moves) == 14


def test_config_validation() -> None:
    with pytest.raises(ValueError):
        ReadConfig(sizes=(25,))
    with pytest.raises(ValueError):
        ReadConfig(sizes=())
    with pytest.raises(ValueError):
        ReadConfig(min_moves=-1)


# --- replay against sgfmill --------------------------------------------------


@pytest.mark.parametrize("name", VALID)
def test_replay_matches_sgfmill_board(name: str) -> None:
    """After setup stones (handicap) and every move, each point's colour equals sgfmill's board."""
    game = parse_game(fixture_bytes(name), name)
    b = replay_game(game)
    ref_board, moves = sgf_moves.get_setup_and_moves(sgf.Sgf_game.from_bytes(fixture_bytes(name)))
    for colour, move in moves:
        if move is not None:
            ref_board.play(move[0], move[1], colour)
    expect_color = {None: 0, "b": BLACK, "w": WHITE}
    for row in range(game.size):
        for col in range(game.size):
            got = int(b.color[to_loc(row, col, game.size)])
            assert got == expect_color[ref_board.get(row, col)], (name, row, col)


def test_handicap_stones_placed_before_the_first_move() -> None:
    """The four AB stones stand on the board exactly as on sgfmill's setup board."""
    game = parse_game(fixture_bytes("handicap19.sgf"), "h")
    b = replay_game(dataclasses.replace(game, moves=[]))
    ref = boards.Board(19)
    ref.apply_setup([(r, c) for _, r, c in game.setup], [], [])
    occupied = {(r, c) for r in range(19) for c in range(19) if b.color[to_loc(r, c, 19)] == BLACK}
    assert occupied == {p for _, p in ref.list_occupied_points()}
    assert len(occupied) == 4


def test_setup_on_the_same_point_is_illegal() -> None:
    """AB and AW on one point: an 'illegal' skip at move 0 (the setup)."""
    game = parse_game(b"(;SZ[9]AB[cc]AW[cc];B[ee])", "twice")
    with pytest.raises(GameError) as info:
        replay_game(game)
    assert (info.value.reason, info.value.move_number) == ("illegal", 0)


@pytest.mark.parametrize(
    "data",
    [
        b"(;SZ[9]AB[aa]AW[ba][ab];W[ee])",  # the black corner stone is captured by the setup
        b"(;SZ[9]AB[ba][ab]AW[aa];W[ee])",  # the white one, placed last, captures nothing
        b"(;SZ[9]AB[ba][bb][ab]AW[aa];B[ee])",
    ],
)
def test_setup_stone_without_liberties_is_illegal(data: bytes) -> None:
    """A setup that leaves a string without liberties is 'illegal' at move 0, whichever colour
    (found by tests/test_sgf_fuzz.py: the white corner stone was accepted, dead on the board)."""
    with pytest.raises(GameError) as info:
        replay_game(parse_game(data, "dead"))
    assert (info.value.reason, info.value.move_number) == ("illegal", 0)


# --- stats and CLI ------------------------------------------------------------


def test_summary_is_json_and_format_is_readable() -> None:
    """summary() equals its JSON round trip; format() names every count."""
    stats = ReadStats()
    list(iter_games(FIXTURES, NINE_NINETEEN, stats))
    s = stats.summary()
    assert json.loads(json.dumps(s)) == s
    assert s["skipped"] == EXPECTED_SKIPS and s["skipped_total"] == sum(EXPECTED_SKIPS.values())
    assert list(s["ranks"]) == ["3k", "2k", "1k", "2d", "9d"]
    text = stats.format()
    for word in ("games", "skipped", "positions", "board sizes", "handicap", "ranks", "9x9"):
        assert word in text


def test_member_name_not_utf8_is_printable(tmp_path: Path) -> None:
    """A tar member whose name is not UTF-8 (read with surrogateescape) is named in format()
    as \\udcff, so that the CLI can print it to a UTF-8 stdout (found by
    tests/test_sgf_fuzz.py: UnicodeEncodeError in print)."""
    path = tmp_path / "names.tar"
    with tarfile.open(path, "w") as tf:
        info = tarfile.TarInfo("\udcff.sgf")
        info.size = 4
        tf.addfile(info, io.BytesIO(b"junk"))
    stats = ReadStats()
    assert list(iter_games(path, ReadConfig(), stats)) == []
    assert stats.skipped == {"parse": 1} and "\udcff" in stats.errors[0]
    text = stats.format()
    assert text.encode("utf-8").decode("utf-8") == text and "names.tar:\\udcff.sgf" in text
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    with contextlib.redirect_stdout(out):
        assert main([str(path)]) == 0


def test_rank_key_orders_kyu_dan_pro() -> None:
    ranks = ["1p", "9d", "?", "30k", "1d", "5k", "1k"]
    assert sorted(ranks, key=rank_key) == ["30k", "5k", "1k", "1d", "9d", "1p", "?"]


def test_cli_last_line_is_the_json_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI prints text then one JSON line with the same counts as iter_games."""
    assert main([str(FIXTURES), "--sizes", "9", "19"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    summary = json.loads(out[-1])
    assert summary["games"] == len(VALID) and summary["files"] == len(ALL)
    assert summary["skipped"] == EXPECTED_SKIPS
    assert summary["positions"] == 20 + 12 + 12 + 12 + 10 + 3
    assert summary["sizes"] == {"9": 4, "19": 2}


def test_cli_options(capsys: pytest.CaptureFixture[str]) -> None:
    """--no-handicap, --min-moves and --max-games reach the config."""
    args = [str(FIXTURES), "--sizes", "19", "9", "--no-handicap", "--min-moves", "5"]
    assert main([*args, "--max-games", "3"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["games"] == 3
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["skipped"]["handicap"] == 1 and summary["skipped"]["short"] == 1


def test_cli_strict_and_missing_path(capsys: pytest.CaptureFixture[str]) -> None:
    """--strict stops with exit code 1 naming the file; a missing path exits 2."""
    assert main([str(FIXTURES / "bad_occupied.sgf"), "--sizes", "9", "--strict"]) == 1
    assert "bad_occupied.sgf: move 5: illegal" in capsys.readouterr().err
    assert main([str(FIXTURES / "missing.sgf")]) == 2


@pytest.mark.parametrize(
    "option",
    [["--sizes", "25"], ["--sizes", "1", "9"], ["--min-moves", "-1"], ["--max-games", "-3"]],
)
def test_cli_option_out_of_range(capsys: pytest.CaptureFixture[str], option: list[str]) -> None:
    """An option value ReadConfig refuses exits 2 with one error line, not a traceback
    (found by tests/test_sgf_fuzz.py: ValueError escaped main)."""
    assert main([str(FIXTURES / "game9.sgf"), *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.splitlines()) == 1


def test_python_dash_m_entry_point() -> None:
    """``gomove data`` runs main and ends with the JSON line."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    out = subprocess.run(
        [sys.executable, "-m", "gomove.cli", "data", str(FIXTURES / "game19.sgf")],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    assert json.loads(out.strip().splitlines()[-1])["games"] == 1


# --- real data ----------------------------------------------------------------


@pytest.mark.data
def test_tygem_first_300_games() -> None:
    """The first 300 games of tygem-9d-2006-01.zip: no skips, every move count equals sgfmill's."""
    path = DATA / "tygem-9d-2006-01.zip"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    stats = ReadStats()
    games = list(iter_games(path, ReadConfig(max_games=300), stats))
    assert (len(games), stats.files, sum(stats.skipped.values())) == (300, 300, 0)
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()[:300]
        expected = [len(sgf.Sgf_game.from_bytes(zf.read(n)).get_main_sequence()) - 1 for n in names]
    assert sources(games) == [f"{path}:{n}" for n in names]
    assert [len(g.moves) for g in games] == expected
    assert stats.positions == sum(expected)
    assert stats.sizes == {19: 300} and stats.handicap == {0: 300} and stats.ranks == {"9d": 600}


def test_load_game_past_the_last_game_is_a_game_error(tmp_path):
    archive = make_zip(tmp_path / "one.zip", ["game19.sgf"])
    assert load_game(archive, 0).size == 19
    with pytest.raises(GameError, match="fewer than 2 readable games"):
        load_game(archive, 1)
