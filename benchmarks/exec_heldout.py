#!/usr/bin/env python3
"""A held-out set for `ldb exec`'s model-free stand-ins: function bodies cut out of CPython's
standard library the way Treefix cut its "open source functions" out of projects (the body
alone, dedented, `return x` turned into `exit(x)`), so the stand-ins can be tuned on snippets
that are not Treefix's sample.

Usage:
  python3 benchmarks/exec_heldout.py make OUT.jsonl [--count 60] [--offset 0]
  python3 benchmarks/exec_heldout.py run OUT.jsonl LDB_BIN [ldb exec flags...]

`make` picks every Nth function (in a fixed order: modules sorted by name, functions in file
order) with at least four statements and none of `yield`, `await`, `global`, `nonlocal`,
starting at the `--offset`th: offset 0 is the set the stand-ins were tuned on; another offset
(`--offset 31` is the one in RESULTS) draws a second set, disjoint from it, kept for checking.
`run` calls `LDB_BIN exec --no-model --format json` on each snippet and prints the mean line
coverage of the minimal set and of the snippet as is (ldb's own tracer: executed lines over
the snippet's statement lines).
"""
import ast
import json
import os
import subprocess
import sys
import sysconfig
import tempfile

# Packages left out: tests of CPython itself, GUI and platform code that the sandbox cannot run.
SKIP = ("test", "idlelib", "tkinter", "turtledemo", "lib2to3", "ensurepip", "venv", "msilib",
        "distutils", "site-packages", "__pycache__", "turtle")


class ReturnToExit(ast.NodeTransformer):
    """`return x` at the body's own level becomes `exit(x)`, as in Treefix's functions."""

    def visit_FunctionDef(self, node):
        return node  # nested functions keep their returns

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_Return(self, node):
        args = [node.value] if node.value is not None else []
        call = ast.Call(func=ast.Name(id="exit", ctx=ast.Load()), args=args, keywords=[])
        return ast.copy_location(ast.Expr(value=call), node)


def forbidden(fn):
    for n in ast.walk(fn):
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)):
            return True
    return False


def functions(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP)
        for name in sorted(filenames):
            if not name.endswith(".py") or name.startswith("test"):
                continue
            path = os.path.join(dirpath, name)
            try:
                tree = ast.parse(open(path, encoding="utf-8").read())
            except (SyntaxError, UnicodeDecodeError, OSError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and len(node.body) >= 4 and not forbidden(node):
                    yield os.path.relpath(path, root), node


def make(out, count, offset=0):
    root = sysconfig.get_paths()["stdlib"]
    found = list(functions(root))
    step = max(1, len(found) // count)
    if not 0 <= offset < step:
        sys.exit(f"--offset must be at least 0 and below {step} (the sampling step)")
    with open(out, "w") as f:
        for rel, fn in found[offset::step][:count]:
            body = fn.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                body = body[1:]  # the docstring
            module = ast.Module(body=[ReturnToExit().visit(s) for s in body], type_ignores=[])
            code = f"# Extracted from {rel}\n" + ast.unparse(ast.fix_missing_locations(module)) + "\n"
            f.write(json.dumps({"id": f"stdlib/{rel}:{fn.name}", "code": code}) + "\n")
    print(f"{min(count, len(found[offset::step]))} snippets of {len(found)} functions -> {out}",
          file=sys.stderr)


def run(path, ldb, flags):
    sums = {"set": 0.0, "as_is": 0.0}
    n = 0
    full = 0
    for line in open(path):
        rec = json.loads(line)
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as t:
            t.write(rec["code"])
        try:
            p = subprocess.run([ldb, "exec", t.name, "--no-model", "--format", "json", "-q", *flags],
                               capture_output=True, text=True, timeout=300)
        finally:
            os.unlink(t.name)
        if p.returncode not in (0, 1) or not p.stdout.strip():
            print(f"{rec['id']}: ldb exited {p.returncode}: {p.stderr.strip()[:200]}", file=sys.stderr)
            continue
        report = json.loads(p.stdout)
        cov = lambda c: (c["covered"] / c["total"]) if c.get("total") else 0.0
        s, a = cov(report["set_coverage"]), cov(report["as_is"]["coverage"])
        sums["set"] += s
        sums["as_is"] += a
        full += s >= 1.0
        n += 1
        print(f"{rec['id']}\t{s:.3f}\t{a:.3f}")
    if n:
        print(f"records {n}: minimal set {100 * sums['set'] / n:.1f}%, as is "
              f"{100 * sums['as_is'] / n:.1f}%, fully covered {full}")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "make":
        count = int(sys.argv[sys.argv.index("--count") + 1]) if "--count" in sys.argv else 60
        offset = int(sys.argv[sys.argv.index("--offset") + 1]) if "--offset" in sys.argv else 0
        make(sys.argv[2], count, offset)
    elif len(sys.argv) >= 4 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
