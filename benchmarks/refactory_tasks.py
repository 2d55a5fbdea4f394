#!/usr/bin/env python3
"""The Refactory tasks with question 2's hidden tests made runnable.

Usage: benchmarks/refactory_tasks.py [--data FILE] [--out FILE]

Question 2's instructor tests (unique_day, unique_month, contains_unique_day) call the
functions on `tuple_of_possible_birthdays`, a global that Refactory's own test harness defines
(the ten dates of the "Cheryl's birthday" puzzle the assignment is about) and that the shared
`tasks.jsonl` leaves out. Its hidden tests therefore end in a NameError for every program, a
correct one included: no repair of question 2 can be scored as a fix. This writes a copy of the
tasks whose question-2 hidden tests define the global first; nothing else changes (visible
tests, prompts and seeds are the same, so no model ever sees the difference).

Default input: ../shared/datasets/refactory/tasks.jsonl; default output:
target/datasets/refactory/tasks.jsonl (the name stays `tasks.jsonl`, so runs resume across the
correction). Prints the output path.
"""

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GLOBAL = "tuple_of_possible_birthdays"
# Refactory's harness (test files of question 2): the dates of the "Cheryl's birthday" puzzle.
DEFINITION = (
    "tuple_of_possible_birthdays = (('May', '15'), ('May', '16'), ('May', '19'), "
    "('June', '17'), ('June', '18'), ('July', '14'), ('July', '16'), ('August', '14'), "
    "('August', '15'), ('August', '17'))\n\n"
)


def corrected(task):
    hidden = task.get("hidden_tests", "")
    if GLOBAL in hidden and f"{GLOBAL} =" not in hidden:
        task = dict(task, hidden_tests=DEFINITION + hidden)
    return task


def main(argv):
    data = ROOT.parent / "shared/datasets/refactory/tasks.jsonl"
    out = ROOT / "target/datasets/refactory/tasks.jsonl"
    args = list(argv)
    while args:
        flag = args.pop(0)
        if flag in ("-h", "--help"):
            print(__doc__)
            return 0
        if flag in ("--data", "--out") and args:
            value = Path(args.pop(0))
            if flag == "--data":
                data = value
            else:
                out = value
        else:
            print(f"error: unknown argument `{flag}`\nhint: see --help", file=sys.stderr)
            return 2
    if not data.is_file():
        print(f"error: {data}: no such file\nhint: pass --data with the Refactory tasks.jsonl",
              file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    changed = 0
    # Its own temporary file: two benchmark scripts may write the copy at once.
    tmp = out.with_suffix(f".jsonl.{os.getpid()}.tmp")
    with open(data) as src, open(tmp, "w") as dst:
        for line in src:
            if not line.strip():
                continue
            task = json.loads(line)
            fixed = corrected(task)
            changed += fixed is not task
            dst.write(json.dumps(fixed) + "\n")
    tmp.replace(out)
    print(f"{changed} tasks given `{GLOBAL}`", file=sys.stderr)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
