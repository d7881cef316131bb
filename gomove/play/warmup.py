"""The warm-up: compile once, with visible progress, what the engine commands run.

numba compiles each kernel the first time it runs and caches the machine code on disk
(``cache=True``), so without compiled code shipped in its wheel (an editable install;
gomove.kernel_cache) a fresh install spends minutes in its first ``genmove``: a GUI
sees a frozen engine. ``warm`` runs each part the engines use once, on tiny inputs,
and reports each step on stderr (never on the GTP or JSON channel); later starts load
the cached code in seconds. A stamp file in numba's cache folder records a finished
warm-up for these kernel sources, numba and Python; ``gomove gtp`` and ``gomove
analysis`` run the warm-up in a background thread at their first start
(``start_warmup``) and answer the protocol's simple commands meanwhile
(``GOMOVE_WARMUP=0`` turns that off); ``gomove warmup`` runs it in the foreground, and
``gomove warmup --pack`` at a wheel's build (setup.py), whose stamp the wheel ships.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numba

import gomove
from gomove import pretrained
from gomove.atomic import atomic_write_text
from gomove.board.board import BLACK, new_board, play
from gomove.board.coords import gtp_to_loc
from gomove.models.territory.crf import TerritoryCRF
from gomove.play.analysis.engine import AnalysisEngine
from gomove.play.ownership import ownership
from gomove.play.predict import Predictor
from gomove.play.search.presets import tree_settings
from gomove.play.search.search import Search
from gomove.play.search.settings import SearchConfig
from gomove.playout.policy import PatternPolicy

Say = Callable[[str], None]
OPENING = ("D4", "Q16", "Q4", "D16", "C14", "R10", "K10", "F17")


def stamp_path() -> Path:
    """Where the stamp of a finished warm-up lives: in numba's cache folder (gomove's
    __init__ sets NUMBA_CACHE_DIR, named by a hash of the kernel sources, so a changed
    kernel empties it)."""
    base = Path(os.environ["NUMBA_CACHE_DIR"])
    key = f"{gomove.__version__} {numba.__version__} {sys.version}"
    return base / f"gomove-warm-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def is_warm() -> bool:
    return stamp_path().is_file()


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _opening(size: int) -> tuple:
    b = new_board(size)
    color = BLACK
    for v in OPENING if size == 19 else ("E5", "C3", "G7", "C7"):
        play(b, gtp_to_loc(v, size), color)
        color = 3 - color
    return b, color


def _steps(predictor: Predictor | None, policy: PatternPolicy | None) -> list:
    """(what, run) of each part, in the order a first genmove needs them."""

    def search(size: int, sims: int) -> None:
        pw = predictor is not None
        fields = {"sims": sims, "pw": pw, "playouts": "pattern" if policy else "uniform"}
        cfg = SearchConfig(**fields, **(tree_settings("auto", size) if pw else {}))
        b, color = _opening(size)
        Search(cfg, policy, predictor).run(b, color, 7.5)

    def analysis() -> None:
        playouts = "pattern" if policy else "uniform"
        cfg = SearchConfig(sims=8, pw=predictor is not None, resign=0.0, playouts=playouts)
        engine = AnalysisEngine(lambda size: Search(cfg, policy, predictor), predictor, policy,
                                default_visits=8)  # fmt: skip
        engine.handle({"id": "w", "boardXSize": 9, "moves": [["B", "E5"]], "includePolicy": True,
                       "includeOwnership": True, "includeMovesOwnership": True})  # fmt: skip

    steps = [("the board and its rules", lambda: _opening(19))]
    if predictor is not None:
        steps.append(("the full model's features", lambda: [predictor.predict(*_opening(s))
                                                             for s in (9, 19)]))  # fmt: skip
    steps += [
        ("the playouts", lambda: ownership(*_opening(9), 4, 7.5, 0, policy=policy)),
        ("the search on 9x9", lambda: search(9, 200)),
        ("the search on 19x19", lambda: search(19, 800)),
        ("the analysis engine", analysis),
        ("the territory CRF", lambda: _territory().predict(*_opening(9), 7.5, 2)),
    ]
    return steps


def warm(
    predictor: Predictor | None = None, policy: PatternPolicy | None = None, say: Say = _stderr
) -> float:
    """Run every step once (compiling what is not cached), saying each on stderr; write
    the stamp; returns the seconds it took."""
    start = time.perf_counter()
    steps = _steps(predictor, policy)
    for i, (what, run) in enumerate(steps, 1):
        t = time.perf_counter()
        say(f"gomove warmup: [{i}/{len(steps)}] compiling {what} ...")
        run()
        say(f"gomove warmup: [{i}/{len(steps)}] {what}: {time.perf_counter() - t:.1f} s")
    total = time.perf_counter() - start
    path = stamp_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, f"{total:.1f} s\n")
    except OSError as e:
        say(f"gomove warmup: could not write {path} ({e}); the next start warms up again")
    say(f"gomove warmup: done in {total:.0f} s; later starts load the compiled code")
    return total


def start_warmup(prog: str) -> threading.Thread | None:
    """At an engine's first start: the warm-up in a background thread (None when warm),
    on its own copies of the shipped models (the engine's are not shared across threads:
    a feature extractor keeps its buffers). GOMOVE_WARMUP=0 in the environment turns it
    off (the tests: their engines live for a few commands)."""
    if os.environ.get("GOMOVE_WARMUP", "1") == "0" or is_warm():
        return None
    _stderr(f"{prog}: first start: compiling the engine once (minutes; `gomove warmup` "
            "does it ahead); simple commands are answered meanwhile")  # fmt: skip

    def run() -> None:
        try:
            warm(*default_models())
        except Exception as e:  # the engine still compiles what it runs, only later
            _stderr(f"gomove warmup: failed ({type(e).__name__}: {e})")

    thread = threading.Thread(target=run, name="gomove-warmup", daemon=True)
    thread.start()
    return thread


def _territory() -> TerritoryCRF:
    """The shipped territory CRF (its features and their playouts), or an untrained one."""
    return TerritoryCRF.default() if pretrained.TERRITORY.is_file() else TerritoryCRF("wide")


def default_models() -> tuple[Predictor | None, PatternPolicy | None]:
    """The shipped model and policy, each None when this gomove has none."""
    predictor = Predictor.default() if pretrained.MODEL.is_file() else None
    policy = PatternPolicy.default() if pretrained.POLICY.is_file() else None
    return predictor, policy
