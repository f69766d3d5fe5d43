"""Compressed datasets and h5py, both ways: the hdf5 engine's gzip-shuffled
datasets read by h5py as compressed; the log engine's (recorded filters, an
uncompressed log) read by h5py through the front file and compressed after
``h5loom convert``; h5py's compressed datasets read by h5loom with their filters."""
import os
import pathlib
import subprocess

import h5py
import numpy as np
import pytest

BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()
DATA = np.repeat(np.arange(100, dtype="<i4"), 10)


@pytest.mark.parametrize("engine", ["hdf5", "log"])
def test_compressed_datasets_both_ways_with_h5py(tmp_path, monkeypatch, run_h5loom, engine):
    monkeypatch.chdir(tmp_path)  # the log engine's front file names its log relative to the file's directory
    run_h5loom(f'''
data = np.repeat(np.arange(100, dtype="<i4"), 10)
with h5loom.File("z.h5", "w", engine="{engine}") as f:
    f.create_dataset("z", data=data, chunks=(100,), compression="gzip", shuffle=True)
''')
    with h5py.File("z.h5", "r") as f:
        np.testing.assert_array_equal(f["z"][...], DATA)
        if engine == "hdf5":
            assert f["z"].compression == "gzip" and f["z"].shuffle
            assert f["z"].id.get_storage_size() < DATA.nbytes / 4  # compressed for real
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    subprocess.run([str(BUILD / "h5loom"), "convert", "z.h5", "native.h5"], check=True, timeout=120,
                   capture_output=True, env=env)
    with h5py.File("native.h5", "r") as f:
        assert f["z"].compression == "gzip" and f["z"].shuffle and f["z"].chunks == (100,)
        np.testing.assert_array_equal(f["z"][...], DATA)
    with h5py.File("h5py.h5", "w") as f:
        f.create_dataset("w", data=DATA, compression="gzip", compression_opts=9, fletcher32=True)
    run_h5loom('''
with h5loom.File("h5py.h5", "r") as f:
    assert (f["w"].compression, f["w"].compression_opts, f["w"].fletcher32) == ("gzip", 9, True)
    np.testing.assert_array_equal(f["w"][...], np.repeat(np.arange(100, dtype="<i4"), 10))
''')
