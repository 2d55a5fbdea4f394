#!/usr/bin/env python3
"""Stratified samples of the Refactory student bugs (../shared/datasets/refactory/tasks.jsonl).

Usage: benchmarks/refactory_sample.py [report|dev] [--size N] [--data FILE]

Prints comma-separated task ids for `ldb eval --tasks`. Each question gets its share of N
(proportional to its number of attempts, rounded up), drawn by a fixed shuffle: `report` takes
the first share of every question's shuffle, `dev` the next share, so the two never overlap.
Defaults and the choices made while building the repair strategies come from `dev`; `report`
is the held-out slice the final figures are reported on.
"""
import json
import math
import random
import sys
from collections import defaultdict
from pathlib import Path


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
        share = math.ceil(size * len(ids) / total)
        start = 0 if which == "report" else share
        out.extend(ids[start:start + share])
    return out


def main(argv):
    which = "report"
    size = 300
    data = Path(__file__).resolve().parent.parent.parent / "shared/datasets/refactory/tasks.jsonl"
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("report", "dev"):
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
