"""Deleting, renaming, soft links, creation order and fill values from Python,
h5py-style; engines without them raise instead of pretending."""
import numpy as np
import pytest

import h5loom


ENGINES = ["hdf5", "log"]


@pytest.mark.parametrize("engine", ENGINES)
def test_links_delete_move_and_order(tmp_path, engine):
    path = tmp_path / "l.h5"
    with h5loom.File(path, "w", engine=engine) as f:
        for name in ["zeta", "alpha", "mid"]:
            f.create_dataset(f"g/{name}", data=np.arange(3))
        f["latest"] = h5loom.SoftLink("/g/mid")
        f["dangling"] = h5loom.SoftLink("/nowhere")
        f.move("g/alpha", "h/renamed")
        del f["g/zeta"]
        assert f.get("latest", getlink=True) == h5loom.SoftLink("/g/mid")
        assert f.get("dangling") is None
    with h5loom.File(path, "r") as f:
        assert f.keys() == ["dangling", "g", "h", "latest"]
        assert f.keys(order="creation") == ["g", "latest", "dangling", "h"]
        assert f["g"].keys() == ["mid"]
        np.testing.assert_array_equal(f["latest"][...], [0, 1, 2])
        np.testing.assert_array_equal(f["h/renamed"][...], [0, 1, 2])
        seen = []
        f.visit(lambda p, o: seen.append(p))
        assert seen == ["/g", "/g/mid", "/h", "/h/renamed"]
        with pytest.raises(h5loom.ReadOnlyError):
            del f["g"]
        with pytest.raises(h5loom.UsageError, match="order is 'name' or 'creation'"):
            f.keys(order="size")


@pytest.mark.parametrize("engine", ENGINES)
def test_fill_values(tmp_path, engine):
    with h5loom.File(tmp_path / "f.h5", "w", engine=engine) as f:
        ds = f.create_dataset("x", shape=(4,), dtype="i4", fillvalue=-7)
        ds[1] = 5
        assert ds.fillvalue == -7
        np.testing.assert_array_equal(ds[...], [-7, 5, -7, -7])
        assert f.create_dataset("y", shape=(2,), dtype="f8").fillvalue == 0.0
        with pytest.raises(h5loom.DatatypeError):
            f.create_dataset("z", shape=(2,), dtype="i1", fillvalue=1000)


def test_log_front_file_shows_links_order_and_fill_to_hdf5(tmp_path, monkeypatch):
    """The log engine's front file carries soft links, creation order and fill
    values, so that the hdf5 engine (stock HDF5) reads them too - through POSIX
    (HDF5 1.10 reads virtual datasets only without MPI-IO), from the file's
    directory (the front file names its log relative to it)."""
    monkeypatch.chdir(tmp_path)
    path = "front.h5"
    with h5loom.File(path, "w", engine="log") as f:
        f.create_dataset("b", shape=(3,), dtype="i4", fillvalue=9)[0] = 1
        f.create_dataset("a", data=np.arange(2))
        f["link"] = h5loom.SoftLink("/b")
    with h5loom.File(path, "r", engine={"engine": "hdf5", "hdf5": {"driver": "sec2"}}) as f:
        # (_h5loom_blocks: the front file's own group of the blocks a virtual dataset maps)
        assert [k for k in f.keys(order="creation") if k != "_h5loom_blocks"] == ["b", "a", "link"]
        np.testing.assert_array_equal(f["link"][...], [1, 9, 9])
        assert f.get("link", getlink=True) == h5loom.SoftLink("/b")


@pytest.mark.parametrize("engine", ENGINES)
def test_convert_keeps_soft_links_and_fill_values(tmp_path, engine):
    import subprocess, os, pathlib
    src, dst = tmp_path / "src.h5", tmp_path / "dst.h5"
    with h5loom.File(src, "w", engine=engine) as f:
        f.create_dataset("g/x", shape=(3,), dtype="i2", fillvalue=-4)[1] = 7
        f["g/link"] = h5loom.SoftLink("/g/x")
    build = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build"))
    subprocess.run([str(build / "h5loom"), "convert", str(src), str(dst)], check=True, capture_output=True)
    with h5loom.File(dst, "r") as f:
        assert f.engine == "hdf5"
        assert f["g"].get("link", getlink=True) == h5loom.SoftLink("/g/x")
        assert f["g/x"].fillvalue == -4
        np.testing.assert_array_equal(f["g/link"][...], [-4, 7, -4])


@pytest.mark.parametrize("engine", ENGINES)
def test_attributes_delete_rename_and_creation_order(tmp_path, engine):
    path = tmp_path / "a.h5"
    with h5loom.File(path, "w", engine=engine) as f:
        d = f.create_dataset("d", data=np.arange(3))
        for obj in (f, d):
            obj.attrs["zeta"] = 1
            obj.attrs["alpha"] = "a"
            obj.attrs["gone"] = [1.5, 2.5]
            del obj.attrs["gone"]
            obj.attrs.rename("zeta", "omega")
            with pytest.raises(KeyError, match="gone"):
                del obj.attrs["gone"]
            with pytest.raises(h5loom.ExistsError, match="alpha"):
                obj.attrs.rename("omega", "alpha")
    with h5loom.File(path, "r") as f:
        for obj in (f, f["d"]):
            assert list(obj.attrs) == ["alpha", "omega"]
            assert obj.attrs.keys(order="creation") == ["omega", "alpha"]
            assert obj.attrs["omega"] == 1
            with pytest.raises(h5loom.ReadOnlyError):
                del obj.attrs["omega"]
        with pytest.raises(h5loom.UsageError, match="order is 'name' or 'creation'"):
            f.attrs.keys(order="size")


def test_log_front_file_keeps_attribute_creation_order(tmp_path, monkeypatch):
    """The front file tracks attribute creation order as the log has it, so the
    hdf5 engine (stock HDF5) lists them so too."""
    monkeypatch.chdir(tmp_path)
    with h5loom.File("front.h5", "w", engine="log") as f:
        for name in ["c", "a", "b"]:
            f.attrs[name] = name
        f.attrs.rename("a", "z")
    with h5loom.File("front.h5", "r", engine={"engine": "hdf5", "hdf5": {"driver": "sec2"}}) as f:
        assert [k for k in f.attrs.keys(order="creation") if not k.startswith("_h5loom")] == ["c", "z", "b"]


@pytest.mark.parametrize("engine", ENGINES)
def test_resize_shrinks_where_the_engine_can(tmp_path, engine):
    """h5py's resize(size, axis): grows on every engine, shrinks with "shrink" (hdf5)."""
    with h5loom.File(tmp_path / "r.h5", "w", engine=engine) as f:
        d = f.create_dataset("d", shape=(4,), maxshape=(None,), chunks=(2,), dtype="i4", fillvalue=-1)
        d[...] = [1, 2, 3, 4]
        d.resize(6, axis=0)
        np.testing.assert_array_equal(d[...], [1, 2, 3, 4, -1, -1])
        if "shrink" in h5loom.engine_groups(engine):
            d.resize((2,))
            d.resize((5,))
            np.testing.assert_array_equal(d[...], [1, 2, -1, -1, -1])
        else:
            with pytest.raises(h5loom.UsageError, match="'shrink'"):
                d.resize((2,))
            assert d.shape == (6,)


@pytest.mark.parametrize("engine", ENGINES)
def test_named_datatypes(tmp_path, engine):
    """h5py's committed types: ``f[name] = np.dtype(...)``, read back after reopening."""
    path = tmp_path / "t.h5"
    particle = np.dtype([("x", "<f8"), ("id", "<i4")])
    with h5loom.File(path, "w", engine=engine) as f:
        f["types/particle"] = particle
        f["types/particle"].attrs["units"] = "m"
        t = f.commit_datatype("vec3", np.dtype(("<f4", (3,))))
        assert isinstance(t, h5loom.Datatype) and t.path == "/vec3"
        with pytest.raises(h5loom.ExistsError, match="vec3"):
            f["vec3"] = np.dtype("i4")
    with h5loom.File(path, "r") as f:
        assert isinstance(f["types/particle"], h5loom.Datatype)
        assert f["types/particle"].dtype == particle and f["vec3"].dtype == np.dtype(("<f4", (3,)))
        assert f["types/particle"].attrs["units"] == "m"
        seen = []
        f.visit(lambda p, o: seen.append((p, type(o).__name__)))
        assert seen == [("/types", "Group"), ("/types/particle", "Datatype"), ("/vec3", "Datatype")]
        with pytest.raises(h5loom.ReadOnlyError):
            f["new"] = np.dtype("i4")


@pytest.mark.parametrize("engine", ENGINES)
def test_hard_links(tmp_path, engine):
    """``g[name] = obj`` gives an object a second name (h5py's idiom); every name is
    equal, and the object lives while one is left."""
    path = tmp_path / "hard.h5"
    with h5loom.File(path, "w", engine=engine) as f:
        f.create_dataset("runs/a/x", data=np.arange(4.0))
        f["latest"] = f["runs/a"]
        assert f.link_count("latest") == 2
        f["latest/x"].attrs["units"] = "m"
        assert f["runs/a/x"].attrs["units"] == "m"
        f["runs/a"]["self"] = f["runs/a"]  # a cycle: visit meets each object once
        seen = []
        f.visit(lambda p, o: seen.append(p))
        assert seen == ["/latest", "/latest/x", "/runs"]
        del f["runs/a"]
        assert "runs/a" not in f
        np.testing.assert_array_equal(f["latest/x"][...], np.arange(4.0))
        with pytest.raises(h5loom.NotFoundError):
            f.link_count("runs/a")
    with h5loom.File(path, "r") as f:
        np.testing.assert_array_equal(f["latest/self/x"][...], np.arange(4.0))
        assert f.link_count("latest") == 2  # its own path, and "self" inside it
        with pytest.raises(h5loom.ReadOnlyError):
            f["again"] = f["latest"]


@pytest.mark.parametrize("engine", ENGINES)
def test_reference_counts(tmp_path, engine):
    """change_reference_count holds a reference besides the names (H5Oincr_refcount),
    kept in the file; releasing one not held is refused."""
    path = tmp_path / "rc.h5"
    with h5loom.File(path, "w", engine=engine) as f:
        f.create_dataset("x", data=np.arange(3))
        assert f.change_reference_count("x", +1) == 2 and f.link_count("x") == 2
    with h5loom.File(path, "a", engine=engine) as f:
        assert f.link_count("x") == 2
        assert f.change_reference_count("x", -1) == 1
        with pytest.raises(h5loom.UsageError, match="x"):
            f.change_reference_count("x", -1)
        with pytest.raises(h5loom.UsageError, match="one at a time"):
            f.change_reference_count("x", 2)
        np.testing.assert_array_equal(f["x"][...], np.arange(3))


@pytest.mark.parametrize("engine", ENGINES)
def test_convert_keeps_hard_links(tmp_path, engine):
    import subprocess, os, pathlib
    src, dst = tmp_path / "src.h5", tmp_path / "dst.h5"
    with h5loom.File(src, "w", engine=engine) as f:
        f.create_dataset("g/x", data=np.array([1, 2], dtype="i2"))
        f["h/y"] = f["g/x"]
        f["g/again"] = f["g"]
    build = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build"))
    subprocess.run([str(build / "h5loom"), "convert", str(src), str(dst)], check=True, capture_output=True)
    with h5loom.File(dst, "r") as f:
        assert f.link_count("g/x") == 2 and f.link_count("g") == 2
        assert f["h/y"].ref == f["g/x"].ref
        np.testing.assert_array_equal(f["h/y"][...], [1, 2])


@pytest.mark.parametrize("engine", ENGINES)
def test_copy_within_a_file_and_into_another(tmp_path, engine):
    """Group.copy as h5py's: a path or an object, into a path or a group of any file."""
    with h5loom.File(tmp_path / "a.h5", "w", engine=engine) as f, \
            h5loom.File(tmp_path / "b.h5", "w", engine=engine) as g:
        f.create_dataset("run/x", data=np.arange(6).reshape(2, 3))
        f["run"].attrs["step"] = 4
        f["run/sub/y"] = np.array([1.5])
        f["run/latest"] = h5loom.SoftLink("/run/x")
        f.copy("run", "backup")
        np.testing.assert_array_equal(f["backup/x"][...], np.arange(6).reshape(2, 3))
        assert f["backup"].attrs["step"] == 4
        assert f["backup"].get("latest", getlink=True) == h5loom.SoftLink("/run/x")
        f.copy(f["run"], g)  # into another file, under its own name
        np.testing.assert_array_equal(g["run/sub/y"][...], [1.5])
        f["run"].copy("sub", g, name="only_sub", without_attrs=True)
        assert g["only_sub"].keys() == ["y"]
        f.copy("run", "flat", shallow=True)
        assert f["flat/sub"].keys() == []
        f.copy("run", "expanded", expand_soft=True)
        assert f["expanded"].get("latest", getlink=True) is not None
        assert not isinstance(f["expanded"].get("latest", getlink=True), h5loom.SoftLink)
        with pytest.raises(h5loom.ExistsError):
            f.copy("run", "backup")
        with pytest.raises(h5loom.NotFoundError):
            f.copy("missing", "z")
        with pytest.raises(h5loom.UsageError):
            f.copy("run", "run/inside")
    with h5loom.File(tmp_path / "b.h5", "r") as g:
        np.testing.assert_array_equal(g["run/x"][...], np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("engine", ENGINES)
def test_external_links(tmp_path, engine):
    """``g[name] = ExternalLink(file, path)`` as in h5py; h5loom keeps it and lists
    it, and does not follow it (the error says which file to open)."""
    path = tmp_path / "ext.h5"
    with h5loom.File(path, "w", engine=engine) as f:
        f["runs/other"] = h5loom.ExternalLink("other.h5", "/data")
        assert f["runs"].keys() == ["other"]
        assert f.get("runs/other") is None
        assert f.get("runs/other", getlink=True) == h5loom.ExternalLink("other.h5", "/data")
        assert f["runs"].items() == [("other", h5loom.ExternalLink("other.h5", "/data"))]
        with pytest.raises(h5loom.NotFoundError, match="other.h5"):
            f["runs/other"]
        f.move("runs/other", "moved")
    with h5loom.File(path, "r") as f:
        assert f.get("moved", getlink=True) == h5loom.ExternalLink("other.h5", "/data")
        assert f.keys(order="creation") == ["runs", "moved"]


@pytest.mark.parametrize("engine", ENGINES)
def test_userblock_keeps_the_applications_bytes(tmp_path, engine, monkeypatch):
    """The knob userblock reserves the first bytes of the file for the application:
    they survive later sessions (the log engine rebuilds its front file at every
    close) and stock h5py still reads the file (from its directory: the log front
    file's external storage is relative to the working directory)."""
    import h5py
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "ub.h5"
    config = {"engine": engine, engine: {"userblock": 1024}}
    if engine == "hdf5":
        config["hdf5"]["driver"] = "sec2"
    with h5loom.File(path, "w", engine=config) as f:
        f["a"] = np.arange(3)
        assert f.userblock == 1024
    header = b"my header: run 42\n"
    with open(path, "r+b") as raw:
        raw.write(header)
    with h5loom.File(path, "r+") as f:
        assert f.userblock == 1024
        f["b"] = np.arange(4.0)
    with open(path, "rb") as raw:
        assert raw.read(len(header)) == header
    with h5py.File(path, "r") as f:
        assert f.userblock_size == 1024
        np.testing.assert_array_equal(f["b"][...], np.arange(4.0))
    with pytest.raises(h5loom.ConfigError, match="userblock"):
        h5loom.File(tmp_path / "bad.h5", "w", engine={"engine": engine, engine: {"userblock": 100}})
