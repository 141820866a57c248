#!/usr/bin/env bash
# GPU check of the local inference engine and the nightly trainer, SmolLM2-135M on --device cuda:
# bench/inference.py at 1 and 32 concurrent requests, then bench/training.py, one night's KTO + LoRA
# run (TRL, peft) and its evaluation gate, with nvidia-smi sampling the GPU's utilisation while it
# trains. For a GPU machine with no internet; finishes in under 8 minutes.
#
#   scripts/gpu_check.sh --prepare [DIR]   on a machine WITH internet, in the repository root:
#                                         fills DIR (default shared/) with what the GPU machine lacks
#   scripts/gpu_check.sh [DIR]             on the GPU machine: installs offline, runs, writes $OUT
#
# What --prepare puts in DIR:
#   wheels/   packages the benches need beyond torch, transformers and numpy: psycopg (for
#             bench/parts/common.py); trl, peft, accelerate, datasets and what datasets needs (pyarrow,
#             pandas, …) for the trainer; for CPython 3.12 on manylinux x86-64 (PY_VERSION).
#   models/smollm2-135m-instruct/   config.json and the tokenizer (4 MB); the weights too
#             (540 MB, float32) unless WEIGHTS=0. Without them the check runs the same
#             architecture with random weights: the same speed, meaningless text.
# torch (a CUDA build), transformers and numpy are expected on the GPU machine; carry them as wheels
# in DIR/wheels too if not (pip download torch --index-url https://download.pytorch.org/whl/cu128).
set -euo pipefail
cd "$(dirname "$0")/.."

STARTED=$(date +%s)
LIMIT_S=${LIMIT_S:-240}              # the inference bench's share of the 8 minutes
TRAIN_LIMIT_S=${TRAIN_LIMIT_S:-180}  # the training bench's share
TRAIN_STEPS=${TRAIN_STEPS:-40}       # a night trains 20-40 steps of 8 at length 256
TRAIN_BATCH=${TRAIN_BATCH:-8}
PY=${PYTHON:-python3}
# The trainer's packages, at the versions Kindred pins or was tested with (pyproject.toml); they
# are installed with --no-deps, so what they need beyond torch and transformers is listed too.
TRAINER_WHEELS=(trl==1.16.0 peft==0.21.2 accelerate==1.15.0 datasets==5.2.0 pyarrow==26.0.1 dill==0.4.1
    multiprocess==0.70.19 xxhash==4.1.0 fsspec==2026.9.0 pandas==3.1.1 python-dateutil==2.9.0.post0
    six tzdata psutil==7.2.2)

prepare() {
    local dir=${1:-shared}
    mkdir -p "$dir/wheels" "$dir/models"
    "$PY" -m pip download --only-binary=:all: --python-version "${PY_VERSION:-3.12}" --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d "$dir/wheels" "psycopg[binary]>=3.2"
    "$PY" -m pip download --only-binary=:all: --python-version "${PY_VERSION:-3.12}" --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        --no-deps -d "$dir/wheels" "${TRAINER_WHEELS[@]}"
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
if ! "$PY" -c "import psycopg, trl, peft, accelerate, datasets" 2>/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target /tmp/kindred-site "$DIR"/wheels/*.whl
    export PYTHONPATH=/tmp/kindred-site${PYTHONPATH:+:$PYTHONPATH}
fi
"$PY" -c "import torch, transformers; assert torch.cuda.is_available(), 'torch sees no GPU'; \
print('torch', torch.__version__, 'transformers', transformers.__version__)"

MODEL=$DIR/models/smollm2-135m-instruct
ARGS=(--model "$MODEL" --device cuda --dtype bfloat16 --concurrency 1,32 --max-tokens 128 --rounds 2)
TRAIN_ARGS=(--model "$MODEL" --device cuda --steps "$TRAIN_STEPS" --batch "$TRAIN_BATCH" --max-length 256
    --score --gpu-util)
if [ ! -f "$MODEL/model.safetensors" ]; then
    echo "no SmolLM2 weights in $MODEL: random weights of the same shapes (speed only)"
    ARGS+=(--random-weights)
    TRAIN_ARGS+=(--random-weights)
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 PYTHONUNBUFFERED=1
timeout "$LIMIT_S" "$PY" -m bench.inference "${ARGS[@]}" > "$OUT/inference_cuda.json"
cat "$OUT/inference_cuda.json"
echo "inference done at $(( $(date +%s) - STARTED )) s"

# One night's training on the GPU: tokens/s and the utilisation nvidia-smi sampled while it trained.
timeout "$TRAIN_LIMIT_S" "$PY" -m bench.training "${TRAIN_ARGS[@]}" > "$OUT/training_cuda.json"
"$PY" - "$OUT/training_cuda.json" <<'PYTHON'
import json, sys
report = json.load(open(sys.argv[1]))
results, util = report["results"], report["results"].get("gpu_utilisation") or {}
print(json.dumps({
    "train_seconds": round(results["train_seconds"], 1),
    "steps": results["steps"],
    "tokens_per_s": round(results["tokens_per_s"] or 0.0, 1),
    "examples_per_s": round(results["examples_per_s"] or 0.0, 2),
    "gpu_utilisation_mean_pct": util.get("mean"),
    "gpu_utilisation_samples": util.get("samples"),
    "gate_passed": report.get("gate", {}).get("passed"),
    "gate_seconds": report.get("gate", {}).get("seconds"),
}, indent=2))
PYTHON
echo "done in $(( $(date +%s) - STARTED )) s"
