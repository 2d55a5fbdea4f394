#!/usr/bin/env python3
"""The embedded model's speed inside the search, read off a run's own model calls.

Usage: benchmarks/call_speed.py RUN_DIR [RUN_DIR ...]

RUN_DIR is an `ldb eval --out` directory with its per-task reports (`reports/`; compaction
removes them, so run this first, or on a commit that holds the run whole). Every model call
a report records has its prompt tokens evaluated (not cached), its reply tokens and its
latency; a least-squares fit of latency = evaluated / P + generated / G + C over the calls gives
P and G, the prompt and generation speed as the search saw them (sampling, the stop rules and
the channel to the model's thread included), to set beside llama.cpp's own figure for the model
and threads (`cargo bench --bench model_profile`). Calls drawn together in one batch
(`--parallel-samples`) share one latency and are left out. Nothing is written.
"""
import json
import sys
from collections import Counter
from pathlib import Path


def calls(run_dir):
    for report in sorted(Path(run_dir).glob("reports/*/*.json")):
        for task in json.loads(report.read_text()).get("tasks", []):
            for it in task.get("iterations", []):
                group = it.get("calls", [])
                shared = Counter(c["latency_ms"] for c in group)
                for c in group:
                    if shared[c["latency_ms"]] > 1 or c.get("cached"):
                        continue
                    yield (
                        c["prompt_tokens"] - c["cached_prompt_tokens"],
                        c["completion_tokens"],
                        c["latency_ms"] / 1000,
                    )


def fit(rows):
    """Least squares of y on (p, g, 1) by the normal equations."""
    x = [(p, g, 1.0) for p, g, _ in rows]
    y = [t for *_, t in rows]
    m = [[sum(r[i] * r[j] for r in x) for j in range(3)] + [sum(r[i] * t for r, t in zip(x, y))]
         for i in range(3)]
    for i in range(3):
        pivot = max(range(i, 3), key=lambda r: abs(m[r][i]))
        m[i], m[pivot] = m[pivot], m[i]
        if m[i][i] == 0:
            return None
        for r in range(3):
            if r != i:
                f = m[r][i] / m[i][i]
                m[r] = [a - f * b for a, b in zip(m[r], m[i])]
    return [m[i][3] / m[i][i] for i in range(3)]


def main(argv):
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for run_dir in argv:
        rows = list(calls(run_dir))
        coef = fit(rows) if len(rows) >= 3 else None
        if not coef or coef[0] <= 0 or coef[1] <= 0:
            print(f"{run_dir}: {len(rows)} calls, too few or too alike to fit", file=sys.stderr)
            continue
        print(
            f"{run_dir}: {len(rows)} calls, {sum(r[0] for r in rows):,} prompt tokens evaluated, "
            f"{sum(r[1] for r in rows):,} generated, {sum(r[2] for r in rows):,.0f} s: "
            f"prompt {1 / coef[0]:.1f} tok/s, generation {1 / coef[1]:.1f} tok/s, "
            f"{coef[2] * 1000:.0f} ms a call besides"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
