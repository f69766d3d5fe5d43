"""HDF5's datatypes beyond numbers, read by h5py (in another process than
the writer): HACC's interleaved particle records are a compound dataset that h5py
reads as a structured array with field names - from the hdf5 engine's file and
from the log engine's front file."""
import os
import pathlib
import subprocess

import h5py
import numpy as np
import pytest

BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()
MPIEXEC = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
FIELDS = ("x", "y", "z", "vx", "vy", "vz", "phi", "id", "mask")


@pytest.mark.parametrize("engine", ["hdf5", "log"])
@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_hacc_records_are_a_structured_array(tmp_path, monkeypatch, engine, ranks):
    subprocess.run([MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", str(ranks), str(BUILD / "h5loom"),
                    "bench", "hacc", "--particles", "300", "--engine", engine, "--keep-files", "--dir", str(tmp_path)],
                   check=True, timeout=300, capture_output=True)
    # The log engine's front file names its log relative to the file's directory
    # (external storage resolves against the working directory).
    monkeypatch.chdir(tmp_path)
    with h5py.File("hacc.h5", "r") as f:
        rec = f["interleaved/records"]
        assert rec.dtype.names == FIELDS
        assert rec.dtype.itemsize == 38
        assert rec.dtype["id"] == np.dtype("<i8") and rec.dtype["mask"] == np.dtype("<u2")
        assert rec.dtype.fields["id"][1] == 28 and rec.dtype.fields["mask"][1] == 36
        data = rec[...]
        i = np.arange(len(data))
        np.testing.assert_array_equal(data["id"], i * 7)
        np.testing.assert_array_equal(data["mask"], i % 65521)
        np.testing.assert_array_equal(data["vx"], f["vars/vx"][...])
        assert (data["x"] == ((i % 999983) * 0.5).astype(np.float32)).all()
