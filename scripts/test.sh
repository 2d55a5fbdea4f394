#!/usr/bin/env bash
# Every test: unit, integration and snapshot tests, then the end-to-end tests with the real
# embedded model (Qwen2.5-Coder-0.5B, downloaded once, 470 MiB) and the official `openai` client.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The official OpenAI client, for the test that talks to `ldb serve`.
python3 -c "import openai" 2>/dev/null || python3 -m pip install -q openai \
  || python3 -m pip install -q --break-system-packages openai
cargo run --quiet --bin ldb -- model pull qwen2.5-coder-0.5b >/dev/null
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --no-fail-fast --run-ignored all "$@"
else
  cargo test --no-fail-fast "$@" -- --include-ignored
fi
