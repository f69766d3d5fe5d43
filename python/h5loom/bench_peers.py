"""`h5loom bench peers`: h5loom beside what a Python user would pick instead.

The same workloads, the same bytes, the same directory and the same durability
through raw POSIX (``os.pwrite``), h5py, ADIOS2 (BP5), zarr-python (Zarr v3)
and every h5loom engine,
one process at a time, in alternating turns, best of ``--repeat``:

- ``startup``: a fresh process imports the library, creates a file and closes
  it; shown as the time over a process that only imports numpy;
- ``qmcpack``: QMCPACK-like restart writes, one walker ([256, 3] float64) at a
  time into one [N, 256, 3] array, open to close;
- ``vpic``: VPIC-like particle dumps, steps x 8 arrays of float32 (a group or
  step each), open to close;
- ``iotest-8k`` / ``iotest-512k``: hdf5-iotest's tiles (32 x 32 and 256 x 256
  float64), a dataset per step and array, each written in one call.

Every write phase is followed by a read of everything, checked value for value
(a library that returns other bytes fails the run). Without ``--sync`` nothing
is synced (the page cache holds the data: it survives a killed process, not a
power loss); with ``--sync`` every library's files are made durable before the
timer stops: ``fsync`` for POSIX and h5py (after close), every file of the
ADIOS2 directory and of the Zarr store written by zarr-python, the hdf5
engine's ``sync`` and the log and zarr engines' default. zarr-python writes
with the zarr engine's codecs (``bytes``, ``crc32c``: no compression), each
with its own automatic chunks.

    python -m h5loom.bench_peers --dir /scratch/me [--repeat 3] [--sync] [--quick]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Optional

import numpy as np

LIBRARIES = ["posix", "h5py", "adios2", "zarr-python", "h5loom-hdf5", "h5loom-log", "h5loom-zarr"]
WORKLOADS = ["startup", "qmcpack", "vpic", "iotest-8k", "iotest-512k"]


def sizes(quick: bool) -> Dict[str, dict]:
    """Each workload's size; --quick makes every one small (the tests' setting)."""
    if quick:
        return {"qmcpack": {"walkers": 200}, "vpic": {"steps": 2, "arrays": 8, "particles": 1 << 14},
                "iotest-8k": {"steps": 3, "arrays": 3, "rows": 32, "cols": 32},
                "iotest-512k": {"steps": 2, "arrays": 2, "rows": 64, "cols": 64}}
    return {"qmcpack": {"walkers": 4000}, "vpic": {"steps": 5, "arrays": 8, "particles": 4 << 20},
            "iotest-8k": {"steps": 10, "arrays": 10, "rows": 32, "cols": 32},
            "iotest-512k": {"steps": 4, "arrays": 8, "rows": 256, "cols": 256}}


# ---- what is written: every value a function of where it is ----------------

def walker(i: int) -> np.ndarray:
    return (np.arange(256 * 3, dtype=np.float64).reshape(256, 3) + i * 1000.0)


def particles(step: int, array: int, n: int) -> np.ndarray:
    return np.arange(n, dtype=np.float32) + np.float32(step * 8 + array)


def tile(step: int, array: int, rows: int, cols: int) -> np.ndarray:
    return np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) + (step * 100 + array) * 1e6


# ---- one library: create/write/close, then open/read/check ------------------

class Store:
    """One library's way to write named arrays into a file, and read them back."""

    suffix = ".h5"

    def __init__(self, path: str, sync: bool) -> None:
        self.path, self.sync = path, sync

    # A dataset of `shape` and `dtype` written piece by piece: boxes (start, array).
    def create(self, name: str, shape: tuple, dtype) -> None: ...
    def write(self, name: str, start: tuple, data: np.ndarray) -> None: ...
    def close(self) -> None: ...
    def read(self, name: str) -> np.ndarray: ...
    def close_read(self) -> None: ...


def fsync_path(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Posix(Store):
    """Raw os.pwrite of the same bytes, each dataset a range of one file (no format at all)."""

    suffix = ".bin"

    def __init__(self, path: str, sync: bool) -> None:
        super().__init__(path, sync)
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self.layout: Dict[str, tuple] = {}
        self.end = 0

    def create(self, name, shape, dtype):
        dtype = np.dtype(dtype)
        self.layout[name] = (self.end, shape, dtype)
        self.end += int(np.prod(shape)) * dtype.itemsize

    def write(self, name, start, data):
        at, shape, dtype = self.layout[name]
        # the box's first element, row-major; the benchmark's boxes are contiguous runs of the array
        index = int(np.ravel_multi_index(start, shape)) if shape else 0
        os.pwrite(self.fd, np.ascontiguousarray(data).data, at + index * dtype.itemsize)

    def close(self):
        if self.sync:
            os.fsync(self.fd)
        os.close(self.fd)

    def read(self, name):
        at, shape, dtype = self.layout[name]
        if not hasattr(self, "rfd"):
            self.rfd = os.open(self.path, os.O_RDONLY)
        out = np.empty(shape, dtype)
        os.preadv(self.rfd, [out.data.cast("B")], at)
        return out

    def close_read(self):
        os.close(self.rfd)


class H5Like(Store):
    """h5py and h5loom share the h5py-style API: File, create_dataset, slicing."""

    def open_file(self, mode: str): ...

    def __init__(self, path: str, sync: bool) -> None:
        super().__init__(path, sync)
        self.f = self.open_file("w")
        self.ds: Dict[str, object] = {}

    def create(self, name, shape, dtype):
        self.ds[name] = self.f.create_dataset(name, shape=shape, dtype=dtype)

    def write(self, name, start, data):
        self.ds[name][tuple(slice(s, s + n) for s, n in zip(start, data.shape))] = data

    def close(self):
        self.ds.clear()
        self.f.close()

    def read(self, name):
        if not hasattr(self, "r"):
            self.r = self.open_file("r")
        return self.r[name][()]

    def close_read(self):
        self.r.close()


class H5py(H5Like):
    def open_file(self, mode):
        import h5py
        return h5py.File(self.path, mode)

    def close(self):
        super().close()
        if self.sync:  # HDF5 itself never syncs
            fsync_path(self.path)


class H5loom(H5Like):
    def __init__(self, path: str, sync: bool, engine: str) -> None:
        self.engine = {"engine": engine, engine: {"sync": sync}}  # the engine syncs at close, or not
        super().__init__(path, sync)

    def open_file(self, mode):
        import h5loom
        return h5loom.File(self.path, mode, engine=self.engine if mode == "w" else None)


class Adios2(Store):
    """ADIOS2's BP5 engine: one step, every box a block of its variable (Sync puts copy the caller's data)."""

    suffix = ".bp"

    def __init__(self, path: str, sync: bool) -> None:
        super().__init__(path, sync)
        import adios2
        self.adios2 = adios2
        self.adios = adios2.Adios()
        io = self.adios.declare_io("writer")
        io.set_engine("BP5")
        self.io = io
        self.engine = io.open(path, adios2.bindings.Mode.Write)
        self.engine.begin_step()
        self.vars: Dict[str, tuple] = {}

    def create(self, name, shape, dtype):
        zeros = np.zeros([1] * len(shape), dtype)
        var = self.io.define_variable(name, zeros, list(shape), [0] * len(shape), [1] * len(shape))
        self.vars[name] = (var, shape, np.dtype(dtype))

    def write(self, name, start, data):
        var = self.vars[name][0]
        var.set_selection([list(start), list(data.shape)])
        self.engine.put(var, np.ascontiguousarray(data), self.adios2.bindings.Mode.Sync)

    def close(self):
        self.engine.end_step()
        self.engine.close()
        if self.sync:
            for entry in os.scandir(self.path):
                fsync_path(entry.path)
            fsync_path(self.path)

    def read(self, name):
        if not hasattr(self, "r"):
            rio = self.adios.declare_io("reader")
            rio.set_engine("BP5")
            self.rio = rio
            self.r = rio.open(self.path, self.adios2.bindings.Mode.ReadRandomAccess)
        var = self.rio.inquire_variable(name)
        shape = self.vars[name][1]
        var.set_selection([[0] * len(shape), list(shape)])
        out = np.empty(shape, self.vars[name][2])
        self.r.get(var, out, self.adios2.bindings.Mode.Sync)
        return out

    def close_read(self):
        self.r.close()


class ZarrPython(Store):
    """zarr-python (Zarr v3, a local directory), with the zarr engine's codecs: bytes, then crc32c."""

    suffix = ".zarr"

    def __init__(self, path: str, sync: bool) -> None:
        super().__init__(path, sync)
        import zarr
        self.zarr = zarr
        self.g = zarr.open_group(path, mode="w")
        self.arrays: Dict[str, object] = {}

    def create(self, name, shape, dtype):
        self.arrays[name] = self.g.create_array(name, shape=shape, dtype=dtype,
                                                compressors=[self.zarr.codecs.Crc32cCodec()])

    def write(self, name, start, data):
        self.arrays[name][tuple(slice(s, s + n) for s, n in zip(start, data.shape))] = data

    def close(self):
        self.arrays.clear()
        if self.sync:  # zarr-python never syncs: every file, then every directory
            for root, dirs, files in os.walk(self.path):
                for name in files:
                    fsync_path(os.path.join(root, name))
            for root, dirs, files in os.walk(self.path, topdown=False):
                fsync_path(root)

    def read(self, name):
        if not hasattr(self, "r"):
            self.r = self.zarr.open_group(self.path, mode="r")
        return self.r[name][...]

    def close_read(self):
        pass


def open_store(library: str, path: str, sync: bool) -> Store:
    if library == "posix":
        return Posix(path, sync)
    if library == "h5py":
        return H5py(path, sync)
    if library == "adios2":
        return Adios2(path, sync)
    if library == "zarr-python":
        return ZarrPython(path, sync)
    if library.startswith("h5loom-"):
        return H5loom(path, sync, library.split("-", 1)[1])
    raise ValueError(f"unknown library '{library}' (one of {', '.join(LIBRARIES)})")


# ---- the workloads: (create, write) steps, and what every array must read as -

def plan(workload: str, size: dict):
    """The arrays (name -> shape, dtype, the values it must read back as) and
    the writes in order (name, start, values): views of those values, made
    before any timer starts."""
    arrays, writes = {}, []
    if workload == "qmcpack":
        n = size["walkers"]
        expected = np.stack([walker(i) for i in range(n)])
        arrays["walkers"] = ((n, 256, 3), np.float64, expected)
        writes = [("walkers", (i, 0, 0), expected[i:i + 1]) for i in range(n)]
    elif workload == "vpic":
        n = size["particles"]
        for s in range(size["steps"]):
            for a in range(size["arrays"]):
                name = f"Step{s}/a{a}"
                arrays[name] = ((n,), np.float32, particles(s, a, n))
                writes.append((name, (0,), arrays[name][2]))
    else:
        r, c = size["rows"], size["cols"]
        for s in range(size["steps"]):
            for a in range(size["arrays"]):
                name = f"step{s}/array{a}"
                arrays[name] = ((r, c), np.float64, tile(s, a, r, c))
                writes.append((name, (0, 0), arrays[name][2]))
    return arrays, writes


def run_worker(library: str, workload: str, directory: str, sync: bool, size: dict) -> dict:
    """In this process: the write phase (open to close) and the read phase, timed; values checked."""
    arrays, writes = plan(workload, size)
    cls_suffix = {"posix": Posix.suffix, "adios2": Adios2.suffix, "zarr-python": ZarrPython.suffix,
                  "h5loom-zarr": ZarrPython.suffix}.get(library, ".h5")
    path = os.path.join(directory, f"peers-{workload}-{library}{cls_suffix}")
    remove(path)
    t0 = time.perf_counter()
    store = open_store(library, path, sync)
    made = set()
    for name, start, values in writes:
        if name not in made:
            shape, dtype, _ = arrays[name]
            store.create(name, shape, dtype)
            made.add(name)
        store.write(name, start, values)
    store.close()
    write_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    wrong = [name for name, (_, _, expected) in arrays.items() if not np.array_equal(store.read(name), expected)]
    store.close_read()
    read_s = time.perf_counter() - t0
    nbytes = sum(int(np.prod(shape)) * np.dtype(dtype).itemsize for shape, dtype, _ in arrays.values())
    remove(path)
    return {"write": write_s, "read": read_s, "bytes": nbytes, "wrong": wrong}


def remove(path: str) -> None:
    for p in (path, path + ".loom"):
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.remove(p)


STARTUP = {
    "numpy": "import numpy",
    "posix": "import numpy, os; fd = os.open(@PATH@, os.O_WRONLY | os.O_CREAT | os.O_TRUNC); os.close(fd)",
    "h5py": "import numpy, h5py; h5py.File(@PATH@, 'w').close()",
    "adios2": ("import numpy, adios2; a = adios2.Adios(); io = a.declare_io('w'); io.set_engine('BP5'); "
               "e = io.open(@PATH@, adios2.bindings.Mode.Write); e.begin_step(); e.end_step(); e.close()"),
    "h5loom-hdf5": "import numpy, h5loom; h5loom.File(@PATH@, 'w', engine={'engine': 'hdf5', 'hdf5': {'sync': @SYNC@}}).close()",
    "h5loom-log": "import numpy, h5loom; h5loom.File(@PATH@, 'w', engine={'engine': 'log', 'log': {'sync': @SYNC@}}).close()",
    "zarr-python": "import numpy, zarr; zarr.open_group(@PATH@, mode='w')",
    "h5loom-zarr": "import numpy, h5loom; h5loom.File(@PATH@, 'w', engine={'engine': 'zarr', 'zarr': {'sync': @SYNC@}}).close()",
}


def run_startup(library: str, directory: str, sync: bool) -> dict:
    """A fresh interpreter: import, create, close; wall time of the whole process."""
    path = os.path.join(directory, f"peers-startup-{library}.h5")
    remove(path)
    code = STARTUP[library].replace("@PATH@", repr(path)).replace("@SYNC@", repr(sync))
    env = {k: v for k, v in os.environ.items() if k != "H5LOOM_PROFILE"}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=directory)
    wall = time.perf_counter() - t0
    remove(path)
    return {"write": wall, "read": 0.0, "bytes": 0, "wrong": []}


# ---- the driver ----------------------------------------------------------------

def available(library: str) -> Optional[str]:
    """None if the library can be used here, else why not."""
    module = {"h5py": "h5py", "adios2": "adios2", "zarr-python": "zarr"}.get(library)
    if module is None:
        return None
    code = f"import {module}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return None if done.returncode == 0 else f"{module} does not import: {done.stderr.strip().splitlines()[-1]}"


def in_subprocess(library: str, workload: str, directory: str, sync: bool, quick: bool) -> dict:
    """One run in a fresh process (libraries never share one: ADIOS2's wheel carries its own libraries)."""
    args = [sys.executable, "-m", "h5loom.bench_peers", "--worker", library, workload, "--dir", directory]
    if sync:
        args.append("--sync")
    if quick:
        args.append("--quick")
    env = {k: v for k, v in os.environ.items() if k != "H5LOOM_PROFILE"}
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{library} on {workload} failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(best: Dict[tuple, dict], libraries: List[str], workloads: List[str]) -> str:
    lines = ["| workload | " + " | ".join(libraries) + " |", "|---" * (len(libraries) + 1) + "|"]
    for w in workloads:
        if w == "startup":
            base = best.get((w, "numpy"), {}).get("write")
            cells = [f"{(best[(w, lib)]['write'] - base) * 1e3:+.0f} ms" if (w, lib) in best and base else "-"
                     for lib in libraries]
            lines.append(f"| startup (over `import numpy`: {base * 1e3:.0f} ms) | " + " | ".join(cells) + " |")
            continue
        ref = best.get((w, "posix"), {}).get("write")
        cells = []
        for lib in libraries:
            r = best.get((w, lib))
            cells.append("-" if r is None else f"{r['write']:.3f} s" + (f" ({ref / r['write']:.2f}x)" if ref else ""))
        lines.append(f"| {w} write | " + " | ".join(cells) + " |")
        cells = []
        for lib in libraries:
            r = best.get((w, lib))
            cells.append("-" if r is None else f"{r['read']:.3f} s")
        lines.append(f"| {w} read | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(best: Dict[tuple, dict], libraries: List[str], workloads: List[str], out: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    shown = [w for w in workloads if w != "startup"]
    fig, ax = plt.subplots(figsize=(1.6 + 1.7 * len(shown), 3.6))
    width = 0.8 / len(libraries)
    for k, lib in enumerate(libraries):
        ys = []
        for w in shown:
            ref, r = best.get((w, "posix")), best.get((w, lib))
            ys.append(ref["write"] / r["write"] if ref and r else 0.0)
        ax.bar([i + k * width for i in range(len(shown))], ys, width, label=lib)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks([i + width * (len(libraries) - 1) / 2 for i in range(len(shown))], shown)
    ax.set_ylabel("write speed / raw POSIX (higher is faster)")
    ax.legend(fontsize=8, ncol=len(libraries), loc="upper center", bbox_to_anchor=(0.5, -0.12))
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="h5loom bench peers", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=".", help="directory for the files (every library writes here)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each library and workload; the best is kept")
    ap.add_argument("--sync", action="store_true", help="every library makes its files durable before the timer stops")
    ap.add_argument("--quick", action="store_true", help="small sizes (a test of the benchmark, not a measurement)")
    ap.add_argument("--library", action="append", choices=LIBRARIES, help="only these (repeat; default all)")
    ap.add_argument("--workload", action="append", choices=WORKLOADS, help="only these (repeat; default all)")
    ap.add_argument("--csv", help="CSV of every run (default: DIR/peers.csv)")
    ap.add_argument("--plot", help="PNG of write speed against raw POSIX (default: DIR/peers.png)")
    ap.add_argument("--worker", nargs=2, metavar=("LIBRARY", "WORKLOAD"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.repeat < 1:
        ap.error(f"--repeat must be at least 1, not {a.repeat}")
    os.makedirs(a.dir, exist_ok=True)
    if a.worker:
        library, workload = a.worker
        print(json.dumps(run_worker(library, workload, a.dir, a.sync, sizes(a.quick)[workload])))
        return 0

    libraries = a.library or LIBRARIES
    workloads = a.workload or WORKLOADS
    skipped = {lib: why for lib in libraries if (why := available(lib))}
    for lib, why in skipped.items():
        print(f"skipping {lib}: {why}", file=sys.stderr)
    libraries = [lib for lib in libraries if lib not in skipped]
    runs: List[dict] = []
    best: Dict[tuple, dict] = {}
    failed = []
    for rep in range(a.repeat):
        for w in workloads:
            # Every library once per round, each round starting one further
            # along: none is always first (after the workload before) or last.
            shift = rep % len(libraries)
            turn = (["numpy"] if w == "startup" else []) + libraries[shift:] + libraries[:shift]
            for lib in turn:
                # What earlier runs left in the page cache goes to the device
                # now, untimed: else a run pays for the dirty pages of the one before.
                os.sync()
                r = run_startup(lib, a.dir, a.sync) if w == "startup" else in_subprocess(lib, w, a.dir, a.sync, a.quick)
                runs.append({"workload": w, "library": lib, "run": rep, **{k: r[k] for k in ("write", "read", "bytes")},
                             "verified": not r["wrong"]})
                if r["wrong"]:
                    failed.append(f"{lib} on {w}: read back other values in {', '.join(r['wrong'][:3])}")
                key = (w, lib)
                if key not in best or r["write"] < best[key]["write"]:
                    best[key] = {**r, "read": min(r["read"], best.get(key, r)["read"])}
                elif r["read"] < best[key]["read"]:
                    best[key]["read"] = r["read"]
    csv_path = a.csv or os.path.join(a.dir, "peers.csv")
    with open(csv_path, "w", newline="") as out:
        wr = csv.DictWriter(out, fieldnames=["workload", "library", "run", "write", "read", "bytes", "verified"])
        wr.writeheader()
        wr.writerows(runs)
    durability = "synced" if a.sync else "unsynced (page cache)"
    print(f"peers: best of {a.repeat}, {durability}, in {os.path.abspath(a.dir)}; write time "
          f"(speed against raw POSIX) and read time")
    print(table(best, libraries, workloads))
    print(f"CSV: {csv_path}")
    png = a.plot or os.path.join(a.dir, "peers.png")
    try:
        plot(best, libraries, workloads, png)
        print(f"plot: {png}")
    except ImportError as e:
        print(f"no plot ({e})", file=sys.stderr)
    for f in failed:
        print(f"WRONG: {f}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
