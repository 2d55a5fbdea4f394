#!/usr/bin/env python3
"""Stratified samples of the Refactory student bugs (../shared/datasets/refactory/tasks.jsonl).

Usage: benchmarks/refactory_sample.py [report|dev|early] [--size N] [--data FILE]

Prints comma-separated task ids for `ldb eval --tasks`. Every question's attempts are shuffled
once (a fixed shuffle) and cut into blocks; each block gives every question its share of 300
(proportional to its number of attempts, rounded up: 303 tasks):
- `early`: the first block. Programs of it were read while the repair operators were built, so
  it is development data, never a reported result.
- `dev`: the second block (the first N of it with --size N): where defaults are chosen.
- `report`: the third block, held out: the figures are reported on it, nothing is tuned on it.
"""
import json
import math
import random
import sys
from collections import defaultdict
from pathlib import Path


REPORT_SIZE = 300


def sample(path, size, which):
    by_question = defaultdict(list)
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            by_question[r["question"]].append(r["task_id"])
    total = sum(len(v) for v in by_question.values())
    out = []
    for q in sorted(by_question):
        ids = sorted(by_question[q])
        random.Random(f"refactory-{q}").shuffle(ids)
        block = math.ceil(REPORT_SIZE * len(ids) / total)
        share = math.ceil(size * len(ids) / total)
        start = {"early": 0, "dev": block, "report": 2 * block}[which]
        width = share if which == "dev" else block
        out.extend(ids[start:start + min(width, block)])
    return out


def main(argv):
    which = "report"
    size = REPORT_SIZE
    data = Path(__file__).resolve().parent.parent.parent / "shared/datasets/refactory/tasks.jsonl"
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("report", "dev", "early"):
            which = a
        elif a == "--size":
            size = int(args.pop(0))
        elif a == "--data":
            data = Path(args.pop(0))
        else:
            sys.exit(__doc__)
    print(",".join(sample(data, size, which)))


if __name__ == "__main__":
    main(sys.argv[1:])
