"""Pachi's pattern files (gomove.export.pachi, gomove export pachi).

Invariants checked:
- the gridcular order is Pachi's: point_order(10) follows the numbered d=10
  figure of Pachi's pattern/spatial.h, transcribed below, and the header is
  the one Pachi writes (its stock patterns_mm.spat's first lines);
- the STONES writer, on a hand-drawn pattern of each radius 3..10, gives the
  drawing's points read in the figure's order (X own, O opponent, # off board);
- every line of the exported files parses with an independent reader of
  Pachi's grammar (spatial.c's spatial_dict_read, prob.c's prob_dict_init):
  ``INDEX DIST STONES`` with indices 1, 2, ..., distances 3..10 sorted, as many
  stones as points within DIST; ``GAMMA (feature:payload)`` once per Pachi
  feature and payload and once per spatial of each distance;
- the spatial gammas multiplied along the chain Pachi matches give gomove's
  gamma of the largest pattern; the mapped tactical gammas are gomove's, the
  others the base file's (or 1 without one);
- with a built Pachi (GOMOVE_PACHI_SRC, ../pachi or ../ext/pachi), Pachi loads
  the exported files and answers genmove.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from sgfmill import sgf as sgf_moves
from synthetic import tiny
from test_export_mm import pachi_source

from gomove.cli import export as export_cli
from gomove.export.pachi import (
    PACHI_FEATURES,
    inner_patterns,
    point_order,
    spat_header,
    spatial_gammas,
    stones_string,
)
from gomove.features.patterns import S_EMPTY, S_OFF, S_OPP, S_OWN, make_templates
from gomove.models.checkpoint import load_checkpoint
from gomove.train.trainers import run

# Pachi's pattern/spatial.h: the index of every point of a d=10 pattern (y up).
FIGURE = """
                  61
            64 50 37 49 63
         54 40 30 21 29 39 53
      68 44 24 14 9  13 23 43 67
      58 34 18 6  1  5  17 33 57
   72 48 28 12 4  0  3  11 27 47 71
      60 36 20 8  2  7  19 35 59
      70 46 26 16 10 15 25 45 69
         56 42 32 22 31 41 55
            66 52 38 51 65
                  62
"""

# The first lines of Pachi's stock patterns_mm.spat (spatial_dict_writeinfo).
STOCK_HEADER = """\
# Pachi spatial patterns dictionary v1.1 maxdist 10
# Point order: d=0 
# Point order: d=1 0,0 
# Point order: d=2 0,1 0,-1 1,0 -1,0 
# Point order: d=3 1,1 -1,1 1,-1 -1,-1 
# Point order: d=4 0,2 0,-2 2,0 -2,0 
# Point order: d=5 1,2 -1,2 1,-2 -1,-2 2,1 -2,1 2,-1 -2,-1 
# Point order: d=6 0,3 0,-3 2,2 -2,2 2,-2 -2,-2 3,0 -3,0 
# Point order: d=7 1,3 -1,3 1,-3 -1,-3 3,1 -3,1 3,-1 -3,-1 
# Point order: d=8 0,4 0,-4 2,3 -2,3 2,-3 -2,-3 3,2 -3,2 3,-2 -3,-2 4,0 -4,0 
# Point order: d=9 1,4 -1,4 1,-4 -1,-4 3,3 -3,3 3,-3 -3,-3 4,1 -4,1 4,-1 -4,-1 
# Point order: d=10 0,5 0,-5 2,4 -2,4 2,-4 -2,-4 4,2 -4,2 4,-2 -4,-2 5,0 -5,0 
"""  # noqa: W291

# Hand-drawn patterns, one per radius: * the candidate, X the player to move
# (black in Pachi's files), O the opponent, # off the board; y up, x right.
DRAWN = {
    3: """
. O O
. * .
. . .
""",
    4: """
    X
  . X X
X . * . .
  . . .
    .
""",
    5: """
  . O #
. . . # #
. . * # #
O . . # #
  . . #
""",
    6: """
      X
  O X O # #
  . . O # #
O . . * # # #
  . X O # #
  # # # # #
      #
""",
    7: """
    X O #
  . X . # #
O . . . # # #
. . . * # # #
. . . X # # #
  # # # # #
    # # #
""",
    8: """
        O
    O . X X .
  O X X . X X X
  X O . . X X .
X O X . * O . X .
  O X . X X . .
  O . X . . . O
    # # # # #
        #
""",
    9: """
      O X #
  . . X . # # #
  . . . . # # #
. O O . O # # # #
. . . . * # # # #
. . . . . # # # #
  O . . . # # #
  . O . . # # #
      . . #
""",
    10: """
          .
      . X X # #
    . X O O # # #
  . X O . . # # # #
  X X . . . # # # #
. . . . . * # # # # #
  . . X X . # # # #
  O X . . . # # # #
    # # # # # # #
      # # # # #
          #
""",
}


def figure_points() -> dict[int, tuple[int, int]]:
    """index -> (x, y) from FIGURE: cells 3 characters wide, the 0 at the centre."""
    lines = [ln for ln in FIGURE.split("\n") if ln.strip()]
    centre_row = next(i for i, ln in enumerate(lines) if re.search(r"(^|\s)0(\s|$)", ln))
    col0 = re.search(r"(?<=\s)0(?=\s)", lines[centre_row]).start()
    out = {}
    for i, ln in enumerate(lines):
        for m in re.finditer(r"\d+", ln):
            assert (m.start() - col0) % 3 == 0
            out[int(m.group())] = ((m.start() - col0) // 3, centre_row - i)
    assert sorted(out) == list(range(73))
    return out


def drawing(text: str) -> dict[tuple[int, int], str]:
    """(x, y) -> character of a hand-drawn pattern (cells 2 characters wide)."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    cy = next(i for i, ln in enumerate(lines) if "*" in ln)
    cx = lines[cy].index("*")
    out = {}
    for i, ln in enumerate(lines):
        for j, ch in enumerate(ln):
            if ch != " ":
                assert (j - cx) % 2 == 0
                out[((j - cx) // 2, cy - i)] = ch
    return out


def gridcular(x: int, y: int) -> int:
    return abs(x) + abs(y) + max(abs(x), abs(y))


def test_point_order_is_pachis_figure():
    """Flattened, point_order(10) lists the figure's points in index order; d=0 has
    none and d=1 only the centre, as in Pachi's ptind[]."""
    pos = figure_points()
    flat = [p for pts in point_order(10) for p in pts]
    assert flat == [pos[i] for i in range(73)]
    assert point_order(10)[0] == [] and point_order(10)[1] == [(0, 0)]
    order = point_order(10)
    assert all(gridcular(x, y) == d for d, pts in enumerate(order) for x, y in pts if d > 1)


def test_header_is_the_one_pachi_writes():
    assert "\n".join(spat_header()) + "\n" == STOCK_HEADER


@pytest.mark.parametrize("radius", sorted(DRAWN))
def test_stones_follow_the_figure_on_hand_drawn_patterns(radius):
    """The writer's STONES of each drawing = the drawing read in the figure's order."""
    draw = drawing(DRAWN[radius])
    pos = figure_points()
    inside = [i for i in range(73) if gridcular(*pos[i]) <= radius]
    assert inside == list(range(len(inside)))  # Pachi's indices grow with distance
    assert set(draw) == {pos[i] for i in inside}  # the drawing covers the radius exactly
    want = "".join("." if draw[pos[i]] == "*" else draw[pos[i]] for i in inside)
    t = make_templates(3, 10)
    state = {".": S_EMPTY, "X": S_OWN, "O": S_OPP, "#": S_OFF}
    states = np.zeros(len(t.dx), dtype=np.uint8)
    for k, (x, y) in enumerate(zip(t.dx, t.dy, strict=True)):
        if gridcular(int(x), int(y)) <= radius:
            states[k] = state[draw[(int(x), int(y))]]
    assert stones_string(states, radius, t.dx, t.dy) == want


# --- the exported files ------------------------------------------------------------------


@pytest.fixture(scope="module")
def shape_run(games, tmp_path_factory) -> Path:
    """A tiny mm run whose patterns go up to radius 6 (stones kept by the harvest)."""
    tmp = tmp_path_factory.mktemp("run")
    run(tiny(games, tmp, ["model.max_iters=3"]), tmp / "run")
    return tmp / "run"


def read_spat(path: Path) -> list[tuple[int, int, str]]:
    """Pachi's spatial_dict_read grammar, independently: (index, dist, stones)."""
    entries = []
    for line in path.read_text().split("\n")[:-1]:
        if line.startswith("#"):
            continue
        m = re.fullmatch(r"(\d+) (\d+) ([.XO#]+)", line)
        assert m, line
        index, dist, stones = int(m.group(1)), int(m.group(2)), m.group(3)
        n_points = sum(1 for x in range(-10, 11) for y in range(-10, 11) if gridcular(x, y) <= dist)
        assert len(stones) == n_points and stones[0] == "."
        entries.append((index, dist, stones))
    assert [e[0] for e in entries] == list(range(1, len(entries) + 1))
    dists = [e[1] for e in entries]
    assert dists == sorted(dists) and all(3 <= d <= 10 for d in dists)
    return entries


def read_gamma(path: Path) -> dict[str, float]:
    """Pachi's prob_dict_init grammar, independently: one 'GAMMA (feature:payload)' a line."""
    out = {}
    for line in path.read_text().split("\n")[:-1]:
        m = re.fullmatch(r"(\S+) \(([a-z0-9_]+):([a-z0-9_]+)\)", line)
        assert m, line
        g = float(m.group(1))
        assert math.isfinite(g) and g > 0, line
        key = f"{m.group(2)}:{m.group(3)}"
        assert key not in out, f"two gammas for {key}"
        out[key] = g
    return out


@pytest.mark.parametrize("with_base", [False, True])
def test_exported_files_parse_with_pachis_grammar(shape_run, tmp_path, with_base):
    """Every line parses; every Pachi payload and every spatial has one gamma; mapped
    features carry gomove's gammas, the rest the base's (or 1)."""
    argv = ["pachi", str(shape_run), str(tmp_path / "out")]
    base = tmp_path / "stock.gamma"
    base.write_text("".join(f"7.5 ({f}:{p})\n" for f, payloads in PACHI_FEATURES for p in payloads))
    if with_base:
        argv += ["--base", str(base)]
    assert export_cli.main(argv) == 0
    spat = read_spat(tmp_path / "out" / "patterns_mm.spat")
    gam = read_gamma(tmp_path / "out" / "patterns_mm.gamma")
    state = load_checkpoint(shape_run / "model.pt")
    table = state["extractor"].table
    placeholders = [e for e in spat if set(e[2][1:]) == {"#"}]
    assert len(spat) == len(table) + len(placeholders)
    assert {e[1] for e in spat} == set(range(3, 11))  # Pachi needs every distance
    assert sorted(e[1] for e in placeholders) == [7, 8, 9, 10]  # the run's radii: 3..6
    want = {f"{f}:{p}" for f, payloads in PACHI_FEATURES for p in payloads}
    for d in range(3, 11):
        want |= {f"s{d}:{n}" for n in range(sum(1 for e in spat if e[1] == d))}
    assert set(gam) == want
    reg = state["extractor"].registry
    lg = state["module"].log_gamma.numpy()
    assert gam["capture:ladder"] == pytest.approx(math.exp(lg[reg.index("capture", "ladder")]))
    assert gam["border:0"] == pytest.approx(math.exp(lg[reg.index("border", "1")]))
    assert gam["dist:1"] == pytest.approx(math.exp(lg[reg.index("dist_prev", "<=2")]))
    assert gam["dist2:17"] == pytest.approx(math.exp(lg[reg.index("dist_prev2", ">=17")]))
    assert gam["nospat:0"] == 1.0 and gam["border:4"] == 1.0
    assert gam["net:cut"] == (7.5 if with_base else 1.0)


def test_spatial_only_keeps_pachis_tactical_gammas(shape_run, tmp_path):
    """--spatial-only: the same dictionary and spatial gammas, every tactical gamma the
    base's (nospat stays gomove's: it goes with the dictionary); without --base it is
    refused with one error line."""
    base = tmp_path / "stock.gamma"
    base.write_text("".join(f"7.5 ({f}:{p})\n" for f, payloads in PACHI_FEATURES for p in payloads))
    full, only = tmp_path / "full", tmp_path / "only"
    assert export_cli.main(["pachi", str(shape_run), str(full), "--base", str(base)]) == 0
    argv = ["pachi", str(shape_run), str(only), "--base", str(base), "--spatial-only"]
    assert export_cli.main(argv) == 0
    assert (only / "patterns_mm.spat").read_text() == (full / "patterns_mm.spat").read_text()
    a, b = read_gamma(full / "patterns_mm.gamma"), read_gamma(only / "patterns_mm.gamma")
    assert a.keys() == b.keys()
    for key in a:
        if key.startswith("s") and key[1].isdigit() or key.startswith("nospat"):
            assert b[key] == a[key], key
        else:
            assert b[key] == 7.5, key
    assert a["capture:ladder"] != 7.5  # the full export does carry gomove's tactics
    assert export_cli.main(["pachi", str(shape_run), str(tmp_path / "x"), "--spatial-only"]) == 2


def test_spatial_gammas_multiply_to_gomoves(shape_run):
    """Along each pattern's chain of kept inner patterns (what Pachi matches, one per
    distance), the written gammas multiply to gomove's gamma of the pattern."""
    state = load_checkpoint(shape_run / "model.pt")
    ex = state["extractor"]
    reg, table = ex.registry, ex.table
    g = reg.group_index("shape")
    lg = state["module"].log_gamma.numpy()[reg.offsets[g] : reg.offsets[g] + reg.sizes[g]]
    written = spatial_gammas(table, lg)
    inner = inner_patterns(table)
    assert (inner >= 0).sum() > 0
    for i in range(len(table)):
        prod, j = 1.0, i
        while j >= 0:
            assert j == i or table.radius[j] < table.radius[i]
            prod *= written[j]
            j = inner[j]
        assert prod == pytest.approx(math.exp(lg[i]), rel=1e-12)


def test_pachi_loads_the_exported_files(shape_run, tmp_path):
    """A built Pachi (no DCNN) reads the exported dictionary and gammas and plays."""
    src = pachi_source()
    if src is None or not (src / "pachi").is_file():
        pytest.skip("needs a built Pachi (GOMOVE_PACHI_SRC)")
    assert export_cli.main(["pachi", str(shape_run), str(tmp_path)]) == 0
    gtp = "boardsize 19\nclear_board\nplay b Q16\nplay w D4\ngenmove b\nquit\n"
    p = subprocess.run(
        [str(src / "pachi"), "-e", "pattern"],
        input=gtp,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    moves = [ln for ln in p.stdout.split("\n") if ln.startswith("= ") and len(ln) > 2]
    assert moves, p.stdout
    assert "Loaded spatial dictionary" in p.stderr or "spatial" in p.stderr.lower()


def test_pachi_matches_script_plays_a_row(shape_run, tmp_path):
    """scripts/pachi_matches.sh: a run's exported patterns against Pachi's stock files,
    the same binary on both sides (the row's options on the tested side only); every
    game ends, is recorded and refereed, colours alternate, and each side loaded its own
    dictionary."""
    src = pachi_source()
    if src is None or not (src / "pachi").is_file():
        pytest.skip("needs a built Pachi (GOMOVE_PACHI_SRC)")
    script = Path(__file__).resolve().parents[1] / "scripts" / "pachi_matches.sh"
    env = {**os.environ, "PACHI": str(src), "PACHI_DATA": str(tmp_path / "data"),
           "MATCHES": str(tmp_path / "matches"), "WORKERS": "1"}  # fmt: skip
    row_args = ["match", "9", "500", "2", "tiny", "prior=pattern=-300", "tinyp"]
    for args in (["data", str(shape_run), "tiny"], row_args):
        p = subprocess.run(["bash", str(script), *args], env=env, capture_output=True,
                           text=True, timeout=600)  # fmt: skip
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    row = tmp_path / "matches" / "pachi-9x9-500-tinyp" / "tinyp"
    results = [json.loads(line) for line in (row / "results.jsonl").read_text().splitlines()]
    assert len(results) == 2 and {r["gomove_color"] for r in results} == {"B", "W"}
    assert all(r["how"] for r in results)
    for sgf in sorted((row / "games").glob("*.sgf")):
        game = sgf_moves.Sgf_game.from_bytes(sgf.read_bytes())
        assert game.get_size() == 9 and len(game.get_main_sequence()) > 10
    spec = json.loads((row / "match.json").read_text())
    assert spec["env"]["DATA_DIR"].endswith("tiny")
    assert spec["gomove"].endswith("threads=1,pondering=0,prior=pattern=-300")
    assert spec["opponent"].endswith("threads=1,pondering=0")
    assert spec["opponent_env"]["DATA_DIR"].endswith("stock")
    logs = {f.name: f.read_text() for f in row.glob("*.stderr")}
    assert any(f"data{os.sep}tiny" in t for n, t in logs.items() if n.startswith("gomove"))
    assert any(f"data{os.sep}stock" in t for n, t in logs.items() if n.startswith("opponent"))
