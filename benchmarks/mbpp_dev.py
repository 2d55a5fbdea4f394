#!/usr/bin/env python3
"""MBPP tasks outside the test split, in LDB's layout, as a development set for one-assert tasks.

The LDB table scores MBPP's test split (tasks 11-510). Tuning the search on those tasks and then
reporting them would not be a result, so work on MBPP-like tasks (a one-line description, one
visible assert) uses the validation split (511-600) and, when more are wanted, the training split
(601-974), written the way LDB writes the test split:

- prompt: the signature of the function the first assert calls, with MBPP's text as its docstring;
- given_tests: the first assert (LDB's visible test); test: all three asserts in `check`.

Usage: benchmarks/mbpp_dev.py OUT_DIR [--ids 511-600] [--data ../shared/datasets/mbpp/mbpp.jsonl]
then `ldb eval --dataset OUT_DIR --only-failing ...` (seeds written by the model: `generate`).
"""

import argparse
import json
import re
import sys
from pathlib import Path


def parse_range(text):
    ids = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        ids.update(range(int(lo), int(hi or lo) + 1))
    return ids


def task_record(rec):
    code = rec["code"].replace("\r\n", "\n")
    first = rec["test_list"][0]
    called = re.search(r"assert\s+(?:not\s+)?\(?\s*([A-Za-z_]\w*)\s*\(", first)
    if not called:
        return None
    entry = called.group(1)
    sig = re.search(r"^def\s+" + re.escape(entry) + r"\s*\(.*?\)\s*:", code, re.M | re.S)
    if not sig:
        return None
    prompt = f'{sig.group(0)}\n    """\n    {rec["text"].strip()}\n    """\n'
    asserts = "\n".join("    " + t for t in rec["test_list"])
    setup = rec.get("test_setup_code") or ""
    test = f"{setup}\ndef check(candidate):\n{asserts}\ncheck({entry})\n"
    return {
        "task_id": f"MBPP/{rec['task_id']}",
        "prompt": prompt,
        "entry_point": entry,
        "test": test,
        "given_tests": [first],
        "canonical_solution": code,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--ids", default="511-600")
    ap.add_argument("--data", type=Path, default=Path("../shared/datasets/mbpp/mbpp.jsonl"))
    args = ap.parse_args()
    wanted = parse_range(args.ids)
    if wanted & set(range(11, 511)):
        sys.exit("mbpp_dev.py: ids 11-510 are the test split the LDB table reports; pick others")
    records, skipped = [], []
    with args.data.open() as f:
        for line in f:
            rec = json.loads(line)
            if rec["task_id"] in wanted:
                r = task_record(rec)
                (records.append(r) if r else skipped.append(rec["task_id"]))
    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("probs.jsonl", "tests.jsonl"):
        with (args.out / name).open("w") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
    print(f"{len(records)} tasks into {args.out}" + (f"; skipped {skipped}" if skipped else ""),
          file=sys.stderr)


if __name__ == "__main__":
    main()
