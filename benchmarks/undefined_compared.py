#!/usr/bin/env python3
"""Which visible tests `ldb test` names as comparing with a name nothing defines, on LDB's seeds.

Usage: benchmarks/undefined_compared.py [--ldb BIN] [--data DIR] [--references FILE]

For each dataset x seed model of `../shared/datasets/ldb`, writes the tasks with their seed as
the program and the visible tests LDB's scripts keep (those naming the entry point, no `assert
False`; and, as `ldb eval` does, none that does not parse), runs `ldb test FILE --json` (every
test runs in the sandbox; stdout is discarded) and counts the tasks with a `warning: ...
compares with` line. A flagged task whose own reference solution fails its hidden tests
(`results/ldb-table/references.json`, from `reference_pass.py --save`) is a broken test; any
other is listed by id. Tasks ldb's parser refused are counted as set aside.
"""

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile

from ldb_table import read_jsonl

HERE = os.path.dirname(os.path.abspath(__file__))
WARNING = re.compile(r"^warning: (\S+) visible_tests\[\d+\] compares with ", re.M)


def parses(test):
    try:
        ast.parse(test)
        return True
    except (SyntaxError, ValueError):
        return False


def tasks(data, dataset, model):
    tests = {r["task_id"]: r for r in read_jsonl(os.path.join(data, dataset, "test", "tests.jsonl"))}
    seeds = read_jsonl(os.path.join(data, dataset, "seed", model, "seed.jsonl"))
    for s in seeds:
        t = tests[s["task_id"]]
        ep = t["entry_point"]
        visible = [v for v in t["given_tests"]
                   if ep in v and "assert False" not in v and parses(v)]
        if visible:
            yield {"task_id": s["task_id"], "prompt": t["prompt"], "entry_point": ep,
                   "visible_tests": visible, "seed": s["solution"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ldb", default=os.path.join(HERE, "..", "target", "release", "ldb"))
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "shared", "datasets", "ldb"))
    ap.add_argument("--references",
                    default=os.path.join(HERE, "results", "ldb-table", "references.json"))
    a = ap.parse_args()
    with open(a.references) as f:
        refs = json.load(f)
    print("| dataset | seeds | tasks | flagged | reference fails too | others |")
    print("|---|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for dataset in ["humaneval", "mbpp", "transcoder"]:
            broken = set(refs.get(dataset, {}).get("hidden_fail", {}))
            for model in sorted(os.listdir(os.path.join(a.data, dataset, "seed"))):
                path = os.path.join(tmp, f"{dataset}-{model}.jsonl")
                with open(path, "w") as f:
                    n = 0
                    for t in tasks(a.data, dataset, model):
                        f.write(json.dumps(t) + "\n")
                        n += 1
                run = subprocess.run([a.ldb, "test", path, "--json"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
                # 2: a line ldb's parser refused (named on stderr) was set aside.
                if run.returncode not in (0, 1) and "error: " + path not in run.stderr:
                    sys.exit(f"{path}: ldb test exited {run.returncode}:\n{run.stderr[-2000:]}")
                flagged = sorted(set(WARNING.findall(run.stderr)),
                                 key=lambda i: int(i.rsplit("/", 1)[-1]))
                others = [i for i in flagged if i not in broken]
                aside = run.stderr.count("error: " + path + ":")
                if aside:
                    others.append(f"({aside} set aside)")
                print(f"| {dataset} | {model} | {n} | {len(flagged)} | {len(flagged) - len([i for i in others if i in flagged])} "
                      f"| {', '.join(others) or '-'} |", flush=True)


if __name__ == "__main__":
    main()
