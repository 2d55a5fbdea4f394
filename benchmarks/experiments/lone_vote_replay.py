#!/usr/bin/env python3
"""Where a lone vote chose the returned program: replayed from recorded candidate logs.

The search returns the heaviest group of independently written programs (fresh, feedback, ldb;
the seed when it passed). When that group is one program nothing seconds and holds no edit,
while edits of the given program also passed the visible tests, the choice rests on one sample.
For every such task of every run under benchmarks/results (or the runs given), this prints the
returned program's hidden verdict beside two alternatives: the smallest passing edit (the first
found among equals) and the smallest edit that behaves like the seed on every extra input.

Usage: python3 benchmarks/experiments/lone_vote_replay.py [RUN_DIR ...]
One line per run and task (tasks rerun in several runs repeat), then a count per run.
"""
import collections
import glob
import json
import os
import sys

INDEPENDENT = {"fresh", "feedback", "ldb", "seed"}
EDITS = {"mutate", "patch", "complete"}


def rows(run):
    path = os.path.join(run, "search.jsonl")
    if not os.path.exists(path):
        return
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("kind") == "task":
                yield r


def smallest(cands):
    return min(cands, key=lambda c: (c.get("diff_lines", 1 << 30), c["id"])) if cands else None


def main(runs):
    here = os.path.dirname(os.path.abspath(__file__))
    runs = runs or sorted(glob.glob(os.path.join(here, "..", "results", "*")))
    for run in runs:
        tally = collections.Counter()
        for r in rows(run):
            log = r.get("candidate_log") or []
            passing = [c for c in log
                       if c.get("visible_passed") == r.get("visible_total") and c.get("group") is not None]
            top = [c for c in passing if c["group"] == 0]
            votes = [c for c in top if c["proposer"] in INDEPENDENT]
            edits = [c for c in passing if c["proposer"] in EDITS]
            if len(votes) != 1 or any(c["proposer"] in EDITS for c in top) or not edits:
                continue
            like_seed = smallest([c for c in edits
                                  if r.get("seed_signature") and c.get("signature") == r["seed_signature"]])
            small = smallest(edits)
            tally["tasks"] += 1
            tally["returned right"] += bool(r.get("final_hidden_pass"))
            tally["smallest edit right"] += bool(small.get("hidden_pass"))
            tally["an edit like the seed"] += like_seed is not None
            tally["an edit like the seed, right"] += bool(like_seed and like_seed.get("hidden_pass"))
            print(f"{os.path.basename(run)} {r['task_id']}: returned ({votes[0]['proposer']}) "
                  f"{'right' if r.get('final_hidden_pass') else 'wrong'}; smallest edit "
                  f"{'right' if small.get('hidden_pass') else 'wrong'}; edit like the seed "
                  + ("none" if like_seed is None else
                     "right" if like_seed.get("hidden_pass") else "wrong"))
        if tally:
            print(f"  {os.path.basename(run)}: {dict(tally)}")


if __name__ == "__main__":
    main(sys.argv[1:])
