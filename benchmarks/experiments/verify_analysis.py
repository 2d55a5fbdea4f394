#!/usr/bin/env python3
"""What `--verify` does to seeds that already pass the visible tests: how many wrong seeds it
replaces with a program that passes the hidden tests (gains) and how many right seeds it replaces
with one that fails them (losses), for the rule the run used and for a stronger hold on the seed.

Usage: benchmarks/experiments/verify_analysis.py RUN_DIR [RUN_DIR ...] [--holds 1,2,3]

Reads `search.jsonl` of `ldb eval` runs made with `--verify N` (benchmarks/search_runs.sh
verify). The seed's hold: with weight w the seed's group counts w - 1 extra votes, so a group
that disagrees with the seed must outweigh it by that much (w = 1 is `--verify` as built: the
heavier group wins, ties keep the seed; w = 0: the seed does not vote for itself, ties still
keep it). Prints markdown tables; nothing is written.
"""
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from search_analysis import records  # noqa: E402  (the same run files, read the same way)


def choose(r, hold):
    """The hidden result of the program chosen with the seed's hold `hold`, and whether the
    seed was replaced; None when the seed did not pass the visible tests."""
    log = r.get("candidate_log", [])
    total = r["visible_total"]
    if not log or log[0].get("visible_passed") != total:
        return None
    weight = defaultdict(int)
    for c in log:
        weight[c["duplicate_of"] if c.get("duplicate_of") is not None else c["id"]] += 1
    passing = [c for c in log if c.get("visible_passed") == total and c.get("duplicate_of") is None]
    if len(passing) < 2 or any(c.get("signature") is None for c in passing):
        return (r["seed_hidden_pass"], False)
    groups = {}
    for c in passing:
        groups.setdefault(tuple(c["signature"]), []).append(c)
    best = None
    for members in groups.values():
        w = sum(weight[c["id"]] for c in members)
        if any(c["id"] == 0 for c in members):
            w += hold - 1
        first = min(c["id"] for c in members)
        key = (-w, first)
        if best is None or key < best[0]:
            best = (key, members)
    chosen = min(best[1], key=lambda c: c["id"])
    if chosen["id"] == 0:
        return (r["seed_hidden_pass"], False)
    return (bool(chosen.get("hidden_pass")), True)


def main(dirs, holds=(1, 2, 3)):
    rows = [r for d in map(Path, dirs) for r in records(d / "search.jsonl")]
    print(f"{len(rows)} tasks from {len(dirs)} runs; the actual runs returned a hidden pass on "
          f"{sum(r['final_hidden_pass'] for r in rows)} (seeds: {sum(r['seed_hidden_pass'] for r in rows)})")
    print()
    print("| seed's hold | wrong seeds | replaced, now right (gain) | replaced, still wrong | "
          "right seeds | replaced, now wrong (loss) | replaced, still right |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for hold in holds:
        t = defaultdict(int)
        for r in rows:
            out = choose(r, hold)
            if out is None:
                continue
            hidden, replaced = out
            kind = "right" if r["seed_hidden_pass"] else "wrong"
            t[kind] += 1
            if replaced:
                t[(kind, hidden)] += 1
        print(f"| {hold} | {t['wrong']} | {t[('wrong', True)]} | {t[('wrong', False)]} | "
              f"{t['right']} | {t[('right', False)]} | {t[('right', True)]} |")
    tokens = [r["tokens"]["prompt"] - r["tokens"].get("cached_prompt", 0) + r["tokens"]["completion"]
              for r in rows]
    if tokens:
        print()
        print(f"Budget units per task: mean {sum(tokens) / len(tokens):.0f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    args = sys.argv[1:]
    holds = (1, 2, 3)
    if "--holds" in args:
        at = args.index("--holds")
        holds = tuple(int(h) for h in args[at + 1].split(","))
        del args[at:at + 2]
    main(args, holds)
