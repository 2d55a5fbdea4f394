#!/usr/bin/env python3
"""Fail (exit 1, naming each problem) where the benchmark results and their citations disagree.

- Every file or directory under benchmarks/results backs a table of `benchmarks/RESULTS.md`: the
  page names it, by its name or by a pattern written in a command or a sentence there
  (`locate-{humaneval,mbpp}.jsonl`, `$R-ship`). A result no current table cites is an orphan: git
  history keeps it, and an experiments page (benchmarks/experiments/) names it with the commit
  that holds it. The index `benchmarks/results/README.md` lists every result, and only results
  that are there; listing is not citing. The one exception is a result a long-running
  measurement is still writing (`repair-*`, `locate-*.jsonl`, `patch-*.jsonl`): the index may
  list it as "in progress" until a table cites it. A result git ignores is not looked at.
- Results are kept compact (benchmarks/compact_results.py): no `reports/` folder, no
  `*.samples.jsonl` or chart, no task record with its `candidate_log` or a whole program.
- `benchmarks/RESULTS.md` holds the current figures only: 30 KiB at most.
- Code comments (src/, benchmarks/*.rs) cite sections the same way (`benchmarks/RESULTS.md, "A
  section"`, `docs/history.md, "..."`) or an experiments page (`benchmarks/experiments/NAME.md`,
  optionally followed by `, "A section"`): the page must exist and the title must start a heading
  of it (ignoring case and punctuation), so a section that moves or is renamed is caught.
- Links between the documentation's pages (README.md, docs/, benchmarks/) reach a file that
  exists and, with `#anchor`, a heading of it.

The units are the entries of benchmarks/results, except that the files of a directory in
COLLECTIONS are results of their own (`check/` holds one file per set and mode, `ldb-table/` one
run directory per cell); a `.md` summary
beside a `.jsonl` of the same name is cited with it.
"""
import fnmatch
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
RESULTS_MD = ROOT / "benchmarks" / "RESULTS.md"
HISTORY = ROOT / "docs" / "history.md"
EXPERIMENTS = ROOT / "benchmarks" / "experiments"
INDEX = RESULTS / "README.md"
COLLECTIONS = {"check", "ldb-table"}
IN_PROGRESS = ["repair-*", "locate-*.jsonl", "patch-*.jsonl"]
MAX_RESULTS_MD = 30 * 1024


def ignored(paths):
    """The paths (relative to ROOT) git ignores; none when git is not there."""
    if not paths:
        return set()
    try:
        out = subprocess.run(
            ["git", "check-ignore", "--stdin"], cwd=ROOT, input="\n".join(paths),
            capture_output=True, text=True,
        )
    except OSError:
        return set()
    return set(out.stdout.split())


def units():
    entries = [e for e in sorted(RESULTS.iterdir()) if e != INDEX]
    skip = ignored([str(e.relative_to(ROOT)) for e in entries])
    for entry in entries:
        if str(entry.relative_to(ROOT)) in skip:
            continue
        if entry.is_dir() and entry.name in COLLECTIONS:
            files = sorted(entry.iterdir())
            # A cell a long run is still writing may be ignored (not yet committed).
            inner = ignored([str(f.relative_to(ROOT)) for f in files])
            for f in files:
                if str(f.relative_to(ROOT)) not in inner:
                    yield f"{entry.name}/{f.name}", f.name, f
        else:
            yield entry.name, entry.name, entry


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


def not_compact(path, unit):
    """Why a result is not in compact form (benchmarks/compact_results.py), or None."""
    if path.is_dir():
        for extra in sorted(path.glob("reports*")) + sorted(path.glob("*.samples.jsonl")) \
                + sorted(path.glob("*.svg")):
            return f"holds {extra.name}"
        files = sorted(path.glob("*.jsonl"))
    elif path.name.startswith("exec-") and path.suffix == ".jsonl":
        files = [path]
    else:
        return None
    for f in files:
        for line in f.read_text().splitlines():
            if '"candidate_log"' not in line and '"final_program"' not in line \
                    and '"best_prefix"' not in line and '"program"' not in line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if r.get("candidate_log"):
                return f"{f.name} keeps candidate logs"
            for key in ("final_program", "best_prefix", "program"):
                v = r.get(key)
                if isinstance(v, str) and not v.startswith("sha256:"):
                    return f"{f.name} keeps whole programs (`{key}`)"
    return None


def words(title):
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", title.lower()).split())


def headings(path):
    """The headings of a markdown file (outside code blocks)."""
    out, fenced = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            out.append(line.lstrip("#").strip())
    return out


def slug(title):
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def code_citations():
    """Problems with the sections and pages code comments cite."""
    docs = {"RESULTS.md": RESULTS_MD, "history.md": HISTORY}
    problems = []
    for f in sorted((ROOT / "src").rglob("*.rs")) + sorted((ROOT / "benchmarks").glob("*.rs")):
        # The comments' text joined, so a title may wrap to the next comment line.
        text = " ".join(
            m.group(1) if m else "\n"
            for m in (re.match(r"\s*//[/!]?\s?(.*)", line) for line in f.read_text().splitlines())
        )
        cites = [(m.group(1) + ".md", docs[m.group(1) + ".md"], m.group(2))
                 for m in re.finditer(r"(RESULTS|history)\.md,\s*\"([^\"]+)\"", text)]
        for m in re.finditer(r"benchmarks/experiments/([\w.-]+\.md)(?:,\s*\"([^\"]+)\")?", text):
            page = EXPERIMENTS / m.group(1)
            if not page.exists():
                problems.append(f"{f.relative_to(ROOT)}: cites benchmarks/experiments/"
                                f"{m.group(1)}, which is not there")
            elif m.group(2):
                cites.append((f"experiments/{m.group(1)}", page, m.group(2)))
        for name, doc, title in cites:
            if not any(words(h).startswith(words(title)) for h in headings(doc)):
                moved = [p for p in sorted(EXPERIMENTS.glob("*.md"))
                         if any(words(h).startswith(words(title)) for h in headings(p))]
                where = (f"it moved to benchmarks/experiments/{moved[0].name}: cite that"
                         if moved else "where did it move?")
                problems.append(
                    f"{f.relative_to(ROOT)}: cites {name}, \"{title}\", which has no such "
                    f"section ({where})"
                )
    return problems


def links():
    """Problems with the links between the documentation's pages."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "benchmarks").rglob("*.md"))]
    pages = [p for p in pages if RESULTS not in p.parents or p == INDEX]
    problems = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                problems.append(f"{page.relative_to(ROOT)}: links to {target}, which is not there")
            elif anchor and dest.suffix == ".md" and anchor not in map(slug, headings(dest)):
                problems.append(f"{page.relative_to(ROOT)}: links to {target}, a section "
                                f"{dest.name} does not have (where did it move?)")
    return problems


def main():
    text = RESULTS_MD.read_text()
    pats = patterns(text)
    index = INDEX.read_text() if INDEX.exists() else ""
    problems = []
    size = len(text.encode())
    if size > MAX_RESULTS_MD:
        problems.append(f"benchmarks/RESULTS.md: {size:,} bytes, over {MAX_RESULTS_MD:,}: it holds "
                        "the current figures only (move the rest to benchmarks/experiments/)")
    have = set(COLLECTIONS)
    for path, name, entry in units():
        have.add(path)
        listed = [line for line in index.splitlines() if named(name, line)]
        if not listed:
            problems.append(f"benchmarks/results/{path}: not listed in {INDEX.relative_to(ROOT)}")
        why = not_compact(entry, path)
        if why:
            problems.append(f"benchmarks/results/{path}: not compact ({why}): run "
                            "benchmarks/compact_results.py on it")
        if cited(name, text, pats):
            continue
        running = any(fnmatch.fnmatchcase(name, p) for p in IN_PROGRESS)
        if running and any("in progress" in line for line in listed):
            continue
        problems.append(
            f"benchmarks/results/{path}: an orphan, cited by no table of benchmarks/RESULTS.md "
            "(cite it in a table, or `git rm` it: git history keeps it, and an experiments page "
            "can name the commit)"
        )
    for listed in re.findall(r"^\|\s*`([^`]+)`", index, re.M):
        if listed.rstrip("/") not in have:
            problems.append(f"{INDEX.relative_to(ROOT)} lists `{listed}`, which is not there")
    problems += code_citations()
    problems += links()
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
