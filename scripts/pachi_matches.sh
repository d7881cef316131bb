#!/bin/bash
# Pachi on gomove's patterns against Pachi on its own: the same Pachi binary and settings
# on both sides, only the pattern files differing (each side finds its patterns_mm.spat
# and patterns_mm.gamma through DATA_DIR). Pachi is built from its public sources without
# the neural network, so its move prior is its pattern engine.
#
#   scripts/pachi_matches.sh build                  clone and build Pachi (DCNN=0 JOSEKIFIX=0)
#   scripts/pachi_matches.sh data RUN [NAME [ARGS]] stock files and RUN's as Pachi's files
#                                                   (ARGS to gomove export pachi: --spatial-only)
#   scripts/pachi_matches.sh match SIZE PLAYOUTS GAMES [SET [OPTIONS ROW]]   one row
#   scripts/pachi_matches.sh all RUN                build, data, and the issue's three rows
#
# Environment (defaults in brackets):
#   PACHI         Pachi's git checkout, built in place [REPO/../ext/pachi]
#   PACHI_REPO    where to clone it from when missing [https://github.com/pasky/pachi]
#   PACHI_COMMIT  the commit built [b69e3539, Pachi 12.90]
#   PACHI_DATA    folder of the pattern sets, one subfolder each [REPO/../ext/pachi-data]
#   MATCHES       folder of the matches [REPO/docs/matches]
#   WORKERS       games at once, one per core [2]
# A row plays Pachi on DATA_DIR=PACHI_DATA/SET (default gomove; a folder that `data`
# wrote) against Pachi on PACHI_DATA/stock, with OPTIONS (Pachi's engine options, say
# prior=pattern=-600) added to the tested side only, and writes
# MATCHES/pachi-SIZExSIZE-PLAYOUTS-ROW/ (ROW: default SET): match.json, results.jsonl,
# games/*.sgf, table.md. Running it again resumes it. Colours alternate, stock Pachi
# referees. SET stock is the control: the same program on both sides.
# Needs git, make and a C compiler; gomove installed (gomove export, gomove match).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PACHI=$(realpath -m "${PACHI:-$REPO/../ext/pachi}")
PACHI_REPO=${PACHI_REPO:-https://github.com/pasky/pachi}
PACHI_COMMIT=${PACHI_COMMIT:-b69e353981e6728058e142b14632eb125b011c02}
PACHI_DATA=$(realpath -m "${PACHI_DATA:-$REPO/../ext/pachi-data}")
MATCHES=$(realpath -m "${MATCHES:-$REPO/docs/matches}")
WORKERS=${WORKERS:-2}

build() {
    if [ ! -d "$PACHI/.git" ]; then
        git clone "$PACHI_REPO" "$PACHI"
    fi
    git -C "$PACHI" checkout -q "$PACHI_COMMIT"
    make -C "$PACHI" -j"$WORKERS" DCNN=0 JOSEKIFIX=0
    "$PACHI/pachi" -v
}

data() {
    local run=${1:?data RUN [NAME [ARGS]]} name=${2:-gomove}
    shift $(( $# < 2 ? $# : 2 ))
    [ "$name" != stock ] || { echo "stock is Pachi's own set; name RUN's another" >&2; exit 2; }
    [ -x "$PACHI/pachi" ] || { echo "no Pachi built at $PACHI (run: $0 build)" >&2; exit 2; }
    mkdir -p "$PACHI_DATA/stock"
    cp "$PACHI/patterns_mm.spat" "$PACHI/patterns_mm.gamma" "$PACHI_DATA/stock/"
    gomove export pachi "$run" "$PACHI_DATA/$name" --base "$PACHI/patterns_mm.gamma" "$@"
}

match() {
    local size=${1:?match SIZE PLAYOUTS GAMES [SET [OPTIONS ROW]]} playouts=${2:?} games=${3:?}
    local set=${4:-gomove} options=${5:-} row=${6:-${4:-gomove}}
    [ -z "$options" ] || [ -n "${6:-}" ] || { echo "OPTIONS need a ROW name" >&2; exit 2; }
    for s in stock "$set"; do
        [ -f "$PACHI_DATA/$s/patterns_mm.spat" ] || {
            echo "no pattern set $PACHI_DATA/$s (run: $0 data RUN $s)" >&2; exit 2; }
    done
    local engine="$PACHI/pachi -t =$playouts threads=1,pondering=0"
    mkdir -p "$MATCHES"
    # Pachi reads pattern files from its working directory before DATA_DIR: run from
    # the matches' folder, which holds none
    cd "$MATCHES"
    gomove match --engine "$PACHI/pachi -t =$playouts" \
        --engine-env "DATA_DIR=$PACHI_DATA/$set" \
        --opponent "$engine" --opponent-env "DATA_DIR=$PACHI_DATA/stock" \
        --row "$row=threads=1,pondering=0${options:+,$options}" --size "$size" --komi 7.5 \
        --games "$games" --workers "$WORKERS" \
        --out "$MATCHES/pachi-${size}x${size}-$playouts-$row"
}

case "${1:-}" in
    build) build ;;
    data) shift; data "$@" ;;
    match) shift; match "$@" ;;
    all)
        run=${2:?all RUN}
        build
        data "$run" gomove
        (match 9 2000 400 gomove)
        (match 19 2000 100 gomove)
        (match 19 10000 60 gomove)
        ;;
    *) sed -n '2,26p' "$0" >&2; exit 2 ;;
esac
