#!/usr/bin/env python3
"""The localisation benchmark's results of several models side by side, on the mutants every
file holds (the bench draws the same mutants in the same order for every model, so a run that
stopped early compares on its prefix).

Usage: benchmarks/experiments/localise_compare.py RESULTS.jsonl [RESULTS.jsonl ...]
  e.g. benchmarks/results/localise-mbpp-qwen2.5-coder-0.5b.jsonl
       benchmarks/results/localise-mbpp-qwen2.5-coder-1.5b.jsonl

Prints one markdown table: per model and verdict form, accuracy (the named block holds the
mutated line), parse rate, mean reply tokens and mean time per judgement; then the two
baselines (a random shown block, the last shown block). Nothing is written.
"""
import json
import sys
from pathlib import Path

FORMS = ["full, grammar", "full, free", "short, grammar", "short, free"]


def load(path):
    rows = {}
    for line in Path(path).read_text().splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        rows[(r["task_id"], r["line"], r["edit"])] = r
    return rows


def model_of(path):
    name = Path(path).stem
    return name.split("-", 2)[-1] if name.count("-") >= 2 else name


def main(paths):
    runs = [(model_of(p), load(p)) for p in paths]
    common = set.intersection(*(set(rows) for _, rows in runs))
    if not common:
        print("no mutant is in every file", file=sys.stderr)
        return 1
    n = len(common)
    pct = lambda x: f"{100.0 * x / n:.1f}% ({round(x)}/{n})" if isinstance(x, int) else f"{100.0 * x / n:.1f}%"
    print(f"{n} mutants common to every file\n")
    print("| model | verdict form | accuracy | parse rate | reply tokens (mean) | time per judgement |")
    print("|---|---|---:|---:|---:|---:|")
    for model, rows in runs:
        for form in FORMS:
            cells = [rows[k][form] for k in common if form in rows[k]]
            hits = sum(bool(c.get("hit")) for c in cells)
            parsed = sum(bool(c.get("parsed")) for c in cells)
            tokens = sum(c.get("tokens", 0) for c in cells) / n
            secs = sum(c.get("ms", 0) for c in cells) / n / 1000
            print(f"| {model} | {form} | {pct(hits)} | {pct(parsed)} | {tokens:.0f} | {secs:.1f} s |")
    rows = runs[0][1]
    random = sum(rows[k]["random"] for k in common)
    last = sum(bool(rows[k]["last"]) for k in common)
    print(f"| | baseline: a random shown block (expected) | {pct(random)} | | | |")
    print(f"| | baseline: the last block shown | {pct(last)} | | | |")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
