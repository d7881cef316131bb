#!/usr/bin/env bash
# gomove's check on a lent GPU machine (an H100 or H200, 16 cores, torch preinstalled):
# one command of at most BUDGET seconds (default 575; with all training games only rows
# 1-3 of the bench fit on an H200, since extraction takes 6 minutes), everything it
# measures under $OUT.
#
# 1. Here, once, on a machine with the data and the package index:
#        bash scripts/device_check.sh --prepare
#    fills .devsite/ (the pure-Python packages the device lacks: sgfmill, hydra-core,
#    omegaconf, antlr4) and .devdata/ (the six month archives, 30 MB), both ignored
#    by git.
# 2. On the device machine (the device tool's run, from the repository root):
#        run(command="bash scripts/device_check.sh", carry=[".devsite", ".devdata"],
#            timeout_s=590)
#    It prints the card and the versions, runs the CUDA tests (pytest -m gpu), then
#    `gomove bench gpu` over the standard split with every core: extraction, one MM
#    iteration, one FBT k=10 epoch at batch 1,024 and the scoring of the test month,
#    on CUDA and with numba beside it (gomove/bench/gpu.py says which row
#    is what), and last the 4-epoch model's accuracy. GPU_ARGS replaces the options
#    passed to it (default "--fbt-epochs 4"), e.g. GPU_ARGS="--gpu-games 5000" for a
#    shorter run, BUDGET the seconds of the whole script (default 575), GPU_TESTS=0
#    skips the CUDA tests (about 90 s; the bench's *_equal rows still compare the
#    engines).
#
# Writes $OUT/device_check.log (all output), $OUT/pytest_gpu.txt and $OUT/gpu.jsonl
# (one JSON row per measurement, written as each ends: a run cut short keeps them).
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == --prepare ]]; then
    set -e
    rm -rf .devsite && mkdir -p .devsite .devdata
    python -m pip install -q --no-deps --target .devsite \
        sgfmill==1.1.1 hydra-core==1.3.8 omegaconf==2.3.1 antlr4-python3-runtime==4.9.3
    cp "${GOMOVE_DATA:-../shared/data}"/tygem-9d-2006-0[1-6].zip .devdata/
    du -sh .devsite .devdata
    exit 0
fi

OUT=${OUT:-device-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/device_check.log") 2>&1
export PYTHONPATH="$PWD/.devsite:$PWD" PYTHONUNBUFFERED=1
start=$(date +%s)
stamp() { echo "== $1 at $(( $(date +%s) - start )) s"; }

stamp "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
nproc
python3 -c "import torch, numba, numpy; print('torch', torch.__version__, 'cuda', \
torch.cuda.is_available(), 'numba', numba.__version__, 'numpy', numpy.__version__)"

if [[ "${GPU_TESTS:-1}" == 1 ]]; then  # GPU_TESTS=0 leaves their 90 s to the bench
    stamp "pytest -m gpu"
    timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu \
        tests/test_sgd_tensor.py tests/test_mm_engines.py tests/test_fbt.py \
        tests/test_territory_model.py > "$OUT/pytest_gpu.txt" 2>&1
    echo "pytest exit $?"
    tail -15 "$OUT/pytest_gpu.txt"
fi

stamp "gomove bench gpu"
# Whatever is left of 575 s: the rows are written as they end, so a cut run keeps them.
left=$(( ${BUDGET:-575} - ($(date +%s) - start) ))
# shellcheck disable=SC2086
timeout "$left" python3 -m gomove.cli bench gpu --data .devdata --cache-dir /tmp/gomove-cache \
    --out "$OUT/gpu.jsonl" ${GPU_ARGS:---fbt-epochs 4}
echo "bench exit $?"
stamp "done"
