"""Object references and variable-length strings written by h5loom's Python
package, read by h5py (its own HDF5, its own process): h5py dereferences the
references (``f[ref].name``) in datasets, attributes and compound fields
(netCDF's REFERENCE_LIST), and reads the strings.

The writer runs in a subprocess (h5loom and h5py's HDF5 must not share a
process), under mpirun for more than one rank. An engine that does not declare
the conformance group ("references", "vlen_strings") is skipped, naming it: the
hdf5 engine writes variable-length strings with its one-process driver
("sec2") only; the log engine's file is read through its front file, or, for a
dataset the front file leaves to the log (`_h5loom_log_only`), through
`h5loom convert`."""
import json
import os
import pathlib
import subprocess
import sys

import h5py
import numpy as np
import pytest

BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()
MPIEXEC = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
SEC2 = {"engine": "hdf5", "hdf5": {"driver": "sec2"}}

WRITER = r'''
import json, sys
import numpy as np
from mpi4py import MPI
import h5loom

path, engine, what = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
group = {"refs": "reference_datasets", "strings": "vlen_strings"}[what]
if group not in h5loom.engine_groups(engine):
    if MPI.COMM_WORLD.rank == 0:
        print(f"SKIP: engine {sys.argv[2]} does not declare the conformance group '{group}'")
    sys.exit(0)
comm = MPI.COMM_WORLD
r, n = comm.rank, comm.size
with h5loom.File(path, "w", comm=comm, engine=engine) as f:
    if what == "refs":
        time = f.create_dataset("time", shape=(4,), dtype="f8")
        cells = f.create_group("grid/cells")
        temp = f.create_dataset("grid/temperature", shape=(4, 3), dtype="f4")
        targets = [time.ref, cells.ref, temp.ref, f.ref]
        refs = f.create_dataset("refs", shape=(n,), dtype=h5loom.ref_dtype)
        refs[r:r + 1] = [targets[r % 4]]
        use = np.dtype({"names": ["dataset", "dimension"], "formats": [h5loom.ref_dtype, "<i4"],
                        "offsets": [0, 8], "itemsize": 16})
        uses = f.create_dataset("uses", shape=(n,), dtype=use)
        uses[r:r + 1] = [(temp.ref, r)]
        time.attrs["users"] = [temp.ref]
        temp.attrs["scale"] = time.ref
        time.attrs["REFERENCE_LIST"] = np.array([(temp.ref, 0), (temp.ref, 1)], dtype=use)
    else:
        names = f.create_dataset("names", shape=(4,), dtype=h5loom.string_dtype())
        names[...] = ["", "alpha", "été ✓", "x" * 1000]
        plain = f.create_dataset("plain", shape=(2,), dtype=h5loom.string_dtype("ascii"))
        plain[...] = ["abc", "de"]
print("WROTE")
'''


def write(tmp_path, engine, what, ranks):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    path = tmp_path / f"{what}.h5"
    cmd = [sys.executable, str(script), str(path), json.dumps(engine), what]
    if ranks > 1:
        cmd = [MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", str(ranks)] + cmd
    # Without the MPI environment of this process (a test that ran before may have started MPI in it).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    out = subprocess.run(cmd, check=True, timeout=300, capture_output=True, text=True, env=env).stdout
    if "SKIP:" in out:
        pytest.skip(out.split("SKIP:", 1)[1].strip())
    assert "WROTE" in out
    return path


def readable(path, names, engine):
    """The file h5py reads: the file itself, or for a log file whose front file
    leaves one of `names` to the log, its conversion to native HDF5."""
    if engine != "log":
        return path
    with h5py.File(path, "r") as f:
        log_only = {p.decode() if isinstance(p, bytes) else p for p in f.attrs.get("_h5loom_log_only", [])}
    if not log_only & {"/" + n for n in names}:
        return path
    native = path.with_name(path.stem + "-native.h5")
    subprocess.run([str(BUILD / "h5loom"), "convert", str(path), str(native)], check=True, timeout=300,
                   capture_output=True)
    return native


@pytest.mark.parametrize("engine", ["hdf5", "log"])
@pytest.mark.parametrize("ranks", [1, 2])
def test_h5py_dereferences_references(tmp_path, monkeypatch, engine, ranks):
    path = write(tmp_path, engine, "refs", ranks)
    monkeypatch.chdir(tmp_path)  # a log file's front file names its log relative to its directory
    want = ["/time", "/grid/cells", "/grid/temperature", "/"]
    with h5py.File(readable(path, ["refs", "uses", "time", "grid/temperature"], engine), "r") as f:
        refs = f["refs"]
        assert h5py.check_ref_dtype(refs.dtype) is h5py.Reference
        assert [f[ref].name for ref in refs[...]] == [want[i % 4] for i in range(ranks)]
        users = f["time"].attrs["users"]
        assert len(users) == 1 and f[users[0]].name == "/grid/temperature"
        assert f[f["grid/temperature"].attrs["scale"]].name == "/time"
        lst = f["time"].attrs["REFERENCE_LIST"]
        assert lst.dtype.names == ("dataset", "dimension")
        assert [f[ref].name for ref in lst["dataset"]] == ["/grid/temperature"] * 2
        assert list(lst["dimension"]) == [0, 1]
        uses = f["uses"][...]
        assert [f[ref].name for ref in uses["dataset"]] == ["/grid/temperature"] * ranks
        assert list(uses["dimension"]) == list(range(ranks))


@pytest.mark.parametrize("engine", [pytest.param(SEC2, id="hdf5-sec2"), pytest.param("log", id="log")])
def test_h5py_reads_variable_length_strings(tmp_path, monkeypatch, engine):
    path = write(tmp_path, engine, "strings", 1)
    monkeypatch.chdir(tmp_path)
    with h5py.File(readable(path, ["names", "plain"], "log" if engine == "log" else "hdf5"), "r") as f:
        names, plain = f["names"], f["plain"]
        assert tuple(h5py.check_string_dtype(names.dtype)) == ("utf-8", None)  # variable length
        assert tuple(h5py.check_string_dtype(plain.dtype)) == ("ascii", None)
        assert list(names.asstr()[...]) == ["", "alpha", "été ✓", "x" * 1000]
        assert list(plain[...]) == [b"abc", b"de"]
        assert isinstance(names[1], bytes) and np.asarray(names.asstr()[...]).shape == (4,)


@pytest.mark.parametrize("engine", ["hdf5", "log"])
def test_h5py_reads_dimension_lists_of_references(tmp_path, engine):
    """netCDF-4's DIMENSION_LIST - a sequence of object references per axis -
    written by the conformance test through each engine (the log engine's front
    file, and the file converted to the other engine) and read by h5py."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    done = subprocess.run([str(BUILD / "tests" / "h5loom_conformance"), "--engine", engine, "--dir", str(tmp_path),
                           "--gtest_filter=references.ReferencesInsideSequences*"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "1 test" in done.stdout, done.stdout + done.stderr
    files = sorted(tmp_path.rglob("*ReferencesInsideSequences*.h5"))
    assert len(files) == 2, files                       # the file written, and its conversion
    for path in files:
        with h5py.File(path, "r") as f:
            dims = f["temperature"].attrs["DIMENSION_LIST"]
            assert [[f[r].name for r in axis] for axis in dims] == [["/time"], ["/x", "/"]], path
