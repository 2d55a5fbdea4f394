#!/usr/bin/env bash
# Repair strategies with the embedded model at one token budget: the tables "Localise, then
# repair" of benchmarks/RESULTS.md.
#
# Usage: benchmarks/repair_runs.sh [refactory|refactory-dev|refactory-early|report|humaneval-dev] [BUDGET_TOKENS]
#   refactory (default): the held-out stratified sample of 303 Refactory student bugs
#     (benchmarks/refactory_sample.py report); the figures are reported on it, nothing is tuned
#     on it.
#   refactory-dev: the development sample (refactory_sample.py dev, disjoint from the report
#     sample), where defaults are chosen. DEV_SIZE shrinks it (default 303).
#   refactory-early: another development sample (refactory_sample.py early), whose programs
#     were read while the edit operators were built.
#   The Refactory sets read benchmarks/refactory_tasks.py's copy of the tasks (question 2's
#     hidden tests need a global the shared file leaves out).
#   report: the 43 HumanEval tasks whose GPT-3.5 seed (LDB's shipped seeds) fails the hidden
#     tests.
#   humaneval-dev: the 46 HumanEval tasks whose CodeLlama seed (LDB's shipped seeds) fails the
#     hidden tests, outside the report set: where defaults for tasks the model can write are
#     chosen.
# Environment:
#   MODEL       embedded model (default qwen2.5-coder-1.5b)
#   STRATEGIES  default resample,search
#   EXTRA       more `ldb eval` flags, e.g. "--proposers mutate:1"
#   TAG         suffix of the output directory (a variant's name)
#   KEEP_IDS    comma-separated task ids: run only the set's tasks among them (a change that
#               touches only some tasks, e.g. those whose given program passes the visible tests)
#   THREADS     model threads (default 2; 1 while anything else busies a core)
#   BASE_URL    ask this OpenAI-compatible endpoint instead (e.g. `ldb serve`'s), with its
#               replies cached in CACHE_DIR (default target/eval-cache): a variant run after a
#               base run then asks the model only what the base run did not (choosing rules
#               measured in minutes; its wall times mean nothing)
#   CACHE_DIR   with the embedded model: keep its replies in this response cache (as `ldb fix`
#               does by default), so a task asks the model only what no task before it in the
#               directory's life asked (a class's submissions share the assignment's text);
#               tokens are still counted as if asked, the replayed ones apart. Default: no cache
#               (every task cold; the figures of benchmarks/RESULTS.md unless they say otherwise)
#   NICE        niceness (default 10)
#   LDB_BIN     the binary (default: a private copy of a fresh release build, so a rebuild during
#               a long run does not swap it under the sandbox workers)
# Every strategy gets the same --budget-tokens per task; the caps on rounds and candidates are
# high enough that the budget ends a task. Tasks run one at a time, every strategy on a task
# before the next, so a partial run compares strategies on the same tasks. Runs resume: call it
# again with the same arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

SET=${1:-refactory}
BUDGET=${2:-3000}
DATA=${LDB_DATA_DIR:-../shared/datasets}
OUT=benchmarks/results
MODEL=${MODEL:-qwen2.5-coder-1.5b}
STRATEGIES=${STRATEGIES:-resample,search}
short=${MODEL#qwen2.5-coder-}
suffix="qwen$short-b$BUDGET${TAG:+-$TAG}"

if [ -z "${LDB_BIN:-}" ]; then
  cargo build --release --bin ldb
  mkdir -p target/eval-bin
  LDB_BIN=target/eval-bin/ldb-$$
  cp target/release/ldb "$LDB_BIN"
fi

# shellcheck disable=SC2206
if [ -n "${BASE_URL:-}" ]; then
  BACKEND=(--base-url "$BASE_URL" --cache-dir "${CACHE_DIR:-target/eval-cache}")
elif [ -n "${CACHE_DIR:-}" ]; then
  BACKEND=(--threads "${THREADS:-2}" --cache-dir "$CACHE_DIR")
else
  BACKEND=(--threads "${THREADS:-2}" --no-cache)
fi
COMMON=(--data-dir "$DATA" --model "$MODEL" --max-iters "${MAX_ITERS:-40}" --max-candidates "${MAX_CANDIDATES:-100}"
  --concurrency 1 "${BACKEND[@]}" --budget-tokens "$BUDGET" --strategy "$STRATEGIES"
  --progress lines ${EXTRA:-})

# The set's ids, kept in their order, restricted to KEEP_IDS when given.
keep() {
  if [ -z "${KEEP_IDS:-}" ]; then
    echo "$1"
  else
    python3 -c 'import sys; keep = set(sys.argv[2].split(",")); print(",".join(i for i in sys.argv[1].split(",") if i in keep))' "$1" "$KEEP_IDS"
  fi
}

# Refactory's tasks with question 2's hidden tests runnable (benchmarks/refactory_tasks.py).
case "$SET" in
  refactory*) TASKS=$(python3 benchmarks/refactory_tasks.py --data "$DATA/refactory/tasks.jsonl") ;;
esac

case "$SET" in
  refactory)
    ids=$(python3 benchmarks/refactory_sample.py report --data "$DATA/refactory/tasks.jsonl")
    nice -n "${NICE:-10}" "$LDB_BIN" eval --dataset "$TASKS" --tasks "$(keep "$ids")" \
      "${COMMON[@]}" --out "$OUT/repair-refactory-report-$suffix"
    ;;
  refactory-dev)
    ids=$(python3 benchmarks/refactory_sample.py dev --size "${DEV_SIZE:-303}" --data "$DATA/refactory/tasks.jsonl")
    nice -n "${NICE:-10}" "$LDB_BIN" eval --dataset "$TASKS" --tasks "$(keep "$ids")" \
      "${COMMON[@]}" --out "$OUT/repair-refactory-dev-$suffix"
    ;;
  refactory-early)
    ids=$(python3 benchmarks/refactory_sample.py early --data "$DATA/refactory/tasks.jsonl")
    nice -n "${NICE:-10}" "$LDB_BIN" eval --dataset "$TASKS" --tasks "$(keep "$ids")" \
      "${COMMON[@]}" --out "$OUT/repair-refactory-early-$suffix"
    ;;
  report)
    ids=$(python3 - "$DATA/ldb/humaneval/seed/gpt-3.5-turbo-0613/seed.jsonl" <<'EOF'
import json, sys
ids = [r["task_id"] for r in map(json.loads, open(sys.argv[1])) if not r["is_solved"]]
ids.sort(key=lambda t: int(t.split("/")[1]))
print(",".join(ids))
EOF
)
    nice -n "${NICE:-10}" "$LDB_BIN" eval --dataset humaneval --seeds ldb:gpt-3.5-turbo-0613 --tasks "$(keep "$ids")" \
      "${COMMON[@]}" --out "$OUT/repair-humaneval-gpt35-hiddenfail-$suffix"
    ;;
  humaneval-dev)
    ids=$(python3 - "$DATA/ldb/humaneval/seed/codellama/seed.jsonl" \
      "$DATA/ldb/humaneval/seed/gpt-3.5-turbo-0613/seed.jsonl" <<'EOF'
import json, sys
report = {r["task_id"] for r in map(json.loads, open(sys.argv[2])) if not r["is_solved"]}
ids = [r["task_id"] for r in map(json.loads, open(sys.argv[1]))
       if not r["is_solved"] and r["task_id"] not in report]
ids.sort(key=lambda t: int(t.split("/")[1]))
print(",".join(ids))
EOF
)
    nice -n "${NICE:-10}" "$LDB_BIN" eval --dataset humaneval --seeds ldb:codellama --tasks "$(keep "$ids")" \
      "${COMMON[@]}" --out "$OUT/repair-humaneval-codellama-dev-$suffix"
    ;;
  *)
    echo "usage: $0 [refactory|refactory-dev|refactory-early|report|humaneval-dev] [BUDGET_TOKENS]" >&2
    exit 2
    ;;
esac
