#!/usr/bin/env bash
# GPU check of the local inference engine: bench/inference.py with --device cuda, SmolLM2-135M,
# at 1 and 32 concurrent requests. For a GPU machine with no internet; finishes in under 8 minutes.
#
#   scripts/gpu_check.sh --prepare [DIR]   on a machine WITH internet, in the repository root:
#                                         fills DIR (default shared/) with what the GPU machine lacks
#   scripts/gpu_check.sh [DIR]             on the GPU machine: installs offline, runs, writes $OUT
#
# What --prepare puts in DIR:
#   wheels/   packages the bench needs beyond torch, transformers and numpy (psycopg, for
#             bench/common.py), for CPython 3.12 on manylinux x86-64; override with PY_VERSION.
#   models/smollm2-135m-instruct/   config.json and the tokenizer (4 MB); the weights too
#             (540 MB, float32) unless WEIGHTS=0. Without them the check runs the same
#             architecture with random weights: the same speed, meaningless text.
# torch (a CUDA build), transformers and numpy are expected on the GPU machine; carry them as wheels
# in DIR/wheels too if not (pip download torch --index-url https://download.pytorch.org/whl/cu128).
set -euo pipefail
cd "$(dirname "$0")/.."

STARTED=$(date +%s)
LIMIT_S=${LIMIT_S:-420}  # the bench's share of the 8 minutes
PY=${PYTHON:-python3}

prepare() {
    local dir=${1:-shared}
    mkdir -p "$dir/wheels" "$dir/models"
    "$PY" -m pip download --only-binary=:all: --python-version "${PY_VERSION:-3.12}" --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d "$dir/wheels" "psycopg[binary]>=3.2"
    local model
    model=$("$PY" -c "from pathlib import Path; from bot.inference.model_files import prepare_model as p; \
print(p('bundled', Path('$dir/.convert')))")
    mkdir -p "$dir/models/smollm2-135m-instruct"
    for f in config.json generation_config.json tokenizer.json tokenizer_config.json chat_template.jinja; do
        [ -f "$model/$f" ] && cp "$model/$f" "$dir/models/smollm2-135m-instruct/"
    done
    if [ "${WEIGHTS:-1}" = 1 ]; then cp "$model/model.safetensors" "$dir/models/smollm2-135m-instruct/"; fi
    rm -rf "$dir/.convert"
    du -sh "$dir/wheels" "$dir/models"
}

if [ "${1:-}" = "--prepare" ]; then
    prepare "${2:-shared}"
    exit 0
fi

DIR=${1:-shared}
OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu_check.log") 2>&1

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.csv"
if ! "$PY" -c "import psycopg" 2>/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/kindred-site "$DIR"/wheels/*.whl
    export PYTHONPATH=/tmp/kindred-site${PYTHONPATH:+:$PYTHONPATH}
fi
"$PY" -c "import torch, transformers; assert torch.cuda.is_available(), 'torch sees no GPU'; \
print('torch', torch.__version__, 'transformers', transformers.__version__)"

MODEL=$DIR/models/smollm2-135m-instruct
ARGS=(--model "$MODEL" --device cuda --dtype bfloat16 --concurrency 1,32 --max-tokens 128 --rounds 2)
if [ ! -f "$MODEL/model.safetensors" ]; then
    echo "no SmolLM2 weights in $MODEL: random weights of the same shapes (speed only)"
    ARGS+=(--random-weights)
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
timeout "$LIMIT_S" "$PY" -m bench.inference "${ARGS[@]}" > "$OUT/inference_cuda.json"
cat "$OUT/inference_cuda.json"
echo "done in $(( $(date +%s) - STARTED )) s"
