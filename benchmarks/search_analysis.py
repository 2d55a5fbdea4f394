#!/usr/bin/env python3
"""What a search run's candidates say: which proposer found passing programs at which cost, and
how ways of choosing among visible-passing candidates fare on the hidden tests.

Usage: benchmarks/search_analysis.py RUN_DIR [RUN_DIR ...]

Reads `search.jsonl` (and `resample.jsonl`, if present) of each `ldb eval` output directory:
every search record carries its candidates (`candidate_log`: proposer, tokens, visible result,
hidden result of those that pass the visible tests, behaviour hashes on the selection's inputs).
Prints markdown tables; nothing is written. The first table (fixed, tokens per debugged task)
needs only the compact records of benchmarks/compact_results.py; the others need the logs.
"""
import json
import sys
from collections import defaultdict
from pathlib import Path


def records(path):
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if r.get("kind") == "task":
            out.append(r)
    return out


def cost(r):
    t = r["tokens"]
    return t["prompt"] - t.get("cached_prompt", 0) + t["completion"]


def agreement_choice(cands, log):
    """CodeT-style: each candidate scores the votes of candidates behaving alike, input by
    input (duplicates vote with their original); the first of the highest score wins."""
    sigs = [c for c in cands if c.get("signature")]
    if not sigs:
        return None
    weight = defaultdict(int)
    for c in log:
        weight[c.get("duplicate_of", c["id"])] += 1
    best, best_score = None, -1
    for c in sigs:
        score = 0
        for i, h in enumerate(c["signature"]):
            score += sum(weight[o["id"]] for o in sigs if o["signature"][i] == h)
        if score > best_score:
            best, best_score = c, score
    return best


def main(dirs):
    strategies = defaultdict(lambda: {"tasks": 0, "fixed": 0, "debugged": 0, "cost": 0})
    per_proposer = defaultdict(lambda: {"n": 0, "run": 0, "visible": 0, "hidden": 0, "tokens": 0})
    sel = {"tasks": 0, "first": 0, "chosen": 0, "agreement": 0, "any": 0}
    logs = 0
    for d in map(Path, dirs):
        for name in ("none", "resample", "search", "ldb-block"):
            for r in records(d / f"{name}.jsonl"):
                s = strategies[(d.name, name)]
                s["tasks"] += 1
                s["fixed"] += (not r["seed_hidden_pass"]) and r["final_hidden_pass"]
                if r["debugged"]:
                    s["debugged"] += 1
                    s["cost"] += cost(r)
                if name != "search":
                    continue
                log = r.get("candidate_log", [])
                logs += bool(log)
                total = r["visible_total"]
                for c in log[1:]:
                    p = per_proposer[c["proposer"]]
                    p["n"] += 1
                    p["tokens"] += c["tokens"]
                    if c.get("visible_passed") is not None:
                        p["run"] += 1
                    if c.get("visible_passed") == total:
                        p["visible"] += 1
                        p["hidden"] += bool(c.get("hidden_pass"))
                passing = [c for c in log[1:] if c.get("visible_passed") == total]
                distinct = {c["id"] for c in passing}
                if len(distinct) >= 2 and not r["seed_hidden_pass"]:
                    sel["tasks"] += 1
                    sel["first"] += bool(passing[0].get("hidden_pass"))
                    sel["chosen"] += bool(r["final_hidden_pass"])
                    sel["any"] += any(c.get("hidden_pass") for c in passing)
                    a = agreement_choice(passing, log)
                    sel["agreement"] += bool(a and a.get("hidden_pass"))
    print("| run | strategy | tasks | fixed | mean tokens/debugged |")
    print("|---|---|---:|---:|---:|")
    for (run, name), s in sorted(strategies.items()):
        mean = s["cost"] / s["debugged"] if s["debugged"] else 0
        print(f"| {run} | {name} | {s['tasks']} | {s['fixed']} | {mean:.0f} |")
    print()
    if not logs:
        print("(No candidate logs: benchmarks/compact_results.py drops them; the proposer and "
              "selection tables need a run's records from before it was compacted.)")
    print("| proposer | candidates | tested (not duplicates) | pass visible | pass hidden | "
          "tokens | hidden passes per 10k tokens |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, p in sorted(per_proposer.items()):
        rate = 1e4 * p["hidden"] / p["tokens"] if p["tokens"] else 0
        print(f"| {name} | {p['n']} | {p['run']} | {p['visible']} | {p['hidden']} | "
              f"{p['tokens']} | {rate:.2f} |")
    print()
    print(f"Tasks with at least two distinct visible-passing candidates: {sel['tasks']}")
    print("| returned program | passes hidden |")
    print("|---|---:|")
    print(f"| first visible pass (no selection) | {sel['first']} |")
    print(f"| chosen (largest group of identical behaviour) | {sel['chosen']} |")
    print(f"| highest input-by-input agreement | {sel['agreement']} |")
    print(f"| any candidate (an oracle's bound) | {sel['any']} |")
    for d in map(Path, dirs):
        endings(d)


def endings(d):
    """How each debugged task ended, per strategy: with a program that passes the visible tests
    (fixed when it also passes the hidden ones), or with the budget spent and none found."""
    by = {name: {r["task_id"]: r for r in records(d / f"{name}.jsonl")}
          for name in ("resample", "search")}
    if not by["resample"] or not by["search"]:
        return
    print()
    print(f"How debugged tasks ended ({d.name}):")
    print("| strategy | ended at a visible pass | of which fixed | no visible pass (budget spent) "
          "| of which fixed |")
    print("|---|---:|---:|---:|---:|")
    for name, recs in by.items():
        vis = [r for r in recs.values() if r["debugged"] and r["final_visible_pass"]]
        rest = [r for r in recs.values() if r["debugged"] and not r["final_visible_pass"]]
        fixed = lambda rs: sum((not r["seed_hidden_pass"]) and r["final_hidden_pass"] for r in rs)
        print(f"| {name} | {len(vis)} | {fixed(vis)} | {len(rest)} | {fixed(rest)} |")
    only = []
    for tid, s in by["search"].items():
        r = by["resample"].get(tid)
        if r is None:
            continue
        fs = (not s["seed_hidden_pass"]) and s["final_hidden_pass"]
        fr = (not r["seed_hidden_pass"]) and r["final_hidden_pass"]
        if fs != fr:
            def how(x):
                return "visible pass" if x["final_visible_pass"] else "no visible pass"
            only.append((tid, "search" if fs else "resample", how(s), how(r)))
    if only:
        print()
        print("| task | fixed only by | search ended with | resample ended with |")
        print("|---|---|---|---|")
        for row in sorted(only, key=lambda t: (t[0].split("/")[0], int(t[0].split("/")[-1]))):
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1:])
