#!/usr/bin/env python3
"""Compare two `h5loom bench` result directories (before / after a change,
run on the same machine in the same session): for every kernel, engine and
rank count, the write and read bandwidth as a ratio to plain POSIX measured in
the same run (which cancels most of a shared machine's drift), before and
after, and after / before. iotest rows are summarised by their median over the
sweep's cases.

    python3 tools/bench_compare.py BEFORE_DIR AFTER_DIR     (each with np*/KERNEL.csv)
"""
import argparse
import csv
import pathlib
import statistics
from collections import defaultdict


def load(root):
    """{(kernel, engine, ranks): (write-ratio, read-ratio)}; iotest as medians over its cases."""
    out = {}
    for path in sorted(pathlib.Path(root).glob("np*/*.csv")):
        rows = list(csv.DictReader(open(path)))
        if not rows:
            continue
        kernel = path.stem
        ranks = path.parent.name[2:]
        groups = defaultdict(list)
        for r in rows:
            groups[(kernel, r["engine"].strip(), r.get("ranks", ranks))].append(r)
        for key, rs in groups.items():
            out[key] = (statistics.median(float(r["write-ratio"]) for r in rs),
                        statistics.median(float(r["read-ratio"]) for r in rs))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    args = ap.parse_args(argv)
    before, after = load(args.before), load(args.after)
    print("| kernel | engine | ranks | write/POSIX before | after | after/before | read/POSIX before | after | after/before |")
    print("|---|---|---|---|---|---|---|---|---|")
    changes = []
    for key in sorted(set(before) & set(after)):
        (wb, rb), (wa, ra) = before[key], after[key]
        changes.append((wa / wb, ra / rb))
        print(f"| {key[0]} | {key[1]} | {key[2]} | {wb:.2f} | {wa:.2f} | {wa / wb:.2f} | {rb:.2f} | {ra:.2f} | {ra / rb:.2f} |")
    if changes:
        w = [c[0] for c in changes]
        r = [c[1] for c in changes]
        print(f"\nafter/before over {len(changes)} rows: write median {statistics.median(w):.2f} "
              f"(min {min(w):.2f}, max {max(w):.2f}); read median {statistics.median(r):.2f} "
              f"(min {min(r):.2f}, max {max(r):.2f})")


if __name__ == "__main__":
    main()
