#!/usr/bin/env python3
"""Draw the crate's import graph between its top-level modules (Graphviz DOT on stdout).

Usage: scripts/import_graph.py [SRC_DIR] [--layers "a b;c;d e"] > graph.dot
       dot -Tsvg graph.dot > graph.svg

An arrow A -> B means code in A names B (`use crate::B`, a `crate::B::` path, or `super::`
resolved to B); comments and `#[cfg(test)] mod tests` blocks are not counted. Modules are drawn
in layers, lowest at the bottom: the foundation, then the pipeline's stages in order, then the
tools built on them. An arrow that climbs (from a module to one in a higher layer) is drawn red;
so is every arrow of a cycle. The summary on stderr counts both; tests/import_cycles.rs keeps
them at zero.
"""
import re
import sys
from collections import defaultdict
from pathlib import Path

# Lowest first, one layer a line (shared with tests/it/import_cycles.rs). A module missing there is
# drawn in its own layer at the top, and reported.
LAYERS_FILE = Path(__file__).resolve().parent.parent / "docs" / "architecture" / "layers.txt"


def read_layers(path: Path) -> list:
    lines = (l.split("#", 1)[0].split() for l in path.read_text().splitlines())
    return [names for names in lines if names]


def strip(text: str) -> str:
    text = text.split("#[cfg(test)]\nmod tests", 1)[0]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    # Line comments, but not `//` inside string literals such as URLs.
    out = []
    for line in text.splitlines():
        in_str = False
        cut = len(line)
        i = 0
        while i < len(line) - 1:
            c = line[i]
            if c == "\\" and in_str:
                i += 2
                continue
            if c == '"':
                in_str = not in_str
            elif not in_str and line.startswith("//", i):
                cut = i
                break
            i += 1
        out.append(line[:cut])
    return "\n".join(out)


def module_of(src: Path, file: Path) -> list:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts and parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return parts


def brace_heads(text: str, start: int) -> list:
    """First identifiers of the comma-separated items of the `{...}` group opening at `start`."""
    depth, item, heads = 0, "", []
    for c in text[start:]:
        if c == "{":
            depth += 1
            if depth == 1:
                continue
        elif c == "}":
            depth -= 1
            if depth == 0:
                heads.append(item)
                break
        if depth == 1 and c == ",":
            heads.append(item)
            item = ""
        elif depth >= 1:
            item += c
    names = []
    for h in heads:
        m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)", h)
        if m:
            names.append(m.group(1))
    return names


def top_level_deps(src: Path) -> dict:
    deps = defaultdict(set)
    for file in sorted(src.rglob("*.rs")):
        module = module_of(src, file)
        if not module:
            continue
        top = module[0]
        text = strip(file.read_text())
        named = []
        for m in re.finditer(r"\bcrate::", text):
            rest = text[m.end():]
            if rest.startswith("{"):
                named += brace_heads(text, m.end())
            else:
                head = re.match(r"[A-Za-z_][A-Za-z0-9_]*", rest)
                if head:
                    named.append(head.group(0))
        for m in re.finditer(r"\b((?:super::)+)", text):
            ups = m.group(1).count("super::")
            # A file module's `super` is its parent; mod.rs counts as the directory.
            target = module[: len(module) - ups]
            if target:
                named.append(target[0])
            else:
                rest = text[m.end():]
                head = re.match(r"[A-Za-z_][A-Za-z0-9_]*", rest)
                if head:
                    named.append(head.group(0))
        for name in named:
            is_module = (src / name).is_dir() or (src / f"{name}.rs").exists()
            if name != top and is_module:
                deps[top].add(name)
        deps.setdefault(top, set())
    return deps


def cycles(deps: dict) -> set:
    """Edges that lie on a cycle (both ends in one strongly connected component)."""
    index, low, stack, on, comp, counter = {}, {}, [], set(), {}, [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in deps.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            while True:
                w = stack.pop()
                on.discard(w)
                comp[w] = v
                if w == v:
                    break

    for v in list(deps):
        if v not in index:
            visit(v)
    return {(a, b) for a in deps for b in deps[a] if comp.get(a) == comp.get(b)}


def main():
    args = sys.argv[1:]
    layers = read_layers(LAYERS_FILE)
    if "--layers" in args:
        i = args.index("--layers")
        layers = [group.split() for group in args[i + 1].split(";")]
        del args[i : i + 2]
    src = Path(args[0] if args else "src")
    deps = top_level_deps(src)
    layer = {m: i for i, ms in enumerate(layers) for m in ms}
    unknown = sorted(m for m in deps if m not in layer)
    for m in unknown:
        layer[m] = len(layers)
    looped = cycles(deps)
    up = {(a, b) for a in deps for b in deps[a] if layer[b] > layer[a]}
    print("digraph imports {")
    print('  rankdir=BT; node [shape=box, fontname="Helvetica"]; edge [color="#777777"];')
    print('  labelloc=t; fontname="Helvetica";')
    print('  label="ldb: imports between the top-level modules of src/ (A -> B: A uses B)";')
    for i in range(len(layers) + 1):
        members = [m for m in sorted(deps) if layer[m] == i]
        if members:
            print(f"  {{ rank=same; {'; '.join(members)} }}")
    # Invisible arrows between consecutive layers give each layer its own row, in order.
    rows = [[m for m in sorted(deps) if layer[m] == i] for i in range(len(layers) + 1)]
    rows = [r for r in rows if r]
    for low, high in zip(rows, rows[1:]):
        print(f"  {low[0]} -> {high[0]} [style=invis]")
    for a in sorted(deps):
        for b in sorted(deps[a]):
            bad = (a, b) in up or (a, b) in looped
            # Drawn from the lower module up to the user, so the layers stack bottom-up.
            style = ' [color=red, penwidth=2, constraint=false]' if bad else ""
            print(f"  {b} -> {a} [dir=back]{style}" if not bad else f"  {a} -> {b}{style}")
    print("}")
    print(
        f"{len(deps)} modules, {sum(len(v) for v in deps.values())} arrows, "
        f"{len(up)} climbing ({', '.join(f'{a}->{b}' for a, b in sorted(up)) or 'none'}), "
        f"{len(looped)} on a cycle ({', '.join(f'{a}->{b}' for a, b in sorted(looped)) or 'none'})"
        + (f"; not in a layer: {', '.join(unknown)}" if unknown else ""),
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
