"""h5py and h5loom in one process share one libhdf5: the project's HDF5 1.14.5
(scripts/build-hdf5.sh), which h5py is built from source against (Makefile).
What one writes, the other reads, in the same process; at 1 rank, and under
mpirun with h5py's MPI driver (ctest python-shared-hdf5-np2).
Also checks that the tests' h5dump is that HDF5's."""
import pathlib
import re
import shutil
import subprocess

import h5py
import numpy as np
import pytest
from mpi4py import MPI

import h5loom

HDF5_VERSION = "1.14.5"
comm = MPI.COMM_WORLD


def mapped_libhdf5():
    """The HDF5 libraries mapped into this process: ours (libhdf5.so.310), Debian's
    (libhdf5_openmpi.so.103, libhdf5_serial.so.103) or a wheel's (libhdf5-HASH.so)."""
    libs = set()
    for line in pathlib.Path("/proc/self/maps").read_text().splitlines():
        path = line.split()[-1]
        if re.match(r"libhdf5(_openmpi|_serial)?[-.]", pathlib.Path(path).name):
            libs.add(str(pathlib.Path(path).resolve()))
    return libs


@pytest.fixture
def shared_dir(tmp_path):
    return pathlib.Path(comm.bcast(str(tmp_path), root=0))


def test_h5py_is_built_against_hdf5_114_with_mpi():
    assert h5py.version.hdf5_version == HDF5_VERSION
    assert h5py.get_config().mpi


def test_one_libhdf5_in_the_process(shared_dir):
    with h5loom.File(shared_dir / "probe.h5", "w", comm=comm, engine="hdf5") as f:
        assert f"HDF5 {HDF5_VERSION}" in f.describe(), f.describe()
    with h5py.File(shared_dir / "probe.h5", "r"):
        pass
    libs = mapped_libhdf5()
    assert len(libs) == 1, libs
    assert pathlib.Path(libs.pop()).name.startswith("libhdf5.so.310"), libs


def test_h5loom_writes_h5py_reads(shared_dir):
    path = shared_dir / "from_h5loom.h5"
    n = comm.size
    with h5loom.File(path, "w", comm=comm, engine="hdf5") as f:
        ds = f.create_dataset("fields/rho", shape=(4 * n, 3), dtype="f8")
        ds[4 * comm.rank:4 * comm.rank + 4, :] = np.full((4, 3), float(comm.rank))
        ds.attrs["units"] = "kg/m^3"
    with h5py.File(path, "r", driver="mpio", comm=comm) as f:
        rho = f["fields/rho"][...]
        np.testing.assert_array_equal(rho, np.repeat(np.arange(n, dtype="f8"), 4)[:, None] * np.ones(3))
        units = f["fields/rho"].attrs["units"]
        assert (units.decode() if isinstance(units, bytes) else units) == "kg/m^3"


def test_h5py_writes_h5loom_reads(shared_dir):
    path = shared_dir / "from_h5py.h5"
    n = comm.size
    with h5py.File(path, "w", driver="mpio", comm=comm) as f:
        ds = f.create_dataset("grid/temp", shape=(n, 5), dtype="i4")
        ds.attrs["step"] = 7
        with ds.collective:
            ds[comm.rank, :] = np.arange(5, dtype="i4") + 10 * comm.rank
    with h5loom.File(path, "r", comm=comm) as f:
        assert f.engine == "hdf5"
        temp = f["grid/temp"][...]
        np.testing.assert_array_equal(temp, np.arange(5, dtype="i4") + 10 * np.arange(n, dtype="i4")[:, None])
        assert int(f["grid/temp"].attrs["step"]) == 7


def test_both_open_at_once(shared_dir):
    """Two files open at the same time, one through each library, in one libhdf5."""
    a, b = shared_dir / "a.h5", shared_dir / "b.h5"
    with h5loom.File(a, "w", comm=comm, engine="hdf5") as fa, h5py.File(b, "w", driver="mpio", comm=comm) as fb:
        fa.create_dataset("x", shape=(comm.size,), dtype="f4")[comm.rank] = np.float32(comm.rank)
        fb.create_dataset("y", data=np.arange(3.0))
    with h5py.File(a, "r", driver="mpio", comm=comm) as fa, h5loom.File(b, "r", comm=comm) as fb:
        np.testing.assert_array_equal(fa["x"][...], np.arange(comm.size, dtype="f4"))
        np.testing.assert_array_equal(fb["y"][...], np.arange(3.0))


@pytest.mark.skipif(comm.size > 1, reason="once, at 1 rank")
def test_h5dump_is_the_projects():
    h5dump = shutil.which("h5dump")
    assert h5dump, "h5dump not in PATH"
    out = subprocess.run([h5dump, "--version"], check=True, capture_output=True, text=True).stdout
    assert f"Version {HDF5_VERSION}" in out, (h5dump, out)
