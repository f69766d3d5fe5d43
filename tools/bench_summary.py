#!/usr/bin/env python3
"""Summarise an `h5loom bench iotest` CSV: per engine, the write and read
bandwidth as a ratio to plain POSIX (min / median / max over the cases), and,
case by case, each engine's read and write time against a reference engine.

    python3 tools/bench_summary.py iotest.csv [--reference hdf5]
    python3 tools/bench_summary.py iotest.csv --reference "HDF5 native"   # after --api hdf5
"""
import argparse
import csv
import statistics
import sys
from collections import defaultdict

CASE_KEYS = ["steps", "arrays", "rows", "cols", "scaling", "proc-rows", "proc-cols", "slowdim", "rank", "layout",
             "alignment-increment", "alignment-threshold", "meta-block-size", "fill", "fmt", "io"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--reference", default="hdf5", help="engine the others are compared with (default hdf5)")
    args = ap.parse_args(argv)
    rows = list(csv.DictReader(open(args.csv)))
    if not rows:
        sys.exit(f"{args.csv}: no rows")
    by_engine = defaultdict(list)
    for r in rows:
        by_engine[r["engine"]].append(r)

    def stats(values):
        return f"{min(values):5.2f} {statistics.median(values):6.2f} {max(values):5.2f}"

    print(f"{'engine':40} {'cases':>5}  write/POSIX min med max  read/POSIX min med max  "
          "write s: median, slowest/fastest")
    for engine, rs in by_engine.items():
        wt = [float(r["write-phase-max [s]"]) for r in rs]
        print(f"{engine:40} {len(rs):5}  {stats([float(r['write-ratio']) for r in rs]):>22}  "
              f"{stats([float(r['read-ratio']) for r in rs]):>21}  {statistics.median(wt):.4f}, {max(wt) / min(wt):.1f}x")

    # Pair cases by position among cases with the same shape (the sweep order is the same for every engine).
    ref_rows = by_engine.get(args.reference, [])
    for engine, rs in by_engine.items():
        if engine == args.reference or len(rs) != len(ref_rows):
            continue
        read = [float(a["read-phase-max [s]"]) / float(b["read-phase-max [s]"]) for a, b in zip(rs, ref_rows)]
        write = [float(a["write-phase-max [s]"]) / float(b["write-phase-max [s]"]) for a, b in zip(rs, ref_rows)]
        print(f"\n{engine} against {args.reference}, case by case (time ratio; < 1 is faster):")
        print(f"  write time: min {min(write):.2f}  median {statistics.median(write):.2f}  max {max(write):.2f}")
        print(f"  read time:  min {min(read):.2f}  median {statistics.median(read):.2f}  max {max(read):.2f}")


if __name__ == "__main__":
    main()
