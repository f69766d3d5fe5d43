"""Compound (numpy structured), fixed-length string and enum datasets on every
engine: written, read back, sliced, reopened with the same dtype."""
import numpy as np
import pytest

import h5loom

ENGINES = ["hdf5", "log"]

POS = np.dtype([("x", "<f4"), ("y", "<f4")])
PARTICLE = np.dtype({"names": ["id", "pos", "mass", "tag"],
                     "formats": ["<i8", POS, "<f8", "S6"],
                     "offsets": [0, 8, 16, 24], "itemsize": 32})


def particles(n, base=0):
    p = np.zeros(n, dtype=PARTICLE)
    p["id"] = np.arange(n) + base
    p["pos"]["x"] = np.arange(n) * 0.5
    p["pos"]["y"] = -np.arange(n, dtype=np.float32)
    p["mass"] = 1.5
    p["tag"] = [f"p{i}".encode() for i in range(n)]
    return p


@pytest.mark.parametrize("engine", ENGINES)
def test_structured_arrays_round_trip(tmp_path, engine):
    path = tmp_path / "p.h5"
    data = particles(10)
    with h5loom.File(path, "w", engine=engine) as f:
        ds = f.create_dataset("particles", data=data)
        assert ds.dtype == PARTICLE and ds.dtype.fields == PARTICLE.fields
        ds[2:4] = particles(2, base=100)
    with h5loom.File(path, "r") as f:
        ds = f["particles"]
        assert ds.dtype.names == ("id", "pos", "mass", "tag")
        assert ds.dtype.fields["pos"][0].names == ("x", "y") and ds.dtype.itemsize == 32
        got = ds[...]
        want = data.copy()
        want[2:4] = particles(2, base=100)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(ds[::3]["id"], want[::3]["id"])
        assert ds[5]["tag"] == b"p5"


@pytest.mark.parametrize("engine", ENGINES)
def test_records_from_tuples_and_wrong_layouts(tmp_path, engine):
    dt = np.dtype([("a", "<i4"), ("b", "<f8")])
    with h5loom.File(tmp_path / "t.h5", "w", engine=engine) as f:
        ds = f.create_dataset("t", shape=(2,), dtype=dt)
        ds[...] = [(1, 2.5), (3, 4.5)]
        np.testing.assert_array_equal(ds[...]["b"], [2.5, 4.5])
        other = np.zeros(2, dtype=[("b", "<f8"), ("a", "<i4")])
        with pytest.raises(h5loom.DatatypeError, match="'/t'"):
            ds[...] = other
        with pytest.raises(h5loom.DatatypeError, match="an array of variable-length strings"):
            f.create_dataset("bad", shape=(1,), dtype=[("v", h5loom.string_dtype(), (3,))])


@pytest.mark.parametrize("engine", ENGINES)
def test_fixed_length_strings(tmp_path, engine):
    with h5loom.File(tmp_path / "s.h5", "w", engine=engine) as f:
        names = f.create_dataset("names", data=np.array([b"alpha", b"be", b"gamma!"], dtype="S6"))
        names[1] = b"beta"
        label = f.create_dataset("label", shape=(1,), dtype=h5loom.string_dtype(12))
        label[0] = "αβγ".encode()
        with pytest.raises(h5loom.DatatypeError):
            names[0] = b"much too long"
    with h5loom.File(tmp_path / "s.h5", "r") as f:
        assert f["names"].dtype == np.dtype("S6")
        assert list(f["names"][...]) == [b"alpha", b"beta", b"gamma!"]
        assert f["label"].dtype.metadata["encoding"] == "utf-8"
        assert f["label"][0].decode() == "αβγ"


@pytest.mark.parametrize("engine", ENGINES)
def test_enums(tmp_path, engine):
    dt = h5loom.enum_dtype({"electron": -1, "proton": 1, "ion": 7}, "i1")
    with h5loom.File(tmp_path / "e.h5", "w", engine=engine) as f:
        f.create_dataset("species", data=np.array([-1, 7, 1], dtype=dt))
    with h5loom.File(tmp_path / "e.h5", "r") as f:
        ds = f["species"]
        assert ds.dtype.metadata["enum"] == {"electron": -1, "proton": 1, "ion": 7}
        np.testing.assert_array_equal(ds[...], [-1, 7, 1])


@pytest.mark.parametrize("engine", ENGINES)
def test_conversions_that_would_change_values_are_refused(tmp_path, engine):
    dt = np.dtype([("n", "S4"), ("i", "<i4")])
    with h5loom.File(tmp_path / "c.h5", "w", engine=engine) as f:
        ds = f.create_dataset("r", shape=(1,), dtype=dt)
        with pytest.raises(h5loom.DatatypeError, match="change"):
            ds[...] = [("abcdefgh", 1)]
        with pytest.raises(h5loom.DatatypeError, match="change"):
            ds[...] = [("ab", 1.5)]
        ds[...] = [("ab", 2)]
        assert ds[0]["n"] == b"ab" and ds[0]["i"] == 2
        e = f.create_dataset("e", shape=(1,), dtype=h5loom.enum_dtype({"a": 0, "b": 1}, "u1"))
        with pytest.raises(h5loom.DatatypeError):
            e[...] = [-1]
        with pytest.raises(h5loom.DatatypeError):
            f.create_dataset("x", shape=(1,), dtype="i4", fillvalue=1.5)
        f32 = f.create_dataset("f", shape=(1,), dtype=[("v", "<f4")])
        f32[...] = [(0.1,)]  # float32's precision is no loss
        assert abs(f32[0]["v"] - 0.1) < 1e-7


@pytest.mark.parametrize("engine", ["hdf5", "log"])
def test_array_datatypes(tmp_path, engine):
    """HDF5 array datatypes: numpy sub-array dtypes, as a dataset's dtype (the
    array shows as trailing dimensions) and as fields of a structured dtype."""
    body = np.dtype([("id", "<i4"), ("pos", "<f8", (3,))])
    path = tmp_path / "a.h5"
    with h5loom.File(path, "w", engine=engine) as f:
        v = f.create_dataset("v", shape=(4,), dtype=np.dtype(("<f8", (3,))))
        assert v.dtype == np.dtype(("<f8", (3,))) and v.shape == (4,)
        v[...] = np.arange(12).reshape(4, 3)  # int64 converts safely to float64
        v[1] = [-1.0, -2.0, -3.0]
        with pytest.raises(h5loom.SelectionError, match="elements of shape"):
            v[0] = [1.0, 2.0]
        with pytest.raises(h5loom.DatatypeError, match="without losing values"):
            v[0] = np.array([1.5, 2, 3], dtype=np.complex128)
        b = f.create_dataset("b", shape=(2,), dtype=body)
        b[...] = np.array([(1, [1, 2, 3]), (2, [4, 5, 6])], dtype=body)
        f.attrs["origin"] = np.array((0, [0.5, 0.5, 0.5]), dtype=body)
    with h5loom.File(path, "r") as f:
        got = f["v"][...]
        assert got.shape == (4, 3) and got.dtype == np.float64
        np.testing.assert_array_equal(got[1], [-1.0, -2.0, -3.0])
        np.testing.assert_array_equal(got[2:], [[6, 7, 8], [9, 10, 11]])
        np.testing.assert_array_equal(f["v"][3], [9, 10, 11])
        assert f["b"].dtype == body
        np.testing.assert_array_equal(f["b"][...]["pos"], [[1, 2, 3], [4, 5, 6]])
        assert f.attrs["origin"]["pos"].tolist() == [0.5, 0.5, 0.5]


@pytest.mark.parametrize("engine", ENGINES)
def test_half_precision(tmp_path, engine):
    """numpy float16 datasets, attributes and structured fields, bit for bit."""
    path = tmp_path / "h.h5"
    values = np.array([0.1, -65504, 6e-8, np.inf, -0.0, 1 / 3], dtype=np.float16)
    rec = np.dtype([("t", "<f2"), ("n", "<i4")])
    with h5loom.File(path, "w", engine=engine) as f:
        d = f.create_dataset("h", data=values)
        d.attrs["scale"] = np.float16(0.25)
        f.create_dataset("r", data=np.array([(1.5, 7)], dtype=rec))
    with h5loom.File(path, "r") as f:
        assert f["h"].dtype == np.float16
        np.testing.assert_array_equal(f["h"][...].view("<u2"), values.view("<u2"))
        assert f["h"].attrs["scale"] == np.float16(0.25)
        assert f["r"].dtype == rec and f["r"][0]["t"] == np.float16(1.5)


@pytest.mark.parametrize("engine", ENGINES)
def test_opaque_bytes_and_datetimes(tmp_path, engine):
    """numpy void dtypes are HDF5's opaque type (the tag kept in the dtype's
    metadata, as opaque_dtype makes it); datetime64 and timedelta64 are opaque
    with h5py's 'NUMPY:' tag and come back as themselves."""
    path = tmp_path / "o.h5"
    raw = np.frombuffer(bytes(range(30)), dtype="V5")
    tagged = h5loom.opaque_dtype(4, "camera frame")
    stamps = np.array(["2026-11-26T06:00:00", "1970-01-01T00:00:01"], dtype="M8[s]")
    with h5loom.File(path, "w", engine=engine) as f:
        f.create_dataset("raw", data=raw)
        t = f.create_dataset("tagged", shape=(2,), dtype=tagged)
        t[...] = np.frombuffer(b"abcdwxyz", dtype=tagged)
        f.create_dataset("stamps", data=stamps)
        f.create_dataset("waits", data=np.array([5, -3], dtype="m8[ms]"))
        f.attrs["key"] = np.frombuffer(b"\x00\x01\x02", dtype="V3")[0]
        with pytest.raises(h5loom.DatatypeError):
            t[...] = np.zeros(2, dtype="V3")  # opaque bytes of another size are never padded or cut
    with h5loom.File(path, "r") as f:
        assert f["raw"].dtype == np.dtype("V5")
        assert f["raw"][...].tobytes() == bytes(range(30))
        assert f["raw"][2].tobytes() == bytes(range(10, 15))
        assert f["tagged"].dtype.metadata == {"opaque_tag": "camera frame"}
        assert f["tagged"][...].tobytes() == b"abcdwxyz"
        assert f["stamps"].dtype == np.dtype("M8[s]")
        np.testing.assert_array_equal(f["stamps"][...], stamps)
        np.testing.assert_array_equal(f["waits"][...], np.array([5, -3], dtype="m8[ms]"))
        assert f.attrs["key"].tobytes() == b"\x00\x01\x02"


@pytest.mark.parametrize("engine", ENGINES)
def test_empty_datasets_and_attributes(tmp_path, engine):
    """h5loom.Empty (h5py's): a dataset or an attribute of a dtype with no
    elements and no shape (HDF5's null dataspace), kept through reopen."""
    path = tmp_path / "e.h5"
    with h5loom.File(path, "w", engine=engine) as f:
        f["nothing"] = h5loom.Empty("f8")
        rec = f.create_dataset("records", data=h5loom.Empty(np.dtype([("a", "<i4"), ("b", "<f4")])))
        assert rec.shape is None and rec.size is None and rec.maxshape is None and rec.ndim == 0
        f.attrs["flag"] = h5loom.Empty("i2")
        f.attrs["label"] = h5loom.Empty("S8")
        f["nothing"].attrs["units"] = "m"
        with pytest.raises(h5loom.SelectionError):
            f.create_dataset("bad", shape=(3,), data=h5loom.Empty("f4"))
        with pytest.raises(h5loom.SelectionError, match="Empty"):
            f["nothing"][0] = 1.0
    with h5loom.File(path, "r") as f:
        assert f["nothing"][()] == h5loom.Empty("f8")
        assert f["nothing"][...] == h5loom.Empty("f8")
        assert f["nothing"].shape is None and f["nothing"].dtype == np.float64
        assert f["records"][()].dtype.names == ("a", "b")
        assert f.attrs["flag"] == h5loom.Empty("i2")
        assert f.attrs["label"] == h5loom.Empty("S8")
        assert f["nothing"].attrs["units"] == "m"
        with pytest.raises(h5loom.SelectionError, match="Empty"):
            f["nothing"][0:1]
        with pytest.raises(TypeError):
            len(f["nothing"])


def test_read_only_arrays_are_written(tmp_path):
    """Arrays numpy will not let anyone change (np.frombuffer, writeable=False)
    are written as they are, without a copy being needed."""
    path = tmp_path / "ro.h5"
    numbers = np.arange(6.0)
    numbers.flags.writeable = False
    with h5loom.File(path, "w", engine="hdf5") as f:
        f.create_dataset("x", data=numbers)
        f.create_dataset("s", data=np.frombuffer(b"abcdef", dtype="S3"))
        f.attrs["a"] = numbers[:3]
        d = f.create_dataset("y", shape=(6,), dtype="f8")
        d.write(numbers, copy=False)
    with h5loom.File(path, "r") as f:
        np.testing.assert_array_equal(f["x"][...], numbers)
        np.testing.assert_array_equal(f["y"][...], numbers)
        assert f["s"][...].tolist() == [b"abc", b"def"]
        np.testing.assert_array_equal(f.attrs["a"], [0.0, 1.0, 2.0])


@pytest.mark.parametrize("engine", ENGINES + ["zarr"])
def test_compression_as_h5py_takes_it(tmp_path, engine):
    """compression/compression_opts/shuffle/fletcher32 as in h5py: kept by every
    engine with "filters", values read back; bad arguments refused by name."""
    path = tmp_path / "z.h5"
    data = np.repeat(np.arange(50, dtype="f8"), 20)
    with h5loom.File(path, "w", engine=engine) as f:
        z = f.create_dataset("z", data=data, compression="gzip", compression_opts=7, shuffle=True, fletcher32=True)
        assert z.chunks is not None  # filters make it chunked
        f.create_dataset("level", data=data, compression=2)
        with pytest.raises(h5loom.UsageError, match="gzip level"):
            f.create_dataset("bad", data=data, compression="gzip", compression_opts=11)
        with pytest.raises(h5loom.UsageError, match="lzf"):
            f.create_dataset("lzf", data=data, compression="lzf")
        with pytest.raises(h5loom.UsageError):
            f.create_dataset("contiguous", data=data, compression="gzip", layout="contiguous")
    with h5loom.File(path, "r") as f:
        z = f["z"]
        assert (z.compression, z.compression_opts, z.shuffle, z.fletcher32) == ("gzip", 7, True, True)
        assert [flt[0] for flt in z.filters] == [2, 1, 3]
        np.testing.assert_array_equal(z[...], data)
        assert f["level"].compression_opts == 2 and not f["level"].shuffle
        assert "bad" not in f and "lzf" not in f


@pytest.mark.parametrize("engine", ["hdf5", "log", "zarr"])
def test_dimension_names(tmp_path, engine):
    """dim_names: kept by engines with "dimension_names" (zarr), refused by the
    others naming the engine; the wrong number refused naming the dataset."""
    path = tmp_path / "dims.h5"
    keeps = "dimension_names" in h5loom.engine_groups(engine)
    assert keeps == (engine == "zarr")
    with h5loom.File(path, "w", engine=engine) as f:
        if not keeps:
            with pytest.raises(h5loom.UsageError, match=f"engine '{engine}'"):
                f.create_dataset("t", shape=(2, 3), dtype="f4", dim_names=("y", "x"))
            assert "t" not in f
            return
        f.create_dataset("t", data=np.ones((2, 3), "f4"), dim_names=("y", None))
        f.create_dataset("plain", shape=(4,), dtype="i2")
        with pytest.raises(h5loom.SelectionError, match="'/bad'"):
            f.create_dataset("bad", shape=(2, 3), dim_names=("x",))
    with h5loom.File(path, "r") as f:
        assert f["t"].dim_names == ("y", "")
        assert f["plain"].dim_names is None
        np.testing.assert_array_equal(f["t"][...], np.ones((2, 3), "f4"))
