#!/usr/bin/env bash
# Every test: unit, integration and snapshot tests, then the end-to-end tests with the real
# embedded model (Qwen2.5-Coder-0.5B, downloaded once, 470 MiB) and the official `openai` client.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The official OpenAI client, for the test that talks to `ldb serve`.
python3 -c "import openai" 2>/dev/null || python3 -m pip install -q openai \
  || python3 -m pip install -q --break-system-packages openai
# Build the tests first, and pull the model with the `ldb` they built: `cargo run` would build
# ldb again without the test-only dependencies' features, llama.cpp included.
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --no-run "$@"
else
  cargo test --no-run "$@"
fi
target_dir=$(cargo metadata --no-deps --format-version 1 \
  | python3 -c "import json, sys; print(json.load(sys.stdin)['target_directory'])")
"$target_dir/debug/ldb" model pull qwen2.5-coder-0.5b >/dev/null
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --no-fail-fast --run-ignored all "$@"
else
  cargo test --no-fail-fast "$@" -- --include-ignored
fi
# The sandbox, hostile, hardening and answers fixtures again, each run in a fresh worker process
# (--fresh-workers) instead of a child of a warm worker: both paths must contain the same programs.
# They are modules of the integration test binary, `it`: the filters pick them by module path.
if cargo nextest --version >/dev/null 2>&1; then
  LDB_TEST_FRESH_WORKERS=1 cargo nextest run --no-fail-fast --test it \
    -E 'test(/^(sandbox|hostile|hardening|answers)::/)'
else
  LDB_TEST_FRESH_WORKERS=1 cargo test --no-fail-fast --test it -- \
    sandbox:: hostile:: hardening:: answers::
fi
