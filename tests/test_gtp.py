"""The GTP engine (gomove.play.gtp) and the match harness (gomove.evaluate.match).

- a transcript checked line by line: standard commands, malformed ones, undo
  past the start, illegal moves, ids;
- lz-analyze, lz-genmove_analyze and kata-analyze lines parsed back by a small
  independent parser (field names, ranges, ownership count);
- fuzz: thousands of random and malformed commands, each answered exactly once
  with '=' or '?', the engine's board always the replay of its move list;
- gomove gtp as a process; gomove match resumes and refs with final_score
  (gomove against itself; against GNU Go when installed);
- --ownership crf: gomove-ownership, kata-analyze's ownership and final_score's
  dead stones are the territory CRF's map of the position; a bad --territory is a
  one-line exit.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sgfmill import sgf

from gomove.board.board import BLACK, WHITE, new_board, play
from gomove.board.coords import gtp_to_loc
from gomove.cli.gtp import add_engine_args, build_engine
from gomove.cli.gtp import main as gtp_main
from gomove.cli.match import main as match_main
from gomove.evaluate.match import (
    engine_command,
    find_program,
    read_results,
    run_match,
    summary,
    wilson,
)
from gomove.models.territory.crf import TerritoryCRF
from gomove.play.game import GameState
from gomove.play.gtp.engine import GtpEngine
from gomove.play.gtp.info_lines import point_vertex
from gomove.play.gtp.protocol import parse_command, preprocess
from gomove.play.gtp.server import answer, serve
from gomove.play.ownership import crf_ownership, ownership
from gomove.play.search.presets import DEFAULT_TREE, pachi_prior, tree_settings
from gomove.play.search.settings import SearchConfig
from gomove.playout.policy import PatternPolicy


def engine(predictor=None, territory=None, **kw) -> GtpEngine:
    cfg = SearchConfig(playouts="pattern", pw=predictor is not None, sims=40, resign=0, **kw)
    return GtpEngine(predictor, PatternPolicy.neutral(), cfg, owner_playouts=50,
                     territory=territory)  # fmt: skip


def transcript(e: GtpEngine, commands: str) -> list[str]:
    out = io.StringIO()
    serve(e, io.StringIO(commands), out)
    return out.getvalue().split("\n")


def test_transcript(capture_model):
    e = engine(capture_model)
    lines = transcript(e, "\n".join([
        "protocol_version", "1 name", "# a comment", "", "2 boardsize 9", "komi 6.5",
        "play b E5", "play w E5", "play black J9", "play x E5", "play b I5", "play b E99",
        "play b", "boardsize 40", "komi abc", "3 undo", "undo", "undo", "frobnicate",
        "known_command genmove", "known_command frobnicate", "play w pass", "genmove b",
        "time_settings 60 5 1", "time_left w 30 0", "time_left q 30 0", "quit", "name",
    ]) + "\n")  # fmt: skip
    expected = [
        "= 2", "", "=1 gomove", "", "=2", "", "=", "", "=", "",
        "? illegal move", "", "=", "",
        "? syntax error: a colour (b, w, black, white) is needed", "",
        "? invalid coordinate", "", "? invalid coordinate", "", "? syntax error", "",
        "? unacceptable size", "", "? syntax error", "", "=3", "", "=", "",
        "? cannot undo", "", "? unknown command", "", "= true", "", "= false", "",
        "=", "",
    ]  # fmt: skip
    assert lines[: len(expected)] == expected
    genmove = lines[len(expected)]
    assert re.fullmatch(r"= ([A-HJ][1-9]|pass|resign)", genmove), genmove
    assert lines[len(expected) + 1 :] == [
        "",
        "=",
        "",
        "=",
        "",
        "? syntax error: a colour (b, w, black, white) is needed",
        "",
        "=",
        "",
        "",
    ]  # fmt: skip  (nothing after quit)
    assert e.quit


def test_preprocess_and_parse():
    assert preprocess("\tplay\x01 b\tC3 # note\r") == "play b C3"
    assert parse_command("  ") is None and parse_command("# only") is None
    assert parse_command("12 GenMove W") == ("12", "genmove", ["W"])
    assert parse_command("7") == ("7", "", [])


def parse_info(line: str) -> list[dict]:
    """An independent reader of Leela Zero / KataGo info lines: [{key: value}] per move,
    plus {'rootInfo': True, key: value} and {'ownership': [...]} when present."""
    tokens = line.split()
    assert tokens[0] == "info", line
    moves: list[dict] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t in ("info", "rootInfo"):
            moves.append({"rootInfo": True} if t == "rootInfo" else {})
            i += 1
        elif t == "pv":
            j = i + 1
            while j < len(tokens) and tokens[j] not in ("info", "rootInfo", "ownership"):
                j += 1
            moves[-1]["pv"] = tokens[i + 1 : j]
            i = j
        elif t == "ownership":
            moves.append({"ownership": [float(x) for x in tokens[i + 1 :]]})
            break
        else:
            moves[-1][t] = tokens[i + 1]
            i += 2
    return moves


def test_analysis_stream_writes_no_empty_line(capture_model):
    """An update with nothing searched yet writes nothing: an empty line would end the
    GTP response, and the client would read the next lines as garbage."""
    e = engine(capture_model)
    answer(e, "boardsize 9", lambda s: None, lambda: False)
    out: list[str] = []
    calls = iter(range(10))
    e._stream(1, 0.05, out.append, lambda: next(calls) >= 2, lambda r: "")
    assert out == []
    calls = iter(range(10))
    e._stream(1, 0.05, out.append, lambda: next(calls) >= 2, lambda r: "info x")
    assert out == ["info x\n", "info x\n"]


def test_lz_and_kata_analyze_lines_parse(capture_model):
    e = engine(capture_model)
    e.search_cfg.sims = 200
    for cmd in ("boardsize 9", "play b E5", "play w C3"):
        answer(e, cmd, lambda s: None, lambda: False)
    warm = iter(range(10))  # compiled kernels, so that every interval searches something
    answer(e, "lz-analyze b 5", lambda s: None, lambda: next(warm) >= 1)
    out: list[str] = []
    calls = iter(range(10))
    answer(e, "lz-analyze b 5", out.append, lambda: next(calls) >= 3)
    text = "".join(out).split("\n")
    assert text[0] == "=" and text[-2:] == ["", ""]
    assert all(text[1:-2])  # no empty line inside the response: it would end it
    infos = [x for x in text if x.startswith("info")]
    assert len(infos) == 3
    for line in infos:
        moves = parse_info(line)
        assert [int(m["order"]) for m in moves] == list(range(len(moves)))
        for m in moves:
            assert set(m) == {"move", "visits", "winrate", "prior", "lcb", "order", "pv"}
            assert 0 <= int(m["winrate"]) <= 10000 and 0 <= int(m["prior"]) <= 10000
            assert int(m["lcb"]) <= int(m["winrate"])
            assert m["pv"][0] == m["move"] and int(m["visits"]) > 0
        visits = [int(m["visits"]) for m in moves]
        assert visits == sorted(visits, reverse=True)
    out.clear()
    calls = iter(range(10))
    answer(e, "kata-analyze interval 5 ownership true", out.append, lambda: next(calls) >= 1)
    line = [x for x in "".join(out).split("\n") if x.startswith("info")][0]
    moves = parse_info(line)
    own = moves[-1]["ownership"]
    assert len(own) == 81 and all(-1 <= x <= 1 for x in own)
    assert 0 <= float(moves[0]["winrate"]) <= 1
    out.clear()
    answer(e, "lz-genmove_analyze b 5", out.append, lambda: False)
    text = "".join(out).split("\n")
    assert text[0] == "=" and text[-3].startswith("play ") and text[-2:] == ["", ""]
    assert all(x.startswith("info") for x in text[1:-3])
    assert len(e.game.moves) == 3


def test_kata_analyze_carries_the_searchs_scores(capture_model):
    """kata-analyze's moves carry scoreMean = scoreLead and scoreStdev after the winrate,
    in KataGo's order: the mean and spread of the final scores of the search's
    simulations through the move (the tree's, Black's view), for the colour analysed;
    rootInfo true adds the root's view, the moves pooled, the root node's own."""
    e = engine(capture_model)
    for cmd in ("boardsize 9", "komi 6.5", "play b E5", "play w C3", "play b G7"):
        answer(e, cmd, lambda s: None, lambda: False)
    out: list[str] = []
    calls = iter(range(10))
    answer(e, "kata-analyze w interval 5 rootInfo true", out.append, lambda: next(calls) >= 1)
    line = [x for x in "".join(out).split("\n") if x.startswith("info")][-1]
    *moves, root = parse_info(line)
    assert root["rootInfo"] and len(moves) > 1
    assert list(moves[0]) == ["move", "visits", "winrate", "scoreMean", "scoreStdev",
                              "scoreLead", "prior", "lcb", "order", "pv"]  # fmt: skip
    t, r = e.search.tree, e.search.root
    f, k = int(t.first[r]), int(t.nchild[r])
    for m in moves:
        child = f + int(np.nonzero(t.move[f : f + k] == gtp_to_loc(m["move"], 9))[0][0])
        n = t.visits[child]
        mean = t.score_sum[child] / n
        assert int(m["visits"]) == n and m["scoreMean"] == m["scoreLead"]
        assert float(m["scoreLead"]) == pytest.approx(-mean, abs=1e-5)  # White's view
        assert float(m["scoreStdev"]) == pytest.approx(np.sqrt(t.score_sq[child] / n - mean**2),
                                                       abs=1e-5)  # fmt: skip
    n = t.visits[r]
    mean = t.score_sum[r] / n
    assert int(root["visits"]) == n
    assert float(root["winrate"]) == pytest.approx(1 - t.wins[r] / n, abs=1e-5)
    assert float(root["scoreMean"]) == float(root["scoreLead"])
    assert float(root["scoreLead"]) == pytest.approx(-mean, abs=1e-5)
    assert float(root["scoreStdev"]) == pytest.approx(np.sqrt(t.score_sq[r] / n - mean**2),
                                                      abs=1e-5)  # fmt: skip


def test_gogui_analyze(capture_model):
    e = engine(capture_model)
    out: list[str] = []
    for cmd in ("boardsize 9", "gogui-analyze_commands", "gomove-heatmap", "gomove-visits",
                "genmove b", "gomove-visits", "gomove-ownership"):  # fmt: skip
        answer(e, cmd, out.append, lambda: False)
    commands, heat, no_visits, _, visits, own = out[1:]
    assert "gfx/Move probabilities (model)/gomove-heatmap" in commands
    assert heat.startswith("= \nINFLUENCE ") and "\nLABEL " in heat
    assert no_visits.startswith("? no search yet")
    assert "LABEL" in visits
    values = [float(x) for x in own.split("INFLUENCE ")[1].split()[1::2]]
    assert all(-1 <= v <= 1 for v in values)


def random_command(rnd: random.Random) -> str:
    names = ["play", "genmove", "undo", "boardsize", "komi", "clear_board", "showboard",
             "final_score", "known_command", "time_settings", "time_left", "name",
             "list_commands", "reg_genmove", "gomove-heatmap", "gomove-visits", "bogus",
             "protocol_version", "", "lz-analyze"]  # fmt: skip
    args = ["b", "w", "B", "white", "x", "A1", "E5", "J9", "T19", "pass", "PASS", "Z0", "I3",
            "-1", "0", "9", "7", "19", "40", "6.5", "nan", "inf", "1e999", "\x00", "\t",
            "é", "#", "99999999999999999999", "5 5", ""]  # fmt: skip
    if rnd.random() < 0.1:
        return "".join(chr(rnd.randrange(0, 300)) for _ in range(rnd.randrange(12)))
    name = rnd.choice(names)
    if rnd.random() < 0.1:
        name = name.upper()
    cid = f"{rnd.randrange(100)} " if rnd.random() < 0.2 else ""
    return cid + " ".join([name] + [rnd.choice(args) for _ in range(rnd.randrange(4))])


def test_fuzz_answers_every_command(capture_model):
    rnd = random.Random(0)
    e = engine(capture_model)
    e.search_cfg.sims = 8
    e.owner_playouts = 4
    n_answers = 0
    for _ in range(3000):
        line = random_command(rnd)
        out: list[str] = []
        answer(e, line, out.append, lambda: True)
        text = "".join(out)
        if parse_command(line) is None:
            assert text == ""
            continue
        n_answers += 1
        assert text[0] in "=?" and text.endswith("\n\n") and text.count("\n\n") == 1, (line, text)
        # the board is always the replay of the move list
        g: GameState = e.game
        ref = new_board(g.size)
        for color, loc in g.moves:
            play(ref, loc, color)
        assert np.array_equal(ref.color, g.board.color), line
        assert np.array_equal(ref.zhash, g.board.zhash)
    assert n_answers > 2000


def test_gtp_process(runs):
    proc = subprocess.run(
        [sys.executable, "-m", "gomove.cli", "gtp", "--model", str(runs["mm"]), "--policy",
         str(runs["policy"]), "--sims", "30"],
        input="boardsize 9\nplay b E5\ngenmove w\nfinal_score\nquit\n",
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    blocks = proc.stdout.split("\n\n")
    assert blocks[0] == "=" and blocks[1] == "="
    assert re.fullmatch(r"= ([A-HJ][1-9]|pass|resign)", blocks[2])
    assert re.fullmatch(r"= (B\+|W\+)[0-9.]+|= 0", blocks[3])


def test_tree_follows_the_board_size(runs):
    """--tree: Pachi's tree settings (pachi_prior) or Coulom's widening for each board size
    from the first search on and after every boardsize, --set over them; auto picks the
    measured best of each size (DEFAULT_TREE), and the search plays."""
    ap = argparse.ArgumentParser()
    add_engine_args(ap)
    args = ["--model", str(runs["mm"]), "--policy", str(runs["policy"]), "--sims", "30"]
    e = build_engine(ap.parse_args([*args, "--pachi-prior", "--set", "rave_k=500"]))
    for size in (19, 9, 13, 19, 9):
        if size != 19 or e.game.size != 19:
            assert transcript(e, f"boardsize {size}\n")[0] == "="
        want = {**pachi_prior(size), "rave_k": 500.0, "sims": 30}
        assert {k: getattr(e.search_cfg, k) for k in want} == want
        assert e.search.cfg is e.search_cfg
    lines = transcript(e, "play b E5\ngenmove w\n")
    assert lines[0] == "=" and re.fullmatch(r"= ([A-HJ][1-9]|pass|resign)", lines[2])
    coulom = build_engine(ap.parse_args([*args, "--tree", "coulom"]))
    assert coulom.search_cfg.prior_eqex == 0.0 and coulom.search_cfg.pw
    auto = build_engine(ap.parse_args(args))
    nearest = {9: 9, 13: 13, 19: 19, 7: 9, 15: 13, 17: 19}  # a size between: the nearer
    for size, measured in nearest.items():
        assert transcript(auto, f"boardsize {size}\n")[0] == "="
        want = tree_settings(DEFAULT_TREE[measured], size)
        assert {k: getattr(auto.search_cfg, k) for k in want} == want
    pw19 = build_engine(ap.parse_args([*args, "--tree", "pachi-pw"]))
    assert transcript(pw19, "boardsize 19\n")[0] == "="
    assert pw19.search_cfg.pw_base == 40.0 and pw19.search_cfg.promote_at is None
    assert pw19.search_cfg.prior_eqex == pachi_prior(19)["prior_eqex"]
    assert build_engine(ap.parse_args([*args, "--no-pw"])).sized is None
    with pytest.raises(ValueError, match="--tree pachi needs the full model"):
        build_engine(ap.parse_args([*args, "--pachi-prior", "--no-pw"]))
    with pytest.raises(ValueError, match="--tree pachi-pw needs the full model"):
        build_engine(ap.parse_args([*args, "--tree", "pachi-pw", "--no-pw"]))
    with pytest.raises(ValueError, match="--set"):
        build_engine(ap.parse_args([*args, "--pachi-prior", "--set", "prior_eqx=3"]))


def test_gtp_cli_errors(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "gomove.cli", "gtp", "--model", str(tmp_path / "none.pt")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode != 0 and "gomove gtp:" in proc.stderr and "Traceback" not in proc.stderr


def gtp_cmd(runs, *extra) -> list[str]:
    return [sys.executable, "-m", "gomove.cli", "gtp", "--policy", str(runs["policy"]),
            "--model", "none", "--sims", "20", "--no-pw", *extra]  # fmt: skip


def test_match_resumes(runs, tmp_path):
    out = tmp_path / "m"
    first = run_match(out, gtp_cmd(runs), gtp_cmd(runs, "--uniform"), 2, 5, 0.5)
    assert [r.index for r in first] == [0, 1]
    assert [r.gomove_color for r in first] == ["B", "W"]
    for r in first:
        game = sgf.Sgf_game.from_bytes((out / "games" / f"{r.index:04d}.sgf").read_bytes())
        assert game.get_size() == 5 and len(game.get_main_sequence()) == len(r.moves) + 1
        assert r.how in ("score", "resign", "max_moves", "illegal")
    # an interrupted match: a cut last line and a missing game are played again, no more
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text(lines[0] + "\n" + lines[1][:20])
    assert sorted(read_results(out)) == [0]
    again = run_match(out, gtp_cmd(runs), gtp_cmd(runs, "--uniform"), 3, 5, 0.5)
    assert [r.index for r in again] == [0, 1, 2]
    assert again[0] == first[0]
    s = summary(again)
    assert s["games"] == 3 and 0 <= s["win_rate"] <= 1
    assert json.loads((out / "match.json").read_text())["games"] == 3


def test_wilson():
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0


@pytest.mark.skipif(find_program("gnugo") is None, reason="GNU Go is not installed")
def test_match_against_gnugo(runs, tmp_path):
    gnugo = [find_program("gnugo"), "--mode", "gtp", "--level", "1", "--chinese-rules"]
    results = run_match(tmp_path / "g", gtp_cmd(runs), gnugo, 2, 5, 0.5)
    assert len(results) == 2
    for r in results:
        if r.how == "score":
            assert r.referee_score[:2] in ("B+", "W+") or r.referee_score == "0"


@pytest.mark.skipif(find_program("gnugo") is None, reason="GNU Go is not installed")
def test_check_resignations_flags_a_resigned_win(tmp_path):
    """scripts/check_resignations.py: White walls off rows 2-4 of a 5x5 board and
    owns it all; a resignation by Black is right, one by White is flagged."""
    row = tmp_path / "row"
    row.mkdir()
    (row / "match.json").write_text(json.dumps({"size": 5, "komi": 0.5, "games": 2}))
    moves = [m for c in "ABCDE" for r in "234" for m in ("B PASS", f"W {c}{r}")]
    lines = [
        json.dumps(
            {
                "index": i,
                "gomove_color": colour,
                "winner": "BW"[colour == "B"],
                "gomove_won": False,
                "how": "resign",
                "referee_score": "",
                "gomove_score": "",
                "agreed": True,
                "moves": moves,
            }
        )
        for i, colour in enumerate("BW")
    ]
    (row / "results.jsonl").write_text("\n".join(lines) + "\n")
    script = Path(__file__).resolve().parents[1] / "scripts" / "check_resignations.py"
    out = subprocess.run(
        [sys.executable, str(script), str(row), "--level", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.splitlines()
    games = {line.split()[0]: line for line in out[:2]}
    assert "W+25.5" in games["0"] and "RESIGNED_A_WIN" not in games["0"]
    assert "W+25.5" in games["1"] and games["1"].endswith("RESIGNED_A_WIN")
    assert out[2].startswith("2 resignations, 1 of them")


def test_fuzz_gtp_process():
    """2,000 random and malformed commands piped into a gomove gtp process: one answer
    each, then a clean exit at the end of the input."""
    rnd = random.Random(5)
    lines = [random_command(rnd).replace("\n", " ").replace("\r", " ") for _ in range(2000)]
    lines = [x for x in lines if "quit" not in x.lower()]
    expected = sum(parse_command(x) is not None for x in lines)
    proc = subprocess.run(
        [sys.executable, "-m", "gomove.cli", "gtp", "--sims", "4", "--uniform", "--model", "none"],
        input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=600,
        encoding="utf-8", errors="replace",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    answers = [b for b in proc.stdout.split("\n\n") if b.strip()]
    assert len(answers) == expected
    assert all(b.lstrip("\n")[0] in "=?" for b in answers)
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(find_program("gnugo") is None, reason="GNU Go is not installed")
def test_match_cli_plays_another_engine(runs, tmp_path, capsys):
    """--engine: any GTP program in gomove's place, each row's ARGS added to its command."""
    engine = shlex.join([sys.executable, "-m", "gomove.cli", "gtp", "--policy", str(runs["policy"]),
                         "--model", "none", "--sims", "20", "--no-pw"])  # fmt: skip
    out = tmp_path / "cal"
    match_main(["--engine", engine, "--row", "uni=--uniform", "--size", "5", "--komi", "0.5",
                "--games", "2", "--level", "1", "--out", str(out)])  # fmt: skip
    spec = json.loads((out / "uni" / "match.json").read_text())
    assert spec["gomove"] == engine + " --uniform" and spec["games"] == 2
    assert len(read_results(out / "uni")) == 2
    table = (out / "table.md").read_text()
    assert table.startswith(Path(sys.executable).name) and "its own budget" in table
    assert "| uni | 2 |" in table


def test_match_cli_errors(tmp_path):
    with pytest.raises(SystemExit, match="at least one --row"):
        match_main(["--engine", sys.executable, "--out", str(tmp_path / "x")])
    with pytest.raises(SystemExit, match="program not found"):
        match_main(["--engine", "no-such-engine-x", "--row", "a=", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="no such file"):
        match_main(["--model", str(tmp_path / "none.pt"), "--out", str(tmp_path / "x")])
    with pytest.raises(SystemExit, match="'no-such-gnugo-x' not found"):
        match_main(["--engine", sys.executable, "--row", "a=", "--gnugo", "no-such-gnugo-x",
                    "--out", str(tmp_path / "x")])  # fmt: skip


def test_engine_command_resolves_its_program():
    """The program is resolved as find_program does (PATH, then /usr/games), so a
    command that passed the check also starts; shell quoting is kept."""
    got = engine_command(f"{Path(sys.executable).name} -c 'print(1)'")
    assert Path(got[0]).is_absolute() and got[1:] == ["-c", "print(1)"]
    if find_program("gnugo") is not None:
        assert engine_command("gnugo --mode gtp") == [find_program("gnugo"), "--mode", "gtp"]
    for bad in ("", "no-such-engine-x --x"):
        with pytest.raises(ValueError, match="program not found"):
            engine_command(bad)


def test_match_cli_plays_two_engines_each_with_its_environment(runs, tmp_path, capsys):
    """--opponent: any GTP program in GNU Go's place, refereeing by its final_score;
    --engine-env and --opponent-env reach each engine's process (no GNU Go needed)."""
    gtp = shlex.join([sys.executable, "-m", "gomove.cli", "gtp", "--model", "none",
                      "--policy", "none", "--sims", "8"])  # fmt: skip
    seen = tmp_path / "seen.txt"
    opponent = f"sh -c 'echo $PROBE > {seen}; exec {gtp} --seed 1'"
    out = tmp_path / "duel"
    match_main(["--engine", gtp, "--row", "a=", "--size", "5", "--komi", "0.5", "--games", "2",
                "--opponent", opponent, "--opponent-env", "PROBE=stock-patterns",
                "--engine-env", "PROBE=other", "--out", str(out)])  # fmt: skip
    assert seen.read_text().strip() == "stock-patterns"
    spec = json.loads((out / "a" / "match.json").read_text())
    assert spec["env"] == {"PROBE": "other"} and spec["opponent_env"] == {"PROBE": "stock-patterns"}
    assert len(read_results(out / "a")) == 2
    assert "sh -c 'echo $PROBE" in (out / "table.md").read_text().splitlines()[0]
    with pytest.raises(SystemExit, match="expected KEY=VALUE"):
        match_main(["--engine", gtp, "--row", "a=", "--opponent-env", "NOVALUE", "--out",
                    str(tmp_path / "x")])  # fmt: skip


# Black walls off rows 1-5, White rows 7-9; the white stone on E1 is dead.
WALLS = [f"play b {c}5" for c in "ABCDEFGHJ"] + [f"play w {c}7" for c in "ABCDEFGHJ"]
WALLS += ["play w E1", "komi 0.5"]


def crf_engine(territory_path) -> GtpEngine:
    e = engine(territory=TerritoryCRF.load(territory_path))
    commands = ["boardsize 9", *WALLS]
    assert transcript(e, "\n".join(commands) + "\n") == ["=", ""] * len(commands) + [""]
    return e


def test_crf_ownership_map_and_final_score(territory_path):
    """gomove-ownership is the CRF's map of the position, and final_score removes the
    stone it gives to the other side: B 45 - W 27 - komi 0.5 (row 6 is dame)."""
    e = crf_engine(territory_path)
    out: list[str] = []
    for cmd in ("gogui-analyze_commands", "gomove-ownership", "final_score"):
        answer(e, cmd, out.append, lambda: False)
    commands, gfx, score = out
    assert "gfx/Ownership (CRF)/gomove-ownership" in commands
    own = crf_ownership(e.game.board, BLACK, 0.5, e.territory)
    tokens = gfx.split("INFLUENCE ")[1].split()
    shown = dict(zip(tokens[::2], map(float, tokens[1::2]), strict=True))
    want = {point_vertex(r, c): x for (r, c), x in np.ndenumerate(own.black - own.white)}
    assert shown == pytest.approx({v: round(x, 3) for v, x in want.items() if x != 0}, abs=1e-9)
    assert shown["E1"] > 0.6  # the white stone is black's: dead
    assert score == "= B+17.5\n\n"


def test_playout_ownership_is_the_ownership_modules_map():
    """Without a CRF the engine's map is gomove.play.ownership's, owner_playouts playouts
    of its policy, seed 0; final_score judges E1 dead by it too."""
    e = engine()
    commands = ["boardsize 9", *WALLS]
    assert transcript(e, "\n".join(commands) + "\n") == ["=", ""] * len(commands) + [""]
    own = ownership(e.game.board, BLACK, 50, 0.5, 0, policy=e.policy)
    np.testing.assert_array_equal(e.ownership(), own.black - own.white)
    assert e.final_score([]) == "B+17.5"


def test_crf_ownership_in_kata_analyze(territory_path):
    """kata-analyze ... ownership true carries the CRF's map (of the colour asked for, in
    its perspective), size * size values top row first, the same on every line."""
    e = crf_engine(territory_path)
    out: list[str] = []
    calls = iter(range(10))
    answer(e, "kata-analyze w interval 5 ownership true", out.append, lambda: next(calls) >= 2)
    lines = [x for x in "".join(out).split("\n") if "ownership" in x]
    assert len(lines) == 2
    own = crf_ownership(e.game.board, WHITE, 0.5, e.territory)
    want = [-(own.black - own.white)[r, c] for r in range(8, -1, -1) for c in range(9)]
    for line in lines:
        values = [float(x) for x in line.split("ownership ")[1].split()]
        assert values == pytest.approx(want, abs=1e-4) and len(values) == 81


def test_gtp_options_choose_the_ownership_method(territory_path, tmp_path, capsys):
    ap = argparse.ArgumentParser()
    add_engine_args(ap)
    base = ["--model", "none", "--policy", "none"]
    assert build_engine(ap.parse_args(base)).territory is None  # playouts by default
    crf = build_engine(ap.parse_args([*base, "--ownership", "crf", "--territory",
                                      str(territory_path)]))  # fmt: skip
    assert crf.territory.features == "stern"
    assert "ownership: the territory CRF" in capsys.readouterr().err
    (tmp_path / "bad.pt").write_bytes(b"PK\x03\x04 not a zip")
    for bad in (tmp_path / "bad.pt", tmp_path / "none.pt"):
        with pytest.raises(SystemExit) as e:
            gtp_main([*base, "--ownership", "crf", "--territory", str(bad)])
        msg = str(e.value.code)
        assert msg.startswith("gomove gtp: ") and str(bad) in msg and "\n" not in msg, msg


def test_match_cli_reports_games_an_engine_failed(tmp_path):
    """An engine that refuses its arguments loses no game to the harness: every game
    stays unplayed, errors.txt gives the engine's own reason, the command exits 1, and
    a later run with nothing failed removes the stale errors.txt."""
    code = "import sys; sys.stderr.write('Error: minimum 500 playouts.\\n'); sys.exit(1)"
    broken = shlex.join([sys.executable, "-c", code])
    out = tmp_path / "m"
    with pytest.raises(SystemExit, match="2 of 2 games"):
        match_main(["--engine", broken, "--opponent", broken, "--row", "a=", "--size", "5",
                    "--games", "2", "--out", str(out)])  # fmt: skip
    errors = (out / "a" / "errors.txt").read_text().splitlines()
    assert len(errors) == 2 and all("minimum 500 playouts" in e for e in errors)
    assert read_results(out / "a") == {}
    assert "| a | 0 | 0 | - |" in (out / "table.md").read_text()
    match_main(["--engine", broken, "--opponent", broken, "--row", "a=", "--size", "5",
                "--games", "0", "--out", str(out)])  # fmt: skip
    assert not (out / "a" / "errors.txt").exists()
