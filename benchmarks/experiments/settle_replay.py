#!/usr/bin/env python3
"""What settling the vote early saves: replayed from the candidate logs of recorded search runs.

Usage: benchmarks/experiments/settle_replay.py RUN_DIR[+RUN_DIR...] [--select 3] [--verify 4]

After the first program passes the visible tests the search draws `select` more fresh programs
as votes (`verify` when the given program passed). `--settle-votes` (the default since it was
built; `--all-votes` turns it off) stops drawing once the votes left cannot change the choice:
the heaviest group of passing programs outweighs every other group together by more than the
votes left. The replay walks each task's votes in the order drawn, groups the passing programs
by their recorded signatures (their behaviour on the extra inputs) with the search's weights,
and counts the tokens of every call after the point where the vote was settled.

An upper bound: the logs do not say which programs crashed on an extra input, and the search
does not settle a vote whose heaviest group crashed anywhere (a later program answering there
would take its votes). The recorded choice stands either way, so no fix is lost.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
from give_up_replay import records  # noqa: E402
from repair_analysis import cost  # noqa: E402

INDEPENDENT = {"fresh", "feedback", "ldb"}
DERIVED = {"mutate", "patch", "complete"}


def weights(log, passing, upto):
    """The votes of each passing program among the candidates up to id `upto` (the search's
    `vote_weights`: with an edit among them only programs written whole vote)."""
    by_id = {c["id"]: c for c in log}
    any_derived = any(by_id[p]["proposer"] in DERIVED for p in passing if p <= upto)
    out = {}
    for p in passing:
        if p > upto:
            continue
        c = by_id[p]
        if any_derived:
            own = int(c["proposer"] in INDEPENDENT or c["proposer"] == "seed")
        else:
            own = 1
        again = sum(
            1
            for d in log
            if d.get("duplicate_of") == p
            and d["id"] <= upto
            and (not any_derived or d["proposer"] in INDEPENDENT)
        )
        out[p] = own + again
    return out


def settled_after(r, select, verify):
    """The tokens and calls after the vote was settled (0, 0 when it never was)."""
    log = r.get("candidate_log") or []
    total = r.get("visible_total") or 0
    passing = [c["id"] for c in log if total and c.get("visible_passed") == total]
    if not passing:
        return 0, 0
    by_id = {c["id"]: c for c in log}
    first = passing[0]
    wanted = verify if first == 0 else select
    votes = [c for c in log if c["id"] > first and c["proposer"] not in ("seed", "mutate")]
    for k, vote in enumerate(votes):
        left = wanted - (k + 1)
        if left <= 0:
            return 0, 0
        groups = {}
        for p, w in weights(log, passing, vote["id"]).items():
            key = tuple(by_id[p].get("signature") or [str(p)])
            groups[key] = groups.get(key, 0) + w
        ws = sorted(groups.values(), reverse=True)
        if ws and ws[0] > 0 and ws[0] > sum(ws[1:]) + left:
            # Model calls only: edits made while choosing cost nothing and stay.
            later = [c for c in votes if c["id"] > vote["id"]]
            return sum(c.get("tokens", 0) for c in later), len(later)
    return 0, 0


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    select = int(argv[argv.index("--select") + 1]) if "--select" in argv else 3
    verify = int(argv[argv.index("--verify") + 1]) if "--verify" in argv else 4
    rs = [r for r in records(argv[0]).values() if r.get("candidate_log")]
    fixed = [r for r in rs if r.get("final_hidden_pass") and not r.get("seed_hidden_pass")]
    spent = sum(cost(r) for r in rs)
    saved = calls = tasks = 0
    for r in rs:
        t, n = settled_after(r, select, verify)
        if n:
            saved, calls, tasks = saved + t, calls + n, tasks + 1
    n = max(len(fixed), 1)
    print("| run | tasks | fixed | tokens/fixed, all votes | settled early (tasks, calls) "
          "| tokens saved | tokens/fixed, settled |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(f"| {argv[0][:70]} | {len(rs)} | {len(fixed)} | {spent / n:,.0f} | {tasks}, {calls} "
          f"| {saved:,} | {(spent - saved) / n:,.0f} |")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(0)
