#!/usr/bin/env python3
"""What one candidate of a project's function costs to test, from an `ldb fix --report` file.

    ldb fix FILE::FUNCTION --tests NODE --proposers mutate --report run.json
    candidate_cost.py run.json

The seed runs in a pytest session of its own (the given tests, then the regression tests);
the edits of a project's function run in batches, one session for a few dozen, each candidate
in its own child with the function's code swapped in. Prints both per-candidate costs.
"""
import json
import sys


def main():
    doc = json.load(open(sys.argv[1]))
    task = doc["tasks"][0]
    cands = task.get("candidates") or []
    seed = next((c for c in cands if c["id"] == 0), None)
    edits = [c for c in cands if c["proposer"] == "mutate"]
    rounds = [it for it in task["iterations"] if it["index"] > 0]
    tests_ms = sum(it["timings"]["tests_ms"] for it in rounds)
    print("tests: %d (%d regression)" % (task["visible_total"], len(task.get("regression_tests") or [])))
    if seed:
        print("seed: one session, %d ms" % seed["wall_ms"])
    if edits:
        print("edits tested: %d in %d ms of test time: %.0f ms a candidate" % (
            len(edits), tests_ms, tests_ms / len(edits)))


if __name__ == "__main__":
    main()
