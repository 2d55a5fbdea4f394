#!/usr/bin/env bash
# The README's commands, each as written there, in its order. tests/it/readme.rs checks that every
# command in the README's code blocks is in a script or a test, and runs
# `scripts/walkthrough.sh --no-model` with the ldb it built (the commands that need no model).
# Without --no-model the commands that ask the embedded model run too (`ldb fix`, `ldb eval`,
# `ldb model pull`, `ldb serve`): a few minutes on 2 cores, and the 1.5B model (1.1 GB) the first
# time. ldb comes from $LDB, else target/release/ldb (scripts/demo.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
model=1
if [[ ${1:-} == --no-model ]]; then model=0; fi
ldb_bin=$(realpath "${LDB:-target/release/ldb}")
ldb() { "$ldb_bin" "$@"; }
say() { printf '\n$ %s\n' "$*" >&2; }

# A first fix. Exit status 1: a test fails (`test`) or the program is not fixed (`fix`).
rm -rf /tmp/running_max
(
  say "ldb test prog.py --tests test_prog.py"
  cp -r examples/running_max /tmp/running_max && cd /tmp/running_max
  ldb test prog.py --tests test_prog.py || test $? = 1
  if ((model)); then
    ldb fix prog.py --tests test_prog.py --write
    ldb test prog.py --tests test_prog.py
  fi
)

# A project: from the failing test to the function, fixed in place (a model-free edit).
rm -rf /tmp/textkit
(
  say "ldb fix --tests tests/test_slug.py::test_numbers_are_kept --write"
  cp -r examples/textkit /tmp/textkit && cd /tmp/textkit
  ldb locate --tests tests/test_slug.py::test_numbers_are_kept || test $? = 1
  if ((model)); then
    ldb fix --tests tests/test_slug.py::test_numbers_are_kept --write
    grep -q 'a-z0-9' textkit/slug.py
  fi
)

# One walkthrough per command.
say "ldb test, trace, locate, cfg, check, exec"
ldb test examples/sum_evens/task.json || test $? = 1
ldb trace --task examples/sum_evens/task.json || test $? = 1
ldb locate examples/running_max/prog.py --tests examples/running_max/test_prog.py || test $? = 1
ldb cfg examples/check/crash.py
ldb check examples/check/crash.py || test $? = 1
ldb exec examples/snippet_deltas/deltas.py --no-model
ldb model list
if ((model)); then
  say "ldb eval, ldb model pull, ldb serve"
  ldb eval --dataset humaneval --strategy none,search --limit 3 --out /tmp/ldb-eval
  ldb eval report /tmp/ldb-eval --html /tmp/ldb-eval.html
  ldb model pull qwen2.5-coder-0.5b
  url=$(mktemp)
  ldb serve --port 8080 >"$url" &
  serve=$!
  for _ in $(seq 120); do [[ -s $url ]] && break; sleep 1; done
  curl -sf "$(cat "$url")/models"
  echo
  kill "$serve"
  wait "$serve" || true
  rm -f "$url"
fi
