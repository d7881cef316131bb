"""GtpEngine: the GTP commands on a GameState, the model (policy mode) and the search.

Terms:
- mode: "search" (genmove runs the MCTS, gomove.play.search) or "policy" (the
  full model's most probable move, or a draw from its distribution sharpened
  by 1 / temperature).
- streaming commands (lz-analyze, kata-analyze, lz-genmove_analyze): they
  write a line every interval and stop when ``input_ready()`` says the next
  command has arrived (or, for lz-genmove_analyze, when the search is done).
- time: ``time_settings``/``time_left`` set a clock; a search then spends
  main time / max(moves the board still holds, 20), or 80% of a byo-yomi period
  per stone left; without a clock, the search config's budget.
- ownership: the map of gomove-ownership, of final_score's dead stones and of
  kata-analyze's ``ownership true``: owner_playouts playouts (gomove.play.ownership),
  or, when the engine holds a territory CRF (``--ownership crf``), the CRF's; without
  it kata-analyze sends the search's own playouts' map. final_score's dead strings
  are the CRF's string judge's where it has one (gomove.models.territory.judge.judged_score).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from gomove import __version__
from gomove.board.board import BLACK, WHITE
from gomove.board.coords import PASS, from_loc, gtp_to_loc, loc_to_gtp
from gomove.models.territory.crf import TerritoryCRF
from gomove.models.territory.judge import judged_score
from gomove.play.game import GameState
from gomove.play.gtp.info_lines import gfx_influence, kata_info, lz_info
from gomove.play.gtp.protocol import GtpError
from gomove.play.ownership import estimate_ownership
from gomove.play.predict import Predictor, probability_grid
from gomove.play.search.search import RESIGN, Search, SearchResult
from gomove.play.search.settings import SearchConfig
from gomove.playout.policy import PatternPolicy

COLORS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
MODES = ("search", "policy")

ANALYZE_COMMANDS = (
    "gfx/Move probabilities (model)/gomove-heatmap",
    "gfx/Ownership ({})/gomove-ownership",  # the method
    "gfx/Search visits/gomove-visits",
)


class GtpEngine:
    """Holds the game, the model and the search; ``handle`` answers one command."""

    def __init__(
        self,
        predictor: Predictor | None = None,
        policy: PatternPolicy | None = None,
        search: SearchConfig | None = None,
        mode: str = "search",
        temperature: float = 0.0,
        seed: int = 0,
        owner_playouts: int = 1000,
        sized: Callable[[int], SearchConfig] | None = None,
        territory: TerritoryCRF | None = None,
    ):
        """sized: the search settings for a board size, applied at every boardsize
        (a preset whose values depend on the size, such as Pachi's prior); None:
        ``search`` on every board. territory: the CRF that makes the ownership maps
        (None: owner_playouts playouts)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        if mode == "policy" and predictor is None:
            raise ValueError("policy mode needs the full model (--model)")
        self.predictor = predictor
        self.policy = policy
        self.mode = mode
        self.temperature = temperature
        self.rng = np.random.default_rng(seed)
        self.owner_playouts = owner_playouts
        self.territory = territory
        self.sized = sized
        self.game = GameState()
        self.search_cfg = sized(self.game.size) if sized else search or SearchConfig()
        self.search = Search(self.search_cfg, policy, predictor) if mode == "search" else None
        self.clock: dict[str, float] | None = None  # main, byo, stones
        self.time_left: dict[int, tuple[float, int]] = {}
        self.last_result: SearchResult | None = None
        self.quit = False
        self.commands: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": lambda a: "2",
            "name": lambda a: "gomove",
            "version": lambda a: __version__,
            "known_command": self.known_command,
            "list_commands": lambda a: "\n".join(self.list_commands()),
            "boardsize": self.boardsize,
            "clear_board": self.clear_board,
            "komi": self.komi,
            "play": self.play,
            "genmove": self.genmove,
            "reg_genmove": self.reg_genmove,
            "undo": self.undo,
            "final_score": self.final_score,
            "showboard": self.showboard,
            "time_settings": self.time_settings,
            "time_left": self.time_left_cmd,
            "quit": self.quit_cmd,
            "gogui-analyze_commands": self.analyze_commands,
            "gomove-heatmap": self.gfx_heatmap,
            "gomove-ownership": self.gfx_ownership,
            "gomove-visits": self.gfx_visits,
        }
        # streaming commands: (args, write, input_ready) -> final text
        self.streaming: dict[str, Callable] = {
            "lz-analyze": self.lz_analyze,
            "kata-analyze": self.kata_analyze,
            "lz-genmove_analyze": self.lz_genmove_analyze,
        }

    # the standard commands

    def list_commands(self) -> list[str]:
        return sorted([*self.commands, *self.streaming])

    def known_command(self, args: list[str]) -> str:
        name = args[0].lower() if args else ""
        return "true" if name in self.commands or name in self.streaming else "false"

    def boardsize(self, args: list[str]) -> str:
        n = _int_arg(args, 0, "boardsize")
        if not 2 <= n <= 19:
            raise GtpError("unacceptable size")
        self.game.clear(n)
        self._forget()
        cfg = self.sized(n) if self.sized is not None else self.search_cfg
        if cfg != self.search_cfg:
            self.search_cfg = cfg
            if self.search is not None:
                self.search = Search(self.search_cfg, self.policy, self.predictor)
        return ""

    def clear_board(self, args: list[str]) -> str:
        self.game.clear()
        self._forget()
        return ""

    def komi(self, args: list[str]) -> str:
        try:
            k = float(args[0])
        except (IndexError, ValueError):
            raise GtpError("syntax error") from None
        if not math.isfinite(k) or abs(k) > 1000:
            raise GtpError("syntax error")
        self.game.komi = k
        return ""

    def play(self, args: list[str]) -> str:
        color = _color_arg(args, 0)
        if len(args) < 2:
            raise GtpError("syntax error")
        loc = self._vertex(args[1])
        try:
            self.game.play(color, loc)
        except ValueError:
            raise GtpError("illegal move") from None
        self._advance(loc)
        return ""

    def genmove(self, args: list[str]) -> str:
        color = _color_arg(args, 0)
        move = self._choose(color)
        if move == RESIGN:
            return "resign"
        self.game.play(color, move)
        self._advance(move)
        return loc_to_gtp(move, self.game.size)

    def reg_genmove(self, args: list[str]) -> str:
        color = _color_arg(args, 0)
        move = self._choose(color)
        return "resign" if move == RESIGN else loc_to_gtp(move, self.game.size)

    def undo(self, args: list[str]) -> str:
        try:
            self.game.undo()
        except ValueError:
            raise GtpError("cannot undo") from None
        self._forget()
        return ""

    def final_score(self, args: list[str]) -> str:
        score = self.score()
        if score == 0:
            return "0"
        return f"B+{score:g}" if score > 0 else f"W+{-score:g}"

    def showboard(self, args: list[str]) -> str:
        g = self.game
        size = g.size
        cols = "ABCDEFGHJKLMNOPQRST"[:size]
        lines = ["   " + " ".join(cols)]
        for r in range(size - 1, -1, -1):
            row = []
            for c in range(size):
                loc = (r + 1) * (size + 2) + c + 1
                row.append({0: ".", BLACK: "X", WHITE: "O"}[int(g.board.color[loc])])
            lines.append(f"{r + 1:2d} " + " ".join(row) + f" {r + 1}")
        lines.append("   " + " ".join(cols))
        side = "black" if g.to_move == BLACK else "white"
        lines.append(f"{side} to move, {len(g.moves)} moves, komi {g.komi:g}")
        return "\n" + "\n".join(lines)

    def time_settings(self, args: list[str]) -> str:
        if len(args) < 3:
            raise GtpError("syntax error")
        try:
            main, byo, stones = float(args[0]), float(args[1]), int(args[2])
        except ValueError:
            raise GtpError("syntax error") from None
        if min(main, byo, stones) < 0 or not (math.isfinite(main) and math.isfinite(byo)):
            raise GtpError("syntax error")
        self.clock = {"main": main, "byo": byo, "stones": stones}
        self.time_left = {}
        return ""

    def time_left_cmd(self, args: list[str]) -> str:
        color = _color_arg(args, 0)
        if len(args) < 3:
            raise GtpError("syntax error")
        try:
            left, stones = float(args[1]), int(args[2])
        except ValueError:
            raise GtpError("syntax error") from None
        if left < 0 or stones < 0 or not math.isfinite(left):
            raise GtpError("syntax error")
        self.time_left[color] = (left, stones)
        return ""

    def quit_cmd(self, args: list[str]) -> str:
        self.quit = True
        return ""

    # moves

    def _vertex(self, text: str) -> int:
        try:
            return gtp_to_loc(text, self.game.size)
        except ValueError:
            raise GtpError("invalid coordinate") from None

    def _forget(self) -> None:
        if self.search is not None:
            self.search.clear()
        self.last_result = None

    def _advance(self, loc: int) -> None:
        if self.search is not None:
            self.search.advance(loc)

    def budget(self, color: int) -> tuple[int | None, float | None]:
        """(sims, seconds) for the next search of color."""
        cfg = self.search_cfg
        if self.clock is None or (self.clock["main"] == 0 and self.clock["byo"] == 0):
            return cfg.sims, cfg.seconds
        size = self.game.size
        left, stones = self.time_left.get(color, (self.clock["main"], 0))
        if stones > 0:  # byo-yomi: stones moves in left seconds
            seconds = 0.8 * left / stones
        else:
            moves_left = max(size * size / 2 - len(self.game.moves) / 2, 20)
            seconds = left / moves_left
            if self.clock["byo"] > 0 and self.clock["stones"] > 0:
                seconds += 0.8 * self.clock["byo"] / self.clock["stones"]
        return None, max(seconds - 0.1, 0.05)

    def _choose(self, color: int) -> int | str:
        g = self.game
        if self.mode == "policy":
            return self.policy_move(color)
        sims, seconds = self.budget(color)
        result = self.search.run(g.board, color, g.komi, g.passes, sims=sims, seconds=seconds)
        self.last_result = result
        return self._lawful(color, result.move)

    def _lawful(self, color: int, move: int | str) -> int | str:
        """The search's move, or pass if the game's rules (superko) forbid it: the search
        never proposes one, but the rules are the game's."""
        if move not in (PASS, RESIGN) and self.game.check(color, move) is not None:
            return PASS
        return move

    def policy_move(self, color: int) -> int:
        """The model's move: argmax at temperature 0, else a draw from p^(1/T)."""
        g = self.game
        pred = self.predictor.predict(g.board, color)
        ok = np.array([g.check(color, int(x)) is None for x in pred.locs])
        p = np.where(ok, pred.probs, 0.0)
        if p.sum() <= 0:
            return PASS
        if self.temperature <= 0:
            return int(pred.locs[int(np.argmax(p))])
        w = p ** (1.0 / self.temperature)
        return int(self.rng.choice(pred.locs, p=w / w.sum()))

    # scoring and maps

    def ownership(self, color: int | None = None) -> np.ndarray:
        """P(black) - P(white) owning each point, [row, col] in sgfmill order, with color
        (default: the game's turn) to play: the territory CRF's map, else owner_playouts
        playouts' (the pattern policy's when loaded)."""
        g = self.game
        to_move = g.to_move if color is None else color
        own = estimate_ownership(g.board, to_move, g.komi, self.territory,
                                 self.owner_playouts, policy=self.policy)  # fmt: skip
        return own.black - own.white

    def score(self) -> float:
        """Area score B - W - komi after removing the dead strings (judged_score: the
        territory CRF's string judge, else the strings the ownership map gives to the
        other side); empty regions then go to the colour that alone borders them
        (Chinese rules, as area_score counts)."""
        g = self.game
        judge = self.territory.judge if self.territory is not None else None
        return judged_score(g.board, g.to_move, g.komi, self.ownership(), judge)

    def gfx_heatmap(self, args: list[str]) -> str:
        if self.predictor is None:
            raise GtpError("no model loaded (--model)")
        g = self.game
        color = _color_arg(args, 0) if args else g.to_move
        pred = self.predictor.predict(g.board, color)
        grid = probability_grid(pred)
        top = np.nanmax(grid) if np.isfinite(grid).any() else 1.0
        labels = {}
        for j in pred.order()[:10]:
            if pred.locs[j] != PASS:
                labels[from_loc(int(pred.locs[j]), g.size)] = f"{100 * pred.probs[j]:.0f}"
        return "\n" + gfx_influence(np.nan_to_num(grid / max(top, 1e-12)), labels)

    def analyze_commands(self, args: list[str]) -> str:
        method = "playouts" if self.territory is None else "CRF"
        return "\n".join(c.format(method) for c in ANALYZE_COMMANDS)

    def gfx_ownership(self, args: list[str]) -> str:
        return "\n" + gfx_influence(self.ownership())

    def gfx_visits(self, args: list[str]) -> str:
        r = self.last_result
        if r is None:
            raise GtpError("no search yet: genmove or lz-analyze first")
        size = self.game.size
        grid = np.zeros((size, size))
        labels = {}
        top = max((m.visits for m in r.moves), default=1)
        for m in r.moves:
            if m.loc != PASS:
                rc = from_loc(m.loc, size)
                grid[rc] = m.visits / top
                labels[rc] = str(m.visits)
        return "\n" + gfx_influence(grid, labels)

    # streaming analysis

    def _analyze_args(self, args: list[str]) -> tuple[int, float, bool, bool]:
        """[color] [interval] [keys...] -> (color, seconds between lines, ownership,
        rootInfo)."""
        g = self.game
        color = g.to_move
        interval = 1.0
        own = root = False
        rest = list(args)
        if rest and rest[0].lower() in COLORS:
            color = COLORS[rest.pop(0).lower()]
        if rest and _is_number(rest[0]):
            interval = max(float(rest.pop(0)) / 100.0, 0.05)
        while rest:
            key = rest.pop(0).lower()
            if key == "interval" and rest and _is_number(rest[0]):
                interval = max(float(rest.pop(0)) / 100.0, 0.05)
            elif key == "ownership" and rest:
                own = rest.pop(0).lower() == "true"
            elif key == "rootinfo" and rest:
                root = rest.pop(0).lower() == "true"
            elif rest:
                rest.pop(0)  # minmoves, maxmoves, avoid ...: accepted, not used
        return color, interval, own, root

    def _stream(self, color, interval, write, input_ready, line_of, max_seconds=None) -> None:
        if self.search is None:
            raise GtpError("analysis needs the search (mode search)")
        g = self.game
        start = time.perf_counter()
        while not input_ready():
            if max_seconds is not None and time.perf_counter() - start >= max_seconds:
                break
            step = interval if max_seconds is None else min(interval, max_seconds)
            r = self.search.run(g.board, color, g.komi, g.passes, sims=None, seconds=step)
            self.last_result = r
            line = line_of(r)
            if line:  # nothing searched yet (a first search still compiling): an empty
                write(line + "\n")  # line would end the GTP response for the client
            if self.search.tree.visits[self.search.root] > 50_000_000:
                break

    def lz_analyze(self, args, write, input_ready) -> str:
        color, interval, _, _ = self._analyze_args(args)
        size = self.game.size
        self._stream(color, interval, write, input_ready, lambda r: lz_info(r.moves, size))
        return ""

    def kata_analyze(self, args, write, input_ready) -> str:
        color, interval, own, root = self._analyze_args(args)
        size = self.game.size
        # the CRF's map of the position, once (the position stays while the search
        # runs); else each line carries the search's map so far
        crf = self.ownership(color) if own and self.territory is not None else None
        self._stream(
            color, interval, write, input_ready,
            lambda r: kata_info(r.moves, size, (r.ownership if crf is None else crf)
                                if own else None, color, root_info=root),
        )  # fmt: skip
        return ""

    def lz_genmove_analyze(self, args, write, input_ready) -> str:
        color, interval, _, _ = self._analyze_args(args)
        g = self.game
        size = g.size
        sims, seconds = self.budget(color)
        done = 0
        start = time.perf_counter()
        result = None
        while True:
            step = interval
            if seconds is not None:
                step = min(step, max(seconds - (time.perf_counter() - start), 0.0))
            want = None if sims is None else sims - done
            if (want is not None and want <= 0) or step <= 0:
                break
            result = self.search.run(g.board, color, g.komi, g.passes, sims=want, seconds=step)
            done += result.sims
            write(lz_info(result.moves, size) + "\n")
        self.last_result = result
        move = self._lawful(color, result.move) if result is not None else PASS
        if move == RESIGN:
            return "play resign"
        g.play(color, move)
        self._advance(move)
        return f"play {loc_to_gtp(move, size)}"


def _int_arg(args: list[str], i: int, what: str) -> int:
    try:
        return int(args[i])
    except (IndexError, ValueError):
        raise GtpError(f"syntax error: {what} needs an integer") from None


def _color_arg(args: list[str], i: int) -> int:
    if len(args) <= i or args[i].lower() not in COLORS:
        raise GtpError("syntax error: a colour (b, w, black, white) is needed")
    return COLORS[args[i].lower()]


def _is_number(s: str) -> bool:
    try:
        return math.isfinite(float(s))
    except ValueError:
        return False
