#!/usr/bin/env bash
# Wall time of one grammar-constrained call of the embedded model: `ldb check --mode predict`
# on examples/check/crash.py (a JSON-schema grammar over the program's blocks, greedy, up to
# 300 tokens), each binary given run in turn, RUNS times.
#
# Usage: benchmarks/experiments/grammar_speed.sh LDB_BIN [LDB_BIN ...]   (RUNS=3, MODEL=qwen2.5-coder-0.5b)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-3}
model=${MODEL:-qwen2.5-coder-0.5b}
config=$(mktemp)
trap 'rm -f "$config"' EXIT
for i in $(seq "$runs"); do
  for bin in "$@"; do
    start=$(date +%s.%N)
    "$bin" check --mode predict --model "$model" --max-tokens 300 --format json --no-cache \
      --config "$config" examples/check/crash.py > /dev/null 2>&1 || true
    end=$(date +%s.%N)
    printf '%s\trun %s\t%s s\n' "$bin" "$i" "$(python3 -c "print(f'{$end - $start:.1f}')")"
  done
done
