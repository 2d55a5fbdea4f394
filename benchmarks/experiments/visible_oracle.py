#!/usr/bin/env python3
"""Where a debugged task ended wrong: was a right program among the ones that passed the visible tests?

For each debugged task of an `ldb eval` run (its per-task reports, `RUN/reports/search/*.json`,
which hold every candidate's program), the candidates that pass the visible tests are run on the
task's hidden tests, locally in a subprocess with a timeout (an analysis of a benchmark, not
ldb's sandbox). Each task is put in one class:
- fixed: the returned program passes the hidden tests;
- no candidate passed: nothing passed the visible tests (the given program is returned);
- wrong, a right one at hand: the returned program fails the hidden tests and another
  visible-passing candidate passes them (the choice was wrong);
- wrong, none right: every visible-passing candidate fails the hidden tests.

Usage: benchmarks/experiments/visible_oracle.py RUN_DIR TASKS_DIR
TASKS_DIR holds the `probs.jsonl` the run read (its `test` is the hidden check). Prints a line a
task, then the count a class.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def passes_hidden(program, task):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(program + "\n" + task["test"])
        path = f.name
    try:
        return subprocess.run([sys.executable, path], capture_output=True, timeout=10).returncode == 0
    except subprocess.TimeoutExpired:
        return False
    finally:
        os.unlink(path)


def main(run, tasks_dir):
    probs = {}
    with open(tasks_dir / "probs.jsonl") as f:
        for line in f:
            t = json.loads(line)
            probs[t["task_id"]] = t
    classes = collections.Counter()
    for report in sorted((run / "reports" / "search").glob("*.json")):
        t = json.loads(report.read_text())["tasks"][0]
        task = probs[t["task_id"]]
        cands = [c for c in t["candidates"] if c.get("program") and c.get("duplicate_of") is None]
        passing = [
            c for c in cands
            if c["proposer"] != "seed" and c.get("visible_passed") == t["visible_total"]
        ]
        right = {c["id"] for c in passing if passes_hidden(c["program"], task)}
        final = t.get("final_program") or ""
        final_ok = bool(final) and passes_hidden(final, task)
        picked = next((c for c in cands if c["program"] == final), None)
        if final_ok:
            cls = "fixed"
        elif not passing:
            cls = "no candidate passed"
        elif right:
            cls = "wrong, a right one at hand"
        else:
            cls = "wrong, none right"
        classes[cls] += 1
        by = collections.defaultdict(lambda: [0, 0])
        for c in passing:
            by[c["proposer"]][0] += 1
            by[c["proposer"]][1] += c["id"] in right
        conf = (t.get("confirmation") or {}).get("status", "-")
        print(
            f"{t['task_id']}: {cls}; returned {picked['proposer'] if picked else '?'} "
            f"({conf}); visible-passing (right) by proposer: "
            + ", ".join(f"{p} {n} ({r})" for p, (n, r) in by.items())
        )
    print(dict(classes))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[-2])
    main(Path(sys.argv[1]), Path(sys.argv[2]))
