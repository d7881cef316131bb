"""Reading games from files, folders, archives and globs, replayed and counted.

Terms:
- input: a ``.sgf`` file, a folder (read recursively, sorted), a ``.zip``, a
  ``.tar``/``.tar.gz``/``.tgz``/``.tar.bz2`` archive (the public monthly KGS
  archives are folders of .sgf files inside a tar.gz), a game pack
  (``.gomove-games.npz``: games parsed once, gomove.reading.pack), a glob pattern
  string, or a list of any of these. Order is deterministic: the inputs as given,
  folders sorted, zip members in namelist order, tar members in member order.
- record: one SGF file or archive member, named ``path`` or ``archive:member``, or one
  game of a pack (named as the record it was packed from).
- skip: a record that yields no game, counted by reason in ReadStats:
  failures (``read``, ``parse``, ``encoding``, ``move``, ``setup``,
  ``illegal``; see gomove.reading.sgf) and filters (FILTER_REASONS: ``size``,
  ``handicap``, ``short``). ``strict`` turns failures, never filters, into errors.
"""

from __future__ import annotations

import glob
import itertools
import lzma
import os
import re
import tarfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gomove.board.board import (
    BLACK,
    EMPTY,
    KO,
    TO_MOVE,
    WHITE,
    Board,
    is_legal,
)
from gomove.board.coords import MAX_SIZE, MIN_SIZE, loc_to_gtp
from gomove.board.replay import Rules, game_arrays, replay, start_board
from gomove.reading.pack import PACK_SUFFIX, read_pack
from gomove.reading.sgf import Game, GameError, parse_game

FILTER_REASONS = ("size", "handicap", "short")
SGF_SUFFIXES = (".sgf",)
ZIP_SUFFIXES = (".zip",)
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz")
MAX_ERRORS = 10  # failures kept verbatim for the report
# everything a damaged archive or member can raise while being read (bz2 raises OSError;
# lzma, for LZMA-compressed zip members, its own LZMAError; zipfile decodes names flagged
# UTF-8 strictly)
_READ_ERRORS = (
    OSError,
    EOFError,
    zipfile.BadZipFile,
    tarfile.TarError,
    zlib.error,
    lzma.LZMAError,
    UnicodeDecodeError,
    RuntimeError,
)
_GLOB_MAGIC = re.compile(r"[*?[]")

PathLike = str | os.PathLike


@dataclass
class ReadConfig:
    """Which games to keep, and whether bad input is an error (strict) or a counted skip."""

    sizes: tuple[int, ...] = (19,)
    handicap: bool = True  # False skips handicap (and other setup-stone) games
    min_moves: int = 0  # passes count as moves
    max_games: int | None = None  # games yielded, skips not counted
    strict: bool = False
    superko: bool = True  # positional superko makes a move illegal

    def __post_init__(self) -> None:
        self.sizes = tuple(int(s) for s in self.sizes)
        bad = [s for s in self.sizes if not MIN_SIZE <= s <= MAX_SIZE]
        if bad or not self.sizes:
            raise ValueError(f"sizes {self.sizes} must be non-empty, within {MIN_SIZE}..{MAX_SIZE}")
        if self.min_moves < 0 or (self.max_games is not None and self.max_games < 0):
            raise ValueError("min_moves and max_games must not be negative")


@dataclass
class ReadStats:
    """Counts over one read: records seen, games kept, skips by reason, what the games hold."""

    files: int = 0  # records seen: SGF files and archive members (and unreadable archives)
    games: int = 0  # games yielded
    positions: int = 0  # moves of the yielded games, passes included
    passes: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    sizes: Counter[int] = field(default_factory=Counter)
    handicap: Counter[int] = field(default_factory=Counter)
    ranks: Counter[str] = field(default_factory=Counter)  # both players of every game
    errors: list[str] = field(default_factory=list)  # the first MAX_ERRORS failures

    def add(self, game: Game) -> None:
        self.games += 1
        self.positions += len(game.moves)
        self.passes += game.passes
        self.sizes[game.size] += 1
        self.handicap[game.handicap] += 1
        for rank in (game.black_rank, game.white_rank):
            if rank is not None:
                self.ranks[rank] += 1

    def skip(self, err: GameError) -> None:
        self.skipped[err.reason] += 1
        if err.reason not in FILTER_REASONS and len(self.errors) < MAX_ERRORS:
            self.errors.append(str(err))

    def summary(self) -> dict[str, Any]:
        """Plain JSON-ready counts (string keys, sorted), equal to its own JSON round trip."""
        return {
            "files": self.files,
            "games": self.games,
            "skipped_total": sum(self.skipped.values()),
            "skipped": dict(sorted(self.skipped.items())),
            "positions": self.positions,
            "passes": self.passes,
            "sizes": {str(k): v for k, v in sorted(self.sizes.items())},
            "handicap": {str(k): v for k, v in sorted(self.handicap.items())},
            "ranks": dict(sorted(self.ranks.items(), key=lambda kv: rank_key(kv[0]))),
        }

    def format(self) -> str:
        """The summary as aligned text lines, for a person deciding whether to train on it."""
        s = self.summary()
        mean = s["positions"] / s["games"] if s["games"] else 0.0

        def counts(d: dict[str, int], fmt: str = "{}") -> str:
            return ", ".join(f"{fmt.format(k)}: {v}" for k, v in d.items()) or "-"

        lines = [
            f"files        {s['files']}",
            f"games        {s['games']}",
            f"skipped      {s['skipped_total']}"
            + (f" ({counts(s['skipped'])})" if s["skipped"] else ""),
            f"positions    {s['positions']} ({mean:.1f} moves per game, {s['passes']} passes)",
            f"board sizes  {counts(s['sizes'], '{0}x{0}')}",
            f"handicap     {counts(s['handicap'])}",
            f"ranks        {counts(s['ranks'])}",
        ]
        if self.errors:
            lines.append(f"first {len(self.errors)} failures:")
            lines += [f"  {e}" for e in self.errors]
        # names of tar members and files that are not UTF-8 hold lone surrogates
        # (surrogateescape), which a UTF-8 stdout refuses: show them as \udcff
        return "\n".join(lines).encode("utf-8", "backslashreplace").decode("utf-8")


def rank_key(rank: str) -> tuple[int, int, str]:
    """Sort ranks weakest first: 30k..1k, 1d..9d, 1p..9p, then anything else by name."""
    m = re.fullmatch(r"(\d+)\s*([kdp])", rank.strip().lower())
    if m is None:
        return (3, 0, rank)
    n, kind = int(m.group(1)), m.group(2)
    return ({"k": 0, "d": 1, "p": 2}[kind], -n if kind == "k" else n, rank)


def expand_paths(paths: PathLike | Iterable[PathLike]) -> list[Path]:
    """Inputs -> existing paths; a string that names no file but has * ? [ is a glob.

    Raises FileNotFoundError at once: a mistyped input is the user's error, not bad data.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    out: list[Path] = []
    for p in paths:
        if os.path.exists(p):
            out.append(Path(p))
        elif isinstance(p, str) and _GLOB_MAGIC.search(p):
            matches = sorted(glob.glob(p, recursive=True))
            if not matches:
                raise FileNotFoundError(f"no file matches {p!r}")
            out += [Path(m) for m in matches]
        else:
            raise FileNotFoundError(f"no such file or folder: {os.fspath(p)!r}")
    return out


def iter_games(
    paths: PathLike | Iterable[PathLike],
    cfg: ReadConfig | None = None,
    stats: ReadStats | None = None,
) -> Iterator[Game]:
    """Games from the inputs that parse, pass the filters and replay legally, counted in ``stats``.

    The inputs are checked now (FileNotFoundError); records are read lazily.
    """
    sources = expand_paths(paths)
    return _iter_games(sources, cfg or ReadConfig(), stats if stats is not None else ReadStats())


def _iter_games(sources: list[Path], cfg: ReadConfig, stats: ReadStats) -> Iterator[Game]:
    if cfg.max_games == 0:
        return
    for path in sources:
        for source, data in records(path):
            stats.files += 1
            try:
                if isinstance(data, GameError):
                    raise data
                game = data if isinstance(data, Game) else parse_game(data, source, cfg.sizes)
                check_filters(game, cfg)
                replay_game(game, cfg.superko)
            except GameError as err:
                stats.skip(err)
                if cfg.strict and err.reason not in FILTER_REASONS:
                    raise
                continue
            stats.add(game)
            yield game
            if cfg.max_games is not None and stats.games >= cfg.max_games:
                return


def check_filters(game: Game, cfg: ReadConfig) -> None:
    """Raise GameError with a filter reason when cfg does not want this game."""
    if game.size not in cfg.sizes:
        raise GameError("size", game.source, None, f"{game.size}x{game.size}")
    if not cfg.handicap and game.is_handicap:
        raise GameError("handicap", game.source, None, f"handicap {game.handicap}")
    if len(game.moves) < cfg.min_moves:
        raise GameError("short", game.source, None, f"{len(game.moves)} < {cfg.min_moves} moves")


def replay_game(game: Game, superko: bool = True) -> Board:
    """Play the setup stones and moves on a numba board; GameError("illegal") at the first bad one.

    One compiled replay call per game (board.replay with the Rules visitor): calling
    the kernels move by move from Python would cost more than sgfmill's parsing.
    """
    size = game.size
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise GameError("size", game.source, None, f"the board stops at {MAX_SIZE}x{MAX_SIZE}")
    points = [(row, col) for _, row, col in game.setup]
    if len(set(points)) != len(points):
        raise GameError("illegal", game.source, 0, "two setup stones on one point")
    ga = game_arrays(game)
    b = start_board(ga)
    # a stone was captured by the setup, or stands in a string with no liberty (a white
    # stone placed after the black ones that surround it captures nothing)
    captured = np.count_nonzero((b.color == BLACK) | (b.color == WHITE)) != len(game.setup)
    if captured or np.any(b.libs[b.head[ga.setup_locs]] == 0):
        raise GameError("illegal", game.source, 0, "setup stones without liberties")
    locs, colors = ga.locs, ga.colors
    n = replay(b, locs, colors, Rules(True, superko))
    if n < len(game.moves):
        loc, color = int(locs[n]), int(colors[n])
        move = f"{'BW'[color - 1]} {loc_to_gtp(loc, size)}"
        raise GameError("illegal", game.source, n + 1, f"{move}: {_illegal_why(b, loc, color)}")
    return b


def _illegal_why(b: Board, loc: int, color: int) -> str:
    if b.color[loc] != EMPTY:
        return "occupied point"
    if loc == b.info[KO] and color == b.info[TO_MOVE]:
        return "ko recapture"
    if not is_legal(b, loc, color):
        return "suicide"
    return "positional superko"


def records(path: Path) -> Iterator[tuple[str, bytes | Game | GameError]]:
    """(source, bytes) for every SGF record of one input, (source, Game) for every game of a
    pack (gomove.reading.pack); GameError("read") in place of them for what cannot be
    read, so that one damaged record or archive costs one skip.
    """
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and _kind(p) is not None)
        for p in files:
            yield from records(p)
        return
    kind = _kind(path) or "sgf"  # a file named explicitly is read whatever its suffix
    if kind == "pack":
        yield from read_pack(path)
    elif kind == "zip":
        yield from _zip_records(path)
    elif kind == "tar":
        yield from _tar_records(path)
    else:
        try:
            yield str(path), path.read_bytes()
        except OSError as e:
            yield str(path), GameError("read", str(path), None, str(e))


def _kind(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(SGF_SUFFIXES):
        return "sgf"
    if name.endswith(PACK_SUFFIX):
        return "pack"
    if name.endswith(ZIP_SUFFIXES):
        return "zip"
    if name.endswith(TAR_SUFFIXES):
        return "tar"
    return None


def _is_sgf(member: str) -> bool:
    return member.lower().endswith(SGF_SUFFIXES)


def _zip_records(path: Path) -> Iterator[tuple[str, bytes | GameError]]:
    try:
        zf = zipfile.ZipFile(path)
    except _READ_ERRORS as e:
        yield str(path), GameError("read", str(path), None, f"not a readable zip: {e}")
        return
    with zf:
        for info in zf.infolist():
            if info.is_dir() or not _is_sgf(info.filename):
                continue
            source = f"{path}:{info.filename}"
            try:
                data: bytes | GameError = zf.read(info)
            except _READ_ERRORS as e:
                data = GameError("read", source, None, str(e))
            yield source, data


def _tar_records(path: Path) -> Iterator[tuple[str, bytes | GameError]]:
    try:
        tf = tarfile.open(path, "r:*")
    except _READ_ERRORS as e:
        yield str(path), GameError("read", str(path), None, f"not a readable tar: {e}")
        return
    with tf:
        while True:
            try:
                member = tf.next()
            except _READ_ERRORS as e:
                # a truncated or corrupt stream: the rest of the archive is lost
                yield str(path), GameError("read", str(path), None, f"archive damaged: {e}")
                return
            if member is None:
                return
            if not member.isfile() or not _is_sgf(member.name):
                continue
            source = f"{path}:{member.name}"
            try:
                f = tf.extractfile(member)
                data: bytes | GameError = f.read() if f is not None else b""
            except _READ_ERRORS as e:
                data = GameError("read", source, None, str(e))
            yield source, data


def load_game(path: PathLike, index: int = 0) -> Game:
    """One game for the tools that look at a single game: an .sgf file, or game ``index``
    (0-based, counting the games that read cleanly) of an archive or folder."""
    path = Path(path)
    if path.suffix.lower() == ".sgf" and path.is_file():
        return parse_game(path.read_bytes(), str(path))
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    games = iter_games([str(path)], ReadConfig(superko=False))
    game = next(itertools.islice(games, index, None), None)
    if game is None:
        raise GameError("missing", str(path), None, f"fewer than {index + 1} readable games")
    return game
