#!/usr/bin/env python3
"""The tasks whose given program the name edits of `mutate` can touch: a function that updates a
name it never gives a start (`count += 1` with no `count = 0`), reads a name nothing binds, or
binds a name in a comprehension, a lambda or `:=`. Edits alone (no model) of any other program
are the same with and without those edits, so a comparison of two builds runs on these tasks.

Usage: benchmarks/experiments/edit_names_tasks.py TASKS.jsonl IDS

IDS: comma-separated task ids (e.g. `python3 benchmarks/refactory_sample.py report ...`).
Prints the ids among them that qualify, comma-separated, and on stderr how many of each kind.
Nothing is written.
"""
import ast
import builtins
import collections
import json
import sys

BUILTINS = set(dir(builtins))


def targets(node):
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, (ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [i.optional_vars for i in node.items if i.optional_vars]
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        return [g.target for g in node.generators]
    return []


def names(node):
    return {m.id for m in ast.walk(node) if isinstance(m, ast.Name)}


def kinds(source):
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    module = set()
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            module.add(n.name)
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                module |= names(t)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            module |= {(a.asname or a.name).split(".")[0] for a in n.names}
    out = set()
    for f in ast.walk(tree):
        if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = f.args
        params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
        params |= {x.arg for x in (a.vararg, a.kwarg) if x}
        stored, plain, updated, own, declared = set(params), set(params), set(), set(), set()
        for n in ast.walk(f):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                stored.add(n.id)
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                stored |= {(x.asname or x.name).split(".")[0] for x in n.names}
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stored.add(n.name)
            if isinstance(n, ast.ExceptHandler) and n.name:
                stored.add(n.name)
            if isinstance(n, (ast.Global, ast.Nonlocal)):
                declared |= set(n.names)
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                updated.add(n.target.id)
            for t in targets(n):
                plain |= names(t)
            if isinstance(n, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                for g in n.generators:
                    own |= names(g.target)
            if isinstance(n, ast.Lambda):
                own |= {x.arg for x in n.args.args}
            if isinstance(n, ast.NamedExpr):
                own.add(n.target.id)
        if updated - plain - declared:
            out.add("start")
        loads = {n.id for n in ast.walk(f) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if loads - stored - module - BUILTINS - own:
            out.add("undefined")
        if own:
            out.add("comprehension")
    return out


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    wanted = set(argv[1].split(","))
    found, counts = [], collections.Counter()
    for line in open(argv[0]):
        task = json.loads(line)
        if task["task_id"] not in wanted:
            continue
        k = kinds(task.get("seed") or "")
        if k:
            found.append(task["task_id"])
            counts.update(k)
    print(",".join(found))
    print(f"{len(found)} of {len(wanted)} tasks: {dict(counts)}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
