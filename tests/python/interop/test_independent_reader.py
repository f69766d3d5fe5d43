"""Files written by h5loom's hdf5 engine are plain HDF5: h5py and h5dump read
them, in processes other than the writer's (h5py and h5loom in one process:
tests/python/onelib)."""
import os
import pathlib
import shutil
import subprocess

import h5py
import numpy as np
import pytest

BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()
MPIEXEC = os.environ.get("H5LOOM_MPIEXEC", "mpirun")


def write_reference(path, ranks, engine=""):
    cmd = [MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", str(ranks),
           str(BUILD / "tests" / "write_reference"), str(path)]
    if engine:
        cmd.append(engine)
    subprocess.run(cmd, check=True, timeout=300)


@pytest.fixture(scope="module", params=[1, 2, 4])
def reference(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("ref") / f"reference-np{request.param}.h5"
    write_reference(path, request.param)
    return path, request.param


def test_h5py_reads_values_and_attributes(reference):
    path, n = reference
    with h5py.File(path, "r") as f:
        assert f.attrs["title"] == b"h5loom reference" or f.attrs["title"] == "h5loom reference"
        assert int(f.attrs["ranks"]) == n
        rho = f["fields/rho"]
        assert rho.shape == (2 * n, 3)
        assert rho.dtype == np.float64
        expected = np.array([[r * 100 + 3 * row + c for c in range(3)]
                             for r in range(n) for row in range(2)], dtype=np.float64)
        np.testing.assert_array_equal(rho[...], expected)
        units = rho.attrs["units"]
        assert (units.decode() if isinstance(units, bytes) else units) == "kg/m^3"
        assert rho.attrs["scale"] == 2.5
        np.testing.assert_array_equal(f["fields"].attrs["count"], [1, 2, 3])
        ids = f["particles/id"]
        assert ids.maxshape == (None,)
        assert ids.chunks is not None
        np.testing.assert_array_equal(ids[...], np.arange(10 * n))
        assert f["types/u8"].dtype == np.uint8
        np.testing.assert_array_equal(f["types/u8"][...], [0, 127, 255])
        np.testing.assert_array_equal(f["types/f32"][...], np.array([-1.5, 3.25], dtype=np.float32))


@pytest.mark.skipif(shutil.which("h5dump") is None, reason="h5dump (hdf5-tools) not installed")
def test_h5dump_reads_values(reference):
    path, n = reference
    out = subprocess.run(["h5dump", "-d", "/particles/id", str(path)], check=True,
                         capture_output=True, text=True).stdout
    # h5dump prints "(i): v, v, ..." lines; collect every number after the index markers
    data = out.split("DATA {", 1)[1].rsplit("}", 2)[0]
    numbers = []
    for line in data.splitlines():
        if ":" in line:
            numbers += [int(x) for x in line.split(":", 1)[1].replace(",", " ").split()]
    assert numbers == list(range(10 * n))
    attrs = subprocess.run(["h5dump", "-a", "/fields/rho/units", str(path)], check=True,
                           capture_output=True, text=True).stdout
    assert '"kg/m^3"' in attrs


def test_h5dump_rejects_nothing_in_the_tree(reference):
    path, _ = reference
    out = subprocess.run(["h5dump", "-H", str(path)], check=True, capture_output=True, text=True).stdout
    for name in ("fields", "rho", "particles", "id", "types"):
        assert name in out
