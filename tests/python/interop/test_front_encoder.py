"""The log engine's front file encoded by the engine itself (front_image.cpp)
against the one HDF5's library makes (knob front_encoder "hdf5"): the same
tree written both ways, at 1, 2 and 4 ranks, must read the same through h5py -
names and their order, types, shapes, values, fill values, external storage,
attributes and their order - and h5dump must read it. Trees the encoder does
not hold (a soft link here) fall back to the library. Datasets whose blocks
need a virtual dataset are encoded too: their mappings in a global heap."""
import subprocess

import h5py
import numpy as np
import pytest

WRITER = """
import sys
path, encoder = sys.argv[1], sys.argv[2]
engine = {"engine": "log", "log": {"front_encoder": encoder}}
with h5loom.File(path, "w", engine=engine) as f:
    r, n = f.rank, f.size
    f.attrs["title"] = "front encoder test"
    f.attrs["steps"] = np.int32(3)
    f.attrs["dims"] = np.array([4, 5, 6], dtype=np.uint16)
    f.attrs["labels"] = ["x", "yy", ""]
    f.attrs["half"] = np.float16(1.5)
    types = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"]
    g = f.create_group("types")
    for t in types:  # 11 members: more than a header keeps by default
        ds = g.create_dataset(t, shape=(n, 3), dtype=t)
        ds[r:r + 1, :] = (np.arange(3) + 10 * r + 1).astype(t).reshape(1, 3)
        ds.attrs["kind"] = t
        ds.attrs["one"] = np.ones(1, dtype=t)
    for s in range(3):
        step = f.create_group(f"steps/step{s}")
        tiles = step.create_dataset("tiles", shape=(4, 4 * n), dtype="f8")
        tiles[:, 4 * r:4 * r + 4] = np.full((4, 4), 100.0 * s + r)  # one segment per row and rank
        step.attrs["time"] = 0.5 * s
    f.create_dataset("never", shape=(2, 3), dtype="i4")
    f.create_dataset("never_filled", shape=(5,), dtype="f4", fillvalue=-1.5)
    words = f.create_dataset("words", shape=(n,), dtype="S6")
    words[r:r + 1] = np.array([b"rank%d" % r])
    many = f.create_dataset("many_attributes", shape=(1,), dtype="u1")
    if r == 0:
        many[0:1] = np.array([7], dtype="u1")
    for a in range(12):
        many.attrs[f"a{a:02d}"] = np.float64(a) / 3
    f.create_group("x" * 300)  # a name longer than 255 bytes
    # Virtual datasets (more runs of the log than external storage takes, or
    # gaps): tiles of several ranks at every step; a rank's tile of one array
    # at every step, the other arrays' between them in the log (one mapping
    # of a regular hyperslab); a dataset written in part (the rest reads as
    # its fill value).
    big = f.create_dataset("virtual/big", shape=(3, 400, 2 * n), dtype="f4", fillvalue=-1)
    for s in range(3):
        big[s, :, 2 * r:2 * r + 2] = np.full((400, 2), 10.0 * s + r, dtype="f4")
    per_array = [f.create_dataset(f"virtual/v{a}", shape=(4, 200, 2 * n), dtype="f8") for a in range(3)]
    for s in range(4):
        for a in range(3):
            per_array[a][s, :, 2 * r:2 * r + 2] = np.full((200, 2), 100.0 * a + 10 * s + r)
    partial = f.create_dataset("virtual/partial", shape=(6, 2 * n), dtype="i8", fillvalue=5)
    partial[0:2, 2 * r:2 * r + 2] = np.full((2, 2), r, dtype="i8")
"""


def write(run_h5loom, tmp_path, name, encoder, ranks):
    path = tmp_path / name
    run_h5loom(f"import sys\nsys.argv[1:] = {[str(path), encoder]!r}\n" + WRITER, ranks=ranks)
    return path


def superblock_version(path):
    with open(path, "rb") as f:
        return f.read(9)[8]


def objects_in_order(f):
    """Every object by path, each group's members in iteration order (h5py
    follows the creation order a group tracks)."""
    out, todo = [], [("", f)]
    while todo:
        prefix, g = todo.pop(0)
        for name in g:  # creation order
            obj = g[name]
            out.append((prefix + name, obj))
            if isinstance(obj, h5py.Group):
                todo.append((prefix + name + "/", obj))
    return out


def attributes(obj):
    return [(k, obj.attrs[k]) for k in obj.attrs if k not in ("_h5loom_log", "_h5loom_log_id")]  # the log's name, id


def assert_same(a_path, b_path):
    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        oa, ob = objects_in_order(a), objects_in_order(b)
        assert [p for p, _ in oa] == [p for p, _ in ob]
        for (path, x), (_, y) in zip([("/", a)] + oa, [("/", b)] + ob):
            assert type(x) is type(y), path
            if isinstance(x, h5py.Dataset):
                assert x.dtype == y.dtype, path
                assert x.shape == y.shape, path
                np.testing.assert_array_equal(x[...], y[...], err_msg=path)
                assert x.fillvalue == y.fillvalue, path
                assert (x.external is None) == (y.external is None), path
                assert x.is_virtual == y.is_virtual, path
                if x.is_virtual:
                    assert len(x.virtual_sources()) == len(y.virtual_sources()), path
                if x.external:
                    assert [s[2] for s in x.external] == [s[2] for s in y.external], path  # sizes
            ka, kb = attributes(x), attributes(y)
            assert [k for k, _ in ka] == [k for k, _ in kb], path
            for (k, va), (_, vb) in zip(ka, kb):
                assert np.asarray(va).dtype == np.asarray(vb).dtype, f"{path}@{k}"
                np.testing.assert_array_equal(va, vb, err_msg=f"{path}@{k}")


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_encoded_front_file_reads_as_the_librarys(run_h5loom, tmp_path, monkeypatch, ranks):
    monkeypatch.chdir(tmp_path)  # where HDF5 looks for the external storage: the log
    direct = write(run_h5loom, tmp_path, "direct.h5", "auto", ranks)
    library = write(run_h5loom, tmp_path, "library.h5", "hdf5", ranks)
    assert superblock_version(direct) == 2  # encoded here
    assert superblock_version(library) == 3  # HDF5 1.14 with libver v110
    assert_same(direct, library)
    with h5py.File(direct, "r") as f:  # the values themselves, not only their agreement
        np.testing.assert_array_equal(f["types/i2"][...], [np.arange(3) + 10 * r + 1 for r in range(ranks)])
        np.testing.assert_array_equal(f["steps/step2/tiles"][:, 4 * (ranks - 1)], 200.0 + ranks - 1)
        assert f["never_filled"].fillvalue == np.float32(-1.5)
        np.testing.assert_array_equal(f["never_filled"][...], np.full(5, -1.5, dtype="f4"))
        assert list(f["many_attributes"].attrs) == [f"a{a:02d}" for a in range(12)]
        assert list(f["types"]) == ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"]
        assert f["words"][ranks - 1] == b"rank%d" % (ranks - 1)
        assert f.attrs["_h5loom_log"] == b"direct.h5.loom/log"
        np.testing.assert_array_equal(f["virtual/big"][2, :, 2 * ranks - 1], np.full(400, 20.0 + ranks - 1))
        np.testing.assert_array_equal(f["virtual/v2"][3, 199, :], np.repeat(230.0 + np.arange(ranks), 2))
        np.testing.assert_array_equal(f["virtual/partial"][2:, :], np.full((4, 2 * ranks), 5))
        if ranks > 1:  # one rank's tiles are few runs of the log: external storage
            assert f["virtual/big"].is_virtual and f["virtual/v1"].is_virtual
    shown = subprocess.run(["h5dump", "-p", str(direct)], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "EXTERNAL" in shown.stdout and "front encoder test" in shown.stdout
    # HDF5 can also change what was encoded: one more link and attribute than
    # the headers hold turns their storage dense, and a new dataset needs space.
    with h5py.File(direct, "r+") as f:
        f["types"].create_dataset("added", data=np.arange(4))
        f["many_attributes"].attrs["a12"] = 4.0
        f.attrs["added"] = "yes"
    with h5py.File(direct, "r") as f:
        assert list(f["types"])[-1] == "added" and len(f["types"]) == 12
        assert list(f["many_attributes"].attrs)[-1] == "a12"
        np.testing.assert_array_equal(f["types/added"][...], np.arange(4))
        np.testing.assert_array_equal(f["types/f4"][...], [np.arange(3) + 10 * r + 1 for r in range(ranks)])


def test_a_tree_the_encoder_does_not_hold_is_made_by_the_library(run_h5loom, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "soft.h5"
    run_h5loom(f"""
with h5loom.File({str(path)!r}, "w", engine="log") as f:
    f.create_dataset("x", data=np.arange(3.0))
    f["alias"] = h5loom.SoftLink("/x")
""")
    assert superblock_version(path) == 3
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["alias"][...], np.arange(3.0))


def test_attributes_at_the_encoders_limits_stay_readable(run_h5loom, tmp_path, monkeypatch):
    """An attribute whose header message would pass 64 KiB (a long name and a
    large value) and a name with a NUL inside are not the encoder's: the
    library makes such files, and every attribute reads back."""
    monkeypatch.chdir(tmp_path)
    for name, code in [("big", 'f.attrs["n" * 990] = np.arange(8063, dtype="f8")'),
                       ("nul", 'f.attrs["x\\x00y"] = np.int32(1)')]:
        path = tmp_path / f"{name}.h5"
        run_h5loom(f"""
with h5loom.File({str(path)!r}, "w", engine="log") as f:
    f.create_dataset("d", data=np.arange(3.0))
    f.attrs["before"] = "kept"
    {code}
""")
        with h5py.File(path, "r") as f:
            values = {k: f.attrs[k] for k in f.attrs}  # every attribute reads
            assert values["before"] == b"kept"
            np.testing.assert_array_equal(f["d"][...], np.arange(3.0))
            if name == "big":
                np.testing.assert_array_equal(values["n" * 990], np.arange(8063, dtype="f8"))
