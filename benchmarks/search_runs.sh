#!/usr/bin/env bash
# Repair strategies at equal token budget with an embedded model on the CPU: the tables
# "Repair by search" of benchmarks/RESULTS.md.
#
# Usage: benchmarks/search_runs.sh [report|dev|verify] [BUDGET_TOKENS]
#   report (default): the 43 HumanEval tasks whose GPT-3.5 seed (LDB's shipped seeds) fails the
#     hidden tests; strategies none, search (the default of `ldb fix`), resample, ldb-block.
#   dev: the development sets the search's defaults are chosen on, never the 43 report tasks:
#     MBPP tasks whose GPT-3.5 seed fails the hidden tests, and HumanEval tasks whose CodeLlama
#     seed fails them, minus the 43 (DEV_LIMIT of each, default 20, in id order; DEV_SETS
#     picks the halves, default "mbpp,humaneval", so the two can run side by side).
#   verify: development sets for `--verify` (seeds that already pass the visible tests), never
#     the 43 report tasks: `wrong` seeds fail the hidden tests (HumanEval CodeLlama and StarCoder
#     seeds, MBPP GPT-3.5 seeds; VERIFY_LIMIT of each, default 15), `right` seeds pass them
#     (every 5th of HumanEval CodeLlama's and every 20th of MBPP GPT-3.5's, VERIFY_LIMIT of each);
#     VERIFY_SETS picks them, default "wrong,right". Which seeds pass comes from a quick
#     `--strategy none` run of each seed file.
# Environment:
#   MODEL       embedded model (default qwen2.5-coder-1.5b; qwen2.5-coder-0.5b for quick loops)
#   STRATEGIES  default none,search,resample,ldb-block
#   TAG         suffix of the output directory (a variant's name)
#   NICE        niceness of the run (default 10)
#   THREADS     model threads (default 2); use 1 while anything else busies a core: llama.cpp's
#               threads wait for each other at every layer, so one descheduled thread stalls all
#               (measured: 0.5B on a 2-core machine with a build running, 3.4 tok/s with 2
#               threads, 17.5 tok/s with 1)
#   EXTRA       more `ldb eval` flags, e.g. "--proposers fresh:4,feedback:1 --prompts DIR"; the
#               rows made before --prefill and fresh:4 became the defaults resume with
#               EXTRA="--no-prefill --proposers fresh:4,feedback:1" (results headers record both);
#               search rows made before fresh samples followed resampling's seeds by default
#               (the tags p2, seed1 and earlier) resume with "--no-fresh-as-resample" added
#   TASKS       report: only these of the 43 (comma-separated), e.g. the 8 whose seed passes the
#               visible tests, the only ones `--verify` acts on
#   PROGRESS    progress flags (default "--progress lines": a line per task in the log; set it
#               empty for a binary older than the flag, such as target/eval-bin/ldb-dev3)
# Every strategy gets the same --budget-tokens per task (prompt tokens the model evaluated plus
# reply tokens); the caps on rounds (MAX_ITERS, default 40) and candidates (MAX_CANDIDATES,
# default 100) are set high enough that the budget, not a count, ends a task: at 10 rounds
# resampling would stop at about 1,000 tokens on MBPP, whose programs are short. Tasks run one at a time, every strategy on a task before the next task, so a
# partial run compares the strategies on the same tasks. Runs resume: call it again.
set -euo pipefail
cd "$(dirname "$0")/.."

SET=${1:-report}
BUDGET=${2:-3000}
DATA=${LDB_DATA_DIR:-../shared/datasets}
OUT=benchmarks/results
MODEL=${MODEL:-qwen2.5-coder-1.5b}
STRATEGIES=${STRATEGIES:-none,search,resample,ldb-block}
short=${MODEL#qwen2.5-coder-}
suffix="qwen$short-b$BUDGET${TAG:+-$TAG}"

# A private copy of the binary: the sandbox re-executes it, and a rebuild during a long run
# must not swap it under the workers.
if [ -z "${LDB_BIN:-}" ]; then
  cargo build --release --bin ldb
  mkdir -p target/eval-bin
  LDB_BIN=target/eval-bin/ldb-$$
  cp target/release/ldb "$LDB_BIN"
fi

# Task ids whose seed fails the hidden tests (`is_solved` in LDB's seed file), in id order;
# at most LIMIT (0: all), leaving out the ids of the file EXCLUDE (if given).
failing_ids() {
  python3 - "$1" "${2:-0}" "${3:-}" <<'EOF'
import json, sys
path, limit, exclude = sys.argv[1], int(sys.argv[2]), sys.argv[3]
skip = set()
if exclude:
    skip = {r["task_id"] for r in map(json.loads, open(exclude)) if not r["is_solved"]}
ids = [r["task_id"] for r in map(json.loads, open(path)) if not r["is_solved"]]
ids = [t for t in ids if t not in skip]
ids.sort(key=lambda t: int(t.split("/")[1]))
print(",".join(ids[:limit] if limit else ids))
EOF
}

# shellcheck disable=SC2206
COMMON=(--data-dir "$DATA" --model "$MODEL" --max-iters "${MAX_ITERS:-40}" --max-candidates "${MAX_CANDIDATES:-100}" --concurrency 1
  --threads "${THREADS:-2}" --no-cache --budget-tokens "$BUDGET" --strategy "$STRATEGIES" ${PROGRESS---progress lines} ${EXTRA:-})
REPORT_SEEDS="$DATA/ldb/humaneval/seed/gpt-3.5-turbo-0613/seed.jsonl"

case "$SET" in
  report)
    ids=${TASKS:-$(failing_ids "$REPORT_SEEDS")}
    nice -n "${NICE:-10}" "$LDB_BIN" eval --dataset humaneval --seeds ldb:gpt-3.5-turbo-0613 --tasks "$ids" \
      "${COMMON[@]}" --out "$OUT/search-humaneval-gpt35-hiddenfail-$suffix"
    ;;
  dev)
    DEV_SETS=${DEV_SETS:-mbpp,humaneval}
    if [[ ",$DEV_SETS," == *,mbpp,* ]]; then
      ids=$(failing_ids "$DATA/ldb/mbpp/seed/gpt-3.5-turbo-0613/seed.jsonl" "${DEV_LIMIT:-20}")
      nice -n "${NICE:-10}" "$LDB_BIN" eval --dataset mbpp --seeds ldb:gpt-3.5-turbo-0613 --tasks "$ids" \
        "${COMMON[@]}" --out "$OUT/dev-mbpp-gpt35-hiddenfail-$suffix"
    fi
    if [[ ",$DEV_SETS," == *,humaneval,* ]]; then
      ids=$(failing_ids "$DATA/ldb/humaneval/seed/codellama/seed.jsonl" "${DEV_LIMIT:-20}" \
        "$REPORT_SEEDS")
      nice -n "${NICE:-10}" "$LDB_BIN" eval --dataset humaneval --seeds ldb:codellama --tasks "$ids" \
        "${COMMON[@]}" --out "$OUT/dev-humaneval-codellama-hiddenfail-$suffix"
    fi
    ;;
  verify)
    VERIFY_SETS=${VERIFY_SETS:-wrong,right}
    limit=${VERIFY_LIMIT:-15}
    # Task ids of one seed file whose seed passes the visible tests and is `kind` (right or
    # wrong on the hidden tests): every Nth in id order, at most $limit.
    verify_ids() {
      local dataset=$1 seeds=$2 kind=$3 every=$4 probe="target/verify-probe/$1-$2"
      [ -f "$probe/none.jsonl" ] || "$LDB_BIN" eval --dataset "$dataset" --data-dir "$DATA" \
        --seeds "ldb:$seeds" --strategy none --out "$probe" >/dev/null
      python3 - "$probe/none.jsonl" "$REPORT_SEEDS" "$kind" "$every" "$limit" <<'EOF'
import json, sys
path, report, kind, every, limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
skip = {r["task_id"] for r in map(json.loads, open(report)) if not r["is_solved"]}
rows = [r for r in map(json.loads, open(path)) if r.get("kind") == "task"]
ids = [r["task_id"] for r in rows if r["seed_visible_pass"] and r["task_id"] not in skip
       and r["seed_hidden_pass"] == (kind == "right")]
ids.sort(key=lambda t: int(t.split("/")[1]))
print(",".join(ids[::every][:limit]))
EOF
    }
    run_verify() {
      local dataset=$1 seeds=$2 kind=$3 every=$4 short=$5
      local ids
      ids=$(verify_ids "$dataset" "$seeds" "$kind" "$every")
      nice -n "${NICE:-10}" "$LDB_BIN" eval --dataset "$dataset" --seeds "ldb:$seeds" --tasks "$ids" \
        "${COMMON[@]}" --out "$OUT/verify-$kind-$dataset-$short-$suffix"
    }
    if [[ ",$VERIFY_SETS," == *,wrong,* ]]; then
      run_verify humaneval codellama wrong 1 codellama
      run_verify humaneval starcoder wrong 1 starcoder
      run_verify mbpp gpt-3.5-turbo-0613 wrong 1 gpt35
    fi
    if [[ ",$VERIFY_SETS," == *,right,* ]]; then
      run_verify humaneval codellama right 5 codellama
      run_verify mbpp gpt-3.5-turbo-0613 right 20 gpt35
    fi
    ;;
  *)
    echo "usage: $0 [report|dev|verify] [BUDGET_TOKENS]" >&2
    exit 2
    ;;
esac
