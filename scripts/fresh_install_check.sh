#!/usr/bin/env bash
# A new user's first minutes, timed: a fresh virtual environment, torch's CPU build, then
# `pip install SOURCE` (not editable: the wheel's build compiles the engine, setup.py),
# and each command twice, first with an empty numba cache (cold), then again (warm):
# the first 19x19 and 9x9 genmove of `gomove gtp` with no options, the first response of
# `gomove analysis` to one query (a real game's position, 100 visits), and `gomove predict`
# on a real game. Each cold run has a cache folder of its own, empty before it.
#
#   scripts/fresh_install_check.sh [SOURCE_DIR] [WORK_DIR]
#   GOMOVE_PRECOMPILE=0 scripts/fresh_install_check.sh ...   # a wheel without compiled code
#
# DATA (default SOURCE_DIR/../shared/data) holds tygem-9d-2006-06.zip, whose first game
# is the real game; without it, the positions are two moves from the empty board.
# Writes WORK_DIR/times.txt (seconds of wall time from process start to the answer) and
# WORK_DIR/*.log; exits non-zero when a step fails or a genmove is not a legal vertex.
set -euo pipefail
SRC=$(cd "${1:-.}" && pwd)
WORK=${2:-$(mktemp -d)}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
DATA=${DATA:-$SRC/../shared/data}
python -m venv "$WORK/venv"
PY="$WORK/venv/bin/python"
"$PY" -m pip install -q --upgrade pip
"$PY" -m pip install -q torch==2.13.0
unset NUMBA_CACHE_DIR GOMOVE_WARMUP XDG_CACHE_HOME
cd "$WORK"                            # the installed package, not the source tree
: > times.txt
start=$(date +%s.%N)
"$PY" -m pip install -q "$SRC" 2> pip.log
end=$(date +%s.%N)
"$PY" -c "print(f'{$end - $start:7.1f} s  pip install SOURCE \
(GOMOVE_PRECOMPILE=${GOMOVE_PRECOMPILE:-1})')" | tee -a times.txt
G="$WORK/venv/bin/gomove"

# the real game (its first 119 moves) as an SGF and as an analysis query
XDG_CACHE_HOME="$WORK/cache-setup" "$PY" - "$DATA/tygem-9d-2006-06.zip" <<'EOF'
import json, sys, zipfile
from pathlib import Path
from gomove.reading.games import load_game
from gomove.board.coords import move_to_loc, loc_to_gtp
try:
    with zipfile.ZipFile(sys.argv[1]) as z:
        Path("game.sgf").write_bytes(z.read(sorted(n for n in z.namelist() if n.endswith(".sgf"))[0]))
    game, upto = load_game("game.sgf", 0), 119
    moves = [["B" if c == 1 else "W", loc_to_gtp(move_to_loc(m, game.size), game.size)]
             for c, m in game.moves[:upto]]
except FileNotFoundError:
    moves = [["B", "Q16"], ["W", "D4"]]
Path("query.json").write_text(json.dumps({"id": "q", "moves": moves, "rules": "chinese",
    "komi": 7.5, "boardXSize": 19, "boardYSize": 19, "maxVisits": 100}) + "\n")
EOF

# first_answer NAME PATTERN CMD...: wall seconds from the process start to its first
# stdout line matching PATTERN (stdin: NAME.in, kept open until then); into times.txt
first_answer() {
    local name=$1 pattern=$2
    shift 2
    "$PY" - "$name" "$pattern" "$@" <<'EOF' | tee -a times.txt
import re, subprocess, sys, time
name, pattern, cmd = sys.argv[1], re.compile(sys.argv[2], re.M), sys.argv[3:]
start = time.perf_counter()
with open(f"{name}.err", "w") as err:
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
    p.stdin.write(open(f"{name}.in").read())
    p.stdin.flush()
    out = []
    for line in p.stdout:
        out.append(line)
        if pattern.search(line):
            break
    took = time.perf_counter() - start
    p.stdin.close()
    out += p.stdout.readlines()
    p.wait()
open(f"{name}.out", "w").write("".join(out))
if not pattern.search("".join(out)):
    sys.exit(f"{name}: no answer matching {pattern.pattern}")
print(f"{took:7.1f} s  {name}")
EOF
}

for run in cold warm; do
    export XDG_CACHE_HOME="$WORK/cache-gtp"
    [ $run = cold ] && rm -rf "$XDG_CACHE_HOME"
    for size in 19 9; do  # 9x9 after 19x19 on the same cache: cold is 19x19's
        printf 'boardsize %s\ngenmove b\nquit\n' "$size" > "gtp$size-$run.in"
        first_answer "gtp$size-$run" '^= [A-HJ-T][0-9]+$' "$G" gtp
    done
    export XDG_CACHE_HOME="$WORK/cache-analysis"
    [ $run = cold ] && rm -rf "$XDG_CACHE_HOME"
    cp query.json "analysis-$run.in"
    first_answer "analysis-$run" '"moveInfos"' "$G" analysis
    export XDG_CACHE_HOME="$WORK/cache-predict"
    [ $run = cold ] && rm -rf "$XDG_CACHE_HOME"
    : > "predict-$run.in"
    if [ -f game.sgf ]; then
        first_answer "predict-$run" 'expert move' "$G" predict game.sgf --move 120
    else
        first_answer "predict-$run" ' 1\. ' "$G" predict --moves "B Q16 W D4"
    fi
done
grep -h '^= [A-HJ-T]' gtp*.out
head -4 predict-warm.out
du -sh "$WORK/venv/lib/python"*/site-packages/gomove | tee -a times.txt
du -sh "$WORK/venv/lib/python"*/site-packages/gomove/_numba 2>/dev/null | tee -a times.txt || true
