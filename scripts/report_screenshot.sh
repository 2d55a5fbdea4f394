#!/usr/bin/env bash
# Renders a fix report as HTML and takes a screenshot of it in headless Chromium.
#
#   scripts/report_screenshot.sh [RUN.json] [OUT_DIR]
#
# With RUN.json (from `ldb fix ... --report RUN.json`), that report is rendered. Without it, the
# example examples/sum_evens is fixed with `--strategy ldb` against scripts/fake_openai.py, a
# scripted endpoint that answers with fixed verdicts and the fixed program (no model runs; the
# trace, sandbox and report are real). Writes OUT_DIR/report.html and OUT_DIR/report.png
# (default OUT_DIR: docs). Without RUN.json it also evaluates the example the same way
# (`ldb eval --dataset examples/sum_evens/task.json`) and writes OUT_DIR/eval.html, whose row
# links to the task's page in OUT_DIR/eval_fixes/, and OUT_DIR/eval.png. Needs chromium
# (apt-get install chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${2:-docs}"
mkdir -p "$out"
ldb="${LDB:-target/debug/ldb}"
[ -x "$ldb" ] || cargo build
run="${1:-}"
if [ -z "$run" ]; then
  work="$(mktemp -d)"
  trap 'kill "${server_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
  cat > "$work/verdicts.json" <<'JSON'
{"verdicts": [{"block": "BLOCK-0", "correct": true, "explanation": "total starts at 0, as the sum of no numbers should"},
 {"block": "BLOCK-1", "correct": false, "explanation": "range(1, len(xs)) starts at index 1, so xs[0] is never looked at: for [2, 2, 5] the first 2 is skipped"},
 {"block": "BLOCK-2", "correct": true, "explanation": "adds an even element"},
 {"block": "BLOCK-3", "correct": true, "explanation": "returns the total"}]}
JSON
  cat > "$work/fixed.py" <<'PY'
def sum_evens(xs: list) -> int:
    total = 0
    for x in xs:
        if x % 2 == 0:
            total += x
    return total
PY
  python3 scripts/fake_openai.py "$work/verdicts.json" "$work/fixed.py" > "$work/url" &
  server_pid=$!
  for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
  : > "$work/config.toml"
  run="$out/report.json"
  "$ldb" fix examples/sum_evens/task.json --strategy ldb --max-iters 3 --no-cache \
    --base-url "$(head -1 "$work/url")" --model scripted --config "$work/config.toml" \
    --report "$run" > /dev/null
  "$ldb" eval --dataset examples/sum_evens/task.json --strategy none,ldb --max-iters 3 \
    --no-cache --base-url "$(head -1 "$work/url")" --model scripted --config "$work/config.toml" \
    --out "$work/eval" --quiet > /dev/null
  rm -rf "$out/eval_fixes"
  "$ldb" eval report "$work/eval" --html "$out/eval.html" > /dev/null
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,900 \
    --screenshot="$out/eval.png" "file://$(realpath "$out/eval.html")" 2>/dev/null
  echo "wrote $out/eval.html (pages in $out/eval_fixes/) and $out/eval.png"
fi
"$ldb" report "$run" --html "$out/report.html"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2200 \
  --screenshot="$out/report.png" "file://$(realpath "$out/report.html")" 2>/dev/null
echo "wrote $out/report.html and $out/report.png"
