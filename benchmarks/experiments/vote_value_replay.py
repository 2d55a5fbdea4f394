#!/usr/bin/env python3
"""What each extra vote is worth: the choice replayed with only the first k votes of each task.

Usage: benchmarks/experiments/vote_value_replay.py [--tasks] [--label NAME] [--before-crash-rule]
       RUN_DIR[+RUN_DIR...] ...

`--label` and `--before-crash-rule` apply to the set that follows them; `+` joins runs into one
set (a later run's record of a task replaces an earlier one's). `--before-crash-rule` is for runs
of builds before a crash counted as no answer (ac0b1f9, 2026-11-28). `--tasks` lists every task
where a vote changed the pick.

After the first program that passes the visible tests the search draws fresh programs as votes
(`--select`, `--verify` when the given program passed, `--tie-votes` more on a tie; it stops once
the votes left cannot change the choice). A vote here is any independent program (fresh,
feedback, ldb) drawn after the first passing candidate, whether or not it passes the visible
tests: each costs its tokens (as the budget counts them). For every task that drew votes the
choice is replayed from the candidate log with the first k votes only (k = 0, 1, ..., all), as
`choose.rs` and `decide.rs` make it:

- the contenders: the passing candidates that took part in the recorded vote (those with a
  signature, their behaviour hashes on the extra inputs) made before the first vote, and the
  passing votes up to the k-th;
- one contender: it is returned (unconfirmed; the given program is kept);
- weights as `votes.rs` gives them: with an edit among the contenders only programs written whole
  vote (an independent program, or the given program), one vote each plus one per independent
  sample drawn so far that wrote it again; with no edit every contender votes, plus its copies;
- groups by identical signature, ordered by weight, then by support: a group takes the votes of a
  group that raised where it answers and behaves as it does elsewhere (`select::support`: a
  crash is no answer); equal groups keep the order found;
- no votes: the smallest passing edit (diff lines, then the first found), else the first
  contender, unconfirmed;
- the heaviest group's smallest edit, confirmed; with none in it, the given program when it is
  the group's first; else an edit brought in: the edit the run brought into a group behaving the
  same (an edit of the given program made towards the group's behaviour after the votes, which
  needs no model, so the same group gets the same edit); else the group's first program
  (the majority's).

What the log cannot replay, and so is approximated:
- a crash: the hashes say a program raised, not whether the raising line was a `raise` or
  `assert` statement (a raise on purpose is no crash, `harden::crashes`): every raise of a
  built-in exception is taken for a crash;
- a program set aside before the votes (`harden`) and taken back into the heaviest group
  (`rejoin`) is in the log as any other contender: the replay counts it for every k, where the
  search takes it back only into a heaviest group that behaves as it does;
- a heaviest group with no edit that the full vote did not lead (a smaller k leads elsewhere):
  the search would edit the given program towards it; the replay returns the group's first
  program and counts the task under "bring-in guessed";
- where no vote was taken on extra inputs (no vote passed beside the one passing program, or no
  extra inputs), the log does not mark programs set aside, so the replay does not name the
  pick; no passing vote can change it, so it is the recorded one for every k.

The full vote's pick is checked against the recorded choice: exactly where the run's reports are
beside its search.jsonl (the chosen candidate), else by what the record keeps (the given program
for `already_passing`; otherwise the pick must pass or fail the hidden tests as the returned
program does, change as many lines of the given program, and sit in the heaviest recorded group
when the votes confirmed); and the backing it gives (confirmed, majority or unconfirmed, with its
agreeing and disagreeing votes) must be the recorded one. Tasks where either differs are left
out of the counts.

Prints, per set: k | tasks that drew a k-th vote | pick changed by it | hidden gained | hidden
lost | mean tokens of the k-th vote (and their sum); the same split by whether the given program
passed the visible tests; what stopping after k votes returns against the full vote; and a rule
read off the split (where the given program did not pass, stop at the first vote that passes
the visible tests).
"""

import builtins
import difflib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
from repair_analysis import load, seeds  # noqa: E402

RESULTS = Path(__file__).resolve().parent.parent / "results"
INDEPENDENT = {"fresh", "feedback", "ldb"}
DERIVED = {"mutate", "patch", "complete"}


def run_dirs(spec):
    return [Path(p) if Path(p).is_dir() else RESULTS / p for p in spec.split("+")]


def tasks(spec):
    """task id -> (record, seed program, run directory); a later run replaces an earlier one."""
    out = {}
    for d in run_dirs(spec):
        progs = seeds(d)
        for tid, r in load(d / "search.jsonl").items():
            if r.get("candidate_log") and r.get("strategy", "search") == "search":
                out[tid] = (r, progs.get(tid), d)
    return out


def changed_lines(a, b):
    """Lines added or removed between a and b (`node::changed_lines`, with difflib's diff)."""
    a, b = a.splitlines(True), b.splitlines(True)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return sum((i2 - i1) + (j2 - j1) for op, i1, i2, j1, j2 in ops if op != "equal")


def fnv(text):
    """`select::behaviour_hash`: FNV-1a, 32 bits."""
    h = 0x811C9DC5
    for b in text.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


# Behaviours as hashed: a raise of any built-in exception, and what is no answer either.
EXCEPTIONS = [n for n, x in vars(builtins).items()
              if isinstance(x, type) and issubclass(x, BaseException)]
RAISES = {fnv(f"raise {n}") for n in EXCEPTIONS}
NO_ANSWER = RAISES | {fnv(x) for x in ("= None", "raise ?", "PASS", "FAIL", "ERROR", "TIMEOUT",
                                        "MEMORY", "OUTPUT", "EXIT", "CRASH", "SANDBOX", "SKIP",
                                        "XFAIL", "not run")}


def covers(mine, theirs):
    """Whether the group behaving as `mine` takes the votes of the one behaving as `theirs`:
    they differ only where `theirs` raised and `mine` answers, somewhere."""
    if len(mine) != len(theirs):
        return False
    abstained = False
    for x, y in zip(mine, theirs):
        if x == y:
            continue
        if y in RAISES and x not in NO_ANSWER:
            abstained = True
        else:
            return False
    return abstained


def passes(c, total):
    return bool(total) and c.get("visible_passed") == total and c.get("duplicate_of") is None


class Task:
    def __init__(self, r, seed, run_dir, crash_support=True):
        # A group takes the votes of groups that crashed where it answers (`select::support`,
        # since ac0b1f9), a raise taken for a crash: `harden::crashes` also asks that the
        # raising line is no `raise` or `assert` statement, which the hashes do not tell.
        self.crash_support = crash_support
        self.r = r
        self.seed = seed
        self.run_dir = run_dir
        self.log = r["candidate_log"]
        self.by_id = {c["id"]: c for c in self.log}
        total = r.get("visible_total") or 0
        self.passing = [c["id"] for c in self.log if passes(c, total)]
        first = self.passing[0] if self.passing else None
        self.first = first
        self.votes = [c["id"] for c in self.log if first is not None and c["id"] > first
                      and c["proposer"] in INDEPENDENT]
        self.selected = any(self.by_id[p].get("signature") for p in self.passing)
        before = self.votes[0] if self.votes else None
        # Edits made after the votes (brought into a group), by the behaviour they joined.
        self.joinable = {}
        for c in self.log:
            if before is not None and c["id"] > self.votes[-1] and c["proposer"] in DERIVED \
                    and c.get("signature") and passes(c, total):
                self.joinable.setdefault(tuple(c["signature"]), []).append(c["id"])
        # The candidates every k sees: those before the first vote that took part in the vote.
        self.base = [p for p in self.passing if before is None or p < before]
        if self.selected:
            self.base = [p for p in self.base if self.by_id[p].get("signature")]

    def hidden(self, pick):
        if pick == "kept":
            return self.r.get("final_hidden_pass")
        h = self.by_id[pick].get("hidden_pass")
        if h is None and pick == 0:
            h = self.r.get("seed_hidden_pass")
        return h

    def derived(self, p):
        return self.by_id[p]["proposer"] in DERIVED

    def top_of(self, k):
        return self.decide(k)[3]

    def pick(self, k):
        """(pick, bring-in guessed) with the first k votes."""
        return self.decide(k)[:2]

    def decide(self, k):
        """(pick, bring-in guessed, confirmation as the report gives it, heaviest behaviour)
        with the first k votes; the pick is "kept" where no vote was taken."""
        if not self.selected:
            # No vote on extra inputs: no vote passed the visible tests beside the one passing
            # program (a program set aside before the votes is not marked in the log), or there
            # were no extra inputs to compare on. The choice cannot change with k.
            return "kept", False, None, None
        drawn = set(self.votes[:k])
        upto = self.votes[k - 1] if k else self.votes[0] - 1
        contenders = sorted(self.base + [v for v in self.votes[:k]
                                         if v in self.passing and self.by_id[v].get("signature")])
        if not contenders:
            return self.first, False, None, None
        if contenders == [0] and any(c["proposer"] in INDEPENDENT for c in self.log
                                     if c["id"] <= upto):
            return 0, False, None, None
        if len(contenders) == 1:
            only = contenders[0]
            return only, False, (None if only == 0 else ("unconfirmed", 0, 0)), None
        # Copies of a program count as its votes, only those drawn so far.
        copies = {}
        any_derived = any(self.derived(p) for p in contenders)
        for c in self.log:
            d = c.get("duplicate_of")
            if d is None or c["id"] > upto:
                continue
            if c["proposer"] in INDEPENDENT and c["id"] > self.first and c["id"] not in drawn:
                continue
            if any_derived and c["proposer"] not in INDEPENDENT:
                continue
            copies[d] = copies.get(d, 0) + 1
        weight = {}
        for p in contenders:
            c = self.by_id[p]
            if any_derived:
                own = int(c["proposer"] in INDEPENDENT or (c["proposer"] == "seed" and p == 0))
            else:
                own = 1
            weight[p] = own + copies.get(p, 0)
        total = sum(weight.values())
        groups, order = {}, []
        for p in contenders:
            key = tuple(self.by_id[p]["signature"])
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append(p)
        own = {g: sum(weight[p] for p in groups[g]) for g in order}
        by_weight = sorted(order, key=lambda g: -own[g])
        if self.crash_support:
            support = {g: own[g] and own[g] + sum(own[h] for h in by_weight
                                                  if h != g and covers(g, h)) for g in by_weight}
        else:
            support = own
        ranked = sorted(by_weight, key=lambda g: -support[g])
        top = ranked[0]
        top_weight = support[top]

        def smallest_edit(ids):
            edits = [p for p in ids if self.derived(p)]
            if not edits:
                return None
            return min(edits, key=lambda p: (self.by_id[p].get("diff_lines", 0), p))

        if top_weight == 0:
            e = smallest_edit(contenders)
            return (e if e is not None else contenders[0]), False, ("unconfirmed", 0, 0), top
        e = smallest_edit(groups[top])
        if e is not None:
            return e, False, ("confirmed", top_weight, total - top_weight), top
        majority = groups[top][0]
        joined = self.joinable.get(top) if majority != 0 else None
        if joined:
            pick = min(joined, key=lambda p: (self.by_id[p].get("diff_lines", 0), p))
            return pick, False, ("confirmed", top_weight, total - top_weight), top
        # No edit joined. Where the full vote's heaviest group was another, the log cannot say
        # whether an edit towards this one would have been found: guessed.
        guessed = majority != 0 and k < len(self.votes) and top != self.full_top()
        return majority, guessed, ("majority", top_weight - 1, total - top_weight), top

    def full_top(self):
        """The behaviour the full vote's heaviest group shows (None: no vote compared)."""
        if not hasattr(self, "_full_top"):
            self._full_top = None
            self._full_top = self.top_of(len(self.votes))
        return self._full_top

    def recorded(self):
        """The recorded choice, as (the candidate ids it may be, "exact" or "record"); None for
        the ids when the record cannot tell."""
        r = self.r
        name = r["task_id"].replace("/", "_") + ".json"
        report = self.run_dir / "reports" / r.get("strategy", "search") / name
        if report.exists():
            try:
                rep = json.loads(report.read_text())["tasks"][0]
            except (json.JSONDecodeError, KeyError, IndexError):
                rep = None
            if rep is not None:
                sel = rep.get("selection")
                if sel and sel.get("chosen") is not None:
                    return {sel["chosen"]}, "exact"
                ids = [c["id"] for c in rep.get("candidates", [])
                       if c.get("program") == rep.get("final_program")
                       and c.get("duplicate_of") is None]
                if ids:
                    return {min(ids)}, "exact"
        if r.get("status") == "already_passing":
            return {0}, "record"
        if self.seed is None:
            return None, "record"
        lines = changed_lines(self.seed, r.get("final_program") or "")
        status = (r.get("confirmation") or {}).get("status")
        out = set()
        for p in self.passing:
            c = self.by_id[p]
            if bool(self.hidden(p)) != bool(r.get("final_hidden_pass")):
                continue
            if p != 0 and c.get("diff_lines", 0) != lines:
                continue
            if status in ("confirmed", "majority") and c.get("group") != 0:
                continue
            out.add(p)
        return (out or None), "record"


def replay(spec, label, show, crash_support):
    ts = [Task(*v, crash_support=crash_support) for v in tasks(spec).values()]
    ts = [t for t in ts if t.votes]
    agree, disagree, unknown, constant, guessed = [], [], [], [], set()
    exact = backing = 0
    for t in ts:
        if not t.selected:
            constant.append(t)
            continue
        full, _, conf, _ = t.decide(len(t.votes))
        rec, how = t.recorded()
        c = t.r.get("confirmation")
        same_backing = (c["status"], c["agreeing"], c["disagreeing"]) == conf if c else conf is None
        backing += same_backing
        if rec is None:
            unknown.append(t)
        elif full in rec and same_backing:
            agree.append(t)
            exact += how == "exact"
        else:
            disagree.append(t)
    kept = agree + unknown + constant

    def given_passed(t):
        # The given program passed the visible tests (and, where a vote was taken, took part in
        # it): `--verify` votes are wanted, not `--select`, and it is a vote itself.
        c = t.by_id.get(0, {})
        return passes(c, t.r.get("visible_total")) and (not t.selected or bool(c.get("signature")))

    def per_k(group):
        rows = []
        for k in range(1, max((len(t.votes) for t in group), default=0) + 1):
            drew = [t for t in group if len(t.votes) >= k]
            changed = gained = lost = 0
            tokens = [t.by_id[t.votes[k - 1]].get("tokens", 0) for t in drew]
            for t in drew:
                before, g1 = t.pick(k - 1)
                after, g2 = t.pick(k)
                if g1 or g2:
                    guessed.add(t.r["task_id"])
                if before == after:
                    continue
                changed += 1
                hb, ha = bool(t.hidden(before)), bool(t.hidden(after))
                gained += int(ha and not hb)
                lost += int(hb and not ha)
                if show and group is kept:
                    print(f"  {label} {t.r['task_id']}: vote {k} (candidate {t.votes[k - 1]}) "
                          f"{before} -> {after}, hidden {hb} -> {ha}"
                          + (" (bring-in guessed)" if g1 or g2 else ""))
            mean = sum(tokens) / len(tokens) if tokens else 0
            rows.append((k, len(drew), changed, gained, lost, mean, sum(tokens)))
        return rows

    rows = per_k(kept)
    split = [("the given program passed", per_k([t for t in kept if given_passed(t)])),
             ("it did not", per_k([t for t in kept if not given_passed(t)]))]
    stops = []
    for k in range(0, len(rows)):
        # Stop after k votes: the tasks that drew more, against their full vote.
        more = [t for t in kept if len(t.votes) > k]
        right_wrong = wrong_right = diff = saved = 0
        for t in more:
            at, _ = t.pick(k)
            full, _ = t.pick(len(t.votes))
            saved += sum(t.by_id[v].get("tokens", 0) for v in t.votes[k:])
            if at != full:
                diff += 1
                ha, hf = bool(t.hidden(at)), bool(t.hidden(full))
                right_wrong += int(hf and not ha)
                wrong_right += int(ha and not hf)
        stops.append((k, len(more), diff, right_wrong, wrong_right, saved))
    # A rule read off the split: where the given program did not pass, stop at the first vote
    # that passes the visible tests.
    rule = {"tasks": 0, "saved": 0, "rw": [], "wr": []}
    for t in kept:
        if given_passed(t):
            continue
        stop = next((i + 1 for i, v in enumerate(t.votes) if v in t.passing), len(t.votes))
        if stop >= len(t.votes):
            continue
        rule["tasks"] += 1
        rule["saved"] += sum(t.by_id[v].get("tokens", 0) for v in t.votes[stop:])
        ha, hf = bool(t.hidden(t.pick(stop)[0])), bool(t.hidden(t.pick(len(t.votes))[0]))
        if hf and not ha:
            rule["rw"].append(t.r["task_id"])
        if ha and not hf:
            rule["wr"].append(t.r["task_id"])
    vote_tokens = sum(r[6] for r in rows)
    all_tokens = sum(c.get("tokens", 0) for t in kept for c in t.log)

    checked = len(agree) + len(disagree)
    share = f" ({100 * len(agree) / checked:.0f}%)" if checked else ""
    print(f"### {label}\n")
    voted = len(ts) - len(constant)
    print(f"{len(ts)} tasks drew votes. {len(constant)} took no vote on the extra inputs (no "
          f"vote passed the visible tests beside one passing program, or no extra inputs): the "
          f"choice is the same for every k. Of the {voted} that did, the replay's full-vote pick "
          f"is the recorded choice, with the recorded backing, on {len(agree)} of {checked} "
          f"checked{share} ({exact} against the chosen program itself, the rest against what the "
          f"record keeps; the backing alone agrees on {backing} of {voted}); {len(disagree)} "
          f"disagree and are left out; {len(unknown)} could not be checked (kept). An edit "
          f"brought in was guessed on {len(guessed)}.")
    if disagree:
        print("left out: " + ", ".join(t.r["task_id"] for t in disagree))
    print()
    print(f"The votes of the tasks counted cost {vote_tokens:,} of the {all_tokens:,} tokens their "
          f"candidates cost ({100 * vote_tokens / max(all_tokens, 1):.0f}%).")
    print()
    print("| k | tasks that drew a k-th vote | pick changed | hidden gained | hidden lost "
          "| mean tokens of the k-th vote | tokens of the k-th votes |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for k, drew, changed, gained, lost, mean, total in rows:
        print(f"| {k} | {drew} | {changed} | {gained} | {lost} | {mean:,.0f} | {total:,} |")
    print()
    print("| case | k | tasks that drew a k-th vote | pick changed | hidden gained | hidden lost "
          "| tokens of the k-th votes |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for case, case_rows in split:
        for k, drew, changed, gained, lost, mean, total in case_rows:
            print(f"| {case} | {k} | {drew} | {changed} | {gained} | {lost} | {total:,} |")
    print()
    print("| stop after k votes | tasks that drew more | pick differs from the full vote "
          "| right → wrong | wrong → right | tokens not spent |")
    print("|---:|---:|---:|---:|---:|---:|")
    for k, more, diff, rw, wr, saved in stops:
        print(f"| {k} | {more} | {diff} | {rw} | {wr} | {saved:,} |")
    print()
    print(f"Where the given program did not pass, stopping at the first vote that passes the "
          f"visible tests stops {rule['tasks']} tasks earlier and leaves {rule['saved']:,} of "
          f"the {vote_tokens:,} tokens of votes unspent; right → wrong {len(rule['rw'])}"
          + (f" ({', '.join(rule['rw'])})" if rule["rw"] else "")
          + f", wrong → right {len(rule['wr'])}"
          + (f" ({', '.join(rule['wr'])})" if rule["wr"] else "") + ".")
    print()


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    show = "--tasks" in argv
    argv = [a for a in argv if a != "--tasks"]
    label, crash_support = None, True
    i = 0
    while i < len(argv):
        if argv[i] == "--label":
            label = argv[i + 1]
            i += 2
            continue
        if argv[i] == "--before-crash-rule":
            crash_support = False
            i += 1
            continue
        spec = argv[i]
        replay(spec, label or spec, show, crash_support)
        label, crash_support = None, True
        i += 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(0)
