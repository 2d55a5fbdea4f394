#!/usr/bin/env bash
# The LDB table (benchmarks/RESULTS.md, "The LDB table"): the default search with the embedded
# model on every dataset × seed model of the LDB paper's Table 1, plus the Reflexion and GPT-4
# seeds on HumanEval. benchmarks/ldb_table.py prints the table beside the paper's figures.
#
# Usage: benchmarks/ldb_table.sh [CELL...]      (default: every cell, in the order below)
#   CELL: he-gpt35 mbpp-gpt35 tc-gpt35 he-reflexion he-gpt4 he-codellama he-starcoder
#         mbpp-codellama mbpp-starcoder tc-codellama tc-starcoder
#
# The paper's protocol: LDB's shipped seeds and visible tests; a seed that passes its visible
# tests is kept and scored as it is (`--only-failing`); the others are debugged for at most 10
# rounds (`ldb fix`'s default, which is also what the table shows: no token budget, no time
# limit); hidden tests only score the returned program. Every record keeps, per round, whether
# the program returned by then passes the hidden tests, so ldb_table.py also shows the figure at
# 3 rounds from the same run.
#
# The cells with over 200 failing seeds (MBPP for CodeLlama and StarCoder, TransCoder for
# StarCoder) run shard 0 of 2 (every other task of the dataset, in dataset order: a systematic
# sample of 100-120 failing seeds); `SHARDS=1` runs them whole, `SHARD=1/2` the other half (join
# the halves with `ldb eval merge`). TransCoder with CodeLlama's seeds (169 failing: a half would
# hold 85) runs whole.
#
# Runs resume and can be stopped at any time: call the script again with the same cells. The
# run directories are benchmarks/results/ldb-table/CELL (compact them with
# benchmarks/compact_results.py before committing). A cell compacted before it ends resumes
# too: its finished tasks are kept, and the others get their seeds again from LDB's seed files
# (checked against the digests the compact records keep), so a long cell can be committed as it
# goes and continued on another machine.
# Environment: LDB_TABLE_OUT (where the cells go, default benchmarks/results/ldb-table), THREADS
# (model threads, default 2), NICE (default 10), LDB_BIN (default: a private
# copy of a fresh release build, so a rebuild during the hours of a run does not swap it under
# the sandbox workers).
set -euo pipefail
cd "$(dirname "$0")/.."

DATA=${LDB_DATA_DIR:-../shared/datasets}
OUT=${LDB_TABLE_OUT:-benchmarks/results/ldb-table}
ALL=(he-gpt35 mbpp-gpt35 tc-gpt35 he-reflexion he-gpt4 he-codellama he-starcoder
  mbpp-codellama mbpp-starcoder tc-codellama tc-starcoder)
if [ $# -gt 0 ]; then CELLS=("$@"); else CELLS=("${ALL[@]}"); fi

for cell in "${CELLS[@]}"; do
  case " ${ALL[*]} " in
    *" $cell "*) ;;
    *) echo "ldb_table.sh: unknown cell '$cell'; cells: ${ALL[*]}" >&2; exit 2 ;;
  esac
done

if [ -z "${LDB_BIN:-}" ]; then
  cargo build --release --bin ldb
  mkdir -p target/eval-bin
  LDB_BIN=target/eval-bin/ldb-table-$$
  cp target/release/ldb "$LDB_BIN"
fi

for cell in "${CELLS[@]}"; do
  case "$cell" in
    he-*) dataset=humaneval ;;
    mbpp-*) dataset=mbpp ;;
    tc-*) dataset=transcoder ;;
  esac
  case "$cell" in
    *-gpt35) seeds=gpt-3.5-turbo-0613 ;;
    *-gpt4) seeds=gpt-4-1106-preview ;;
    *-reflexion) seeds=reflexion ;;
    *-codellama) seeds=codellama ;;
    *-starcoder) seeds=starcoder ;;
  esac
  dir="$OUT/$cell"
  shard=()
  case "$cell" in
    mbpp-codellama | mbpp-starcoder | tc-starcoder)
      if [ "${SHARDS:-2}" != 1 ]; then
        s=${SHARD:-0/2}
        shard=(--shard "$s")
        dir="$OUT/$cell-shard${s%/*}of${s#*/}"
      fi
      ;;
  esac
  echo "ldb_table.sh: $cell ($dataset, seeds of $seeds) into $dir" >&2
  nice -n "${NICE:-10}" "$LDB_BIN" eval --dataset "$dataset" --seeds "ldb:$seeds" \
    --data-dir "$DATA" --strategy search --only-failing --max-iters 10 \
    --model qwen2.5-coder-1.5b --threads "${THREADS:-2}" --no-cache --concurrency 1 \
    --no-reports --progress lines "${shard[@]}" --out "$dir"
done
