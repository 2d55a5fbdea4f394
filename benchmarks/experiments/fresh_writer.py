#!/usr/bin/env python3
"""Two runs that differ in the model writing fresh programs (`--generator-model`): how good
each model's fresh programs are as finders and as voters.

Usage: benchmarks/experiments/fresh_writer.py RUN_A RUN_B [PROBS_JSONL]

Reads each `ldb eval` run's per-task reports (`reports/search/*.json`). For each run: the fresh
programs drawn, their reply tokens, the share that pass every visible test, the share that fall
in the returned program's behaviour group (a vote for it), and the tasks whose returned program
came from a fresh program. Across the runs, on the tasks both ran: the same returned program,
the same hidden outcome, and the agreement of B's fresh programs with A's choice: on every task
where A's returned program is among B's candidates and was grouped on B's selection inputs,
the share of B's grouped fresh programs that behave as it does (A's own share beside it).
With PROBS_JSONL (the tasks' `probs.jsonl`, `test` the hidden check), the fresh programs that
pass the visible tests also run on the hidden tests (locally, a subprocess each with a time
limit: an analysis of a benchmark, not ldb's sandbox): the share that is right. Nothing is
written.
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from visible_oracle import passes_hidden  # noqa: E402

PROBS = {}


def right(program, task_id):
    """Whether `program` passes the task's hidden check (HumanEval's `check` is called here)."""
    task = PROBS[task_id]
    test = task["test"]
    if "check(candidate)" in test and f"check({task['entry_point']})" not in test:
        test += f"\ncheck({task['entry_point']})\n"
    return passes_hidden(program, {"test": test})


def reports(run):
    out = {}
    for f in sorted((Path(run) / "reports" / "search").glob("*.json")):
        for t in json.load(open(f))["tasks"]:
            out[t["task_id"]] = t
    return out


def fresh(t):
    return [c for c in t["candidates"] if c["proposer"] == "fresh"]


def returned_group(t):
    sel = t.get("selection") or {}
    chosen = sel.get("chosen")
    for g in sel.get("groups") or []:
        if chosen in g:
            return set(g)
    return set()


def summary(name, tasks):
    drawn = [c for t in tasks.values() for c in fresh(t)]
    passing = [
        c for t in tasks.values() for c in fresh(t) if c["visible_passed"] == t["visible_total"]
    ]
    voting = 0
    from_fresh = 0
    for t in tasks.values():
        g = returned_group(t)
        voting += sum(1 for c in fresh(t) if c["id"] in g)
        final = t.get("final_program")
        if any(c["program"] == final for c in fresh(t)):
            from_fresh += 1
    tokens = sum(c.get("tokens") or 0 for c in drawn)
    if PROBS:
        ok = sum(
            1
            for t in tasks.values()
            for c in fresh(t)
            if c["visible_passed"] == t["visible_total"] and right(c["program"], t["task_id"])
        )
        print(f"{name}: {ok} of the {len(passing)} visible-passing fresh programs are right")
    print(
        f"{name}: {len(tasks)} tasks, {len(drawn)} fresh programs ({tokens:,} tokens in their calls), "
        f"{len(passing)} pass the visible tests ({pct(len(passing), len(drawn))}), "
        f"{voting} in the returned program's group ({pct(voting, len(drawn))}); "
        f"returned program a fresh one on {from_fresh} tasks"
    )


def pct(a, b):
    return f"{100 * a / b:.0f}%" if b else "-"


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    if len(sys.argv) == 4:
        for line in open(sys.argv[3]):
            t = json.loads(line)
            PROBS[t["task_id"]] = t
    a, b = reports(sys.argv[1]), reports(sys.argv[2])
    summary("A", a)
    summary("B", b)
    common = sorted(set(a) & set(b))
    same_program = sum(1 for k in common if a[k]["final_program"] == b[k]["final_program"])
    same_outcome = sum(1 for k in common if a[k]["final_passed"] == b[k]["final_passed"])
    print(
        f"on the {len(common)} tasks of both: the same returned program on {same_program}, "
        f"the same hidden outcome on {same_outcome}"
    )
    agree = [0, 0]
    own = [0, 0]
    tasks_compared = 0
    for k in common:
        ta, tb = a[k], b[k]
        chosen = ta["final_program"]
        in_b = [c["id"] for c in tb["candidates"] if c["program"] == chosen]
        sigs = (tb.get("selection") or {}).get("signatures") or {}
        ref = next((sigs[str(i)] for i in in_b if str(i) in sigs), None)
        if ref is None:
            continue
        tasks_compared += 1
        for c in fresh(tb):
            s = sigs.get(str(c["id"]))
            if s is not None:
                agree[1] += 1
                agree[0] += s == ref
        sigs_a = (ta.get("selection") or {}).get("signatures") or {}
        ids_a = [c["id"] for c in ta["candidates"] if c["program"] == chosen]
        ref_a = next((sigs_a[str(i)] for i in ids_a if str(i) in sigs_a), None)
        for c in fresh(ta):
            s = sigs_a.get(str(c["id"]))
            if s is not None and ref_a is not None:
                own[1] += 1
                own[0] += s == ref_a
    print(
        f"A's returned program grouped in B on {tasks_compared} tasks: B's fresh programs "
        f"behave as it does {agree[0]} of {agree[1]} ({pct(*agree)}); "
        f"A's own fresh programs {own[0]} of {own[1]} ({pct(*own)})"
    )


if __name__ == "__main__":
    main()
