#!/usr/bin/env python3
"""Print the LDB table: ldb's default search with the embedded model beside the LDB paper.

Usage: benchmarks/ldb_table.py [--results DIR] [--data DIR] [--json]

Reads the run directories benchmarks/ldb_table.sh writes (benchmarks/results/ldb-table/CELL)
and, for each dataset x seed model of the LDB paper's Table 1, prints pass@1 of the seed and of
ldb (after 10 rounds, the paper's limit, and after 3), LDB's figure, fixed and broken tasks,
tokens and median seconds per debugged task, what the misses were, and, where LDB's per-task
results are shipped (`results_summary`), the tasks either one fixes that the other does not.
Misses no program is known to avoid come first: hidden tests that are not Python, and tasks whose
own reference solution fails them (`references.json`, written by `reference_pass.py --save`).

A cell still running (or a sampled cell, a shard of the dataset) says how many tasks it covers.
"""

import argparse
import functools
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# (cell, dataset, seed folder, label, LDB's pass@1 in the paper, its per-task results file)
CELLS = [
    ("he-gpt35", "humaneval", "gpt-3.5-turbo-0613", "GPT-3.5", 82.9, "humaneval__gpt-3.5-turbo-0613.jsonl"),
    ("mbpp-gpt35", "mbpp", "gpt-3.5-turbo-0613", "GPT-3.5", 76.0, "mbpp__gpt-3.5-turbo-0613.jsonl"),
    ("tc-gpt35", "transcoder", "gpt-3.5-turbo-0613", "GPT-3.5", 87.7, None),
    ("he-codellama", "humaneval", "codellama", "CodeLlama-34B", 55.5, "humaneval__codellama.jsonl"),
    ("mbpp-codellama", "mbpp", "codellama", "CodeLlama-34B", 57.4, "mbpp__codellama.jsonl"),
    ("tc-codellama", "transcoder", "codellama", "CodeLlama-34B", 79.6, None),
    ("he-starcoder", "humaneval", "starcoder", "StarCoder", 39.6, "humaneval__starcoder.jsonl"),
    ("mbpp-starcoder", "mbpp", "starcoder", "StarCoder", 55.4, "mbpp__starcoder.jsonl"),
    ("tc-starcoder", "transcoder", "starcoder", "StarCoder", 69.8, None),
    ("he-reflexion", "humaneval", "reflexion", "Reflexion (GPT-3.5)", 95.1,
     "humaneval__reflexion__gpt-3.5-turbo-0613.jsonl"),
    ("he-gpt4", "humaneval", "gpt-4-1106-preview", "GPT-4", 89.6, "humaneval__gpt-4-seed.jsonl"),
]

DATASET_NAMES = {"humaneval": "HumanEval", "mbpp": "MBPP", "transcoder": "TransCoder"}


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def run_dir(results, cell):
    """The cell's run directory: whole, or a shard (the first found)."""
    whole = os.path.join(results, cell)
    if os.path.isdir(whole):
        return whole, None
    if os.path.isdir(results):
        for name in sorted(os.listdir(results)):
            if name.startswith(cell + "-shard"):
                return os.path.join(results, name), name[len(cell) + 1:]
    return None, None


@functools.lru_cache(maxsize=None)
def unparsable_tests(data, dataset):
    """The tasks whose hidden tests are not Python (LDB's TransCoder data writes some expected
    strings unquoted: `== 0010...`): no program can pass them, so they are a miss of their own.
    Read once per dataset, though several cells share it."""
    path = os.path.join(data, "ldb", dataset, "test", "tests.jsonl")
    if not os.path.exists(path):
        return set()
    out = set()
    for r in read_jsonl(path):
        try:
            compile(r.get("test") or "", "<test>", "exec")
        except (SyntaxError, ValueError):
            out.add(r["task_id"])
    return out


@functools.lru_cache(maxsize=None)
def reference_fails(results, dataset):
    """The tasks whose own reference solution fails its hidden tests in ldb's sandbox, as
    `reference_pass.py --save` keeps them (`references.json` beside the cells): no program is
    known to pass them. None when the file holds no entry for the dataset."""
    path = os.path.join(results, "references.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        entry = json.load(f).get(dataset)
    return None if entry is None else frozenset(entry.get("hidden_fail") or {})


def cell_figures(results, data, cell, dataset, seeds, paper, published):
    directory, shard = run_dir(results, cell)
    seed_file = os.path.join(data, "ldb", dataset, "seed", seeds, "seed.jsonl")
    total = len(read_jsonl(seed_file)) if os.path.exists(seed_file) else None
    out = {"cell": cell, "paper": paper, "dataset_tasks": total, "shard": shard}
    if directory is None or not os.path.exists(os.path.join(directory, "search.jsonl")):
        out["status"] = "not run"
        return out
    records = [r for r in read_jsonl(os.path.join(directory, "search.jsonl")) if r.get("kind") == "task"]
    header = read_jsonl(os.path.join(directory, "search.jsonl"))[0]
    out["ldb_version"] = header.get("ldb_version")
    out["created_unix"] = header.get("created_unix")
    n = len(records)
    expected = total
    if shard and total:
        index, count = (int(x) for x in shard.replace("shard", "").split("of"))
        expected = len(range(index, total, count))
    out["tasks"] = n
    out["expected"] = expected
    out["seed_pass"] = sum(r["seed_hidden_pass"] for r in records)
    out["final_pass"] = sum(r["final_hidden_pass"] for r in records)

    def at_round(r, k):
        by = r.get("hidden_by_budget") or []
        if not r.get("debugged") or not by:
            return r["final_hidden_pass"]
        return by[min(k, len(by) - 1)]

    out["pass_at_3"] = sum(at_round(r, 3) for r in records)
    out["fixed"] = sum(1 for r in records if not r["seed_hidden_pass"] and r["final_hidden_pass"])
    broken = [r["task_id"] for r in records if r["seed_hidden_pass"] and not r["final_hidden_pass"]]
    out["broken"] = broken
    debugged = [r for r in records if r.get("debugged")]
    out["debugged"] = len(debugged)
    cost = [r["tokens"]["prompt"] - r["tokens"].get("cached_prompt", 0) + r["tokens"]["completion"]
            for r in debugged]
    out["tokens_per_debugged"] = round(statistics.mean(cost)) if cost else 0
    out["median_s"] = round(statistics.median(r["timings"]["total_ms"] for r in debugged) / 1000, 1) if debugged else 0
    unparsable = unparsable_tests(data, dataset)
    references = reference_fails(results, dataset)
    no_reference = references or frozenset()
    misses = {"the task's hidden tests do not parse": 0,
              "the task's own reference fails its hidden tests too": 0,
              "no candidate passed the visible tests": 0, "visible-passing but wrong": 0,
              "seed passes the visible tests, fails hidden (not debugged)": 0, "error": 0}
    for r in records:
        if r["final_hidden_pass"]:
            continue
        if r["task_id"] in unparsable:
            misses["the task's hidden tests do not parse"] += 1
        elif r["task_id"] in no_reference:
            misses["the task's own reference fails its hidden tests too"] += 1
        elif r.get("error_class"):
            misses["error"] += 1
        elif not r.get("debugged"):
            misses["seed passes the visible tests, fails hidden (not debugged)"] += 1
        elif r["final_visible_pass"]:
            misses["visible-passing but wrong"] += 1
        else:
            misses["no candidate passed the visible tests"] += 1
    out["misses"] = misses
    if references is not None:
        out["reference_pass"] = sum(1 for r in records if r["task_id"] not in no_reference)
    if published:
        path = os.path.join(data, "ldb", "results_summary", published)
        if os.path.exists(path):
            theirs = {r["task_id"]: r["is_solved"] for r in read_jsonl(path)}
            mine = {r["task_id"]: r["final_hidden_pass"] for r in records}
            out["only_ldb_ours"] = sorted(t for t in mine if mine[t] and not theirs.get(t, False))
            out["only_ldb_paper"] = sorted(t for t in mine if theirs.get(t, False) and not mine[t])
            out["paper_on_these"] = sum(1 for t in mine if theirs.get(t, False))
    return out


def pct(a, b):
    return f"{100 * a / b:.1f}" if b else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=os.path.join(HERE, "results", "ldb-table"))
    ap.add_argument("--data", default=os.environ.get("LDB_DATA_DIR", os.path.join(HERE, "..", "..", "shared", "datasets")))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [dict(cell_figures(args.results, args.data, c, d, s, p, pub), dataset=DATASET_NAMES[d], seeds=label)
            for c, d, s, label, p, pub in CELLS]
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
        return
    print("| dataset | seeds | tasks | seed pass@1 | ldb pass@1 (10 rounds) | at 3 rounds | LDB (paper) | LDB on these tasks | fixed | broken | tokens / debugged task | median s / debugged task |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r.get("status") == "not run":
            print(f"| {r['dataset']} | {r['seeds']} | not run | | | | {r['paper']} | | | | | |")
            continue
        n = r["tasks"]
        scope = f"{n}" if n == r["dataset_tasks"] else f"{n} of {r['expected']}"
        if r["shard"]:
            scope += f" ({r['shard']} of {r['dataset_tasks']})"
        if n < (r["expected"] or 0):
            scope += ", running"
        paper_here = pct(r["paper_on_these"], n) if "paper_on_these" in r else "-"
        print(f"| {r['dataset']} | {r['seeds']} | {scope} | {pct(r['seed_pass'], n)} | **{pct(r['final_pass'], n)}** "
              f"| {pct(r['pass_at_3'], n)} | {r['paper']} | {paper_here} | {r['fixed']} of {r['debugged']} debugged "
              f"| {len(r['broken'])} | {r['tokens_per_debugged']:,} | {r['median_s']} |")
    print()
    for r in rows:
        if r.get("status") == "not run":
            continue
        misses = ", ".join(f"{v} {k}" for k, v in r["misses"].items() if v)
        line = f"- {r['dataset']} × {r['seeds']}: misses: {misses or 'none'}"
        if "reference_pass" in r:
            line += f"; the tasks' own references pass {r['reference_pass']} of these {r['tasks']}"
        if "only_ldb_ours" in r:
            line += (f"; fixed by ldb only: {len(r['only_ldb_ours'])}, by LDB only: {len(r['only_ldb_paper'])}"
                     f" ({', '.join(t.split('/')[-1] for t in r['only_ldb_paper'][:12])}"
                     f"{' ...' if len(r['only_ldb_paper']) > 12 else ''})")
        if r["broken"]:
            line += f"; broken: {', '.join(r['broken'])}"
        print(line)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        sys.exit(0)
