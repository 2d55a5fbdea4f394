#!/usr/bin/env python3
"""ldb on real projects: the BugsInPy development set (`../shared/datasets/bugsinpy`).

    bench.py fidelity [--slice dev|heldout|all] [BUG ...]   ldb test vs plain pytest, node by node
    bench.py fix      [--slice ...] [BUG ...] [-- LDB_FIX_ARGS]   ldb fix --write, scored by score.py
    bench.py locate   [--slice ...] [BUG ...]               ldb locate --tests NODE (no target)
    bench.py table    RESULTS.jsonl ...                      the tables, as markdown
    bench.py compact  RESULTS.jsonl OUT.jsonl                what benchmarks/results keeps of a run

Every bug's project is rebuilt from a git mirror of its upstream repository (the dataset's
make_projects.sh) before each use, so a run never sees another run's edits. Mirrors are
`$BIP_MIRRORS/<owner>+<name>/repo` (or --mirrors); the per-project virtualenvs are the
dataset's `setup_venvs.sh` ones (`$BIP_VENVS`, default /opt/bip-dev-venvs). Without them a bug
is skipped with a message saying what is missing.

Results go to one JSONL file per run (--out), one compact record per bug; a run resumes, skipping
the bugs already recorded. BUG is PROJECT:NUMBER. The held-out slice (`--slice heldout`) is every
third bug of each project in the dataset's order (the 3rd, 6th, ...): nothing is tuned on it.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEFAULT_DATASET = ROOT.parent / "shared" / "datasets" / "bugsinpy"


def load_bugs(dataset):
    bugs = [json.loads(l) for l in open(dataset / "bugs.jsonl") if l.strip()]
    seen = {}
    for b in bugs:
        i = seen.get(b["project"], 0)
        seen[b["project"]] = i + 1
        b["id"] = "%s:%d" % (b["project"], b["bug"])
        b["slice"] = "heldout" if i % 3 == 2 else "dev"
    return bugs


def select(bugs, args):
    chosen = [b for b in bugs if args.slice == "all" or b["slice"] == args.slice]
    if args.bugs:
        want = set(args.bugs)
        chosen = [b for b in bugs if b["id"] in want or b["project"] in want]
    return chosen


def interleave(bugs):
    """The bugs with their projects in turn: the first of each, then the second of each, ..."""
    by_project = {}
    for b in bugs:
        by_project.setdefault(b["project"], []).append(b)
    out = []
    for i in range(max((len(v) for v in by_project.values()), default=0)):
        out.extend(v[i] for v in by_project.values() if i < len(v))
    return out


class Env:
    def __init__(self, args):
        self.dataset = Path(args.dataset)
        self.mirrors = args.mirrors or os.environ.get("BIP_MIRRORS")
        self.venvs = Path(args.venvs or os.environ.get("BIP_VENVS", "/opt/bip-dev-venvs"))
        self.work = Path(args.work)
        # Absolute: each ldb run starts in its project's checkout.
        self.ldb = os.path.abspath(args.ldb)

    def missing(self, bug):
        """Why this bug cannot run here, or None."""
        if not self.mirrors:
            return "no mirrors: set BIP_MIRRORS (or --mirrors) to the folder of git mirrors"
        mirror = Path(self.mirrors) / bug["repo"].replace("/", "+") / "repo"
        if not mirror.exists():
            return "no mirror of %s at %s" % (bug["repo"], mirror)
        if not (self.venvs / bug["project"] / "bin" / "python").exists():
            return "no virtualenv %s (run the dataset's setup_venvs.sh %s)" % (
                self.venvs / bug["project"], bug["project"])
        if not Path(self.ldb).exists():
            return "no ldb binary at %s (cargo build --release)" % self.ldb
        return None

    def project(self, bug):
        """A fresh buggy project for `bug`; its path."""
        out = self.work / "projects"
        subprocess.run(
            [str(self.dataset / "make_projects.sh"), self.mirrors, str(out), bug["id"]],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return out / bug["project"] / str(bug["bug"])

    def venv(self, bug):
        return self.venvs / bug["project"]


def private_env(home, project):
    env = dict(os.environ, HOME=str(home), TMPDIR=str(home), PYTHONDONTWRITEBYTECODE="1")
    # The models stay where the user's ldb keeps them: with the private HOME alone, every run
    # would fetch the embedded model again (1.1 GB) and count that as its time.
    env.setdefault("LDB_MODELS_DIR", os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ldb", "models"))
    env["PYTHONPATH"] = str(project)
    env.pop("VIRTUAL_ENV", None)
    return env


def plain_pytest(env, bug, project, test_files, timeout):
    """Node outcomes of plain pytest, as the dataset's score.py runs it."""
    with tempfile.TemporaryDirectory(prefix="bip-home-") as home:
        nodes = Path(home) / "nodes.jsonl"
        e = private_env(home, project)
        e["PYTHONPATH"] = "%s:%s" % (project, HERE)
        e["LDB_BENCH_NODES"] = str(nodes)
        cmd = [str(env.venv(bug) / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider",
               "-q", "-p", "node_outcomes"] + list(test_files)
        try:
            subprocess.run(cmd, cwd=project, env=e, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=timeout, start_new_session=True)
        except subprocess.TimeoutExpired:
            return None
        if not nodes.exists():
            return {}
        return {r["nodeid"]: r["outcome"] for r in map(json.loads, open(nodes))}


LDB_OUTCOME = {"passed": "passed", "skipped": "skipped", "x_failed": "xfailed", "timeout": "timeout"}


def norm(outcome):
    """pytest's outcomes as ldb tells them apart: an error in set-up is a failure, and a
    non-strict xpass a pass."""
    return {"error": "failed", "xpassed": "passed"}.get(outcome, outcome)


def ldb_test(env, bug, project, test_file, timeout):
    """Node outcomes of `ldb test FILE::FUNCTION --tests TEST_FILE`, and its stderr."""
    with tempfile.TemporaryDirectory(prefix="bip-home-") as home:
        e = private_env(home, project)
        cmd = [env.ldb, "test", "%s::%s" % (bug["file"], bug["function"]),
               "--tests", test_file, "--venv", str(env.venv(bug)), "--json"]
        try:
            p = subprocess.run(cmd, cwd=project, env=e, capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, "timeout"
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            return None, p.stderr.strip()[-2000:]
        out = {}
        for task in doc if isinstance(doc, list) else [doc]:
            for t in task.get("results", []):
                node = (t.get("test") or {}).get("node_id")
                out[node] = LDB_OUTCOME.get(t.get("status"), "failed")
        return out, p.stderr.strip()[-2000:]


def done_ids(path):
    if not path.exists():
        return set()
    return {json.loads(l)["id"] for l in open(path) if l.strip()}


def append(path, record):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")


def cmd_fidelity(env, bugs, args):
    out = Path(args.out)
    done = done_ids(out)
    for bug in bugs:
        if bug["id"] in done:
            continue
        why = env.missing(bug)
        if why:
            print("%s: skipped: %s" % (bug["id"], why), file=sys.stderr)
            continue
        project = env.project(bug)
        started = time.time()
        files = []
        for tf in bug["test_files"]:
            plain = plain_pytest(env, bug, project, [tf], args.timeout)
            mine, stderr = ldb_test(env, bug, project, tf, args.timeout)
            disagree = []
            if plain is not None and mine is not None:
                for node in sorted(set(plain) | set(mine)):
                    a, b = plain.get(node), mine.get(node)
                    if a is None or b is None or norm(a) != norm(b):
                        disagree.append({"node": node, "pytest": a, "ldb": b})
            files.append({
                "test_file": tf,
                "nodes": len(plain) if plain is not None else None,
                "ldb_nodes": len(mine) if mine is not None else None,
                "agree": None if plain is None or mine is None else
                len(set(plain) | set(mine)) - len(disagree),
                "disagree": disagree,
                "ldb_error": None if mine is not None else stderr,
                "pytest_timeout": plain is None,
            })
        rec = {"id": bug["id"], "slice": bug["slice"], "files": files,
               "seconds": round(time.time() - started, 1)}
        append(out, rec)
        bad = sum(len(f["disagree"]) for f in files) + sum(
            1 for f in files if f["ldb_error"] or f["pytest_timeout"])
        print("%s: %s" % (bug["id"], "agree" if not bad else "%d disagreement(s)" % bad),
              file=sys.stderr)


def judge(scored, diff):
    """fixed: the whole test file passes; regressing: a change that passes the failing tests
    and breaks others; wrong: a change that does not pass the failing tests; not fixed: no
    change written."""
    if scored.get("result") == "PASS":
        return "fixed"
    if not diff.strip():
        return "not fixed"
    if (scored.get("visible") or {}).get("ok"):
        return "regressing"
    return "wrong"


def changed_lines(diff):
    return sum(1 for l in diff.splitlines()
               if l[:1] in "+-" and not l.startswith(("+++", "---")) and l[1:].strip())


def cmd_fix(env, bugs, args, extra):
    out = Path(args.out)
    done = done_ids(out)
    for bug in bugs:
        if bug["id"] in done:
            continue
        why = env.missing(bug)
        if why:
            print("%s: skipped: %s" % (bug["id"], why), file=sys.stderr)
            continue
        project = env.project(bug)
        with tempfile.TemporaryDirectory(prefix="bip-home-") as home:
            e = private_env(home, project)
            report = Path(home) / "report.json"
            target = bug["file"] if args.no_target else "%s::%s" % (bug["file"], bug["function"])
            cmd = [env.ldb, "fix", target]
            for node in bug["failing_tests"]:
                cmd += ["--tests", node]
            # --unconfirmed: the table scores what the search returns; a fix nothing but the
            # failing test backs is written too, and its exit status (6) is counted apart.
            cmd += ["--venv", str(env.venv(bug)), "--write", "--unconfirmed", "--report",
                    str(report)] + extra
            started = time.time()
            try:
                p = subprocess.run(cmd, cwd=project, env=e, capture_output=True, text=True,
                                   timeout=args.timeout)
                code, stderr = p.returncode, p.stderr
            except subprocess.TimeoutExpired as t:
                code = "timeout"
                stderr = (t.stderr or b"").decode("utf-8", "replace") if isinstance(
                    t.stderr, bytes) else (t.stderr or "")
            seconds = time.time() - started
            status, tokens, cost, timings = None, None, None, None
            if report.exists() and args.reports:
                os.makedirs(args.reports, exist_ok=True)
                shutil.copy(report, os.path.join(args.reports, bug["id"].replace(":", "_") + ".json"))
            if report.exists():
                try:
                    doc = json.load(open(report))
                    task = doc["tasks"][0]
                    status = task.get("status")
                    usage = task.get("usage") or {}
                    tokens = (usage.get("prompt_tokens", 0) or 0) + (
                        usage.get("completion_tokens", 0) or 0)
                    # What the budget counts: prompt tokens the backend held already are free.
                    cost = tokens - (usage.get("cached_prompt_tokens", 0) or 0)
                    # Where the run's time went (model calls, tests, tracing): `table`'s second table.
                    timings = task.get("timings")
                except (ValueError, KeyError, IndexError):
                    pass
        diff = subprocess.run(["git", "diff", "--", bug["file"]], cwd=project,
                              capture_output=True, text=True).stdout
        score = subprocess.run(
            [sys.executable, str(env.dataset / "score.py"), str(project), bug["id"], "--json",
             "--mirrors", env.mirrors, "--venvs", str(env.venvs), "--timeout", "300"],
            capture_output=True, text=True)
        try:
            scored = json.loads(score.stdout)
        except ValueError:
            scored = {"error": score.stderr[-500:]}
        verdict = judge(scored, diff)
        rec = {"id": bug["id"], "slice": bug["slice"], "exit": code, "status": status,
               "verdict": verdict, "tokens": tokens, "cost": cost, "seconds": round(seconds, 1),
               "timings": timings,
               "changed_lines": changed_lines(diff), "patch_lines": changed_lines(bug["patch"]),
               "score": scored, "stderr_tail": stderr.strip().splitlines()[-6:],
               "diff": diff[:4000]}
        append(out, rec)
        print("%s: %s (%s, %.0f s, %s tokens)" % (bug["id"], verdict, status, seconds, tokens),
              file=sys.stderr)


def cmd_locate(env, bugs, args):
    out = Path(args.out)
    done = done_ids(out)
    for bug in bugs:
        if bug["id"] in done:
            continue
        why = env.missing(bug)
        if why:
            print("%s: skipped: %s" % (bug["id"], why), file=sys.stderr)
            continue
        project = env.project(bug)
        with tempfile.TemporaryDirectory(prefix="bip-home-") as home:
            e = private_env(home, project)
            cmd = [env.ldb, "locate"]
            for node in bug["failing_tests"]:
                cmd += ["--tests", node]
            cmd += ["--venv", str(env.venv(bug)), "--json", "--top", "50"]
            started = time.time()
            try:
                p = subprocess.run(cmd, cwd=project, env=e, capture_output=True, text=True,
                                   timeout=args.timeout)
                stdout, stderr = p.stdout, p.stderr
            except subprocess.TimeoutExpired:
                stdout, stderr = "", "timeout"
        try:
            doc = json.loads(stdout)
        except ValueError:
            doc = None
        fixed_lines = patch_lines(bug["patch"])
        rec = {"id": bug["id"], "slice": bug["slice"], "seconds": round(time.time() - started, 1),
               "function_rank": None, "line_rank": None, "error": None}
        if doc is None:
            rec["error"] = stderr.strip()[-500:]
        else:
            functions = doc.get("functions", [])
            for i, f in enumerate(functions):
                if f.get("function") == bug["function"] and str(f.get("file", "")).endswith(
                        bug["file"]):
                    rec["function_rank"] = i + 1
                    break
            for i, l in enumerate(doc.get("lines", [])):
                if str(l.get("file", "")).endswith(bug["file"]) and l.get("line") in fixed_lines:
                    rec["line_rank"] = i + 1
                    break
            rec["functions"] = [
                {k: f.get(k) for k in ("file", "function", "score", "failing_runs",
                                        "passing_runs", "traceback_depth", "called_by_test")}
                for f in functions[:10]]
            rec["failing"] = doc.get("failing")
        append(out, rec)
        print("%s: function rank %s, line rank %s" % (bug["id"], rec["function_rank"],
                                                      rec["line_rank"]), file=sys.stderr)


def patch_lines(patch):
    """Line numbers of the buggy file the developer's patch removes or touches (the lines
    around an insertion count)."""
    lines = set()
    old = None
    for l in patch.splitlines():
        m = re.match(r"@@ -(\d+)", l)
        if m:
            old = int(m.group(1))
            continue
        if old is None or l.startswith(("---", "+++")):
            continue
        if l.startswith("-"):
            lines.add(old)
            old += 1
        elif l.startswith("+"):
            lines.update({old - 1, old})
        else:
            old += 1
    return lines


def cmd_table(paths):
    for path in paths:
        recs = [json.loads(l) for l in open(path) if l.strip()]
        kind = ("fidelity" if recs and "files" in recs[0] else
                "locate" if recs and "function_rank" in recs[0] else "fix")
        print("### %s (%d bugs)\n" % (Path(path).name, len(recs)))
        if kind == "fidelity":
            nodes = agree = 0
            for r in recs:
                for f in r["files"]:
                    nodes += f["nodes"] or 0
                    agree += f["agree"] or 0
            print("nodes: %d; agree: %d\n" % (nodes, agree))
            for r in recs:
                for f in r["files"]:
                    for d in f["disagree"]:
                        print("- %s `%s`: pytest %s, ldb %s" % (r["id"], d["node"], d["pytest"],
                                                               d["ldb"]))
                    if f["ldb_error"]:
                        print("- %s %s: ldb error: %s" % (r["id"], f["test_file"],
                                                          f["ldb_error"].splitlines()[-1:]))
        elif kind == "fix":
            for r in recs:
                r["verdict"] = judge(r["score"], r["diff"])
            # Unconfirmed: exit 6, written only because the run passes --unconfirmed.
            print("| project | bugs | fixed | plausible but regressing | written, failing "
                  "| not fixed | tokens per fix (budget's) | median s | median changed lines "
                  "(developer's) |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            for name, rs in by_project(recs):
                fixed = [r for r in rs if r["verdict"] == "fixed"]
                reg = [r for r in rs if r["verdict"] == "regressing"]
                wrong = [r for r in rs if r["verdict"] == "wrong"]
                tokens = sum(r["tokens"] or 0 for r in rs)
                cost = sum(r.get("cost") or 0 for r in rs)
                unconfirmed = sum(1 for r in fixed if r.get("exit") == 6)
                print("| %s | %d | %s | %d | %d | %d | %s | %.0f | %s (%s) |" % (
                    name, len(rs),
                    "%d (%d unconfirmed)" % (len(fixed), unconfirmed) if unconfirmed
                    else str(len(fixed)),
                    len(reg), len(wrong),
                    len(rs) - len(fixed) - len(reg) - len(wrong),
                    "%.0f (%.0f)" % (tokens / len(fixed), cost / len(fixed)) if fixed else "-",
                    statistics.median(r["seconds"] for r in rs),
                    statistics.median(r["changed_lines"] for r in fixed) if fixed else "-",
                    statistics.median(r["patch_lines"] for r in fixed) if fixed else "-"))
            timed = [r for r in recs if r.get("timings")]
            if timed:
                print()
                profile_table(timed)
        else:
            print("| project | bugs | function top-1 | function top-3 | line top-1 | line top-3 |")
            print("|---|---:|---:|---:|---:|---:|")
            for name, rs in by_project(recs):
                f1 = sum(1 for r in rs if r["function_rank"] == 1)
                f3 = sum(1 for r in rs if r["function_rank"] and r["function_rank"] <= 3)
                l1 = sum(1 for r in rs if r["line_rank"] == 1)
                l3 = sum(1 for r in rs if r["line_rank"] and r["line_rank"] <= 3)
                print("| %s | %d | %d | %d | %d | %d |" % (name, len(rs), f1, f3, l1, l3))
        print()


def by_project(recs):
    """A table's rows: the records of each project, by name, then all of them as "total"."""
    by = {}
    for r in recs:
        by.setdefault(r["id"].split(":")[0], []).append(r)
    return sorted(by.items()) + [("total", recs)]


def profile_table(recs):
    """Where a fix run's time went, from each run's report: the model's calls, the project's
    tests (the failing tests, the regression tests, the candidates' runs), tracing, and the
    rest of the run (start-up, finding the regression tests, the search's own work)."""
    print("| project | bugs | wall s | model s | tests s | trace s | rest s | model share |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, rs in by_project(recs):
        wall = sum(r["seconds"] for r in rs)
        model = sum(r["timings"].get("llm_ms", 0) for r in rs) / 1000
        tests = sum(r["timings"].get("tests_ms", 0) for r in rs) / 1000
        trace = sum(r["timings"].get("trace_ms", 0) for r in rs) / 1000
        print("| %s | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f%% |" % (
            name, len(rs), wall, model, tests, trace, wall - model - tests - trace,
            100 * model / wall if wall else 0))


def cmd_compact(src, dst):
    """Keep what the tables and a reader need: no stderr, no paths of this machine."""
    with open(dst, "w") as out:
        for line in open(src):
            if not line.strip():
                continue
            r = json.loads(line)
            if "score" in r:
                sc = r["score"] or {}
                r["score"] = {k: sc.get(k) for k in ("result", "visible", "hidden", "error")
                              if k in sc}
                # The tables' judge reads the diff; keep it (a fix is a few lines).
                r.pop("stderr_tail", None)
            for f in r.get("functions") or []:
                # The project's own path: relative to its root, as the dataset names files.
                f["file"] = re.sub(r"^.*/projects/[^/]+/\d+/", "", f.get("file") or "")
            out.write(json.dumps(r, sort_keys=True) + "\n")


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["fidelity", "fix", "locate", "table", "compact"])
    ap.add_argument("bugs", nargs="*", help="PROJECT:NUMBER or PROJECT (default: the slice)")
    ap.add_argument("--slice", choices=["dev", "heldout", "all"], default="dev")
    ap.add_argument("--dataset", default=str(DEFAULT_DATASET))
    ap.add_argument("--mirrors", help="folder of <owner>+<name>/repo git mirrors "
                                      "(default: $BIP_MIRRORS)")
    ap.add_argument("--venvs", help="folder of per-project virtualenvs (default: $BIP_VENVS "
                                    "or /opt/bip-dev-venvs)")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "ldb-bugsinpy"))
    ap.add_argument("--ldb", default=str(ROOT / "target" / "release" / "ldb"))
    ap.add_argument("--out", help="results JSONL (resumed)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per ldb run")
    ap.add_argument("--reports", help="fix: keep each run's --report JSON in this folder")
    ap.add_argument("--interleave", action="store_true",
                    help="take the projects' bugs in turn (a run stopped early still samples "
                         "every project)")
    ap.add_argument("--no-target", action="store_true",
                    help="fix: name no function (ldb finds it from the failing test)")
    args = ap.parse_args(argv)
    if args.command == "table":
        cmd_table(args.bugs)
        return
    if args.command == "compact":
        if len(args.bugs) != 2:
            sys.exit("bench.py compact RESULTS.jsonl OUT.jsonl")
        cmd_compact(*args.bugs)
        return
    if not Path(args.dataset, "bugs.jsonl").exists():
        sys.exit("bench.py: no BugsInPy dataset at %s (--dataset)" % args.dataset)
    env = Env(args)
    bugs = select(load_bugs(Path(args.dataset)), args)
    if args.interleave:
        bugs = interleave(bugs)
    if not args.out:
        sys.exit("bench.py: --out RESULTS.jsonl is required")
    if args.command == "fidelity":
        cmd_fidelity(env, bugs, args)
    elif args.command == "fix":
        cmd_fix(env, bugs, args, extra)
    else:
        cmd_locate(env, bugs, args)


if __name__ == "__main__":
    main()
