"""The Python package: files, groups, datasets, slicing, attributes, engines (one rank)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import h5loom


def test_round_trip_with_context_managers(tmp_path):
    path = tmp_path / "a.h5"
    with h5loom.File(path, "w") as f:
        assert f.is_open and f.mode == "r+" and f.size == 1 and f.rank == 0
        ds = f.create_dataset("fields/rho", shape=(6, 4), dtype="f8", chunks="auto")
        ds[...] = np.arange(24, dtype=np.float64).reshape(6, 4)
        ds.attrs["units"] = "kg/m^3"
        assert ds.chunks is not None and ds.layout == "chunked"
    assert not f.is_open
    with h5loom.File(path) as f:
        rho = f["fields/rho"]
        assert isinstance(rho, h5loom.Dataset) and isinstance(f["fields"], h5loom.Group)
        assert rho.shape == (6, 4) and rho.dtype == np.float64 and rho.ndim == 2 and rho.size == 24
        np.testing.assert_array_equal(rho[...], np.arange(24).reshape(6, 4))
        np.testing.assert_array_equal(np.asarray(rho), np.arange(24).reshape(6, 4))
        assert rho.attrs["units"] == "kg/m^3"
        assert f["fields/rho"][10 // 4, 10 % 4] == 10.0


def test_numpy_style_slicing(tmp_path):
    data = np.arange(5 * 6 * 7, dtype=np.int32).reshape(5, 6, 7)
    with h5loom.File(tmp_path / "s.h5", "w") as f:
        ds = f.create_dataset("cube", data=data)
        for key in [(slice(None),), (1,), (-1,), (slice(1, 4), 2), (Ellipsis, 3), (slice(None, None, 2), slice(1, 6, 3)),
                    (4, 5, 6), (slice(2, 2),), (Ellipsis,), (slice(-3, None), Ellipsis, slice(None, -2))]:
            got = ds[key]
            np.testing.assert_array_equal(got, data[key], err_msg=str(key))
            assert np.shape(got) == data[key].shape, key
        ds[0, :, ::3] = -1
        data[0, :, ::3] = -1
        ds[4] = np.full((6, 7), 9, dtype=np.int32)
        data[4] = 9
        np.testing.assert_array_equal(ds[...], data)


def test_writes_copy_by_default_and_zero_copy_on_request(tmp_path):
    with h5loom.File(tmp_path / "c.h5", "w") as f:
        a = f.create_dataset("a", shape=(4,), dtype="i8")
        b = f.create_dataset("b", shape=(4,), dtype="i8")
        buf = np.arange(4, dtype=np.int64)
        a[:] = buf                 # value semantics: copied now
        b.write(buf, copy=False)   # deferred: read at the flush point
        assert f.pending_writes == 2
        buf[:] = 100
        f.flush()
        assert f.pending_writes == 0
        np.testing.assert_array_equal(a[:], [0, 1, 2, 3])
        np.testing.assert_array_equal(b[:], [100, 100, 100, 100])


def test_read_into_out_and_selections(tmp_path):
    with h5loom.File(tmp_path / "o.h5", "w") as f:
        ds = f.create_dataset("v", data=np.arange(20, dtype=np.float32))
        out = np.empty(5, dtype=np.float32)
        r = ds.read(h5loom.Selection.hyperslab([0], [5], [4]), out=out)
        assert r is out
        np.testing.assert_array_equal(out, [0, 4, 8, 12, 16])
        assert ds.read(h5loom.Selection.none()).size == 0
        with pytest.raises(h5loom.DatatypeError, match="float32"):
            ds.read(out=np.empty(20, dtype=np.float64))


def test_read_and_write_take_a_numpy_index_as_their_selection(tmp_path):
    with h5loom.File(tmp_path / "i.h5", "w") as f:
        ds = f.create_dataset("m", data=np.zeros((4, 6), dtype=np.int32))
        lent = np.arange(6, dtype=np.int32)
        ds.write(lent, np.s_[1], copy=False)        # a row, lent until the flush point
        ds.write(np.full((2, 2), 7, dtype=np.int32), (slice(2, 4), slice(0, 6, 3)))
        ds.write(np.int32(5), (3, 5))
        f.flush()
        want = np.zeros((4, 6), dtype=np.int32)
        want[1] = lent
        want[2:4, ::3] = 7
        want[3, 5] = 5
        np.testing.assert_array_equal(ds[...], want)
        np.testing.assert_array_equal(ds.read(np.s_[1:3, ::2]), want[1:3, ::2])
        np.testing.assert_array_equal(ds.read(np.s_[..., 1]), want[:, 1:2])  # the selection's shape
        out = np.empty((1, 6), dtype=np.int32)
        assert ds.read(np.s_[3], out=out) is out
        np.testing.assert_array_equal(out, want[3:4])
        with pytest.raises(h5loom.SelectionError, match="out of bounds.*'/m'"):
            ds.write(lent, np.s_[4])
        with pytest.raises(h5loom.SelectionError, match="'/m'"):
            ds.read(np.s_[1, 2, 3])


def test_types_broadcast_and_safe_casts(tmp_path):
    with h5loom.File(tmp_path / "t.h5", "w") as f:
        for dt in ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8"]:
            ds = f.create_dataset(dt, shape=(3,), dtype=dt)
            info = np.iinfo(dt) if dt[0] in "iu" else np.finfo(dt)
            values = np.array([info.min, info.max, 1], dtype=dt)
            ds[:] = values
            np.testing.assert_array_equal(ds[:], values)
            assert ds.dtype == np.dtype(dt)
        f["f8"][:] = 2            # Python scalar: broadcast
        np.testing.assert_array_equal(f["f8"][:], [2, 2, 2])
        f["f8"][:] = np.arange(3, dtype=np.int32)   # safe cast int32 -> float64
        np.testing.assert_array_equal(f["f8"][:], [0, 1, 2])
        with pytest.raises(h5loom.DatatypeError, match="float64 data to dataset '/f4'"):
            f["f4"][:] = np.zeros(3)
        with pytest.raises(h5loom.DatatypeError, match="not supported"):
            f.create_dataset("c", shape=(2,), dtype="c16")


def test_groups_mapping_and_visit(tmp_path):
    with h5loom.File(tmp_path / "g.h5", "w") as f:
        f.create_group("a/b/c")
        f.create_dataset("a/x", shape=(1,), dtype="u1")
        assert f.require_group("a/b").path == "/a/b"
        assert f.require_group("new").path == "/new"
        assert list(f) == ["a", "new"] and len(f) == 2 and f.keys() == ["a", "new"]
        assert "a/b/c" in f and "zzz" not in f and 3 not in f
        assert [n for n, _ in f["a"].items()] == ["b", "x"]
        seen = []
        f.visit(lambda path, obj: seen.append((path, type(obj).__name__)))
        assert seen == [("/a", "Group"), ("/a/b", "Group"), ("/a/b/c", "Group"), ("/a/x", "Dataset"), ("/new", "Group")]
        assert f["a"]["b"].file is f


def test_attributes_are_dict_like(tmp_path):
    path = tmp_path / "at.h5"
    with h5loom.File(path, "w") as f:
        g = f.create_group("g")
        f.attrs["title"] = "run 7"
        g.attrs["count"] = 3
        g.attrs["dt"] = np.float32(0.25)
        g.attrs["axes"] = [2, 1, 0]
        g.attrs["spacing"] = np.array([0.5, 0.5])
        g.attrs["raw"] = b"bytes"
        g.attrs["labels"] = ["z", "y", "x"]
        with pytest.raises(h5loom.DatatypeError):
            g.attrs["flag"] = True
        with pytest.raises(h5loom.DatatypeError):
            g.attrs["matrix"] = np.zeros((2, 2))
    with h5loom.File(path) as f:
        g = f["g"]
        assert f.attrs["title"] == "run 7"
        assert g.attrs["count"] == 3 and g.attrs["count"].dtype == np.int64
        assert g.attrs["dt"] == 0.25 and g.attrs["dt"].dtype == np.float32
        np.testing.assert_array_equal(g.attrs["axes"], [2, 1, 0])
        assert g.attrs["raw"] == "bytes"
        assert g.attrs["labels"] == ["z", "y", "x"]
        assert sorted(g.attrs) == ["axes", "count", "dt", "labels", "raw", "spacing"] and len(g.attrs) == 6
        assert "dt" in g.attrs and "nope" not in g.attrs
        assert g.attrs.get("nope", 42) == 42
        with pytest.raises(h5loom.NotFoundError, match="'nope'"):
            g.attrs["nope"]


def test_extendable_datasets(tmp_path):
    with h5loom.File(tmp_path / "e.h5", "w") as f:
        ds = f.create_dataset("p", shape=(0, 3), maxshape=(None, 3), dtype="f4")
        assert ds.maxshape == (None, 3) and ds.chunks is not None
        for step in range(3):
            ds.resize((step + 1, 3))
            ds[step] = [step, step, step]
        np.testing.assert_array_equal(ds[:, 0], [0, 1, 2])
        with pytest.raises(h5loom.SelectionError, match="would shrink"):
            ds.extend((1, 3))


def test_modes(tmp_path):
    path = tmp_path / "m.h5"
    with h5loom.File(path, "a") as f:          # created
        f.create_group("one")
    with h5loom.File(path, "a") as f:          # appended
        f.create_group("two")
    with h5loom.File(path, "r+") as f:
        assert list(f) == ["one", "two"]
    with pytest.raises(h5loom.ExistsError, match="exists"):
        h5loom.File(path, "x")
    with pytest.raises(h5loom.UsageError, match="invalid mode 'q'"):
        h5loom.File(path, "q")
    with h5loom.File(path, "w") as f:          # truncated
        assert list(f) == []


def test_errors_are_specific_and_name_the_object(tmp_path):
    path = tmp_path / "err.h5"
    with pytest.raises(h5loom.NotFoundError, match="does not exist"):
        h5loom.File(tmp_path / "missing.h5")
    with pytest.raises(KeyError):  # NotFoundError is a KeyError too
        h5loom.File(tmp_path / "missing.h5")
    with h5loom.File(path, "w") as f:
        ds = f.create_dataset("d", shape=(4,), dtype="f8")
        with pytest.raises(h5loom.ExistsError, match="'/d'"):
            f.create_dataset("d", shape=(4,))
        with pytest.raises(h5loom.NotFoundError, match="'nope'.*err.h5"):
            f["nope"]
        with pytest.raises(h5loom.SelectionError, match="out of bounds.*'/d'"):
            ds[7] = 1.0
        with pytest.raises(IndexError):
            ds[1:2, 3]
        with pytest.raises(h5loom.SelectionError, match="shape"):
            ds[0:2] = np.zeros(3)
        with pytest.raises(h5loom.SelectionError, match="positive steps"):
            ds[::-1]
        with pytest.raises(h5loom.SelectionError, match="unsupported index"):
            ds[[0, 1]]
        ds[:] = 1.0  # still usable
    with pytest.raises(h5loom.UsageError, match="closed"):
        f.create_group("late")
    with pytest.raises(h5loom.ConfigError, match="unknown engine 'nope'"):
        h5loom.File(path, "w", engine="nope")
    with pytest.raises(h5loom.ConfigError, match="hdf5.transfer"):
        h5loom.File(path, "w", engine={"hdf5": {"transfer": "sometimes"}})
    err = h5loom.NotFoundError("x")
    assert isinstance(err, h5loom.Error) and err.code == 2 and str(err) == "x"


def test_engine_choice_by_name_dict_json_and_environment(tmp_path):
    assert "hdf5" in h5loom.engines()
    with h5loom.File(tmp_path / "1.h5", "w", engine="hdf5") as f:
        assert f.engine == "hdf5"
    with h5loom.File(tmp_path / "2.h5", "w", engine={"engine": "hdf5", "wrappers": ["collcheck"]}) as f:
        assert f.engine == "collcheck>hdf5"
        assert "collcheck" in f.describe()
    with h5loom.File(tmp_path / "3.h5", "w", engine=json.dumps({"hdf5": {"transfer": "collective"}})) as f:
        assert "transfer: collective" in f.describe()
    # the environment picks the engine without code changes
    code = "import h5loom, sys; f = h5loom.File(sys.argv[1], 'w'); print(f.engine); f.close()"
    env = dict(os.environ, H5LOOM_ENGINE='{"engine": "hdf5", "wrappers": ["collcheck"]}')
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "4.h5")], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "collcheck>hdf5"
    env = dict(os.environ, H5LOOM_ENGINE="bogus")
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path / "5.h5")], env=env, capture_output=True, text=True)
    assert res.returncode != 0 and "ConfigError" in res.stderr and "'bogus'" in res.stderr


def test_console_script_runs_the_bundled_command(tmp_path):
    path = tmp_path / "cli.h5"
    with h5loom.File(path, "w") as f:
        f.create_dataset("x", data=np.arange(3, dtype=np.int16))
    exe = os.path.join(os.path.dirname(sys.executable), "h5loom")
    out = subprocess.run([exe, "dump", str(path), "x"], capture_output=True, text=True, check=True).stdout
    assert "(0): 0, 1, 2" in out


@pytest.mark.parametrize("driver", ["mpio", "sec2", "core"])
def test_hdf5_sync_makes_the_file_durable_with_every_driver(tmp_path, driver):
    # `sync` syncs at close (MPI_File_sync for mpio, fsync after the close for
    # the others); the file reads back whole, and read-only opens do not sync.
    path = tmp_path / f"synced-{driver}.h5"
    engine = {"engine": "hdf5", "hdf5": {"driver": driver, "sync": True}}
    with h5loom.File(path, "w", engine=engine) as f:
        f.create_dataset("x", shape=(1000,), dtype="f8")[...] = np.arange(1000.0)
    with h5loom.File(path, "r", engine=engine) as f:
        np.testing.assert_array_equal(f["x"][...], np.arange(1000.0))


SETTINGS_LEFT = """
import ctypes, sys, numpy as np, h5loom
with h5loom.File(sys.argv[1], "w", engine="log") as f:
    f.create_dataset("x", data=np.arange(3.0))
getenv = ctypes.CDLL(None).getenv
getenv.restype = ctypes.c_char_p
names = ("OMPI_MCA_ess_singleton_isolated", "OMPI_MCA_btl", "OMPI_MCA_pml", "HWLOC_COMPONENTS")
print({n: getenv(n.encode()).decode() for n in names if getenv(n.encode())})
"""


def test_a_script_without_a_launcher_leaves_its_environment_as_it_was(tmp_path):
    """Without mpirun, h5loom starts MPI as an isolated singleton that skips the
    I/O devices of the hardware topology, through settings that hold only for
    MPI_Init: the program's child processes (an mpirun it starts) must not
    inherit them, and a setting the user made is the user's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_", "HWLOC_"))}
    out = subprocess.run([sys.executable, "-c", SETTINGS_LEFT, str(tmp_path / "a.h5")], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "{}"
    env["HWLOC_COMPONENTS"] = "-pci"
    out = subprocess.run([sys.executable, "-c", SETTINGS_LEFT, str(tmp_path / "b.h5")], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "{'HWLOC_COMPONENTS': '-pci'}"


def test_libcurl_is_loaded_only_for_an_s3_store(tmp_path):
    """The zarr engine's S3 store loads libcurl when it opens: its two dozen
    dependent libraries cost every program 6-8 ms at start-up otherwise."""
    code = """
import sys, numpy as np, h5loom
with h5loom.File(sys.argv[1], "w", engine="zarr") as f:
    f.create_dataset("x", data=np.arange(3.0))
print(any("libcurl" in line for line in open("/proc/self/maps")))
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "a.zarr")], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
