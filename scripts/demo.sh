#!/usr/bin/env bash
# The main job on the example task: build ldb, run the task's tests on its buggy seed, and show
# the block-level trace of the failing test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --quiet
ldb=target/release/ldb
task=examples/sum_evens/task.json
echo "\$ ldb test $task" >&2
"$ldb" test "$task" || true
echo >&2
echo "\$ ldb trace --task $task" >&2
"$ldb" trace --task "$task" || true
