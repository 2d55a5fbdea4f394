#!/usr/bin/env python3
"""Replay `--vote-patience N` on recorded search runs (no model, no sandbox).

With patience N the search stops drawing votes (the fresh programs drawn after the first
program that passes the visible tests) once the first N of them all fail the visible tests.
From each task's candidate log this finds where such a search would have stopped, the search
tokens it would not have spent, and what it would have returned: the same program when no
later vote passed the visible tests; otherwise the choice without votes (the given program if
it was the only passing one, else the smallest passing edit, else the first passing program),
whose hidden result is known when it is the run's first passing program.

Usage: python3 benchmarks/experiments/vote_patience_replay.py RUN_DIR... [--patience 1,2,3]
"""

import argparse
import json
from pathlib import Path

INDEPENDENT = {"fresh", "feedback", "ldb"}
EDITS = {"mutate", "patch", "complete"}


def tasks(run_dir):
    with open(Path(run_dir) / "search.jsonl") as f:
        return [t for t in map(json.loads, f) if t.get("kind") == "task"]


def replay(task, n):
    """(stops early, tokens saved, outcome) for one task; outcome is 'same', 'right',
    'wrong' or 'unknown' (the hidden result of the program a stopped search returns)."""
    log = task.get("candidate_log") or []
    total = task["visible_total"]
    by_id = {c["id"]: c for c in log}

    def passes(c):
        tested = by_id.get(c.get("duplicate_of"), c)
        return tested.get("visible_passed") == total

    passing = [c for c in log if passes(c)]
    if not passing:
        return False, 0, "same"
    first = passing[0]["id"]
    votes = [c for c in log if c["id"] > first and c["proposer"] in INDEPENDENT]
    if len(votes) < n or any(passes(v) for v in votes[:n]):
        return False, 0, "same"
    stop = votes[n - 1]
    spent_end = max(c.get("spent", 0) for c in log)
    saved = spent_end - stop.get("spent", 0)
    if not any(passes(v) for v in votes[n:]):
        return True, saved, "same"
    at_stop = [c for c in passing if c["id"] <= stop["id"]]
    if [c["id"] for c in at_stop] == [0]:
        hidden = task.get("seed_hidden_pass")
    else:
        edits = [c for c in at_stop if c["proposer"] in EDITS]
        chosen = min(edits, key=lambda c: (c.get("diff_lines", 0), c["id"])) if edits else at_stop[0]
        hidden = task.get("first_pass_hidden_pass") if chosen["id"] == first else None
    outcome = "unknown" if hidden is None else ("right" if hidden else "wrong")
    return True, saved, outcome


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--patience", default="1,2,3")
    args = ap.parse_args()
    print("| run | patience | tasks | stop early | search tokens saved | changed: right → wrong | right → unknown | wrong → right |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for run in args.runs:
        ts = tasks(run)
        spent = sum(max([c.get("spent", 0) for c in t.get("candidate_log") or []] or [0]) for t in ts)
        for n in map(int, args.patience.split(",")):
            stopped = saved = lost = unknown = gained = 0
            for t in ts:
                early, s, outcome = replay(t, n)
                stopped += early
                saved += s
                was = bool(t.get("final_hidden_pass"))
                if outcome == "wrong" and was:
                    lost += 1
                elif outcome == "unknown" and was:
                    unknown += 1
                elif outcome == "right" and not was:
                    gained += 1
            share = 100 * saved / spent if spent else 0
            print(f"| {Path(run).name} | {n} | {len(ts)} | {stopped} | {saved:,} of {spent:,} ({share:.0f}%) | {lost} | {unknown} | {gained} |")


if __name__ == "__main__":
    main()
