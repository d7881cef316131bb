#!/bin/bash
# KaTrain (PyPI katrain) with gomove analysis as its engine, under Xvfb: it loads a game
# and analyses every move, analyses the last position deeper, plays moves against its AI,
# asks each of its AI strategies for a move, and tries its pondering; screenshots and
# logs go to OUTDIR.
#   GOMOVE_ANALYSIS="gomove analysis --model RUN/model.pt --policy RUN_LIGHT/policy.npz" \
#       scripts/katrain_check.sh [OUTDIR] [GAME.sgf]
# Environment (defaults in brackets):
#   GOMOVE_ANALYSIS  the engine command [gomove analysis]
#   KATRAIN_VENV     a virtualenv with katrain, created when missing [REPO/../katrain-venv]
#   KATRAIN_VERSION  the katrain installed into a new virtualenv [1.20.0]
#   MOVES            the game's moves kept [60]
#   MAX_VISITS, FAST_VISITS, MAX_TIME  KaTrain's engine settings [1000, 200, 5.0]
# Needs: apt-get install xvfb xdotool imagemagick libgl1-mesa-dri libmtdev1 xclip
# Writes OUTDIR/: config.json (KaTrain's), game.sgf, warmup.jsonl, katrain.log (KaTrain's
# console: its queries, gomove's answers and warnings, its errors), analysis.png, play.png,
# katrain.png (analysis.png made small), ai-strategies.jsonl, ponder.txt.
# Exit status: 0 when KaTrain got every analysis and AI move with no error in its log,
# 1 when the engine or KaTrain failed (the reason on stderr), 2 for a missing tool.
# Pondering that does not stop (gomove answers requests in turn) is reported, not failed.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(realpath -m "${1:-katrain-check}")
GAME=${2:-}
ENGINE=${GOMOVE_ANALYSIS:-gomove analysis}
VENV=${KATRAIN_VENV:-$(realpath -m "$REPO/../katrain-venv")}
MOVES=${MOVES:-60}
MAX_VISITS=${MAX_VISITS:-1000}
FAST_VISITS=${FAST_VISITS:-200}
MAX_TIME=${MAX_TIME:-5.0}
mkdir -p "$OUT"
rm -f "$OUT"/*.png "$OUT"/katrain.log "$OUT"/ai-strategies.jsonl "$OUT"/ponder.txt "$OUT"/warmup.jsonl \
    "$OUT"/errors.txt

say() { echo "katrain_check: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }
for tool in Xvfb xdotool import convert; do
    command -v "$tool" >/dev/null || {
        say "needs $tool: apt-get install -y xvfb xdotool imagemagick libgl1-mesa-dri libmtdev1 xclip"
        exit 2
    }
done

PIDS=()
cleanup() {  # KaTrain runs in its own process group (setsid): the engine goes with it
    for p in "${PIDS[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# 1. KaTrain in its own virtualenv
if [ ! -x "$VENV/bin/katrain" ]; then
    say "creating $VENV with katrain==${KATRAIN_VERSION:-1.20.0}"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "katrain==${KATRAIN_VERSION:-1.20.0}"
fi
PY=$VENV/bin/python
KT_VERSION=$("$PY" -c 'import importlib.metadata as m; print(m.version("katrain"))')
KT_DIR=$("$PY" -c 'import katrain, os; print(os.path.dirname(katrain.__file__))')
say "KaTrain $KT_VERSION ($VENV); engine: $ENGINE"

# 2. the engine answers a query while its input stays open, as a GUI keeps it (its first
# start compiles numba's kernels: minutes, which a GUI would take for a dead engine)
QUERY='{"id":"warmup","moves":[["B","Q16"]],"boardXSize":19,"boardYSize":19,"maxVisits":50}'
rm -f "$OUT/warmup.in"
mkfifo "$OUT/warmup.in"
setsid sh -c "exec $ENGINE" < "$OUT/warmup.in" > "$OUT/warmup.jsonl" 2> "$OUT/warmup.err" &
WPID=$!
PIDS+=($WPID)
exec 4> "$OUT/warmup.in"
echo "$QUERY" >&4
for _ in $(seq 900); do
    grep -q '"moveInfos"' "$OUT/warmup.jsonl" && break
    kill -0 "$WPID" 2>/dev/null || break
    sleep 1
done
exec 4>&-
grep -q '"moveInfos"' "$OUT/warmup.jsonl" ||
    fail "'$ENGINE' answered no query in 900 s with its input open: $(tail -3 "$OUT/warmup.err")"
kill -- "-$WPID" 2>/dev/null || true

# 3. the game (the first 19x19 game of the Tygem archive, else of the shipped sample),
# KaTrain's config, and empty points whose neighbours are empty (moves that are legal)
"$PY" - "$OUT" "$KT_DIR/config.json" "$ENGINE" "$MAX_VISITS" "$FAST_VISITS" "$MAX_TIME" \
    "$MOVES" "$GAME" "$REPO" <<'PY'
import json, pathlib, re, sys, zipfile
out, package_config, engine, visits, fast, max_time, moves, game, repo = sys.argv[1:]
out = pathlib.Path(out)
if game:
    sgf = pathlib.Path(game).read_text(encoding="utf-8", errors="replace")
else:
    archives = [pathlib.Path(repo).parent / "shared/data/tygem-9d-2006-06.zip",
                pathlib.Path(repo) / "gomove/samples/gnugo-train.zip"]
    z = zipfile.ZipFile(next(p for p in archives if p.exists()))
    texts = (z.read(n).decode("utf-8", "replace") for n in sorted(z.namelist()))
    sgf = next(t for t in texts if "SZ[19]" in t)
head = sgf.split(";B[", 1)[0].split(";W[", 1)[0]
played = re.findall(r";([BW])\[([a-s]{2})\]", sgf)[: int(moves)]
(out / "game.sgf").write_text(head + "".join(f";{c}[{m}]" for c, m in played) + ")\n",
                              encoding="utf-8")
stones = {(ord(m[0]) - 97, 18 - (ord(m[1]) - 97)) for _, m in played}  # captures ignored:
free = [(x, y) for x in range(2, 17) for y in range(2, 17)       # a stone's point is never
        if all((x + dx, y + dy) not in stones                    # offered
               for dx in (-1, 0, 1) for dy in (-1, 0, 1))]
free.sort(key=lambda p: (abs(p[0] - 9) + abs(p[1] - 9), p))      # the centre first
(out / "free-points.txt").write_text("".join(f"{x} {y + 1}\n" for x, y in free))
d = json.loads(pathlib.Path(package_config).read_text())
d["engine"].update(backend="custom", altcommand=f"exec {engine}", max_visits=int(visits),
                   fast_visits=int(fast), max_time=float(max_time))
d["general"]["debug_level"] = 1  # KaTrain prints its queries and what comes back
d["timer"]["sound"] = False
d["ui_state"].update(size=[1600, 1000], left=0, top=0)  # the board's pixels below
(out / "config.json").write_text(json.dumps(d, indent=1))
PY

# 4. Xvfb and KaTrain (its config and the game on its command line)
exec 3> "$OUT/display"
Xvfb -displayfd 3 -screen 0 1600x1000x24 -nolisten tcp > "$OUT/xvfb.log" 2>&1 &
PIDS+=($!)
exec 3>&-
for _ in $(seq 50); do [ -s "$OUT/display" ] && break; sleep 0.2; done
[ -s "$OUT/display" ] || fail "Xvfb did not start: $(cat "$OUT/xvfb.log")"
export DISPLAY=:$(head -1 "$OUT/display")
LOG=$OUT/katrain.log
: > "$LOG"
KIVY_HOME=$OUT/kivy SDL_AUDIODRIVER=dummy PYTHONUNBUFFERED=1 \
    setsid "$VENV/bin/katrain" "$OUT/config.json" "$OUT/game.sgf" >> "$LOG" 2>&1 &
KPID=$!
PIDS+=($KPID)

count() { grep -cF -- "$1" "$LOG" || true; }  # lines holding the string
wait_for() {  # STRING COUNT SECONDS: until the log holds COUNT lines with STRING
    local deadline=$((SECONDS + $3))
    while [ "$(count "$1")" -lt "$2" ]; do
        kill -0 "$KPID" 2>/dev/null || fail "KaTrain exited: $(tail -5 "$LOG")"
        [ $SECONDS -lt $deadline ] || return 1
        sleep 1
    done
}
key() { xdotool mousemove 1300 900 key "$@"; sleep 1; }  # the pointer off the board
click() {  # column index (A = 0, no I) and row number, at the 1600x1000 window's board
    xdotool mousemove $((237 + $1 * 42)) $((862 - ($2 - 1) * 42)) click 1
    sleep 1
}

# 5. the game: KaTrain analyses every position (fast_visits); then the last one deeper
wait_for "Starting KataGo with" 1 120 || fail "KaTrain did not start its engine: $(tail -5 "$LOG")"
N=$(($(grep -o ';[BW]\[[a-s][a-s]\]' "$OUT/game.sgf" | wc -l) + 1))
wait_for "][done]" 1 300 || fail "no analysis came back in 300 s: $(tail -3 "$LOG")"
wait_for "][done]" "$N" 900 || fail "$(count "][done]") of $N positions analysed in 900 s"
say "KaTrain analysed the game's $N positions"
key End
DONE=$(count "][done]")
key a  # extra analysis of the position: max_visits more
wait_for "][done]" $((DONE + 1)) 300 || fail "no answer to the extra analysis"
sleep 3
import -window root "$OUT/analysis.png"

# 6. moves against KaTrain's AI: a click on the board (KaTrain then asks for the new
# position: a query whose analyzeTurns is one more), then Enter (its AI's move)
PLAYED=0
TURN=$((N - 1))
while read -r X Y && [ $PLAYED -lt 3 ]; do
    AI=$(count "Move generation complete")
    click "$X" "$Y"
    wait_for "\"analyzeTurns\": [$((TURN + 1))]" 1 10 || continue  # not played: the next point
    key Return
    wait_for "Move generation complete" $((AI + 1)) 300 || fail "KaTrain's AI made no move"
    PLAYED=$((PLAYED + 1))
    TURN=$((TURN + 2))
done < "$OUT/free-points.txt"
[ $PLAYED -eq 3 ] || fail "only $PLAYED moves played against the AI"
DONE=$(count "][done]")
wait_for "][done]" $((DONE + 1)) 60 || true  # the AI's last move analysed
sleep 3
import -window root "$OUT/play.png"
say "played 3 moves against KaTrain's AI: $(grep -o 'Move generation complete: [A-Z0-9]*' "$LOG" |
    awk '{print $4}' | tr '\n' ' ')"
kill -- "-$KPID" 2>/dev/null || true
convert "$OUT/analysis.png" -resize 1000x625 -dither None -colors 128 "PNG8:$OUT/katrain.png"

# 7. each AI strategy asked for a move, and pondering stopped, through KaTrain's own engine
# class (katrain/core/engine.py) with no GUI
KIVY_HOME=$OUT/kivy "$PY" - "exec $ENGINE" > "$OUT/ai-strategies.jsonl" 2> "$OUT/ai-strategies.err" <<'PY' || true
import json, sys, threading, time
from katrain.core.ai import generate_ai_move
from katrain.core.base_katrain import KaTrainBase
from katrain.core.constants import AI_STRATEGIES, OUTPUT_ERROR
from katrain.core.engine import KataGoEngine
from katrain.core.game import Game
from pysgf import Move

class Harness(KaTrainBase):
    def __init__(self):
        super().__init__(force_package_config=True, debug_level=0)
        self.errors, self.warnings = [], []
    def log(self, message, level=0):
        if level == OUTPUT_ERROR:
            self.errors.append(str(message)[:300])
        elif "'warning': " in str(message):
            self.warnings.append(str(message).split("'warning': ")[1].split(", 'field'")[0])
    def update_state(self, *args, **kwargs):
        pass
    def __call__(self, *args, **kwargs):  # katrain("engine_recovery_popup", ...)
        self.errors.append(f"recovery popup: {args[:2]}")

k = Harness()
cfg = dict(k.config("engine"), backend="custom", altcommand=sys.argv[1], max_visits=300,
           fast_visits=100, max_time=5.0, allow_recovery=False)
engine = KataGoEngine(k, cfg)
for mode in AI_STRATEGIES:
    game = k.game = Game(k, engine)
    for gtp in ["Q16", "D4", "Q4", "D16", "R10"]:
        game.play(Move.from_gtp(gtp, player=game.current_node.next_player))
    k.errors.clear(); k.warnings.clear()
    out, t0 = {}, time.time()
    def run():
        try:
            move, _ = generate_ai_move(game, mode, k.config(f"ai/{mode}"))
            out["move"] = move.gtp() if move else None
        except Exception as e:
            out["exception"] = f"{type(e).__name__}: {e}"
    th = threading.Thread(target=run, daemon=True)
    th.start(); th.join(120)
    res = {"strategy": mode, "seconds": round(time.time() - t0, 1), **out}
    if th.is_alive():
        res["timeout"] = True
    if k.errors:
        res["errors"] = sorted(set(k.errors))
    res["warnings"] = sorted(set(k.warnings))
    print(json.dumps(res), flush=True)
    engine.on_new_game()
    if th.is_alive():
        engine.shutdown(finish=None)
        engine = KataGoEngine(k, cfg)

# pondering: maxVisits 10,000,000, reportDuringSearchEvery 0.25, no maxTime; then stopped
game = k.game = Game(k, engine)
for gtp in ["Q16", "D4", "Q4"]:
    game.play(Move.from_gtp(gtp, player=game.current_node.next_player))
time.sleep(5)
node, reports, done = game.current_node, [], []
engine.request_analysis(node, callback=lambda a, p: reports.append(time.time()), ponder=True,
                        time_limit=False)
time.sleep(5)
engine.stop_pondering()
t0 = time.time()
engine.request_analysis(node, callback=lambda a, p: done.append(time.time() - t0) if not p else 0)
while not done and time.time() - t0 < 30:
    time.sleep(0.2)
print(json.dumps({"strategy": "(pondering)", "reports_in_5_s": sum(r < t0 for r in reports),
                  "reports_after_stop": sum(r >= t0 for r in reports),
                  "next_query_answered_after_s": round(done[0], 1) if done else None}))
engine.shutdown(finish=None)
PY
"$PY" - "$OUT/ai-strategies.jsonl" > "$OUT/ponder.txt" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
for r in rows:
    if r["strategy"] == "(pondering)":
        ok = r["next_query_answered_after_s"] is not None
        print(f"pondering: {r['reports_in_5_s']} reports in 5 s; after stopping, "
              + (f"the next query answered in {r['next_query_answered_after_s']} s" if ok else
                 f"{r['reports_after_stop']} more reports and the next query not answered in 30 s"))
    else:
        got = f"move {r['move']}" if "move" in r else r.get("exception", "no move (timeout)")
        print(f"{r['strategy']:16} {got[:110]}" + ("  ERRORS: " + "; ".join(r["errors"]) if r.get("errors") else ""))
PY
cat "$OUT/ponder.txt" >&2

# 8. verdict: KaTrain's log holds no error (engine errors, a dead engine, exceptions)
STATUS=0
if grep -nE "^ERROR: |Traceback|Engine died|CRITICAL" "$LOG" > "$OUT/errors.txt"; then
    say "errors in KaTrain's log:"; head -20 "$OUT/errors.txt" >&2; STATUS=1
fi
grep -q "^ai:default .*move" "$OUT/ponder.txt" || { say "ai:default made no move"; STATUS=1; }
WARN=$(grep -o "'warning': \"[^\"]*\"" "$LOG" | sort | uniq -c | sort -rn | head -5 || true)
[ -z "$WARN" ] || say "gomove's warnings (fields it does not act on):"$'\n'"$WARN"
say "screenshots: $OUT/analysis.png $OUT/play.png $OUT/katrain.png"
[ $STATUS -eq 0 ] && say "OK: KaTrain $KT_VERSION analysed and played with '$ENGINE'"
exit $STATUS
