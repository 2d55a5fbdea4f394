#!/usr/bin/env bash
# Repair strategies at equal token budget, with the embedded default model (qwen2.5-coder-1.5b)
# on the CPU: the table "Repair by search" of benchmarks/RESULTS.md.
#
# Usage: benchmarks/search_runs.sh [report|dev] [BUDGET_TOKENS]
#   report (default): the 43 HumanEval tasks whose GPT-3.5 seed (LDB's shipped seeds) fails the
#     hidden tests; strategies none, search (the default of `ldb fix`), resample, ldb-block.
#   dev: the development sets the search's defaults are chosen on (never the 43): MBPP tasks
#     whose GPT-3.5 seed fails the hidden tests, HumanEval tasks whose CodeLlama seed does.
# Every strategy gets the same --budget-tokens per task (prompt tokens the model evaluated plus
# reply tokens). Tasks run one at a time, every strategy on a task before the next task, so a
# partial run compares the strategies on the same tasks. Runs resume: call it again.
set -euo pipefail
cd "$(dirname "$0")/.."

SET=${1:-report}
BUDGET=${2:-3000}
DATA=${LDB_DATA_DIR:-../shared/datasets}
OUT=benchmarks/results
STRATEGIES=${STRATEGIES:-none,search,resample,ldb-block}

# A private copy of the binary: the sandbox re-executes it, and a rebuild during a long run
# must not swap it under the workers.
if [ -z "${LDB_BIN:-}" ]; then
  cargo build --release --bin ldb
  mkdir -p target/eval-bin
  cp target/release/ldb target/eval-bin/ldb
  LDB_BIN=target/eval-bin/ldb
fi

# Task ids whose seed fails the hidden tests, read from LDB's seed file (`is_solved`).
failing_ids() {
  python3 - "$1" "${2:-0}" <<'EOF'
import json, sys
path, limit = sys.argv[1], int(sys.argv[2])
ids = [r["task_id"] for r in map(json.loads, open(path)) if not r["is_solved"]]
ids.sort(key=lambda t: int(t.split("/")[1]))
print(",".join(ids[:limit] if limit else ids))
EOF
}

COMMON=(--data-dir "$DATA" --model qwen2.5-coder-1.5b --max-iters 10 --concurrency 1
  --threads 2 --budget-tokens "$BUDGET" --strategy "$STRATEGIES")

case "$SET" in
  report)
    ids=$(failing_ids "$DATA/ldb/humaneval/seed/gpt-3.5-turbo-0613/seed.jsonl")
    nice -n 10 "$LDB_BIN" eval --dataset humaneval --seeds ldb:gpt-3.5-turbo-0613 --tasks "$ids" \
      "${COMMON[@]}" --out "$OUT/search-humaneval-gpt35-hiddenfail-qwen1.5b-b$BUDGET"
    ;;
  dev)
    ids=$(failing_ids "$DATA/ldb/mbpp/seed/gpt-3.5-turbo-0613/seed.jsonl" "${DEV_LIMIT:-20}")
    nice -n 10 "$LDB_BIN" eval --dataset mbpp --seeds ldb:gpt-3.5-turbo-0613 --tasks "$ids" \
      "${COMMON[@]}" --out "$OUT/dev-mbpp-gpt35-hiddenfail-qwen1.5b-b$BUDGET"
    ids=$(failing_ids "$DATA/ldb/humaneval/seed/codellama/seed.jsonl" "${DEV_LIMIT:-20}")
    nice -n 10 "$LDB_BIN" eval --dataset humaneval --seeds ldb:codellama --tasks "$ids" \
      "${COMMON[@]}" --out "$OUT/dev-humaneval-codellama-hiddenfail-qwen1.5b-b$BUDGET"
    ;;
  *)
    echo "usage: $0 [report|dev] [BUDGET_TOKENS]" >&2
    exit 2
    ;;
esac
