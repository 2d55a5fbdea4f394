"""A pytest plugin that writes every node's outcome as a JSON line (for the fidelity table).

Loaded with `-p node_outcomes` (its directory on PYTHONPATH); the file is `$LDB_BENCH_NODES`.
A node's outcome is the first failure among its phases, else its call's result; a skip or xfail
in any phase counts as such, as pytest's own summary counts them."""
import json
import os


def _merge(old, new):
    if old in ("failed", "error"):
        return old
    return new


_seen = {}


def pytest_runtest_logreport(report):
    nodeid = report.nodeid
    old = _seen.get(nodeid)
    if report.failed:
        outcome = "failed" if report.when == "call" else "error"
    elif report.skipped:
        outcome = "xfailed" if hasattr(report, "wasxfail") else "skipped"
    elif report.when == "call":
        outcome = "xpassed" if hasattr(report, "wasxfail") else "passed"
    else:
        return
    _seen[nodeid] = _merge(old, outcome) if old else outcome


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("LDB_BENCH_NODES")
    if not path:
        return
    with open(path, "w") as f:
        for nodeid, outcome in _seen.items():
            f.write(json.dumps({"nodeid": nodeid, "outcome": outcome}) + "\n")
