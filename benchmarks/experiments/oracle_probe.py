#!/usr/bin/env python3
"""Can the model say what a call owes where the visible tests do not pin it?

Where a student's program passes the visible tests and fails the hidden ones, it answers some
call differently from the instructor's reference. Asked which answer the call owes (the task's
text and its visible tests given, no program), a model that knows would be a source of expected
answers the tests lack (Refactory's question 2: `unique_day("3", ...)` on a day nobody has).

For each task of the development sample (`refactory_sample.py dev`) of the given questions, the
seed runs on every hidden assert's call (locally, in a subprocess with a timeout: this is an
analysis of a benchmark, not ldb's sandbox); where its answer differs from the expected one, the
model is asked through an OpenAI-compatible endpoint (`ldb serve` for the embedded model):
- `choice`: "which does CALL return: A or B?", asked twice with the two answers in both orders;
  an answer counts only when both orders give it;
- `free`: "complete `assert CALL == `", the value parsed from the reply.

Usage: benchmarks/experiments/oracle_probe.py --base-url http://127.0.0.1:8199/v1 [--questions 1,2]
       [--limit 12] [--forms choice,free] [--data target/datasets/refactory/tasks.jsonl]
Prints one line per question asked and a table per form. Hidden tests are read here only to
score the model's answers; they are what the probe measures against, never what ldb sends.
"""
import argparse
import ast
import collections
import json
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import refactory_sample  # noqa: E402


def answers(program, prelude, calls):
    """The program's answer to each call, as repr, or `<Error>`; None if it did not run."""
    src = program + "\n" + prelude + "\nimport json\n_res = []\n"
    for c in calls:
        src += (f"try:\n    _res.append(repr({c}))\nexcept Exception as e:\n"
                f"    _res.append('<' + type(e).__name__ + '>')\n")
    src += "print(json.dumps(_res))\n"
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
    try:
        out = subprocess.run([sys.executable, f.name], capture_output=True, text=True, timeout=5)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except Exception:
        return None
    finally:
        Path(f.name).unlink(missing_ok=True)


def ask(base_url, content):
    body = json.dumps({"model": "default", "temperature": 0, "max_tokens": 16,
                       "messages": [{"role": "user", "content": content}]}).encode()
    req = urllib.request.Request(base_url.rstrip("/") + "/chat/completions", body,
                                 {"Content-Type": "application/json"})
    reply = json.loads(urllib.request.urlopen(req, timeout=600).read())
    return reply["choices"][0]["message"]["content"].strip()


def value(text):
    """The Python value a reply names, as repr, or None."""
    text = text.strip().strip("`").strip()
    if "==" in text:
        text = text.split("==")[-1].strip()
    text = text.splitlines()[0] if text else text
    try:
        return repr(ast.literal_eval(text))
    except Exception:
        return None


def same(a, b):
    """Whether two answers (reprs) compare equal, as the hidden assert compares them."""
    try:
        return ast.literal_eval(a) == ast.literal_eval(b)
    except Exception:
        return a == b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--questions", default="1,2")
    ap.add_argument("--limit", type=int, default=12, help="tasks per question")
    ap.add_argument("--forms", default="choice,free")
    ap.add_argument("--data", default="target/datasets/refactory/tasks.jsonl")
    args = ap.parse_args()
    tasks = {}
    with open(args.data) as f:
        for line in f:
            t = json.loads(line)
            tasks[t["task_id"]] = t
    dev = refactory_sample.sample(args.data, refactory_sample.REPORT_SIZE, "dev")
    forms = args.forms.split(",")
    tally = {form: collections.Counter() for form in forms}
    for q in args.questions.split(","):
        asked_tasks = 0
        for task_id in dev:
            t = tasks[task_id]
            if t["question"] != f"question_{q}" or asked_tasks >= args.limit:
                continue
            hidden = t["hidden_tests"]
            prelude, _, body = hidden.partition("def check(candidate):")
            visible = {v.strip()[len("assert "):] for v in t["visible_tests"]}
            pairs = []
            for line in body.splitlines():
                line = line.strip()
                if not line.startswith("assert ") or " == " not in line:
                    continue
                call, expected = line[len("assert "):].rsplit(" == ", 1)
                if f"{call} == {expected}" not in visible:
                    pairs.append((call, repr(ast.literal_eval(expected))))
            got = answers(t["seed"] or "", prelude, [c for c, _ in pairs])
            if got is None:
                continue
            wrong = [(c, e, g) for (c, e), g in zip(pairs, got)
                     if not g.startswith("<") and not same(g, e)]
            if not wrong:
                continue
            asked_tasks += 1
            head = (t["prompt"].strip() + "\n\n# These hold:\n" + "\n".join(t["visible_tests"])
                    + "\n\n")
            for call, expected, given in wrong:
                # The global the hidden tests use is spelled out: the model never saw it.
                shown = call
                for name_value in prelude.strip().splitlines():
                    name, _, val = name_value.partition(" = ")
                    if name and val:
                        shown = shown.replace(name.strip(), val.strip())
                results = []
                if "choice" in forms:
                    picks = [value(ask(args.base_url, head + f"Which does `{shown}` return: "
                                       f"`{a}` or `{b}`? Answer with the value only."))
                             for a, b in ((expected, given), (given, expected))]
                    right = [p is not None and same(p, expected) for p in picks]
                    verdict = ("right" if right == [True, True] else
                               "wrong" if picks == [given, given] else
                               "first offered" if right == [True, False] else
                               "second offered" if right == [False, True] else "other")
                    tally["choice"][verdict] += 1
                    results.append(f"choice: {verdict}")
                if "free" in forms:
                    v = value(ask(args.base_url, head + "Complete this assert with the value the "
                                  f"call must return. Answer with the value only.\n"
                                  f"assert {shown} == "))
                    verdict = ("right" if v is not None and same(v, expected) else
                               "wrong" if v is not None and same(v, given) else "other")
                    tally["free"][verdict] += 1
                    results.append(f"free: {verdict} ({v})")
                print(f"{task_id}  {call[:60]}  owes {expected}, the seed answers {given}  "
                      + "; ".join(results), flush=True)
    for form in forms:
        n = sum(tally[form].values())
        print(f"\n| {form} | questions | " + " | ".join(sorted(tally[form])) + " |")
        print("|---|---:|" + "---:|" * len(tally[form]))
        print(f"| {form} | {n} | " + " | ".join(str(tally[form][k]) for k in sorted(tally[form]))
              + " |")


if __name__ == "__main__":
    main()
