"""Deleting, renaming, soft links, creation order and fill values from Python,
h5py-style; engines without them raise instead of pretending."""
import numpy as np
import pytest

import h5loom


def test_links_delete_move_and_order(tmp_path):
    path = tmp_path / "l.h5"
    with h5loom.File(path, "w", engine="hdf5") as f:
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


def test_fill_values(tmp_path):
    with h5loom.File(tmp_path / "f.h5", "w", engine="hdf5") as f:
        ds = f.create_dataset("x", shape=(4,), dtype="i4", fillvalue=-7)
        ds[1] = 5
        assert ds.fillvalue == -7
        np.testing.assert_array_equal(ds[...], [-7, 5, -7, -7])
        assert f.create_dataset("y", shape=(2,), dtype="f8").fillvalue == 0.0
        with pytest.raises(h5loom.DatatypeError):
            f.create_dataset("z", shape=(2,), dtype="i1", fillvalue=1000)


def test_an_engine_without_links_says_so(tmp_path):
    with h5loom.File(tmp_path / "l.h5", "w", engine="log") as f:
        f.create_dataset("a", shape=(2,), dtype="i4")
        with pytest.raises(h5loom.UsageError, match="conformance group 'links'"):
            f.move("a", "b")
        with pytest.raises(h5loom.UsageError, match="fill values"):
            f.create_dataset("c", shape=(2,), dtype="i4", fillvalue=3)
        assert f["a"].shape == (2,)
