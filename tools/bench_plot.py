#!/usr/bin/env python3
"""Plots of `h5loom bench` results (PNG, matplotlib).

    python3 tools/bench_plot.py iotest.csv [more.csv ...] -o plots/

For every iotest CSV: the write and the read time of every case of the sweep,
one line per engine (like the figures of the HDF5 connector report), and the
same as a ratio to plain POSIX. With CSVs from several rank counts (iotest or
a kernel): the median bandwidth against ranks, per engine.
"""
import argparse
import csv
import pathlib
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    return list(csv.DictReader(open(path)))


def sweep_plots(path, rows, out):
    by_engine = defaultdict(list)
    for r in rows:
        by_engine[r["engine"]].append(r)
    name = pathlib.Path(path).stem
    made = []
    for what, column, ratio in (("write", "write-phase-max [s]", "write-ratio"), ("read", "read-phase-max [s]", "read-ratio")):
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
        for engine, rs in by_engine.items():
            ax1.plot(range(len(rs)), [float(r[column]) for r in rs], marker=".", linewidth=0.8, label=engine)
            ax2.plot(range(len(rs)), [float(r[ratio]) for r in rs], marker=".", linewidth=0.8, label=engine)
        ax1.set_yscale("log")
        ax1.set_ylabel(f"{what} phase [s]")
        ax2.set_ylabel(f"{what} bandwidth / POSIX")
        ax2.axhline(1.0, color="grey", linewidth=0.5)
        ax2.set_xlabel("case of the sweep (dataset rank, slowest dimension, layout, fill, alignment, "
                       "metadata block, libver, MPI-IO)")
        ranks = int(rows[0]["proc-rows"]) * int(rows[0]["proc-cols"])
        ax1.set_title(f"{name}: {what} time per parameter combination ({ranks} ranks)")
        ax1.legend(fontsize=8)
        fig.tight_layout()
        target = out / f"{name}-{ranks}ranks-{what}.png"
        fig.savefig(target, dpi=110)
        plt.close(fig)
        made.append(target)
    return made


def scaling_plot(tables, out):
    """Bandwidth (MiB/s) of each kernel against ranks, per engine (iotest CSVs have their own plots)."""
    series = defaultdict(dict)  # (bench, engine, what) -> {ranks: MiB/s}
    for rows in tables:
        for engine in {r["engine"] for r in rows}:
            rs = [r for r in rows if r["engine"] == engine]
            if "kernel" not in rs[0]:
                continue
            bench, ranks = rs[0]["kernel"], int(rs[0]["ranks"])
            mib = int(rs[0]["bytes"]) / 1048576
            w = statistics.median(mib / float(r["write [s]"]) for r in rs)
            rd = statistics.median(mib / float(r["read [s]"]) for r in rs)
            series[(bench, engine, "write")][ranks] = w
            series[(bench, engine, "read")][ranks] = rd
    if not any(len(v) > 1 for v in series.values()):
        return []
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    benches = sorted({b for b, _, _ in series})
    colours = {b: plt.cm.tab10(i % 10) for i, b in enumerate(benches)}
    ranks_seen = set()
    for (bench, engine, what), pts in sorted(series.items()):
        ax = axes[0 if what == "write" else 1]
        xs = sorted(pts)
        ranks_seen.update(xs)
        ax.plot(xs, [pts[x] for x in xs], marker="o", color=colours[bench],
                linestyle="-" if engine == "hdf5" else "--", label=f"{bench} {engine}")
    for ax, what in zip(axes, ("write", "read")):
        ax.set_xlabel("ranks")
        ax.set_xticks(sorted(ranks_seen))
        ax.set_yscale("log")
        ax.set_ylabel(f"{what} bandwidth [MiB/s]")
        ax.set_title(f"kernels: {what} (solid hdf5, dashed others)")
    axes[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.tight_layout()
    target = out / "scaling.png"
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return [target]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("-o", "--out", default=".", help="directory for the PNG files")
    args = ap.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tables, made = [], []
    for path in args.csv:
        rows = load(path)
        if not rows:
            sys.exit(f"{path}: no rows")
        tables.append(rows)
        if "write-phase-max [s]" in rows[0]:
            made += sweep_plots(path, rows, out)
    made += scaling_plot(tables, out)
    for m in made:
        print(m)


if __name__ == "__main__":
    main()
