#!/usr/bin/env bash
# The main job: debug the example task's buggy seed with `ldb fix`. With no model endpoint
# configured, ldb runs its embedded model (qwen2.5-coder-1.5b, downloaded once, 1.1 GB).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --quiet
ldb=target/release/ldb
task=examples/sum_evens/task.json
echo "\$ ldb test $task" >&2
"$ldb" test "$task" || true
echo >&2
echo "\$ ldb fix $task --report target/demo-report.json" >&2
"$ldb" fix "$task" --report target/demo-report.json "$@"
