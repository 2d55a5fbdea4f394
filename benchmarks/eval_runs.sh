#!/usr/bin/env bash
# The evaluation runs behind benchmarks/RESULTS.md ("Debugging results"), with the embedded
# default model (qwen2.5-coder-1.5b) on the CPU.
#
# Usage: benchmarks/eval_runs.sh [HE_LIMIT] [MBPP_LIMIT] [GEN_LIMIT]
#   HE_LIMIT / MBPP_LIMIT: failing GPT-3.5 seeds debugged per dataset (committed: 8 and 6)
#   GEN_LIMIT: HumanEval tasks whose seed the 1.5B model writes (committed: 30)
# Runs resume: calling the script again with larger limits adds tasks and redoes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

HE_LIMIT=${1:-8}
MBPP_LIMIT=${2:-6}
GEN_LIMIT=${3:-30}
DATA=${LDB_DATA_DIR:-../shared/datasets}
LDB=${LDB_BIN:-target/release/ldb}
OUT=benchmarks/results
COMMON=(--data-dir "$DATA" --model qwen2.5-coder-1.5b --max-iters 3 --concurrency 1 --threads 2 --no-cache)

[ -n "${LDB_BIN:-}" ] || cargo build --release --bin ldb

# (a) LDB's shipped GPT-3.5 seeds, only the tasks whose seed fails a visible test.
"$LDB" eval --dataset humaneval --seeds ldb:gpt-3.5-turbo-0613 --only-failing --limit "$HE_LIMIT" \
  --strategy none,ldb-block,selfdebug-expl,resample "${COMMON[@]}" \
  --out "$OUT/humaneval-gpt35seeds-failing-qwen1.5b"

"$LDB" eval --dataset mbpp --seeds ldb:gpt-3.5-turbo-0613 --only-failing --limit "$MBPP_LIMIT" \
  --strategy none,ldb-block,selfdebug-expl,resample "${COMMON[@]}" \
  --out "$OUT/mbpp-gpt35seeds-failing-qwen1.5b"

# (b) HumanEval with seeds written by the 1.5B model itself.
"$LDB" eval --dataset humaneval --limit "$GEN_LIMIT" \
  --strategy none,ldb-block "${COMMON[@]}" \
  --out "$OUT/humaneval-qwen1.5bseeds"

# Reports with LDB's published results as a sanity line.
PUBLISHED="$DATA/ldb/results_summary"
"$LDB" eval report "$OUT/humaneval-gpt35seeds-failing-qwen1.5b" \
  --ldb-published "$PUBLISHED/humaneval__gpt-3.5-turbo-0613.jsonl" \
  -o "$OUT/humaneval-gpt35seeds-failing-qwen1.5b/summary.md" \
  --plot "$OUT/humaneval-gpt35seeds-failing-qwen1.5b/pass_at_iteration.svg"
"$LDB" eval report "$OUT/mbpp-gpt35seeds-failing-qwen1.5b" \
  --ldb-published "$PUBLISHED/mbpp__gpt-3.5-turbo-0613.jsonl" \
  -o "$OUT/mbpp-gpt35seeds-failing-qwen1.5b/summary.md" \
  --plot "$OUT/mbpp-gpt35seeds-failing-qwen1.5b/pass_at_iteration.svg"
