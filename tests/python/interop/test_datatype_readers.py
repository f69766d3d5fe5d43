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
                   check=True, timeout=300, capture_output=True,
                   env={k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))})
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


ARRAY_WRITER = r'''
import sys
import numpy as np
from mpi4py import MPI
import h5loom

path, engine = sys.argv[1], sys.argv[2]
r, n = MPI.COMM_WORLD.rank, MPI.COMM_WORLD.size
body = np.dtype([("id", "<i4"), ("pos", "<f8", (3,)), ("stress", "<f4", (2, 2))])
with h5loom.File(path, "w", engine=engine) as f:
    b = f.create_dataset("bodies", shape=(2 * n,), dtype=body)
    mine = np.zeros(2, body)
    mine["id"] = [10 * r, 10 * r + 1]
    mine["pos"] = np.arange(6.0).reshape(2, 3) + 100 * r
    mine["stress"] = r
    b[2 * r:2 * r + 2] = mine
    v = f.create_dataset("velocity", shape=(n,), dtype=np.dtype(("<f8", (3,))))
    v[r] = [r, r + 0.5, r + 0.25]
    f.attrs["origin"] = np.array((7, [1.0, 2.0, 3.0], [[1, 2], [3, 4]]), dtype=body)
'''


@pytest.mark.parametrize("engine", ["hdf5", "log"])
@pytest.mark.parametrize("ranks", [1, 2])
def test_array_datatypes_read_by_h5py(tmp_path, monkeypatch, engine, ranks):
    """HDF5 array datatypes (a compound's vector and tensor members, and a
    dataset of 3-vectors) written by h5loom's Python package, read by h5py."""
    import sys
    script = tmp_path / "writer.py"
    script.write_text(ARRAY_WRITER)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    subprocess.run([MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", str(ranks), sys.executable,
                    str(script), "arrays.h5", engine], check=True, timeout=300, capture_output=True, cwd=tmp_path,
                   env=env)
    monkeypatch.chdir(tmp_path)  # the log engine's front file names its log relative to the file's directory
    with h5py.File("arrays.h5", "r") as f:
        b = f["bodies"]
        assert b.dtype["pos"] == np.dtype(("<f8", (3,))) and b.dtype["stress"] == np.dtype(("<f4", (2, 2)))
        data = b[...]
        for r in range(ranks):
            np.testing.assert_array_equal(data["id"][2 * r:2 * r + 2], [10 * r, 10 * r + 1])
            np.testing.assert_array_equal(data["pos"][2 * r:2 * r + 2], np.arange(6.0).reshape(2, 3) + 100 * r)
            assert (data["stress"][2 * r:2 * r + 2] == r).all()
        assert f["velocity"].dtype == np.dtype(("<f8", (3,)))
        np.testing.assert_array_equal(f["velocity"][...], [[r, r + 0.5, r + 0.25] for r in range(ranks)])
        origin = f.attrs["origin"]
        assert origin["id"] == 7 and origin["pos"].tolist() == [1.0, 2.0, 3.0]


OPAQUE_WRITER = r'''
from mpi4py import MPI

path, engine = "opaque.h5", "ENGINE"
r, n = MPI.COMM_WORLD.rank, MPI.COMM_WORLD.size
with h5loom.File(path, "w", engine=engine) as f:
    d = f.create_dataset("blobs", shape=(2 * n,), dtype=h5loom.opaque_dtype(3, "rgb"))
    d[2 * r:2 * r + 2] = np.frombuffer(bytes([r, 1, 2, r, 4, 5]), dtype=d.dtype)
    t = f.create_dataset("times", shape=(n,), dtype="M8[us]")
    t[r] = np.datetime64("2026-11-26T06:00:00", "us") + r
'''


@pytest.mark.parametrize("engine", ["hdf5", "log"])
@pytest.mark.parametrize("ranks", [1, 2])
def test_opaque_types_both_ways_with_h5py(tmp_path, monkeypatch, run_h5loom, engine, ranks):
    """Opaque types written by h5loom (tag and bytes; datetime64 with h5py's
    'NUMPY:' tag) read by h5py, and h5py's opaque and datetime64 data read by h5loom."""
    run_h5loom(OPAQUE_WRITER.replace("ENGINE", engine), ranks)
    monkeypatch.chdir(tmp_path)  # the log engine's front file names its log relative to the file's directory
    with h5py.File("opaque.h5", "r") as f:
        assert f["blobs"].id.get_type().get_class() == h5py.h5t.OPAQUE
        assert f["blobs"].id.get_type().get_tag() == b"rgb"
        # (h5py reads opaque data as untagged 'V3', which HDF5 will not convert a
        # tagged type to: read with the dataset's own type)
        blobs = np.empty(2 * ranks, dtype="V3")
        f["blobs"].id.read(h5py.h5s.ALL, h5py.h5s.ALL, blobs, mtype=f["blobs"].id.get_type())
        assert blobs.tobytes() == b"".join(bytes([r, 1, 2, r, 4, 5]) for r in range(ranks))
        assert f["times"].dtype == np.dtype("M8[us]")
        np.testing.assert_array_equal(f["times"][...], np.datetime64("2026-11-26T06:00:00", "us") + np.arange(ranks))
    with h5py.File("native.h5", "w") as f:
        f["v"] = np.frombuffer(b"0123456789", dtype="V2")
        days = np.array(["2000-01-01"], dtype="M8[D]")
        f["t"] = days.astype(h5py.opaque_dtype(days.dtype))
    run_h5loom('''
with h5loom.File("native.h5", "r") as f:
    assert f["v"].dtype == np.dtype("V2") and f["v"][...].tobytes() == b"0123456789"
    assert f["t"].dtype == np.dtype("M8[D]") and f["t"][0] == np.datetime64("2000-01-01")
''')


EMPTY_WRITER = r'''
path, engine = "empty.h5", "ENGINE"
with h5loom.File(path, "w", engine=engine) as f:
    f["nothing"] = h5loom.Empty("f4")
    f["nothing"].attrs["flag"] = h5loom.Empty("i8")
    f.attrs["title"] = "empties"
'''


@pytest.mark.parametrize("engine", ["hdf5", "log"])
@pytest.mark.parametrize("ranks", [1, 2])
def test_null_dataspaces_both_ways_with_h5py(tmp_path, monkeypatch, run_h5loom, engine, ranks):
    """h5loom.Empty datasets and attributes read by h5py as h5py.Empty (HDF5's
    null dataspace), and h5py's Empty values read by h5loom."""
    run_h5loom(EMPTY_WRITER.replace("ENGINE", engine), ranks)
    monkeypatch.chdir(tmp_path)
    with h5py.File("empty.h5", "r") as f:
        assert f["nothing"].shape is None
        assert f["nothing"][()] == h5py.Empty("f4")
        assert f["nothing"].attrs["flag"] == h5py.Empty("i8")
        assert f.attrs["title"] in ("empties", b"empties")
    with h5py.File("native.h5", "w") as f:
        f["e"] = h5py.Empty("i2")
        f.attrs["none"] = h5py.Empty("f8")
    run_h5loom('''
with h5loom.File("native.h5", "r") as f:
    assert f["e"][()] == h5loom.Empty("i2") and f["e"].shape is None
    assert f.attrs["none"] == h5loom.Empty("f8")
''')


@pytest.mark.parametrize("engine", ["hdf5", "log"])
def test_big_endian_types_both_ways_with_h5py(tmp_path, monkeypatch, run_h5loom, engine):
    """numpy's big-endian dtypes: h5loom keeps the byte order as the file's type
    (h5py sees '>f8' in the hdf5 engine's file; the log engine's front file maps
    the log's bytes, which are in the host's order) and reads values in the
    host's order; h5py's big-endian data reads back the same."""
    monkeypatch.chdir(tmp_path)
    values = np.array([1.5, -2.25, 1e300], dtype=">f8")
    run_h5loom(f'''
values = np.array([1.5, -2.25, 1e300], dtype=">f8")
with h5loom.File("be.h5", "w", engine="{engine}") as f:
    f.create_dataset("x", data=values)
    f["x"].attrs["n"] = np.array([258, -3], dtype=">i4")
with h5loom.File("be.h5", "r") as f:
    assert f["x"].dtype == np.float64  # in memory: the host's order
    np.testing.assert_array_equal(f["x"][...], values)
    np.testing.assert_array_equal(f["x"].attrs["n"], [258, -3])
''')
    with h5py.File("be.h5", "r") as f:
        np.testing.assert_array_equal(f["x"][...], values)
        assert f["x"].attrs["n"].dtype == np.dtype(">i4")
        if engine == "hdf5":
            assert f["x"].dtype == np.dtype(">f8")
    with h5py.File("native.h5", "w") as f:
        f["y"] = np.arange(4, dtype=">u2")
    run_h5loom('''
with h5loom.File("native.h5", "r") as f:
    np.testing.assert_array_equal(f["y"][...], [0, 1, 2, 3])
    assert f["y"].dtype == np.uint16
''')


def test_variable_length_data_of_h5py_reads_and_converts(tmp_path, monkeypatch, run_h5loom):
    """h5py's ragged arrays (vlen_dtype), records with variable-length strings
    and a committed vlen type: h5loom reads them value for value, and h5loom
    convert copies them into a log file that stock h5py reads back the same."""
    monkeypatch.chdir(tmp_path)
    event = np.dtype([("name", h5py.string_dtype()), ("hits", h5py.vlen_dtype("i2")), ("e", "<f8")])
    with h5py.File("ragged.h5", "w") as f:
        ragged = f.create_dataset("ragged", (3,), dtype=h5py.vlen_dtype("i4"))
        ragged[0], ragged[1] = [1, 2, 3], [4]  # ragged[2] never written: empty
        events = f.create_dataset("events", (2,), dtype=event)
        events[0] = ("first é", np.array([5, 6], "i2"), 0.5)
        events[1] = ("", np.array([], "i2"), -1.0)
        f["hits"] = h5py.vlen_dtype("f8")  # a committed type
        f["plain"] = np.arange(3)
        f["plain"].attrs["units"] = "m"   # h5py: a variable-length UTF-8 string
        f.attrs["note"] = "ragged rows"
    run_h5loom('''
with h5loom.File("ragged.h5", "r", engine="hdf5") as f:
    assert f["plain"].attrs["units"] == "m" and f.attrs["note"] == "ragged rows"
    assert f["ragged"].dtype == np.dtype("O") and f["ragged"].dtype.metadata["vlen"] == np.dtype("i4")
    assert f["hits"].dtype.metadata["vlen"] == np.dtype("f8")
    assert [r.tolist() for r in f["ragged"][...]] == [[1, 2, 3], [4], []]
    assert f["ragged"][0].dtype == np.dtype("i4")
    e = f["events"][...]
    assert e["name"].tolist() == ["first é", ""] and e["e"].tolist() == [0.5, -1.0]
    assert [h.tolist() for h in e["hits"]] == [[5, 6], []]
    np.testing.assert_array_equal(f["plain"][...], np.arange(3))
''')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    done = subprocess.run([str(BUILD / "h5loom"), "convert", "--to", "log", "ragged.h5", "copy.h5"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with h5py.File("copy.h5", "r") as f:
        assert [r.tolist() for r in f["ragged"][...]] == [[1, 2, 3], [4], []]
        e = f["events"][...]
        assert [n.decode() for n in e["name"]] == ["first é", ""]
        assert [h.tolist() for h in e["hits"]] == [[5, 6], []]


def test_h5py_files_convert(tmp_path, monkeypatch):
    """h5loom convert of a plain h5py file (no creation-order tracking, UTF-8
    string attributes): members and attributes by name, values kept."""
    monkeypatch.chdir(tmp_path)
    with h5py.File("plain.h5", "w") as f:
        f["a/x"] = np.arange(3)
        f["a"].attrs["units"] = "m"
        f.attrs["z"], f.attrs["b"] = 1, 2
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    done = subprocess.run([str(BUILD / "h5loom"), "convert", "plain.h5", "copy.h5"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with h5py.File("copy.h5", "r") as f:
        np.testing.assert_array_equal(f["a/x"][...], np.arange(3))
        assert f["a"].attrs["units"] in ("m", b"m") and sorted(f.attrs) == ["b", "z"]


SHARED_TYPE_WRITER = r'''
with h5loom.File("shared.h5", "w", engine="ENGINE") as f:
    f["types/particle"] = np.dtype([("x", "<f8"), ("id", "<i4")])
    ds = f.create_dataset("particles", shape=(2 * f.size,), dtype=f["types/particle"])
    ds[2 * f.rank:2 * f.rank + 2] = np.array([(1.5 + f.rank, f.rank), (2.5, 10 + f.rank)], dtype=ds.dtype)
    f.create_dataset("own", shape=(1,), dtype=np.dtype([("x", "<f8"), ("id", "<i4")]))
'''


@pytest.mark.parametrize("engine", ["hdf5", "log"])
@pytest.mark.parametrize("ranks", [1, 2])
def test_datasets_share_named_datatypes_as_h5py_sees_them(tmp_path, monkeypatch, run_h5loom, engine, ranks):
    """A dataset made with a named datatype shares it in the file (the log
    engine's front file too): h5py sees its type committed, and the named type's
    reference count counting it."""
    run_h5loom(SHARED_TYPE_WRITER.replace("ENGINE", engine), ranks)
    monkeypatch.chdir(tmp_path)  # the log engine's front file names its log relative to the file's directory
    with h5py.File("shared.h5", "r") as f:
        assert f["particles"].id.get_type().committed()
        assert not f["own"].id.get_type().committed()
        assert h5py.h5o.get_info(f["types/particle"].id).rc == 2  # its name and the dataset
        data = f["particles"][...]
        assert data.dtype.names == ("x", "id")
        np.testing.assert_array_equal(data["id"], np.array([[r, 10 + r] for r in range(ranks)]).ravel())
