"""Object references and variable-length strings from Python, as h5py does
them: ``obj.ref``, ``f[ref]``, ``h5loom.ref_dtype`` datasets, attributes and
structured fields read back as Reference objects; ``h5loom.string_dtype()``
datasets read back as object arrays of str.

Each test runs on every engine that declares the conformance group
("references", "reference_datasets", "vlen_strings"), and is skipped, naming the group, on the
others. The hdf5 engine keeps variable-length strings only with a
one-process driver (parallel HDF5 cannot write them): ``sec2`` here."""
import pickle

import numpy as np
import pytest

import h5loom

SEC2 = {"engine": "hdf5", "hdf5": {"driver": "sec2"}}
REF_ENGINES = ["hdf5", "log"]
STRING_ENGINES = [pytest.param(SEC2, id="hdf5-sec2"), pytest.param("log", id="log")]


def need(engine, group):
    if group not in h5loom.engine_groups(engine):
        pytest.skip(f"engine {engine} does not declare the conformance group '{group}'")


# netCDF's REFERENCE_LIST: the dataset that uses a dimension scale, and which dimension.
DIMENSION_USE = np.dtype({"names": ["dataset", "dimension"], "formats": [h5loom.ref_dtype, "<i4"],
                          "offsets": [0, 8], "itemsize": 16})


# ---- the Reference value ----------------------------------------------------------


def test_reference_is_an_immutable_hashable_value():
    null, a, b = h5loom.Reference(), h5loom.Reference(7), h5loom.Reference(7)
    assert not null and a and null.token == 0 and a.token == 7
    assert a == b and a != null and a != 7 and hash(a) == hash(b)
    assert len({a, b, null}) == 2 and {a: "x"}[b] == "x"
    assert repr(a) == "<h5loom.Reference 7>" and repr(null) == "<h5loom.Reference (null)>"
    assert pickle.loads(pickle.dumps(a)) == a
    with pytest.raises(AttributeError):
        a.token = 3
    with pytest.raises(AttributeError):
        a._token = 3
    for bad in (-1, 2**64, 1.5, "7", True):
        with pytest.raises(h5loom.DatatypeError):
            h5loom.Reference(bad)
    assert h5loom.ref_dtype.kind == "O" and h5loom.ref_dtype.metadata == {"ref": h5loom.Reference}


def test_string_dtype_follows_h5py():
    v = h5loom.string_dtype()
    assert v.kind == "O" and v.metadata == {"vlen": str, "encoding": "utf-8"}
    assert h5loom.string_dtype("ascii").metadata == {"vlen": str, "encoding": "ascii"}
    assert h5loom.string_dtype(encoding="ascii", length=8) == np.dtype("S8")
    assert h5loom.string_dtype(length=8).metadata == {"encoding": "utf-8"}
    assert h5loom.string_dtype(12) == np.dtype("S12")  # the older order: a length first
    assert h5loom.string_dtype(12, "ascii").metadata == {"encoding": "ascii"}
    with pytest.raises(h5loom.DatatypeError, match="latin-1"):
        h5loom.string_dtype("latin-1")
    with pytest.raises(h5loom.DatatypeError, match="positive"):
        h5loom.string_dtype(length=0)


def test_engine_groups():
    assert "references" in h5loom.engine_groups("hdf5")
    assert "vlen_strings" not in h5loom.engine_groups("hdf5")  # parallel HDF5 (MPI-IO) cannot write them
    assert "vlen_strings" in h5loom.engine_groups(SEC2)
    assert h5loom.engine_groups("hdf5") == sorted(h5loom.engine_groups("hdf5"))
    with pytest.raises(h5loom.ConfigError, match="bogus"):
        h5loom.engine_groups("bogus")


# ---- references -------------------------------------------------------------------


@pytest.mark.parametrize("engine", REF_ENGINES)
def test_references_in_datasets_attributes_and_records(tmp_path, engine):
    need(engine, "reference_datasets")  # parallel HDF5 1.12+ cannot write datasets of references
    path = tmp_path / "refs.h5"
    with h5loom.File(path, "w", engine=engine) as f:
        time = f.create_dataset("time", shape=(4,), dtype="f8")
        cells = f.create_group("grid/cells")
        temp = f.create_dataset("grid/temperature", shape=(4, 3), dtype="f4")
        targets = [time.ref, cells.ref, temp.ref, f.ref]
        assert all(targets) and len(set(targets)) == 4
        assert f["time"].ref == time.ref and f["grid"]["temperature"].ref == temp.ref
        assert isinstance(f[time.ref], h5loom.Dataset) and f[time.ref].path == "/time"
        assert isinstance(f[cells.ref], h5loom.Group) and f["grid"][cells.ref].path == "/grid/cells"
        assert f.dereference(f.ref) == "/"
        # a dataset of references: from a dtype, and inferred from the data
        refs = f.create_dataset("refs", shape=(4,), dtype=h5loom.ref_dtype)
        refs[...] = targets
        f.create_dataset("inferred", data=[temp.ref, time.ref])
        f["implicit"] = [cells.ref]
        # attributes: one reference, a list, records with a reference field (netCDF's REFERENCE_LIST)
        time.attrs["users"] = [temp.ref]
        temp.attrs["scale"] = time.ref
        uses = np.array([(temp.ref, 0), (temp.ref, 1)], dtype=DIMENSION_USE)
        time.attrs["REFERENCE_LIST"] = uses
        time.attrs["first_use"] = uses[0]
        # a compound dataset with a reference field, written from tuples
        records = f.create_dataset("uses", shape=(2,), dtype=DIMENSION_USE)
        records[...] = [(temp.ref, 0), (time.ref, 1)]
        f.move("grid/cells", "grid/cells_v2")  # references follow the object
    with h5loom.File(path, "r") as f:
        refs = f["refs"]
        assert refs.dtype == h5loom.ref_dtype and refs.dtype.metadata == {"ref": h5loom.Reference}
        got = refs[...]
        assert got.dtype == object and all(isinstance(r, h5loom.Reference) for r in got)
        assert [f.dereference(r) for r in got] == ["/time", "/grid/cells_v2", "/grid/temperature", "/"]
        assert f[refs[1]].path == "/grid/cells_v2" and isinstance(refs[2], h5loom.Reference)
        assert [f[r].path for r in f["inferred"][...]] == ["/grid/temperature", "/time"]
        assert f[f["implicit"][0]].path == "/grid/cells_v2"
        users = f["time"].attrs["users"]
        assert users.dtype == object and f[users[0]].path == "/grid/temperature"
        scale = f["grid/temperature"].attrs["scale"]
        assert isinstance(scale, h5loom.Reference) and f[scale].path == "/time"
        lst = f["time"].attrs["REFERENCE_LIST"]
        assert lst.dtype.names == ("dataset", "dimension") and lst.dtype.fields["dataset"][0].metadata["ref"]
        assert [f.dereference(r) for r in lst["dataset"]] == ["/grid/temperature"] * 2
        assert list(lst["dimension"]) == [0, 1]
        first = f["time"].attrs["first_use"]
        assert f[first["dataset"]].path == "/grid/temperature" and first["dimension"] == 0
        rec = f["uses"][...]
        assert rec.dtype == DIMENSION_USE and [f[r].path for r in rec["dataset"]] == ["/grid/temperature", "/time"]
        assert list(rec["dimension"]) == [0, 1]
        assert f["uses"][1]["dimension"] == 1


@pytest.mark.parametrize("engine", REF_ENGINES)
def test_null_dangling_and_bad_references_are_refused(tmp_path, engine):
    need(engine, "reference_datasets")
    with h5loom.File(tmp_path / "bad.h5", "w", engine=engine) as f:
        gone = f.create_dataset("gone", shape=(1,), dtype="i1").ref
        del f["gone"]
        with pytest.raises(h5loom.NotFoundError):
            f[gone]
        with pytest.raises(h5loom.NotFoundError, match="null reference"):
            f.dereference(h5loom.Reference())
        with pytest.raises(h5loom.DatatypeError, match="not an h5loom.Reference"):
            f.dereference("/gone")
        refs = f.create_dataset("refs", shape=(3,), dtype=h5loom.ref_dtype)
        assert refs.fillvalue == h5loom.Reference() and not refs[0]  # never written: null
        refs[0] = f.ref
        for bad in ([1, 2, 3], "x", [f.ref, 5, None]):
            with pytest.raises(h5loom.DatatypeError, match="h5loom.Reference"):
                refs[...] = bad
        assert refs[0] == f.ref and not refs[1]  # the refused writes wrote nothing
        refs[1:] = None  # None is the null reference
        with pytest.raises(h5loom.DatatypeError, match="no fill value"):
            f.create_dataset("filled", shape=(1,), dtype=h5loom.ref_dtype, fillvalue=f.ref)
        with pytest.raises(h5loom.DatatypeError, match="object dtype without"):
            f.create_dataset("objects", shape=(1,), dtype=object)
        with pytest.raises(h5loom.DatatypeError, match="object array"):
            f.attrs["mixed"] = np.array([f.ref, 1], dtype=object)


def test_compound_and_enum_attributes_round_trip(tmp_path):
    point = np.dtype({"names": ["x", "tag"], "formats": ["<f8", "S4"], "offsets": [0, 8], "itemsize": 16})
    color = h5loom.enum_dtype({"red": 0, "green": 1}, "u1")
    with h5loom.File(tmp_path / "a.h5", "w", engine="hdf5") as f:
        f.attrs["points"] = np.array([(1.5, b"a"), (2.5, b"bc")], dtype=point)
        f.attrs["origin"] = np.array((0.25, b"o"), dtype=point)
        f.attrs["colors"] = np.array([1, 0], dtype=color)
        f.attrs["names"] = np.array(["a", "bc"])  # numpy text: a list of strings
    with h5loom.File(tmp_path / "a.h5", "r") as f:
        pts = f.attrs["points"]
        assert pts.dtype == point and list(pts["x"]) == [1.5, 2.5] and list(pts["tag"]) == [b"a", b"bc"]
        assert f.attrs["origin"]["x"] == 0.25
        assert f.attrs["colors"].dtype.metadata["enum"] == {"red": 0, "green": 1}
        assert list(f.attrs["colors"]) == [1, 0]
        assert f.attrs["names"] == ["a", "bc"]


# ---- variable-length strings -----------------------------------------------------------


def text(i):
    return "" if i % 3 == 0 else f"element {i} " + "x" * (i * 37 % 300) + " été"


@pytest.mark.parametrize("engine", STRING_ENGINES)
def test_variable_length_strings_round_trip(tmp_path, engine):
    need(engine, "vlen_strings")
    path = tmp_path / "s.h5"
    with h5loom.File(path, "w", engine=engine) as f:
        names = f.create_dataset("names", shape=(9,), maxshape=(None,), dtype=h5loom.string_dtype())
        names[...] = [text(i) for i in range(9)]
        names[1] = "ünïcode ✓"  # one element
        names[2:4] = np.array(["numpy", "text"])  # numpy str arrays
        names[4:6] = [b"bytes", "mixed"]  # bytes (valid UTF-8) and str
        names.extend((10,))
        names[9] = np.array(["object array"], dtype=object)[0]
        f.create_dataset("inferred", data=["a", "bb", ""])  # str data: variable-length UTF-8
        f.create_dataset("typed", data=np.array([["x", "yy"], ["zzz", ""]], dtype=object), dtype=str)
        ascii = f.create_dataset("ascii", shape=(2,), dtype=h5loom.string_dtype("ascii"))
        ascii[...] = ["abc", b"de"]
        f.create_dataset("unwritten", shape=(2,), dtype=h5loom.string_dtype())
    want = [text(i) for i in range(9)] + ["object array"]
    want[1], want[2], want[3], want[4], want[5] = "ünïcode ✓", "numpy", "text", "bytes", "mixed"
    with h5loom.File(path, "r") as f:
        names = f["names"]
        assert names.dtype.kind == "O" and names.dtype.metadata == {"vlen": str, "encoding": "utf-8"}
        got = names[...]
        assert got.dtype == object and got.shape == (10,) and list(got) == want
        assert all(type(s) is str for s in got)
        assert names[1] == "ünïcode ✓" and list(names[::3]) == want[::3]
        assert names.fillvalue == ""
        assert list(f["inferred"][...]) == ["a", "bb", ""]
        assert f["typed"].shape == (2, 2) and f["typed"][1, 0] == "zzz"
        assert f["ascii"].dtype.metadata["encoding"] == "ascii"
        assert list(f["ascii"][...]) == ["abc", "de"]  # str for ASCII too
        assert list(f["unwritten"][...]) == ["", ""]
        out = np.empty(2, dtype=h5loom.string_dtype())
        f["inferred"].read(h5loom.Selection.box([1], [2]), out=out)
        assert list(out) == ["bb", ""]


@pytest.mark.parametrize("engine", STRING_ENGINES)
def test_bad_strings_are_refused_and_lose_nothing(tmp_path, engine):
    need(engine, "vlen_strings")
    with h5loom.File(tmp_path / "bad.h5", "w", engine=engine) as f:
        s = f.create_dataset("s", data=["kept", "too"])
        ascii = f.create_dataset("a", shape=(1,), dtype=h5loom.string_dtype("ascii"))
        for bad, match in (([1, 2], "not a str or bytes"), ([None, "x"], "not a str or bytes"),
                           (np.arange(2), "int64 data"), ([b"\xff\xfe", "x"], "utf-8"),
                           (["nul\0inside", "x"], "NUL")):
            with pytest.raises(h5loom.DatatypeError, match=match):
                s[...] = bad
        with pytest.raises(h5loom.DatatypeError, match="ascii"):
            ascii[0] = "été"
        with pytest.raises(h5loom.SelectionError):
            s[...] = ["a", "b", "c"]
        with pytest.raises(h5loom.DatatypeError, match="no fill value"):
            f.create_dataset("filled", shape=(1,), dtype=h5loom.string_dtype(), fillvalue="x")
        assert list(s[...]) == ["kept", "too"]


def test_parallel_hdf5_refuses_variable_length_strings(tmp_path):
    with h5loom.File(tmp_path / "mpio.h5", "w", engine="hdf5") as f:
        with pytest.raises(h5loom.UsageError, match="cannot write variable-length data"):
            f.create_dataset("s", shape=(2,), dtype=h5loom.string_dtype())
        f.create_dataset("fixed", data=np.array([b"ok"], dtype="S4"))  # the file stays usable


@pytest.mark.parametrize("engine", STRING_ENGINES)
def test_ragged_arrays_and_records_with_strings_round_trip(tmp_path, monkeypatch, engine):
    """vlen_dtype (h5py's ragged arrays), sequences of strings and records with
    a variable-length string and a sequence: written element by element and
    whole, read back as numpy arrays and str; stock h5py reads the same."""
    need(engine, "variable_length")
    monkeypatch.chdir(tmp_path)  # (stock readers find the log engine's data from the file's directory)
    path = tmp_path / "ragged.h5"
    event = np.dtype([("name", h5loom.string_dtype()), ("hits", h5loom.vlen_dtype("i8")), ("e", "f8")])
    with h5loom.File(path, "w", engine=engine) as f:
        ragged = f.create_dataset("ragged", shape=(2, 3), dtype=h5loom.vlen_dtype("f4"))
        assert ragged.dtype.metadata["vlen"] == np.dtype("f4")
        rows = np.empty((2, 3), dtype=object)
        for j, k in np.ndindex(2, 3):
            rows[j, k] = np.arange(3 * j + k, dtype="f4")
        ragged[...] = rows
        ragged[1, 2] = [7.5]
        events = f.create_dataset("events", shape=(3,), dtype=event)
        events[0:2] = [("first é", [1, 2, 3], 0.5), (None, [], -1.0)]  # events[2] never written
        words = f.create_dataset("words", shape=(2,), dtype=h5loom.vlen_dtype(h5loom.string_dtype()))
        words[0] = ["a", "bc"]
        with pytest.raises(h5loom.DatatypeError, match="NUL"):
            words[1] = ["bad\0"]
        with pytest.raises(h5loom.DatatypeError, match="'/ragged'"):
            ragged[0, 0:2] = [[1.0]]  # two elements selected, one given
        swapped = np.dtype([("e", "f8"), ("hits", h5loom.vlen_dtype("i8")), ("name", h5loom.string_dtype())])
        with pytest.raises(h5loom.DatatypeError, match="fields"):
            events[2:3] = np.zeros(1, dtype=swapped)  # not cast by position
        # Padded records inside an array, beside a string: packed without their padding.
        pad = np.dtype({"names": ["x", "y"], "formats": ["i1", "<i4"], "offsets": [0, 4], "itemsize": 8})
        rec = np.dtype([("a", "<i2"), ("b", pad, (2,)), ("s", h5loom.string_dtype())])
        padded = f.create_dataset("padded", shape=(1,), dtype=rec)
        padded[0] = (3, [(1, 10), (2, 20)], "ok")
        got = padded[0]
        assert got["a"] == 3 and got["b"]["y"].tolist() == [10, 20] and got["s"] == "ok"
        refs = np.empty(1, dtype=h5loom.vlen_dtype(h5loom.ref_dtype))
        refs[0] = np.array([None], dtype=object)
        with pytest.raises(h5loom.DatatypeError, match="references"):
            f.attrs["refs"] = refs
    with h5loom.File(path, "r", engine=engine) as f:
        got = f["ragged"][...]
        assert got.shape == (2, 3) and got[0, 2].dtype == np.dtype("f4")
        assert [g.tolist() for g in got.ravel()] == [[], [0], [0, 1], [0, 1, 2], [0, 1, 2, 3], [7.5]]
        e = f["events"][...]
        assert e["name"].tolist() == ["first é", None, None]
        assert [h.tolist() for h in e["hits"]] == [[1, 2, 3], [], []] and e["e"].tolist() == [0.5, -1.0, 0.0]
        assert f["words"][0].tolist() == ["a", "bc"] and f["words"][1].size == 0
        assert f["events"][1]["e"] == -1.0
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "r") as f:
        assert [g.tolist() for g in f["ragged"][...].ravel()][3:] == [[0, 1, 2], [0, 1, 2, 3], [7.5]]
        assert f["events"][0]["name"] == "first é".encode() and f["events"][0]["hits"].tolist() == [1, 2, 3]
        assert [w.decode() for w in f["words"][0]] == ["a", "bc"]


@pytest.mark.parametrize("engine", STRING_ENGINES)
def test_attributes_of_ragged_arrays_and_records(tmp_path, engine):
    need(engine, "variable_length")
    path = tmp_path / "attrs.h5"
    event = np.dtype([("name", h5loom.string_dtype()), ("hits", h5loom.vlen_dtype("i8"))])
    ragged = np.empty(3, dtype=h5loom.vlen_dtype("f8"))
    ragged[0], ragged[1], ragged[2] = np.arange(2.0), np.array([]), np.array([7.5])
    with h5loom.File(path, "w", engine=engine) as f:
        f.attrs["ragged"] = ragged
        f.attrs["events"] = np.array([("a", [1, 2]), (None, [])], dtype=event)
    with h5loom.File(path, "r", engine=engine) as f:
        got = f.attrs["ragged"]
        assert got.dtype.metadata["vlen"] == np.dtype("f8")
        assert [g.tolist() for g in got] == [[0.0, 1.0], [], [7.5]]
        e = f.attrs["events"]
        assert e["name"].tolist() == ["a", None] and [h.tolist() for h in e["hits"]] == [[1, 2], []]
