#!/usr/bin/env python3
"""Fail (exit 1, naming it) on a file or directory under benchmarks/results that no table cites.

A result is cited when `benchmarks/RESULTS.md` or `docs/history.md` names it: by its name, or by
a pattern written in a command or a sentence there (`verify-*`, `standins{2,4}.tsv`,
`$set-exec-site.jsonl`). The index `benchmarks/results/README.md` must list every result too,
but listing is not citing: a result only the index names is an orphan. The one exception is a
result a long-running measurement is still writing (`repair-*`, `locate-*.jsonl`,
`patch-*.jsonl`): the index may list it as "in progress" until a table cites it.

The units are the entries of benchmarks/results, except that the files of a directory in
COLLECTIONS are results of their own (`check/` holds one file per set and mode); a `.md` summary
beside a `.jsonl` of the same name is cited with it. Git history keeps what is deleted.

Code comments cite sections the same way (`benchmarks/RESULTS.md, "A tied vote"`,
`docs/history.md, "..."`): each must name a heading of that file (its start, ignoring case and
punctuation), so a section that moves or is renamed is caught.
"""
import fnmatch
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
CITING = [ROOT / "benchmarks" / "RESULTS.md", ROOT / "docs" / "history.md"]
INDEX = RESULTS / "README.md"
COLLECTIONS = {"check"}
IN_PROGRESS = ["repair-*", "locate-*.jsonl", "patch-*.jsonl"]


def units():
    for entry in sorted(RESULTS.iterdir()):
        if entry == INDEX:
            continue
        if entry.is_dir() and entry.name in COLLECTIONS:
            for f in sorted(entry.iterdir()):
                yield f"{entry.name}/{f.name}", f.name
        else:
            yield entry.name, entry.name


def named(name, text):
    return re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", text) is not None


def patterns(text):
    """The glob-like names in `text`, braces expanded and `$var` as `*`."""
    out = set()
    for token in re.findall(r"[\w.\-*{},$]+", text):
        if not any(c in token for c in "*{$"):
            continue
        token = re.sub(r"\$\w+", "*", token).strip(",.")
        expanded = [token]
        m = re.search(r"\{([^{}]*)\}", token)
        if m:
            expanded = [token[: m.start()] + alt + token[m.end():] for alt in m.group(1).split(",")]
        for pat in expanded:
            if len(re.sub(r"[*?\[\]{},]", "", pat)) >= 6:
                out.add(pat)
    return out


def cited(name, text, pats):
    names = [name]
    if name.endswith(".md"):
        names.append(name[:-3] + ".jsonl")
    return any(named(n, text) or any(fnmatch.fnmatchcase(n, p) for p in pats) for n in names)


def words(title):
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", title.lower()).split())


def code_citations():
    """Problems with the sections code comments cite."""
    headings = {
        p.name: [words(line.lstrip("#")) for line in p.read_text().splitlines()
                 if line.startswith("#")]
        for p in CITING
    }
    problems = []
    for f in sorted((ROOT / "src").rglob("*.rs")) + sorted((ROOT / "benchmarks").glob("*.rs")):
        # The comments' text joined, so a title may wrap to the next comment line.
        text = " ".join(
            m.group(1) if m else "\n"
            for m in (re.match(r"\s*//[/!]?\s?(.*)", line) for line in f.read_text().splitlines())
        )
        for m in re.finditer(r"(RESULTS|history)\.md,\s*\"([^\"]+)\"", text):
            doc = m.group(1) + ".md"
            title = words(m.group(2))
            if not any(h.startswith(title) for h in headings.get(doc, [])):
                problems.append(
                    f"{f.relative_to(ROOT)}: cites {doc}, \"{m.group(2)}\", which has no such "
                    "section (where did it move?)"
                )
    return problems


def main():
    text = "\n".join(p.read_text() for p in CITING)
    pats = patterns(text)
    index = INDEX.read_text() if INDEX.exists() else ""
    problems = []
    for path, name in units():
        listed = [line for line in index.splitlines() if named(name, line)]
        if not listed:
            problems.append(f"benchmarks/results/{path}: not listed in {INDEX.relative_to(ROOT)}")
        if cited(name, text, pats):
            continue
        running = any(fnmatch.fnmatchcase(name, p) for p in IN_PROGRESS)
        if running and any("in progress" in line for line in listed):
            continue
        problems.append(
            f"benchmarks/results/{path}: an orphan, cited by neither benchmarks/RESULTS.md nor "
            "docs/history.md (cite it in a table, or `git rm` it: git history keeps it)"
        )
    have = {path for path, _ in units()} | {p for p in COLLECTIONS}
    for listed in re.findall(r"^\|\s*`([^`]+)`", index, re.M):
        if listed.rstrip("/") not in have:
            problems.append(f"{INDEX.relative_to(ROOT)} lists `{listed}`, which is not there")
    problems += code_citations()
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
