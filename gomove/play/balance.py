"""Simulation balancing (Silver and Tesauro 2009; Huang, Coulom and Lin 2010): playout
gammas tuned so that the playouts' mean outcome matches a position's value.

MM fits the playout policy to predict expert moves; the playouts only need to
be right on average. Huang, Coulom and Lin took Erica's MM gammas and let it
label 9x9 positions by its own searches; balancing the gammas on those labels
raised its win rate against Fuego from 69% to 78%. This module does the same
for a gomove policy:

- ``label_positions``: positions sampled from SGF games, each labelled by the
  search (pattern playouts, progressive widening) or by another engine over GTP
  (``lz-genmove_analyze``: Leela Zero, KataGo, Pachi) with its win rate for
  BLACK, written line by line to a JSONL file that a rerun extends. A
  stronger program's labels give balancing something to correct: gomove's own
  searches end in the very playouts being balanced.
- ``balance``: policy-gradient simulation balancing (Silver and Tesauro's
  algorithm 1) over the labelled positions: per position, M playouts estimate
  V = P(BLACK wins), N more the gradient g of V by REINFORCE with V as
  baseline (gomove.play.pattern.balance), and the log-gammas move by
  lr x (V* - V) x g, a step down the squared error (V* - V)^2.
- ``playout_error``: the mean squared error of the playouts' V against the
  labels, the objective (reported before and after, on held-out positions).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from gomove.board.board import BLACK, SIZE, Board
from gomove.board.coords import loc_to_gtp, move_to_loc
from gomove.board.playout import default_max_moves, seed_state
from gomove.board.replay import board_at
from gomove.features.light import pattern_levels
from gomove.features.light_gammas import LightGammas
from gomove.play.match import GtpClient
from gomove.play.pattern.balance import Gradient, balance_games, zero_gradient
from gomove.play.policy import PatternPolicy
from gomove.play.predict import Predictor
from gomove.play.search.config import SearchConfig
from gomove.play.search.search import Search
from gomove.reading.games import expand_paths, load_game
from gomove.reading.sgf import GameError


@dataclass(frozen=True)
class Labelled:
    """A position of an SGF game (before its move ``move``, 1-based) and its value."""

    sgf: str
    move: int
    value: float  # P(BLACK wins), from the labelling search
    sims: int

    def board(self) -> tuple[Board, int]:
        return board_at(load_game(self.sgf), self.move)


def read_labels(path: str | Path) -> list[Labelled]:
    """The labels of a JSONL file (``label_positions``); a line that does not parse is an error."""
    out = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                out.append(
                    Labelled(str(d["sgf"]), int(d["move"]), float(d["value"]), int(d["sims"]))
                )
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{i}: not a label line ({e})") from None
    return out


def sgf_files(paths: Iterable[str | Path]) -> list[str]:
    """The .sgf files named, or under the folders named, sorted (positions are named by file)."""
    out: list[str] = []
    for p in expand_paths(list(paths)):
        out += [str(f) for f in sorted(p.rglob("*.sgf"))] if p.is_dir() else [str(p)]
    return sorted(out)


def sample_positions(
    sgf_paths: Iterable[str | Path], per_game: int, seed: int, skip_end: int = 5
) -> tuple[list[tuple[str, int]], int]:
    """(sgf, move) pairs, per_game moves drawn without repeats from each game's moves
    1..len - skip_end (settled end positions teach little); returns them and the number
    of files skipped because they do not read."""
    rng = np.random.default_rng(seed)
    out: list[tuple[str, int]] = []
    skipped = 0
    for path in sgf_files(sgf_paths):
        try:
            n = len(load_game(path).moves)
        except (GameError, OSError, ValueError):
            skipped += 1
            continue
        last = n - skip_end
        if last < 1:
            continue
        for m in sorted(rng.choice(np.arange(1, last + 1), min(per_game, last), replace=False)):
            out.append((path, int(m)))
    return out, skipped


_worker: dict = {}


def _init_labeller(
    model: str | None, policy: str | None, sims: int, seed: int, engine: list[str] | None
) -> None:
    if engine is not None:
        _worker["engine"] = GtpClient(engine)
        return
    cfg = SearchConfig(sims=sims, seed=seed, resign=0.0)
    _worker["search"] = Search(cfg, PatternPolicy.load(policy), Predictor.from_checkpoint(model))


def analyze_value(text: str) -> tuple[float, int]:
    """(win rate of the side to move, visits) of the move an ``lz-genmove_analyze``
    answer chose: its last ``info`` line's ``order 0`` block (winrate in 1/10000),
    visits summed over the line's moves."""
    lines = [x for x in text.splitlines() if x.startswith("info ")]
    if not lines:
        raise ValueError(f"no analysis in the answer {text[:80]!r}")
    blocks = [b.split() for b in lines[-1].split("info ")[1:]]
    fields = [dict(zip(b[0::2], b[1::2], strict=False)) for b in blocks]
    try:
        best = next(f for f in fields if f.get("order") == "0")
        return int(best["winrate"]) / 10_000, sum(int(f["visits"]) for f in fields)
    except (StopIteration, KeyError, ValueError):
        raise ValueError(f"no order-0 move with winrate in {lines[-1][:120]!r}") from None


def engine_label(client: GtpClient, sgf: str, move: int, komi: float = 7.5) -> dict:
    """Label the position before move ``move`` of sgf by an engine's genmove analysis."""
    game = load_game(sgf)
    if game.setup:
        raise ValueError(f"{sgf}: setup stones cannot be sent over GTP play commands")
    if not 1 <= move <= len(game.moves):
        raise ValueError(f"{sgf}: move must be in 1..{len(game.moves)}, not {move}")
    client.new_game(game.size, komi)
    for color, m in game.moves[: move - 1]:
        vertex = loc_to_gtp(move_to_loc(m, game.size), game.size)
        client.must(f"play {'b' if color == BLACK else 'w'} {vertex}")
    to_move = game.moves[move - 1][0]
    win, visits = analyze_value(
        client.must(f"lz-genmove_analyze {'b' if to_move == BLACK else 'w'} 100000")
    )
    value = win if to_move == BLACK else 1.0 - win
    return {"sgf": sgf, "move": move, "value": round(value, 5), "sims": visits}


def _label(job: tuple[str, int]) -> dict:
    sgf, move = job
    if "engine" in _worker:
        return engine_label(_worker["engine"], sgf, move)
    board, to_move = board_at(load_game(sgf), move)
    search: Search = _worker["search"]
    search.clear()
    r = search.run(board, to_move, 7.5)
    value = r.winrate if to_move == BLACK else 1.0 - r.winrate
    return {"sgf": sgf, "move": move, "value": round(float(value), 5), "sims": r.sims}


def label_positions(
    jobs: Sequence[tuple[str, int]],
    out: str | Path,
    model: str | None,
    policy: str | None,
    sims: int,
    workers: int = 1,
    seed: int = 0,
    progress: bool = True,
    engine: list[str] | None = None,
) -> list[Labelled]:
    """Label each (sgf, move) by a search of sims simulations (komi 7.5), or by the GTP
    engine command ``engine`` (its own budget), appending to the JSONL file out as each
    finishes; positions already in out are not searched again."""
    out = Path(out)
    done = {(x.sgf, x.move) for x in read_labels(out)} if out.exists() else set()
    todo = [j for j in jobs if j not in done]
    if todo:
        with ProcessPoolExecutor(workers, initializer=_init_labeller,
                                 initargs=(model, policy, sims, seed, engine)) as ex, \
                open(out, "a") as f:  # fmt: skip
            for d in tqdm(ex.map(_label, todo, chunksize=4), total=len(todo), desc="label",
                          disable=not progress):  # fmt: skip
                f.write(json.dumps(d) + "\n")
                f.flush()
                os.fsync(f.fileno())
    return read_labels(out)


class LevelParams:
    """A policy's log-gammas by level, the parameters balancing moves (pattern.balance)."""

    def __init__(self, gammas: LightGammas):
        level_codes, self._raw_to_level = pattern_levels()
        self.pattern = np.concatenate([[0.0], np.log(gammas.pattern[level_codes])])
        self.capture = np.log(gammas.capture)
        self.extension = np.log(gammas.extension)
        self.self_atari = np.log(gammas.self_atari)
        self.contiguity = np.log(gammas.contiguity)
        self.pass_ = gammas.pass_.copy()

    def groups(self) -> tuple[np.ndarray, ...]:
        return self.pattern, self.capture, self.extension, self.self_atari, self.contiguity

    def step(self, g: Gradient, scale: float, clip: float) -> None:
        """Every parameter += scale x its gradient, each change clipped to [-clip, clip];
        level 0 (absent, gamma 1) stays put."""
        for p, d in zip(self.groups(), g, strict=True):
            p[1:] += np.clip(scale * d[1:], -clip, clip)

    def gammas(self) -> PatternPolicy:
        return PatternPolicy(
            np.exp(self.pattern)[self._raw_to_level],  # level 0 stays log 0: gamma 1
            *(np.concatenate([[1.0], np.exp(p[1:])]) for p in self.groups()[1:]),
            self.pass_,
        )


@dataclass
class BalanceConfig:
    """value_playouts (M) estimate V, grad_playouts (N) the gradient; lr scales
    (V* - V) x g; clip bounds one step of one log-gamma; epochs passes over the
    training positions, in a new seeded order each."""

    value_playouts: int = 64
    grad_playouts: int = 64
    lr: float = 1.0
    clip: float = 0.1
    epochs: int = 4
    komi: float = 7.5
    seed: int = 0

    def validate(self) -> None:
        if self.value_playouts < 1 or self.grad_playouts < 1:
            raise ValueError("value_playouts and grad_playouts must be >= 1")
        if not (self.lr > 0 and self.clip > 0):
            raise ValueError("lr and clip must be > 0")
        if self.epochs < 0:
            raise ValueError("epochs must be >= 0")


Position = tuple[Board, int, float]  # board, colour to move, V* = P(BLACK wins)


def positions_of(labels: Sequence[Labelled]) -> list[Position]:
    return [(*x.board(), x.value) for x in labels]


def playout_values(policy: PatternPolicy, positions: Sequence[Position], n: int,
                   komi: float, seed: int) -> np.ndarray:  # fmt: skip
    """P(BLACK wins) of each position by n playouts of policy."""
    player = policy.player()
    g = zero_gradient(player.tables)
    out = np.empty(len(positions))
    wins = np.empty(n)
    for i, (b, color, _) in enumerate(positions):
        balance_games(b, color, komi, n, np.uint64(seed_state(seed, i)), _max_moves(b), player,
                      wins, g, 0.0, 0.0)  # fmt: skip
        out[i] = wins.mean()
    return out


def _max_moves(b: Board) -> int:
    return default_max_moves(int(b.info[SIZE]))


def playout_error(policy: PatternPolicy, positions: Sequence[Position], n: int,
                  komi: float, seed: int) -> float:  # fmt: skip
    """Mean over positions of (V* - V)^2, V by n playouts: the balancing objective."""
    v = playout_values(policy, positions, n, komi, seed)
    target = np.array([p[2] for p in positions])
    return float(np.mean((target - v) ** 2))


def balance(
    gammas: LightGammas,
    train: Sequence[Position],
    cfg: BalanceConfig,
    progress: bool = True,
    on_epoch=None,
) -> PatternPolicy:
    """Simulation balancing from gammas over train (module docstring); on_epoch(epoch,
    policy) is called after each epoch (checkpoints, validation)."""
    cfg.validate()
    params = LevelParams(gammas)
    rng = np.random.default_rng(cfg.seed)
    m, n = cfg.value_playouts, cfg.grad_playouts
    wins = np.empty(max(m, n))
    game_seed = 0
    policy = params.gammas()
    for epoch in range(cfg.epochs):
        order = rng.permutation(len(train))
        for i in tqdm(order, desc=f"balance {epoch + 1}/{cfg.epochs}", disable=not progress):
            b, color, target = train[i]
            player = policy.player()
            g = zero_gradient(player.tables)
            mm = _max_moves(b)
            game_seed += 1
            balance_games(b, color, cfg.komi, m, np.uint64(seed_state(cfg.seed, 2 * game_seed)),
                          mm, player, wins, g, 0.0, 0.0)  # fmt: skip
            v = float(wins[:m].mean())
            balance_games(b, color, cfg.komi, n,
                          np.uint64(seed_state(cfg.seed, 2 * game_seed + 1)), mm, player, wins,
                          g, v, 1.0 / n)  # fmt: skip
            params.step(g, cfg.lr * (target - v), cfg.clip)
            policy = params.gammas()
        if on_epoch is not None:
            on_epoch(epoch + 1, policy)
    return policy
