#!/usr/bin/env python3
"""The repair table of `ldb eval` runs: hidden-test fixes, tokens per fixed task, median wall time
per task and median changed lines per fix, for every strategy file of every run directory given.

Usage: benchmarks/repair_analysis.py RUN_DIR[+MORE_DIR...][:LABEL] [...] [--tasks IDS] [--by-question]

RUN_DIR is an `ldb eval --out` directory (benchmarks/repair_runs.sh makes them). Every
`<strategy>.jsonl` in it is one row, labelled LABEL (or the directory's name) and the strategy.
`RUN_DIR+MORE_DIR`: the records of MORE_DIR (the same strategy rerun on the tasks a change
touches, or run on other tasks at the same time, e.g. with `KEEP_IDS`) replace or join RUN_DIR's
for those tasks; several may follow, each over the ones before.
`--tasks IDS` (comma-separated) restricts every row to those tasks, so runs that stopped at
different points compare on the same tasks; by default the rows use the tasks all of them hold.
`--by-question` adds a table per Refactory question.

Columns:
- fixed: seeds that fail the hidden tests whose returned program passes them (of the tasks whose
  seed fails them);
- pass@1: returned programs that pass the hidden tests (of all tasks);
- plausible / confirmed: returned programs that pass the visible tests; of those, backed by
  independent candidates (the report's confirmation; searches only);
- tokens/fixed: every token the strategy spent on the tasks (prompt tokens the backend evaluated
  plus reply tokens) over the tasks it fixed;
- evaluated/fixed (only for runs with the response cache, `CACHE_DIR`): the same without the
  calls replayed from the cache (another task with the same text asked them first);
- median s/task: wall time per task, median;
- median lines/fix: lines added or removed from the seed to the returned program, median over
  the fixed tasks (a person reviews that diff); a compacted record (benchmarks/compact_results.py)
  holds that count in `lines_changed` in place of the program.
Nothing is written.
"""
import difflib
import hashlib
import json
import statistics
import sys
from pathlib import Path


def load(path):
    out = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if r.get("kind") == "task":
            out[r["task_id"]] = r
    return out


def seeds(run_dir):
    out = {}
    path = run_dir / "seeds.jsonl"
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "task_id" in r and "program" in r:
            out[r["task_id"]] = r["program"]
    return out


def changed(a, b):
    return sum(
        1
        for l in difflib.ndiff(a.splitlines(), b.splitlines())
        if l.startswith(("+ ", "- "))
    )


def lines_changed(seed, r):
    """Lines from the seed to the record's returned program; a compacted record carries the count
    (and its seed's hash, which must be this seed's)."""
    final = r["final_program"]
    if not seed.startswith("sha256:") and not final.startswith("sha256:"):
        return changed(seed, final)
    if "lines_changed" not in r:
        return None
    seed_sha = seed if seed.startswith("sha256:") else "sha256:" + hashlib.sha256(seed.encode()).hexdigest()[:16]
    if r.get("seed_sha", seed_sha) != seed_sha:
        print(f"{r['task_id']}: counted from another seed than the first run's", file=sys.stderr)
    return r["lines_changed"]


def cost(r):
    t = r["tokens"]
    return t["prompt"] - t.get("cached_prompt", 0) + t["completion"]


def confirmation(run_dir, strategy, task_id, record):
    if record.get("confirmation"):
        return record["confirmation"].get("status")
    name = task_id.replace("/", "_") + ".json"
    path = run_dir / "reports" / strategy / name
    if not path.exists():
        return None
    try:
        rep = json.loads(path.read_text())
    except json.JSONDecodeError:
        return None
    task = rep["tasks"][0] if "tasks" in rep else rep
    c = task.get("confirmation")
    return c.get("status") if c else None


def main(argv):
    runs = []
    only = None
    by_question = False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--tasks":
            only = set(args.pop(0).split(","))
            continue
        if a == "--by-question":
            by_question = True
            continue
        path, _, label = a.partition(":")
        path, *more = path.split("+")
        name = "+".join([Path(path).name] + [Path(m).name for m in more])
        runs.append((Path(path), [Path(m) for m in more], label or name))
    rows = []
    for run_dir, more_dirs, label in runs:
        seed_programs = seeds(run_dir)
        for f in sorted(run_dir.glob("*.jsonl")):
            if f.name in ("seeds.jsonl",) or f.name.endswith(".samples.jsonl"):
                continue
            recs = load(f)
            origin = {t: run_dir for t in recs}
            for more in more_dirs:
                again = load(more / f.name)
                recs.update(again)
                origin.update({t: more for t in again})
            if recs:
                rows.append((f"{label} · {f.stem}", origin, f.stem, recs, seed_programs))
    if not rows:
        sys.exit("no runs found")
    common = set.intersection(*(set(r[3]) for r in rows))
    if only is not None:
        common &= only
    print(f"{len(common)} tasks in every row\n")
    table(rows, common)
    if by_question:
        # Refactory's ids are refactory/question_N/...: one table per question.
        groups = sorted({t.split("/")[1] for t in common if t.count("/") == 2})
        for g in groups:
            part = {t for t in common if t.count("/") == 2 and t.split("/")[1] == g}
            print(f"\n{g} ({len(part)} tasks)\n")
            table(rows, part)


def replayed(r):
    return r["tokens"].get("replayed", 0)


def table(rows, common):
    # Runs with the response cache (CACHE_DIR) replay what an earlier task asked: their tokens
    # count those calls as if made, and the model evaluated only the rest.
    warm = any(replayed(recs[t]) for _, _, _, recs, _ in rows for t in common)
    extra = " evaluated/fixed |" if warm else ""
    print("| run | fixed | pass@1 | plausible | confirmed | tokens/fixed |" + extra
          + " median s/task | median lines/fix |")
    print("|---|---:|---:|---:|---:|---:|" + ("---:|" if warm else "") + "---:|---:|")
    for name, origin, strategy, recs, seed_programs in rows:
        rs = [recs[t] for t in sorted(common)]
        failing = [r for r in rs if not r["seed_hidden_pass"]]
        fixed = [r for r in failing if r["final_hidden_pass"]]
        passing = sum(r["final_hidden_pass"] for r in rs)
        plausible = [r for r in rs if r.get("final_visible_pass")]
        confirmed = sum(
            1
            for r in plausible
            if confirmation(origin[r["task_id"]], strategy, r["task_id"], r) == "confirmed"
        )
        spent = sum(cost(r) for r in rs)
        per_fixed = f"{spent / len(fixed):,.0f}" if fixed else "-"
        if warm:
            evaluated = spent - sum(replayed(r) for r in rs)
            per_fixed += " | " + (f"{evaluated / len(fixed):,.0f}" if fixed else "-")
        secs = statistics.median(r["timings"]["total_ms"] / 1000 for r in rs) if rs else 0
        lines = [
            n
            for n in (
                lines_changed(seed_programs[r["task_id"]], r)
                for r in fixed
                if r["task_id"] in seed_programs
            )
            if n is not None
        ]
        med_lines = f"{statistics.median(lines):.0f}" if lines else "-"
        print(
            f"| {name} | {len(fixed)} of {len(failing)} | {passing} of {len(rs)} "
            f"({100 * passing / max(len(rs), 1):.1f}%) | {len(plausible)} | {confirmed} | "
            f"{per_fixed} | {secs:.1f} | {med_lines} |"
        )

if __name__ == "__main__":
    main(sys.argv[1:])
