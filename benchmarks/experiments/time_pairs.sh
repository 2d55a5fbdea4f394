#!/usr/bin/env bash
# Two variants of a repair run (benchmarks/repair_runs.sh) interleaved task by task, so that both
# see the same machine: their wall times compare on one load. The VM's speed drifts by the hour
# (the same model work has taken 3,095 s one night and 5,566 s the next evening), so times of runs
# made hours apart do not compare. Each task runs as its own `ldb eval` call, once per variant,
# the order alternating from task to task; both pay the same start-up.
#
# Usage: IDS=<comma-separated task ids> TAG_A=... TAG_B=... [EXTRA_A=...] [EXTRA_B=...] \
#          [STRATEGIES_A=search] [STRATEGIES_B=search] benchmarks/experiments/time_pairs.sh SET [BUDGET_TOKENS]
#   SET, BUDGET_TOKENS, THREADS, LDB_BIN and the rest as for repair_runs.sh; the variants write
#   its output directories with TAG_A and TAG_B, and resume like it. LDB_BIN_A and LDB_BIN_B
#   (default LDB_BIN) pair two builds instead of two sets of flags.
# Then: python3 benchmarks/repair_analysis.py DIR_A DIR_B
set -euo pipefail
cd "$(dirname "$0")/../.."

: "${IDS:?IDS: the task ids to run, comma-separated}"
: "${TAG_A:?TAG_A: the first variant's tag (its output directory)}"
: "${TAG_B:?TAG_B: the second variant's tag}"
SET=${1:-refactory}
BUDGET=${2:-3000}

if [ -z "${LDB_BIN:-}" ]; then
  cargo build --release --bin ldb
  mkdir -p target/eval-bin
  LDB_BIN=target/eval-bin/ldb-$$
  cp target/release/ldb "$LDB_BIN"
fi
export LDB_BIN

run() { # variant task
  local tag extra strategies bin
  if [ "$1" = A ]; then
    tag=$TAG_A extra=${EXTRA_A:-} strategies=${STRATEGIES_A:-search} bin=${LDB_BIN_A:-$LDB_BIN}
  else
    tag=$TAG_B extra=${EXTRA_B:-} strategies=${STRATEGIES_B:-search} bin=${LDB_BIN_B:-$LDB_BIN}
  fi
  LDB_BIN=$bin TAG=$tag EXTRA=$extra STRATEGIES=$strategies KEEP_IDS=$2 \
    benchmarks/repair_runs.sh "$SET" "$BUDGET"
}

IFS=, read -ra ids <<<"$IDS"
n=0
for id in "${ids[@]}"; do
  if [ $((n % 2)) -eq 0 ]; then
    run A "$id"
    run B "$id"
  else
    run B "$id"
    run A "$id"
  fi
  n=$((n + 1))
done
