#!/usr/bin/env python3
"""Prints the conformance summary table (engine x group x ranks) from the JSON
files that each run of h5loom_conformance writes (--summary)."""
import json
import pathlib
import sys

GROUPS = ["file", "group", "dataset", "attribute", "selection", "datatype", "extend", "errors", "series"]


def cell(counts):
    if counts is None:
        return "-"
    p, f, s = counts["passed"], counts["failed"], counts["skipped"]
    if f:
        return f"FAIL {f}/{p + f + s}"
    if p == 0 and s:
        return "skipped"
    return f"ok {p}" + (f" (+{s} skip)" if s else "")


def main(directory):
    runs = []
    for path in sorted(pathlib.Path(directory).glob("summary-*.json")):
        runs.append(json.loads(path.read_text()))
    if not runs:
        print(f"conformance table: no summaries in {directory} (did the conformance runs start?)")
        return 1
    runs.sort(key=lambda r: (r["engine"], r["ranks"]))
    extra = sorted({g for r in runs for g in r.get("groups", {})} - set(GROUPS))
    groups = GROUPS + extra
    widths = [max(len("engine"), *(len(r["engine"]) for r in runs)), 5]
    cells = [[cell(r.get("groups", {}).get(g)) for g in groups] for r in runs]
    col = [max(len(g), *(len(c[i]) for c in cells)) for i, g in enumerate(groups)]
    header = f"{'engine':<{widths[0]}}  {'ranks':>5}  " + "  ".join(f"{g:<{w}}" for g, w in zip(groups, col))
    print("\nh5loom conformance: engine x group x ranks (ok N = tests passed; skip = group not declared or needs more ranks)")
    print(header)
    print("-" * len(header))
    failed = False
    for r, c in zip(runs, cells):
        failed |= any(x.startswith("FAIL") for x in c)
        print(f"{r['engine']:<{widths[0]}}  {r['ranks']:>5}  " + "  ".join(f"{x:<{w}}" for x, w in zip(c, col)))
    print()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build/conformance"))
