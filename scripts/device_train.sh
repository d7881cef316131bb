#!/usr/bin/env bash
# One `gomove train` on a lent GPU machine (an H100 or H200, 16 cores, torch
# preinstalled), on the standard split: the recipes that take hours on a 2-core CPU
# take minutes there (an FBT k=10 epoch of all training games: 25 s, docs/gpu.md).
#
# 1. Here, once: bash scripts/device_check.sh --prepare   (.devsite/ and .devdata/)
# 2. There, from the repository root, any `gomove train` overrides after data=tygem:
#        run(command="bash scripts/device_train.sh model=fbt k=10 data.max_games=null",
#            carry=[".devsite", ".devdata"], timeout_s=590)
#    The months in .devdata stand in for ../shared/data (which does not travel): a
#    link is made when ../shared/data is missing. The run resumes from its train state
#    (resume=true), so the same command run again on the still-warm machine goes on
#    where a cut run stopped (every epoch or iteration is saved as it ends).
#
# Environment: OUT (where the results go; the device tool's $OUT), RUN (the run
# directory, /tmp/gomove-run), BUDGET (seconds for the training, 570: the run is cut
# then and keeps its saved epochs), MODEL=1 to copy model.pt back too (large with all
# pattern sizes). Writes $OUT/metrics.json, summary.txt and train.log when the run ends,
# train.log also when it is cut.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-device-out}
RUN=${RUN:-/tmp/gomove-run}
mkdir -p "$OUT"
export PYTHONPATH="$PWD/.devsite:$PWD" PYTHONUNBUFFERED=1
if [[ ! -e ../shared/data ]]; then
    mkdir -p ../shared && ln -s "$PWD/.devdata" ../shared/data
fi
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null || echo "no GPU"
timeout "${BUDGET:-570}" python3 -m gomove.cli train data=tygem \
    data.cache_dir=/tmp/gomove-cache progress=false resume=true "hydra.run.dir=$RUN" "$@"
rc=$?
echo "train exit $rc"
files=(metrics.json summary.txt train.log)
[[ "${MODEL:-0}" == 1 ]] && files+=(model.pt)
for f in "${files[@]}"; do
    [[ -f "$RUN/$f" ]] && cp "$RUN/$f" "$OUT/"
done
exit "$rc"
