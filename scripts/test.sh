#!/usr/bin/env bash
# Every test: unit, integration and snapshot tests (sandbox, tracer, CFG, task loading).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --no-fail-fast "$@"
else
  cargo test --no-fail-fast "$@"
fi
