#!/usr/bin/env python3
"""What giving up early would save: replayed from the candidate logs of recorded search runs.

Usage: benchmarks/experiments/give_up_replay.py RUN_DIR[+RUN_DIR...] [--budgets 200,400,...]

Tokens per fixed task count every token spent, on tasks left unfixed too; most of them go to
tasks where nothing ever passes the visible tests. The rule replayed: once a task has spent K
tokens and no program has passed its visible tests yet (the seed, an edit or a model's
program), stop. A fixed task is lost when its first program to pass the visible tests came
after K tokens; a task stopped saves what it spent after K. The replay does not rerun the
search: the choice among the programs passing the visible tests is taken as recorded, so a
task whose first passing program came before K keeps its recorded outcome (a later program
could still have been needed to confirm or outvote; see "kept, votes after K").

Prints where the tokens went (fixed tasks before and after their first visible pass, the tasks
not fixed), then one row per K: fixed, tokens per fixed task, and the tasks the rule would lose.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
from repair_analysis import cost, load  # noqa: E402

RESULTS = Path(__file__).resolve().parent.parent / "results"


def records(spec):
    out = {}
    for part in spec.split("+"):
        d = Path(part) if Path(part).is_dir() else RESULTS / part
        out.update(load(d / "search.jsonl"))
    return out


def first_visible_pass(r):
    """Tokens spent when the first program passing every visible test appeared (None: never)."""
    total = r.get("visible_total") or 0
    for c in r.get("candidate_log") or []:
        if total and c.get("visible_passed") == total:
            return c.get("spent", 0)
    return None


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    budgets = [0, 100, 200, 400, 600, 800, 1000, 1500, 2000]
    if "--budgets" in argv:
        budgets = [int(x) for x in argv[argv.index("--budgets") + 1].split(",")]
    rs = [r for r in records(argv[0]).values() if r.get("candidate_log")]
    fixed = [r for r in rs if r.get("final_hidden_pass") and not r.get("seed_hidden_pass")]
    spent = sum(cost(r) for r in rs)
    print(f"{len(rs)} tasks with candidate logs; {len(fixed)} fixed; "
          f"{spent:,} tokens, {spent / max(len(fixed), 1):,.0f} a fixed task (as recorded)")
    # Where the tokens went: fixed tasks before and after their first visible pass, the rest.
    before = after = rest = 0
    for r in rs:
        c, first = cost(r), first_visible_pass(r)
        if r in fixed and first is not None:
            before += min(c, first)
            after += max(c - first, 0)
        else:
            rest += c
    print(f"spent on fixed tasks before their first visible pass {before:,}, after it {after:,}; "
          f"on the tasks not fixed {rest:,}")
    print()
    print("| give up at K tokens without a visible pass | fixed | tokens | tokens/fixed | lost | kept, votes after K |")
    print("|---:|---:|---:|---:|---:|---:|")
    for k in budgets:
        lost, total, late_votes = [], 0, 0
        for r in rs:
            first = first_visible_pass(r)
            c = cost(r)
            if first is None or first > k:
                # Stopped at K (the run may have spent less: then nothing changes).
                total += min(c, k)
                if r in fixed:
                    lost.append(r["task_id"])
            else:
                total += c
                if r in fixed and c > k:
                    late_votes += 1
        n = len(fixed) - len(lost)
        print(f"| {k:,} | {n} | {total:,} | {total / max(n, 1):,.0f} | {len(lost)} | {late_votes} |")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:
        # A reader that stopped early (`| head`): nothing more to say.
        sys.stderr.close()
        sys.exit(0)
