"""h5loom.netcdf from Python (docs/netcdf.md): define mode and data mode,
numpy in and out, slicing, attributes in netCDF's order, fill values, records,
PIO's darray writes, append, errors - on hdf5 and log, at 1 rank (package
suite), 2 (python-package-np2) and 4 ranks (python-series-np4). Other netCDF
readers: tests/python/interop/test_netcdf_readers.py."""
import numpy as np
import pytest

import h5loom
import h5loom.netcdf as nc


@pytest.mark.parametrize("engine", ["hdf5", "log"])
def test_define_write_and_read_back(shared_path, comm, engine):
    n, r = comm.size, comm.rank
    path = shared_path / f"nc-{engine}.nc"
    with nc.File(path, "w", comm=comm, engine=engine) as f:
        assert f.in_define_mode
        assert f.define_dimension("time", nc.UNLIMITED) == nc.Dimension("time", 0, True, 0)
        f.define_dimension("x", 2 * n)
        x = f.define_variable("x", "f8", ("x",))
        t = f.define_variable("T", np.float32, ("time", "x"), fill_value=-1, deflate=4, shuffle=True)
        t.attrs["units"] = "K"
        t.attrs["valid_range"] = [0.0, 500.0]
        f.attrs["title"] = "python"
        f.attrs["step"] = 3
        f.end_define()
        f.set_records(2)
        if r == 0:
            x[:] = np.arange(2 * n) * 0.5
        t[0, 2 * r:2 * r + 2] = [10 * r, 10 * r + 1]              # each rank its two columns
        if r != n - 1:
            t[1, 2 * r:2 * r + 2] = np.array([1, 2], dtype="i8")   # converted to float32
    with nc.File(path, comm=comm, engine=engine) as f:
        assert list(f.dimensions) == ["time", "x"]
        assert f.dimensions["time"] == nc.Dimension("time", 2, True, 0)
        assert list(f.variables) == ["x", "T"]
        t = f["T"]
        assert t.dimensions == ("time", "x") and t.shape == (2, 2 * n) and t.dtype == np.float32
        assert list(t.attrs) == ["_FillValue", "units", "valid_range"]   # in the order set
        assert t.attrs["units"] == "K" and t.fill_value == -1
        assert f.attrs["step"] == 3 and f.attrs["title"] == "python"
        whole = t[:]
        expected0 = np.ravel([[10 * k, 10 * k + 1] for k in range(n)]).astype("f4")
        np.testing.assert_array_equal(whole[0], expected0)
        np.testing.assert_array_equal(whole[1, -2:], [-1, -1])     # never written: the fill value
        assert t[0, 2 * r] == 10 * r                               # each rank its own element
        np.testing.assert_array_equal(f["x"][:], np.arange(2 * n) * 0.5)
        np.testing.assert_array_equal(t.read(dtype="i4")[0], expected0.astype("i4"))


def test_darray_frames_and_append(shared_path, comm):
    n, r = comm.size, comm.rank
    path = shared_path / "nc-pio.nc"
    shape = (3, 4 * n)
    mine = np.arange(r, shape[0] * shape[1], n)                     # round-robin offsets
    d = h5loom.pio.Decomposition.from_map(shape, mine, comm=comm)
    rearr = h5loom.pio.Rearrangement(d, num_iotasks=max(1, n // 2), rearranger="subset")
    with nc.File(path, "w", comm=comm) as f:
        f.define_dimension("time", None)
        f.define_dimension("lev", shape[0])
        f.define_dimension("col", shape[1])
        v = f.define_variable("V", "f8", ("time", "lev", "col"))
        f.end_define()
        for frame in range(2):
            v.write_darray(rearr, mine + 1000.0 * frame, frame=frame)   # the records grow
        assert f.records == 2
    with nc.File(path, "a", comm=comm) as f:
        f.redefine()
        w = f.define_variable("W", "i2", ("lev",))
        f.end_define()
        if r == 0:
            w[:] = [7, 8, 9]
        np.testing.assert_array_equal(f["V"].read_darray(rearr, frame=1), mine + 1000.0)
    with nc.File(path, comm=comm) as f:
        np.testing.assert_array_equal(f["V"][1].reshape(-1), np.arange(shape[0] * shape[1]) + 1000.0)
        np.testing.assert_array_equal(f["W"][:], [7, 8, 9])


def test_bad_calls_raise_naming_what_is_wrong(shared_path, comm):
    path = shared_path / "nc-errors.nc"
    with nc.File(path, "w", comm=comm) as f:
        f.define_dimension("n", 3)
        with pytest.raises(h5loom.NotFoundError, match="'nope'"):
            f.define_variable("v", "f4", ("nope",))
        with pytest.raises(h5loom.DatatypeError, match="variable 's'"):
            f.define_variable("s", "U4", ("n",))
        v = f.define_variable("v", "i4", ("n",))
        with pytest.raises(h5loom.UsageError, match="define mode"):
            v[:] = [1, 2, 3]
        f.end_define()
        with pytest.raises(h5loom.DatatypeError, match="NC_ERANGE"):
            v[:] = [1, 2, 2**40]
        with pytest.raises(h5loom.SelectionError, match="steps of 1"):
            v[::2] = [1, 2]
        with pytest.raises(h5loom.UsageError, match="NC_ELATEFILL"):
            v.attrs["_FillValue"] = np.int32(5)
        with pytest.raises(h5loom.DatatypeError, match="netCDF attributes"):
            v.attrs["ref"] = h5loom.Empty("f4")
    with pytest.raises(h5loom.UsageError, match="mode 'x'"):
        nc.File(path, "x", comm=comm)
