#!/usr/bin/env python3
"""The crash-state explorer's driver (tests/crash/README.md).

For each engine configuration and rank count: runs crash_writer under mpirun
with the recorder shim (crash_shim.so) preloaded, then crash_explore on the
trace, and prints the counts. Exits 1 if any image was wrong or lost a step
that a completed flush had reported durable.

    run_crash.py --build BUILD [--ranks 1 2 4] [--configs NAME ...] [--images N]
                 [--seed S] [--steps K] [--keep DIR] [--tmp DIR] [--cli-every K]
                 [--starts new clean torn]

Starts: "new" records a writer that creates the file; "clean" and "torn" a
writer that appends steps to a file left by the "new" run (clean: complete and
closed; torn: crashed with the second epoch's data and index on disk but not
its commit record), so that crashes during the recovery of a crashed file are
explored too.

Only the standard library: h5loom is not imported here (crash_explore links it).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

# name: (engine configuration, bytes of each rank's box of /stepK/big[, explorer options[, writer options]])
CONFIGS = {
    # defaults: 1 MiB boxes are large writes, written into 64 MiB regions
    "defaults": ('{"engine":"log"}', 1 << 20),
    # every write of 64 bytes or more into 4 KiB regions, 8 KiB buffers spilled at 1 KiB: regions overflow, buffers spill
    "regions": ('{"engine":"log","log":{"direct_threshold":64,"aggregate_below":64,"spill_at":1024,"region_size":4096,"buffer_size":8192}}', 8192),
    # every rank writes its own buffered data
    "aggall": ('{"engine":"log","log":{"aggregators":"all"}}', 8192),
    # one aggregator, 4 KiB buffers: small writes spill during the step
    "agg1": ('{"engine":"log","log":{"aggregators":1,"buffer_size":4096}}', 8192),
    # no syncs: the engine promises only to survive a killed process, so only those states are built
    "nosync": ('{"engine":"log","log":{"aggregators":"all","sync":false}}', 8192, ["--process-crash"]),
    # the async wrapper, each step's flush completed in the next step: the next
    # step's data reaches the log while the commit record waits (its writes
    # made at once: write_through always)
    "async": ('{"engine":"log","wrappers":["async"],"async":{"write_through":"always"}}', 1 << 20, [], ["--flush-async"]),
    # no flush: the close is the only durability point (a new file's first
    # commit is then the close's, whose front file's rename syncs the parent)
    "closeonly": ('{"engine":"log"}', 8192, [], ["--close-only"]),
}
# The starts a configuration cannot make: "torn" needs a run whose first epoch
# is committed before the one it tears, and closeonly commits only at its close.
NO_STARTS = {"closeonly": ["torn"]}
DEFAULT_CONFIGS = ["defaults", "regions", "aggall", "agg1", "nosync", "async", "closeonly"]


def run(cmd, timeout, **kw):
    return subprocess.run(cmd, timeout=timeout, text=True, capture_output=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="the CMake build directory")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS, choices=list(CONFIGS))
    ap.add_argument("--images", type=int, default=100, help="images per configuration and rank count")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--strict-dirs", action="store_true", help="names are durable only after an fsync of their directory")
    ap.add_argument("--keep", help="copy the traces of failing runs here")
    ap.add_argument("--tmp", help="where images are built (default: /dev/shm if it exists, else the temp dir)")
    ap.add_argument("--cli-every", type=int, default=0, help="also run `h5loom verify` on every K-th image")
    ap.add_argument("--xfail-reopen-uncommitted", action="store_true",
                    help="count the known engine bug (a writer reopening a file that crashed before its first commit "
                         "leaves a file that cannot be opened) apart instead of as wrong")
    ap.add_argument("--starts", nargs="+", default=["new", "clean", "torn"], choices=["new", "clean", "torn"])
    ap.add_argument("--mpiexec", default=os.environ.get("H5LOOM_MPIEXEC", "mpirun"))
    args = ap.parse_args()

    build = os.path.abspath(args.build)
    exe = {name: os.path.join(build, "tests", "crash", name) for name in ("crash_writer", "crash_explore", "crash_shim.so")}
    for path in exe.values():
        if not os.path.exists(path):
            sys.exit(f"run_crash.py: {path} is missing (build the tests first)")
    cli = os.path.join(build, "h5loom")
    tmp_root = args.tmp or ("/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None)

    rows, failed = [], False

    def record(label, tmp, run_dir, trace, args_extra):
        """Runs the writer under the shim; returns the time it took, or None."""
        t0 = time.time()
        cmd = [args.mpiexec, "--oversubscribe", "--allow-run-as-root", "-n", str(np_),
               "-x", f"CRASH_DIR={run_dir}", "-x", f"CRASH_TRACE={trace}", "-x", f"LD_PRELOAD={exe['crash_shim.so']}",
               exe["crash_writer"], os.path.join(run_dir, "f.h5"), str(args.steps), engine, "--big-bytes", str(big)]
        w = run(cmd + args_extra, 300)
        if w.returncode != 0:
            print(f"{label}: the writer failed ({w.returncode}):\n{w.stdout}{w.stderr}")
            return None
        return time.time() - t0

    def explore(label, tmp, trace, work, extra=()):
        t1 = time.time()
        summary = os.path.join(tmp, f"summary-{label}.json")
        ecmd = [exe["crash_explore"], "--trace", trace, "--work", work, "--images", str(args.images),
                "--seed", str(args.seed), "--label", label, "--json", summary, "--cli", cli, *extra]
        if args.cli_every:
            ecmd += ["--cli-every", str(args.cli_every)]
        if args.strict_dirs:
            ecmd.append("--strict-dirs")
        if args.xfail_reopen_uncommitted:
            ecmd.append("--xfail-reopen-uncommitted")
        e = run(ecmd, 1800)
        sys.stdout.write(e.stdout)
        sys.stderr.write(e.stderr)
        if e.returncode not in (0, 1) or not os.path.exists(summary):
            print(f"{label}: crash_explore failed ({e.returncode})")
            return None
        with open(summary) as f:
            s = json.load(f)
        s["explore_s"] = round(time.time() - t1, 1)
        return s

    def keep(label, trace):
        if args.keep:
            dest = os.path.join(os.path.abspath(args.keep), label)
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(trace, os.path.join(dest, "trace"))
            print(f"{label}: trace kept in {dest}/trace; reproduce an image with\n"
                  f"  {exe['crash_explore']} --trace {dest}/trace --work /tmp/crash-work --images {args.images} "
                  f"--seed {args.seed} --only ID --keep")

    for config in args.configs:
        engine, big, *more = CONFIGS[config]
        model_args = more[0] if more else []
        writer_args = more[1] if len(more) > 1 else []
        for np_ in args.ranks:
            tmp = tempfile.mkdtemp(prefix=f"h5loom-crash-{config}-np{np_}-", dir=tmp_root)
            try:
                run_dir, trace, work = (os.path.join(tmp, d) for d in ("run", "trace", "work"))
                for d in (run_dir, trace, work):
                    os.mkdir(d)
                label = f"{config}-np{np_}"
                took = record(label, tmp, run_dir, trace, writer_args)
                if took is None:
                    failed = True
                    continue
                for start in args.starts:
                    if start in NO_STARTS.get(config, []):
                        continue
                    if start == "new":
                        s = explore(label, tmp, trace, work, model_args)
                        slabel, strace, swriter = label, trace, took
                    else:
                        # The append run starts from an image of the first run.
                        slabel = f"{config}-{start}-np{np_}"
                        base = os.path.join(tmp, f"run-{start}")
                        strace = os.path.join(tmp, f"trace-{start}")
                        os.mkdir(strace)
                        b = run([exe["crash_explore"], "--trace", trace, "--work", work, "--label", slabel,
                                 "--emit-base", start, base, *model_args], 300)
                        sys.stdout.write(b.stdout)
                        if b.returncode != 0:
                            print(f"{slabel}: cannot build the start image ({b.returncode}): {b.stderr}")
                            failed = True
                            continue
                        subprocess.run(["cp", "-a", "--sparse=always", base, os.path.join(strace, "initial")], check=True)
                        with open(os.path.join(strace, "initial.list"), "w") as lst:
                            for root, dirs, files in os.walk(base):
                                for name in sorted(dirs) + sorted(files):
                                    p = os.path.join(root, name)
                                    kind = "d" if os.path.isdir(p) else "f"
                                    lst.write(f"{kind} {os.path.relpath(p, base)} {os.stat(p).st_ino}\n")
                        swriter = record(slabel, tmp, base, strace, ["--append", *writer_args])
                        if swriter is None:
                            failed = True
                            continue
                        s = explore(slabel, tmp, strace, work, model_args)
                    if s is None:
                        failed = True
                        continue
                    s["writer_s"] = round(swriter, 1)
                    rows.append(s)
                    if s["wrong"] or s["lost"]:
                        failed = True
                        keep(slabel, strace)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)

    cols = [("tried", "tried"), ("opened", "opened"), ("refused", "refused"), ("wrong", "wrong"), ("lost", "lost"),
            ("rw-refused", "rw_refused"), ("recovered", "recovered"), ("xfail", "xfail"), ("verify!=", "verify_disagree")]
    print()
    print(f"{'configuration':<16}" + "".join(f" {h:>10}" for h, _ in cols) + f" {'writer s':>9} {'explore s':>9}")
    tot = {k: 0 for _, k in cols}
    for s in rows:
        print(f"{s['label']:<16}" + "".join(f" {s[k]:>10}" for _, k in cols) + f" {s['writer_s']:>9} {s['explore_s']:>9}")
        for _, k in cols:
            tot[k] += s[k]
    print(f"{'total':<16}" + "".join(f" {tot[k]:>10}" for _, k in cols))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
