#!/usr/bin/env bash
# A new user's first minutes, timed: a fresh virtual environment, `pip install .` (not
# editable), an empty numba cache; then the one-time `gomove warmup`, the first 19x19 and
# 9x9 genmove of `gomove gtp` with no options, and `gomove predict` with no --model.
#
#   scripts/fresh_install_check.sh [SOURCE_DIR] [WORK_DIR]
#
# Writes WORK_DIR/times.txt (seconds of wall time per step) and WORK_DIR/*.log; exits
# non-zero when a step fails or a genmove is not a legal vertex.
set -euo pipefail
SRC=$(cd "${1:-.}" && pwd)
WORK=${2:-$(mktemp -d)}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
python -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q --upgrade pip
"$WORK/venv/bin/pip" install -q torch==2.13.0
"$WORK/venv/bin/pip" install -q "$SRC"
export XDG_CACHE_HOME="$WORK/cache"   # an empty numba cache (gomove keys it under here)
unset NUMBA_CACHE_DIR GOMOVE_WARMUP
cd "$WORK"                            # the installed package, not the source tree
G="$WORK/venv/bin/gomove"
: > times.txt
timed() {  # timed NAME CMD...: wall seconds of CMD into times.txt
    local name=$1 start end
    shift
    start=$(date +%s.%N)
    "$@"
    end=$(date +%s.%N)
    python -c "print(f'{$end - $start:7.1f} s  $name')" | tee -a times.txt
}
timed "gomove warmup (empty cache)" "$G" warmup 2> warmup.log
for size in 19 9; do
    timed "gomove gtp: ${size}x${size} genmove, process start to answer" \
        "$G" gtp > "gtp$size.out" 2> "gtp$size.log" <<< $'boardsize '"$size"$'\ngenmove b\nquit'
    grep -Eq '^= [A-HJ-T][0-9]+$' "gtp$size.out" || { echo "no move on ${size}x${size}"; exit 1; }
    grep -E '^= [A-HJ-T]' "gtp$size.out"
done
timed "gomove predict (no --model)" "$G" predict --moves "B Q16 W D4" --out p.png > predict.out
head -3 predict.out
du -sh "$WORK/venv/lib/python"*/site-packages/gomove | tee -a times.txt
