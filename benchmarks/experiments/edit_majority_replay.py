#!/usr/bin/env python3
"""Replay the choice of an unconfirmed edit: the smallest passing edit, the first found among
equals (the rule), against the smallest edit of the behaviour most passing edits share.

Usage: edit_majority_replay.py RUN_DIR_OR_SEARCH_JSONL...

Reads each run's task records with their candidate logs (records not compacted). A task counts
when edits passed the visible tests and nothing independent did (no fresh program, repair or
passing seed: the choice had no votes). The majority is counted two ways: by passing edits, and
by the distinct lines they edit (edits at one line are one guess). Ties go to the rule's pick.
Prints, per run and count, the tasks where the choices differ on the hidden tests.

`confirm_analysis.py`'s "edit majority" column is the same rule read from the per-task reports;
this reads the groups the candidate logs keep, so it also replays runs made with `--no-reports`
(the LDB table's cells, the edits-alone runs).
"""
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from repair_analysis import load  # noqa: E402


def records(path):
    path = Path(path)
    if path.is_dir():
        path = path / "search.jsonl"
    return [r for r in load(path).values() if r.get("candidate_log")]


def smallest(cands):
    return min(cands, key=lambda c: (c["diff_lines"], c["id"]))


def replay(path, weigh):
    counts = collections.Counter()
    changed = []
    for r in records(path):
        total = r.get("visible_total") or 1
        passing = [
            c for c in r["candidate_log"]
            if c["proposer"] != "seed" and c.get("visible_passed", 0) >= total and "group" in c
        ]
        if not passing:
            continue
        if any(c["proposer"] != "mutate" for c in passing):
            counts["votes"] += 1
            continue
        counts["no votes"] += 1
        rule = smallest(passing)
        groups = collections.defaultdict(list)
        for c in passing:
            groups[c["group"]].append(c)
        best = max(groups, key=lambda g: (weigh(groups[g]), g == rule["group"]))
        alt = smallest(groups[best])
        a, b = bool(rule.get("hidden_pass")), bool(alt.get("hidden_pass"))
        if a != b:
            kind = "majority right" if b else "rule right"
            counts[kind] += 1
            changed.append((r["task_id"], kind, rule["edit"]["description"],
                            alt["edit"]["description"], sorted(len(v) for v in groups.values())))
    return counts, changed


WEIGHTS = {
    "edits": len,
    "lines": lambda members: len({c["edit"]["line"] for c in members}),
}

for path in sys.argv[1:]:
    for name, weigh in WEIGHTS.items():
        counts, changed = replay(path, weigh)
        print(f"{path}  majority by {name}: {dict(counts)}")
        for task, kind, ours, theirs, sizes in changed:
            print(f"    {task}: {kind}; rule `{ours}`, majority `{theirs}`; group sizes {sizes}")
