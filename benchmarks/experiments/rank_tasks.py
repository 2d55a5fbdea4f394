#!/usr/bin/env python3
"""Which tasks' visible tests give a rank: the reach of `harden`'s rank rule, counted per file.

Usage: benchmarks/experiments/rank_tasks.py TASKS.jsonl [TASKS.jsonl ...]

A mirror of `Rank::from_tests` (src/repair/search/rank.rs), for counting without running the
search: the visible tests (`visible_tests`, or LDB's `given_tests`) that compare a call of the
entry point (two arguments) with a literal must all compare it with the same rank of a value in
a sorted sequence (the count of elements smaller than it, or not larger), for exactly one order
of the arguments, with a value the sequence holds once and one it does not among them. An
approximation: it reads only calls inside `assert CALL == LITERAL` (the Rust rule also sees the
tests' other calls of the entry point). Prints the number of tasks read, the number with a
rank, and the first few ids.
"""

import ast
import json
import sys


def literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def sites(tests, entry):
    """(positional arguments, expected answer or None) of each asserted call of `entry`."""
    out = []
    is_entry = lambda e: (isinstance(e, ast.Call) and isinstance(e.func, ast.Name)
                          and e.func.id == entry)
    for test in tests:
        try:
            module = ast.parse(test)
        except SyntaxError:
            continue
        for stmt in module.body:
            if not isinstance(stmt, ast.Assert):
                continue
            c = stmt.test
            if not (isinstance(c, ast.Compare) and len(c.ops) == 1 and isinstance(c.ops[0], ast.Eq)):
                continue
            left, right = c.left, c.comparators[0]
            if is_entry(left):
                call, answer = left, literal(right)
            elif is_entry(right):
                call, answer = right, literal(left)
            else:
                continue
            out.append(([literal(a) for a in call.args], answer))
    return out


def key(x):
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return ("number", x)
    if isinstance(x, str):
        return ("text", x)
    return None


def value_and_sorted(args, i, j):
    if max(i, j) >= len(args):
        return None
    v, xs = key(args[i]), args[j]
    if v is None or not isinstance(xs, (list, tuple)):
        return None
    keys = [key(x) for x in xs]
    if any(k is None or k[0] != v[0] for k in keys):
        return None
    values = [k[1] for k in keys]
    if any(a > b for a, b in zip(values, values[1:])):
        return None
    return v[1], values


def fits(calls, i, j, after_equals):
    member = other = False
    for args, answer in calls:
        if answer is None:
            continue
        pair = value_and_sorted(args, i, j)
        if pair is None or not isinstance(answer, int) or isinstance(answer, bool):
            return False
        v, xs = pair
        if sum(1 for x in xs if (x <= v if after_equals else x < v)) != answer:
            return False
        if xs.count(v) == 1:
            member = True
        elif v not in xs:
            other = True
    return member and other


def rank(tests, entry):
    calls = sites(tests, entry)
    if not calls:
        return None
    arity = 2
    if any(len(args) != arity for args, _ in calls):
        return None
    found = []
    for i in range(arity):
        for j in range(arity):
            if i == j:
                continue
            before, after = fits(calls, i, j, False), fits(calls, i, j, True)
            if before != after:
                found.append((i, j, after))
    return found[0] if len(found) == 1 else None


def main(paths):
    for path in paths:
        n, hits = 0, []
        for line in open(path):
            r = json.loads(line)
            entry = r.get("entry_point")
            if not entry:
                continue
            n += 1
            if rank(r.get("visible_tests") or r.get("given_tests") or [], entry):
                hits.append(r["task_id"])
        print(f"{path}: {n} tasks, {len(hits)} with a rank {hits[:5]}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1:])
