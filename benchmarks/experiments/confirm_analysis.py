#!/usr/bin/env python3
"""How to choose among edits that pass the visible tests, measured on the hidden tests.

Usage: benchmarks/experiments/confirm_analysis.py RUN_DIR [RUN_DIR ...]

Reads each `ldb eval` run's search records and per-task reports (`reports/search/*.json`).
For every task whose search ran the selection with at least one edit (`mutate`/`patch`) among
the visible-passing candidates, it replays ways of choosing on the recorded behaviours (a hash
per extra input) and counts the chosen programs that pass the hidden tests:
- ldb: what the run returned;
- prior: the edit that changes the given program's behaviour least where the program did not
  raise (then the smallest change) — ldb's rule when nothing independent passed;
- first: the first edit found (the most suspicious statement's first edit);
- smallest: the edit with the fewest changed lines;
- edit majority: the edit whose behaviour the most edits share;
- fresh majority: the first program of the heaviest group of independent candidates (fresh
  samples), when there is one;
- oracle: any visible-passing candidate passes the hidden tests.
Rows split the tasks by whether an independent candidate passed the visible tests. Nothing is
written.
"""
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from repair_analysis import load  # noqa: E402

DERIVED = {"mutate", "patch", "complete"}
INDEPENDENT = {"fresh", "feedback", "ldb"}


def records(run_dir):
    return list(load(run_dir / "search.jsonl").values())


def report(run_dir, task_id):
    path = run_dir / "reports" / "search" / (task_id.replace("/", "_") + ".json")
    if not path.exists():
        return None
    rep = json.loads(path.read_text())
    return rep["tasks"][0] if "tasks" in rep else rep


def unjustified(sig, seed_sig, raising):
    return sum(1 for i, (a, b) in enumerate(zip(sig, seed_sig)) if a != b and i not in raising)


def main(argv):
    rules = ["ldb", "prior", "first", "smallest", "edit majority", "fresh majority", "oracle"]
    tally = {True: Counter(), False: Counter()}
    counts = Counter()
    for arg in argv:
        run_dir = Path(arg)
        for r in records(run_dir):
            rep = report(run_dir, r["task_id"])
            if not rep or not rep.get("selection"):
                continue
            sel = rep["selection"]
            sigs = {int(k): v for k, v in sel.get("signatures", {}).items()}
            cands = {c["id"]: c for c in rep["candidates"]}
            log = {c["id"]: c for c in r["candidate_log"]}
            vt = r["visible_total"]
            passing = [i for i in sigs if cands.get(i, {}).get("visible_passed") == vt]
            derived = [i for i in passing if cands[i]["proposer"] in DERIVED]
            if not derived:
                continue
            hidden = {i: bool(log.get(i, {}).get("hidden_pass")) for i in passing}
            independent = [i for i in passing if cands[i]["proposer"] in INDEPENDENT]
            has_votes = bool(independent)
            counts[has_votes] += 1
            seed_sig = sel.get("seed_signature") or []
            # Inputs where the given program raised are not held against a change.
            raising = set()
            chosen = {}
            chosen["ldb"] = r["final_hidden_pass"]
            if seed_sig:
                by_prior = min(
                    derived,
                    key=lambda i: (unjustified(sigs[i], seed_sig, raising), cands[i]["diff_lines"], i),
                )
                chosen["prior"] = hidden[by_prior]
            chosen["first"] = hidden[min(derived)]
            chosen["smallest"] = hidden[min(derived, key=lambda i: (cands[i]["diff_lines"], i))]
            behaviours = Counter(tuple(sigs[i]) for i in derived)
            top = max(derived, key=lambda i: (behaviours[tuple(sigs[i])], -i))
            chosen["edit majority"] = hidden[top]
            if independent:
                groups = Counter(tuple(sigs[i]) for i in independent)
                best = max(independent, key=lambda i: (groups[tuple(sigs[i])], -i))
                chosen["fresh majority"] = hidden[best]
            chosen["oracle"] = any(hidden.values())
            for rule, ok in chosen.items():
                tally[has_votes][rule] += int(ok)
    print("| tasks | " + " | ".join(rules) + " |")
    print("|---|" + "---:|" * len(rules))
    for has_votes in (False, True):
        n = counts[has_votes]
        label = ("with" if has_votes else "without") + f" an independent passing candidate ({n})"
        cells = [
            f"{tally[has_votes][r]}" if (r != "fresh majority" or has_votes) else "-" for r in rules
        ]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
