#!/bin/sh
# Lizzie (Debian liblizzie-java) showing gomove's lz-analyze on a position, under Xvfb:
#   scripts/lizzie_screenshot.sh RUN/model.pt RUN_LIGHT/policy.npz OUT.png
# Needs xvfb, xdotool and imagemagick (apt-get install xvfb xdotool imagemagick liblizzie-java).
# Lizzie keeps its config in ~/.config/leela-zero/lizzie-config.txt; this script writes the
# engine command there (gomove gtp answers `version` 0.17: Lizzie sends lz-analyze only to
# Leela Zero 0.15 or later), plays 12 moves by clicking the board, and screenshots after 40 s.
set -eu
MODEL=$(realpath "$1"); POLICY=$(realpath "$2"); OUT=$(realpath -m "$3")
if [ -z "${INSIDE_XVFB:-}" ]; then
    /usr/games/lizzie --help >/dev/null 2>&1 || true  # creates the config on first start
    timeout 30 xvfb-run -a -s "-screen 0 1400x900x24" /usr/games/lizzie >/dev/null 2>&1 || true
    python - "$MODEL" "$POLICY" <<'PY'
import json, pathlib, sys
p = pathlib.Path.home() / ".config/leela-zero/lizzie-config.txt"
d = json.loads(p.read_text())
d["leelaz"]["engine-command"] = (f"{sys.executable} -m gomove.cli.gtp --model {sys.argv[1]} "
                                 f"--policy {sys.argv[2]} --gtp-version 0.17")
d["leelaz"]["print-comms"] = True
p.write_text(json.dumps(d, indent=1))
PY
    INSIDE_XVFB=1 exec timeout 180 xvfb-run -a -s "-screen 0 1400x900x24" "$0" "$@"
fi
/usr/games/lizzie > /tmp/lizzie.log 2>&1 &
LPID=$!
sleep 25
click() {  # column index (A = 0, no I), row number; the board's pixels at 1400x900
    xdotool mousemove $((446 + $1 * 28)) $((695 - ($2 - 1) * 28)) click 1; sleep 1.5
}
click 15 16; click 3 4; click 15 4; click 3 16; click 16 6; click 2 14
click 14 17; click 16 3; click 15 3; click 16 4; click 16 5; click 5 3
sleep 40
import -window root /tmp/lizzie-full.png
kill $LPID || true
sleep 2
pkill -f gomove.cli.gtp || true
convert /tmp/lizzie-full.png -crop 1185x605+0+148 +repage -colors 200 "PNG8:$OUT"
echo "wrote $OUT"
