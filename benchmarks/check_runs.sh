#!/usr/bin/env bash
# `ldb check` on ORCA's two sets in its three modes, next to the stored ORCA / B1 / B2 (GPT-3.5)
# predictions: the tables "Runtime-error detection" of benchmarks/RESULTS.md.
#
# Usage: benchmarks/check_runs.sh [exec|hybrid|predict|all]
#   exec     run every program in the sandbox (minutes, no model)
#   hybrid   exec, and the model continues the runs execution cannot settle (about 40 of the
#            complete and 130 of the incomplete instances); also the same without a model
#   predict  the model walks the CFG of every program (748 model calls per set)
# Environment:
#   MODEL       embedded model (default qwen2.5-coder-1.5b; qwen2.5-coder-0.5b for quick loops)
#   SAMPLE      check a balanced sample of N instances per set instead of all (seed SEED, default 1)
#   MAX_TOKENS  reply tokens per prediction (default 1500)
#   EXTRA       more `ldb eval check` flags, e.g. "--threads 2"
#   SITE        a directory with the programs' libraries (numpy, scipy, ...; made with
#               `pip install --target DIR ...`): passed as --python-path, results get "-site"
#   LDB_BIN     an ldb binary to use instead of building one (a pinned copy during rebuilds)
# Each run appends one JSON line per instance to benchmarks/results/check/<set>-<mode>[-<model>].jsonl
# and skips the instances already there: call it again to resume. The markdown tables go next to
# each results file (.md).
set -euo pipefail
cd "$(dirname "$0")/.."

WHAT=${1:-all}
DATA=${LDB_DATA_DIR:-../shared/datasets}
OUT=benchmarks/results/check
MODEL=${MODEL:-qwen2.5-coder-1.5b}
MAX_TOKENS=${MAX_TOKENS:-1500}
SEED=${SEED:-1}
sample=()
tag=""
if [ -n "${SAMPLE:-}" ]; then
  sample=(--sample "$SAMPLE" --seed "$SEED")
  tag="-sample$SAMPLE-seed$SEED"
fi
if [ -n "${SITE:-}" ]; then
  sample+=(--python-path "$SITE")
  tag="$tag-site"
fi
mkdir -p "$OUT"
if [ -n "${LDB_BIN:-}" ]; then
  ldb=$LDB_BIN
else
  cargo build --release --quiet
  ldb=target/release/ldb
fi

run() { # set mode file [flags...]
  local set=$1 mode=$2 file=$3
  shift 3
  echo "== $set, $mode → $file" >&2
  # shellcheck disable=SC2086
  "$ldb" eval check --dataset "$set" --data-dir "$DATA" --mode "$mode" "${sample[@]}" \
    -o "$file.jsonl" --no-cache "$@" ${EXTRA:-} | tee "$file.md"
}

for set in orca-complete orca-incomplete; do
  case $WHAT in
    exec|all) run "$set" exec "$OUT/$set-exec$tag" ;;
  esac
  case $WHAT in
    hybrid|all)
      run "$set" hybrid "$OUT/$set-hybrid-nomodel$tag" --no-model
      run "$set" hybrid "$OUT/$set-hybrid-$MODEL$tag" --model "$MODEL" --max-tokens "$MAX_TOKENS"
      ;;
  esac
  case $WHAT in
    predict|all)
      run "$set" predict "$OUT/$set-predict-$MODEL$tag" --model "$MODEL" --max-tokens "$MAX_TOKENS"
      ;;
  esac
done
