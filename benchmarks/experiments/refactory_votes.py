#!/usr/bin/env python3
"""How a Refactory class answers its instructor's calls, and where a run's programs still fail.

Usage:
  benchmarks/experiments/refactory_votes.py QUESTION [--data FILE]
      For each instructor call of QUESTION (e.g. question_2), the answer most of the class's
      submissions that pass the three visible tests give (the plurality), how many give it, and
      whether it is the instructor's answer: how good the class is as a vote, call by call.
  benchmarks/experiments/refactory_votes.py QUESTION --run DIR [--data FILE]
      For the tasks of QUESTION a run (`ldb eval --out DIR`) did not fix, the instructor calls
      its returned program fails, counted by call.

Each submission runs in its own `python3` process with a time limit (they are students'
programs: some loop forever). Default data: target/datasets/refactory/tasks.jsonl (made by
benchmarks/refactory_tasks.py: question 2's hidden tests define the global they use).
"""

import argparse
import collections
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
ASSERT = re.compile(r"^\s*assert (.*) == (.*)$")

RUNNER = """
import sys
_calls = {calls!r}
_out = []
for _c in _calls:
    try:
        _out.append(repr(eval(_c)))
    except BaseException as _e:
        _out.append('raise ' + type(_e).__name__)
print(repr(_out))
"""


def answers(program, prelude, calls):
    """What `program` answers on each call (`repr`, or `raise Kind`); None if it never finished."""
    code = program + "\n" + prelude + RUNNER.format(calls=calls)
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=10
        )
        return eval(done.stdout.strip().splitlines()[-1])
    except Exception:
        return None


def split_hidden(hidden):
    """The prelude (definitions before `def check`) and the instructor's (call, expected)."""
    prelude = hidden.split("def check")[0]
    calls = [m.groups() for m in map(ASSERT.match, hidden.splitlines()) if m]
    return prelude, calls


def main():
    p = argparse.ArgumentParser()
    p.add_argument("question")
    p.add_argument("--run")
    p.add_argument("--data", default=str(ROOT / "target/datasets/refactory/tasks.jsonl"))
    a = p.parse_args()
    tasks = [json.loads(l) for l in open(a.data)]
    tasks = [t for t in tasks if t.get("question") == a.question]
    if not tasks:
        sys.exit(f"no task of {a.question} in {a.data}")
    prelude, calls = split_hidden(tasks[0]["hidden_tests"])
    exprs = [c for c, _ in calls]
    expected = [repr(eval(e, {})) for _, e in calls]
    if a.run:
        records = [json.loads(l) for l in open(Path(a.run) / "search.jsonl")]
        by_id = {t["task_id"]: t for t in tasks}
        failing = collections.Counter()
        left = 0
        for r in records:
            if r.get("kind") != "task" or r["task_id"] not in by_id or r.get("final_hidden_pass"):
                continue
            left += 1
            got = answers(r["final_program"], prelude, exprs) or ["timeout"] * len(exprs)
            for c, g, e in zip(exprs, got, expected):
                if g != e:
                    failing[c] += 1
        print(f"{left} tasks of {a.question} not fixed in {a.run}; the instructor's calls they fail:")
        for c, n in failing.most_common():
            print(f"  {n:4}  {c}")
        return
    visible = [m.groups() for m in map(ASSERT.match, tasks[0]["visible_tests"]) if m]
    voters = []
    for t in tasks:
        got = answers(t["seed"], "", [c for c, _ in visible])
        if got and got == [repr(eval(e, {})) for _, e in visible]:
            voters.append(answers(t["seed"], prelude, exprs))
    voters = [v for v in voters if v]
    print(f"{a.question}: {len(tasks)} submissions, {len(voters)} pass the visible tests")
    right = 0
    for i, (c, e) in enumerate(zip(exprs, expected)):
        top, n = collections.Counter(v[i] for v in voters).most_common(1)[0]
        right += top == e
        mark = "right" if top == e else "WRONG"
        print(f"  {mark}  {c}  expected {e}, plurality {top} ({n} of {len(voters)})")
    print(f"the plurality is right on {right} of {len(exprs)} calls")


if __name__ == "__main__":
    main()
