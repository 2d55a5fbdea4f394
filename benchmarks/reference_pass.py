#!/usr/bin/env python3
"""How many of a dataset's tasks its own reference solution passes: the ceiling of the LDB table.

Usage: benchmarks/reference_pass.py DATASET [--ldb BIN] [--data DIR] [--out DIR] [--save FILE]
  DATASET: humaneval, mbpp or transcoder (LDB's copies, `../shared/datasets/ldb/DATASET`)
  --save FILE: keep the dataset's failing tasks in FILE (JSON, one entry per dataset, others
    kept), which `ldb_table.py` reads to name the misses no program is known to avoid

Writes each task's `canonical_solution` as a seed file (HumanEval's is a body, so its prompt goes
first) and scores it with `ldb eval --strategy none`: the same sandbox and hidden tests as the
table. The reference solutions assume an import prelude they do not write (TransCoder's call
`sys.maxsize`, `floor`, `Queue` bare), so each gets the common one below; what still fails is the
task's data: tests that are not Python, expected values written as bare names, or a reference that
disagrees with its tests. Prints the pass count and each failing task with its first error.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

from ldb_table import read_jsonl

HERE = os.path.dirname(os.path.abspath(__file__))
PRELUDE = ("import sys\nimport math\nfrom math import *\nimport collections\nfrom queue import Queue\n"
           "from typing import *\nimport itertools\nimport re\nimport heapq\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", choices=["humaneval", "mbpp", "transcoder"])
    ap.add_argument("--ldb", default=os.path.join(HERE, "..", "target", "release", "ldb"))
    ap.add_argument("--data", default=os.environ.get("LDB_DATA_DIR", os.path.join(HERE, "..", "..", "shared", "datasets")))
    ap.add_argument("--out", help="where the eval run goes (default: a temporary directory)")
    ap.add_argument("--save", help="JSON file to keep the failing tasks in (ldb_table.py reads it)")
    args = ap.parse_args()

    tests = os.path.join(args.data, "ldb", args.dataset, "test", "tests.jsonl")
    if not os.path.exists(tests):
        sys.exit(f"reference_pass.py: {tests} is not there\nhint: pass --data DIR (the folder holding ldb/)")
    if not os.path.exists(args.ldb):
        sys.exit(f"reference_pass.py: no ldb binary at {args.ldb}\nhint: cargo build --release, or pass --ldb BIN")
    work = tempfile.mkdtemp(prefix="reference-pass-")
    seeds = os.path.join(work, "seeds.jsonl")
    with open(tests, encoding="utf-8") as f, open(seeds, "w", encoding="utf-8") as out:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            body = r["canonical_solution"]
            program = r["prompt"] + body if args.dataset == "humaneval" else body
            out.write(json.dumps({"task_id": r["task_id"], "solution": PRELUDE + program}) + "\n")
    run = args.out or os.path.join(work, "run")
    cmd = [args.ldb, "eval", "--dataset", args.dataset, "--seeds", seeds, "--data-dir", args.data,
           "--strategy", "none", "--concurrency", "1", "--no-reports", "--progress", "lines", "--out", run]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"reference_pass.py: {' '.join(cmd)} exited {done.returncode}\n{done.stderr[-2000:]}")
    records = [r for r in read_jsonl(os.path.join(run, "none.jsonl")) if r.get("kind") == "task"]
    fails = [r for r in records if not r["final_hidden_pass"]]
    print(f"{args.dataset}: the reference passes {len(records) - len(fails)} of {len(records)} tasks' hidden tests")
    for r in fails:
        print(f"  {r['task_id']}: {first_error(r)}")
    short = [r for r in records if r["visible_passed"] < r["visible_total"]]
    print(f"{args.dataset}: it fails a visible test of {len(short)} tasks")
    if args.save:
        save(args.save, args.dataset, records, fails, short)


def first_error(record):
    return ((record.get("final_hidden_summary") or "").splitlines() or [""])[0][:100]


def save(path, dataset, records, fails, short):
    """Merges this dataset's entry into the JSON file at `path` (other datasets' kept)."""
    try:
        with open(path, encoding="utf-8") as f:
            kept = json.load(f)
    except FileNotFoundError:
        kept = {}
    except (OSError, ValueError) as e:
        sys.exit(f"reference_pass.py: cannot read {path}: {e}\nhint: remove it, or pass another --save FILE")
    kept[dataset] = {
        "date": datetime.date.today().isoformat(),
        "tasks": len(records),
        "hidden_pass": len(records) - len(fails),
        "hidden_fail": {r["task_id"]: first_error(r) for r in fails},
        "visible_fail": {r["task_id"]: f"{r['visible_passed']}/{r['visible_total']}" for r in short},
    }
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(kept, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        sys.exit(0)
