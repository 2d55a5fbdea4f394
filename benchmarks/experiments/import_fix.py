#!/usr/bin/env python3
"""Seeds of LDB's seed files that fail their visible tests only for an import they left out.

For each seed: run it with its visible tests; while that ends in `NameError: name 'm' is not
defined` for an importable module `m`, add `import m` and run again. Prints, per seed file, the
seeds that needed an import, how many then pass the visible tests, and how many of those pass
the hidden ones (the program with the imports, scored as LDB scores it). A probe of how often
the rule of `missing-imports.md` can act; ldb's own edit resolves names through its table of the
standard library (abbreviations and bare names too), not through the interpreter.

    python3 benchmarks/experiments/import_fix.py ../shared/datasets/ldb/*/seed/*/seed.jsonl
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile


def run(src):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
        path = f.name
    try:
        r = subprocess.run([sys.executable, path], capture_output=True, timeout=10, text=True)
        return r.returncode == 0, r.stderr
    except subprocess.TimeoutExpired:
        return False, "TIMEOUT"
    finally:
        os.unlink(path)


for path in sys.argv[1:]:
    needed, visible, hidden = 0, 0, []
    for line in open(path):
        t = json.loads(line)
        tests = "\n".join(t.get("given_tests") or [])
        if not tests:
            continue
        imports, ok = "", False
        for _ in range(4):
            ok, err = run(imports + t["solution"] + "\n" + tests)
            m = re.search(r"NameError: name '(\w+)' is not defined", err)
            if ok or not m or importlib.util.find_spec(m.group(1)) is None:
                break
            imports += f"import {m.group(1)}\n"
        if not imports:
            continue
        needed += 1
        if ok:
            visible += 1
            check = f"{t['test']}\ncheck({t['entry_point']})\n"
            if run(imports + t["solution"] + "\n" + check)[0]:
                hidden.append(t["task_id"])
    name = "/".join(path.split("/")[-4:-1])
    print(f"{name}: {needed} need an import; {visible} then pass the visible tests, "
          f"{len(hidden)} the hidden ones {hidden}")
