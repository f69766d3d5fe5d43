"""netCDF readers no one here wrote read the files h5loom's netCDF layer writes
(issue 19): tests/netcdf/sample.cdl written by `netcdf_sample` at 1, 2 and 4
ranks with the hdf5 engine, and with the log engine (its file after close, and
converted to HDF5), then read by

  * ncdump (Debian's netcdf-bin, netCDF-C 4.9): the whole dump equals the dump
    of the file `ncgen -k nc4` makes from the same CDL;
  * python netCDF4: dimensions, values, masks - and opened for append;
  * xarray with its netcdf4 and h5netcdf engines: identical to ncgen's file;

and h5loom's layer reads netCDF-C's own file and the appended ones."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

netCDF4 = pytest.importorskip("netCDF4")
xr = pytest.importorskip("xarray")
pytest.importorskip("h5netcdf")

SOURCE = pathlib.Path(__file__).resolve().parents[3]
CDL = SOURCE / "tests" / "netcdf" / "sample.cdl"
BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", SOURCE / "build"))
SAMPLE = BUILD / "tests" / "netcdf_sample"
H5LOOM = BUILD / "h5loom"


def run(cmd, cwd, env=None):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    clean.update(env or {})
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=clean, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def write_sample(path, engine, ranks):
    mpiexec = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
    run([mpiexec, "--oversubscribe", "--allow-run-as-root", "-n", ranks, SAMPLE, "write", path.name, engine],
        path.parent)


# The log engine's file after close reaches its data through HDF5 external
# storage beside it: readers find it with HDF5_EXTFILE_PREFIX (docs/netcdf.md).
BESIDE = {"HDF5_EXTFILE_PREFIX": "${ORIGIN}"}


def dump(path, *options, env=None):
    """ncdump's text without its first line (which names the file)."""
    return run(["ncdump", *options, path], path.parent, env).split("\n", 1)[1]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    d = tmp_path_factory.mktemp("ncgen")
    run(["ncgen", "-k", "nc4", "-o", "ref.nc", CDL], d)
    return d / "ref.nc"


@pytest.fixture(scope="module", params=[("hdf5", 1), ("hdf5", 2), ("hdf5", 4), ("log", 1), ("log", 2), ("log", 4)],
                ids=lambda p: f"{p[0]}-np{p[1]}")
def written(request, tmp_path_factory):
    """(file, engine): the hdf5 engine's file, or the log engine's converted to HDF5
    (its file after close is read by test_readers_read_the_log_engines_file_after_close)."""
    engine, ranks = request.param
    d = tmp_path_factory.mktemp(f"{engine}{ranks}")
    path = d / "sample.nc"
    write_sample(path, engine, ranks)
    if engine == "log":
        run([H5LOOM, "convert", "sample.nc", "converted.nc", "--to", "hdf5"], d)
        return d / "converted.nc", engine
    return path, engine


def test_ncdump_prints_what_it_prints_for_ncgens_file(written, reference):
    path, _ = written
    assert dump(path) == dump(reference)
    assert 'h5loom=' in dump(path, "-s", "-h")      # _NCProperties names the writer
    assert '"netCDF-4"' in dump(path, "-s", "-h")   # _Format


def test_netcdf4_python_reads_dimensions_values_and_masks(written, reference):
    path, _ = written
    with netCDF4.Dataset(path) as ours, netCDF4.Dataset(reference) as ref:
        assert {k: (len(v), v.isunlimited()) for k, v in ours.dimensions.items()} == \
            {k: (len(v), v.isunlimited()) for k, v in ref.dimensions.items()}
        assert list(ours.variables) == list(ref.variables)
        assert ours.ncattrs() == ref.ncattrs()
        for name, var in ref.variables.items():
            mine = ours[name]
            assert mine.dimensions == var.dimensions, name
            assert mine.dtype == var.dtype, name
            assert {a: str(mine.getncattr(a)) for a in mine.ncattrs()} == \
                {a: str(var.getncattr(a)) for a in var.ncattrs()}, name
            a, b = mine[:], var[:]
            np.testing.assert_array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b), err_msg=name)
            np.testing.assert_array_equal(a.filled(0), b.filled(0), err_msg=name)
        assert ours["temperature"][2, 3].mask.all()           # a hole, masked
        assert ours["flags"][1].mask.all()


def test_netcdf4_python_appends_and_h5loom_reads_what_it_appended(written, tmp_path):
    path, _ = written
    copy = tmp_path / "append.nc"
    shutil.copy(path, copy)
    with netCDF4.Dataset(copy, "a") as nc:                    # needs link creation order tracked
        nc.createDimension("extra", 3)
        v = nc.createVariable("added", "f8", ("time", "lon"))
        v[:] = np.arange(18.0).reshape(3, 6)
        w = nc.createVariable("on_new", "i4", ("extra", "nv"))
        w[:] = np.arange(6).reshape(3, 2)
        nc["temperature"][2, 3, :] = np.full(6, 99.0)           # fill a hole
        nc.history = "appended by netCDF4-python"
    assert "double added(time, lon) ;" in dump(copy, "-h")
    seen = json.loads(run([SAMPLE, "describe", copy.name], tmp_path))
    by_name = {v["name"]: v for v in seen["variables"]}
    assert by_name["added"]["dimensions"] == ["time", "lon"]
    assert by_name["added"]["values"] == list(np.arange(18.0))
    assert by_name["on_new"]["dimensions"] == ["extra", "nv"]
    assert by_name["temperature"]["values"][-6:] == [99.0] * 6
    assert seen["attributes"]["history"] == "appended by netCDF4-python"


@pytest.mark.parametrize("engine", ["netcdf4", "h5netcdf"])
def test_xarray_opens_it_as_it_opens_ncgens_file(written, reference, engine):
    path, _ = written
    with xr.open_dataset(path, engine=engine) as ours, xr.open_dataset(reference, engine=engine) as ref:
        xr.testing.assert_identical(ours, ref)
        assert ours["temperature"].dims == ("time", "lat", "lon")
        assert np.isnan(ours["temperature"].values[2, 3]).all()   # _FillValue masked
        assert float(ours["temperature"].values[0, 1, 2]) == 212.0


def test_h5loom_reads_netcdf_cs_file_as_it_reads_its_own(written, reference):
    path, _ = written
    ours = json.loads(run([SAMPLE, "describe", path.name], path.parent))
    ref = json.loads(run([SAMPLE, "describe", reference.name], reference.parent))
    assert ours == ref


@pytest.mark.parametrize("ranks", [1, 4])
def test_readers_read_the_log_engines_file_after_close(tmp_path, reference, ranks):
    """The log engine's own file, unconverted: the same variables over the same
    dimensions and values (ncdump also shows the engine's block group, and the
    record dimension as fixed: its datasets are external storage - docs/netcdf.md)."""
    path = tmp_path / "sample.nc"
    write_sample(path, "log", ranks)
    variables = "time,lat,lon,temperature,count,bounds,flags,big"

    def root_data(text):  # the root group's data section, without the engine's group
        return text[text.index("data:"):].split("\ngroup: ")[0].rstrip("}\n")

    assert root_data(dump(path, "-v", variables, env=BESIDE)) == root_data(dump(reference, "-v", variables))
    # HDF5 reads HDF5_EXTFILE_PREFIX when it starts: the readers run in a process started with it.
    seen = json.loads(run([sys.executable, "-c", READ_ROOT_VARIABLES, path], tmp_path, BESIDE))
    expected = json.loads(run([sys.executable, "-c", READ_ROOT_VARIABLES, reference], tmp_path))
    assert seen == expected


# Prints what netCDF4-python and xarray (h5netcdf) see of a file's root variables.
READ_ROOT_VARIABLES = """
import json, sys
import netCDF4, numpy as np, xarray as xr
out = {}
with netCDF4.Dataset(sys.argv[1]) as nc:
    for name, v in nc.variables.items():
        a = v[:]
        out["netCDF4 " + name] = [list(v.dimensions), np.ma.getmaskarray(a).ravel().tolist(), a.filled(0).ravel().tolist()]
with xr.open_dataset(sys.argv[1], engine="h5netcdf") as ds:
    for name, v in ds.variables.items():
        out["h5netcdf " + name] = [list(v.dims), np.nan_to_num(v.values.astype("f8"), nan=-1).ravel().tolist()]
print(json.dumps(out))
"""


def test_bench_pio_keeps_netcdf_files_that_readers_open(tmp_path):
    """`h5loom bench pio --keep-files` leaves its netCDF files for any reader."""
    mpiexec = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
    out = run([mpiexec, "--oversubscribe", "--allow-run-as-root", "-n", 2, H5LOOM, "bench", "pio", "--map",
               SOURCE / "bench/e3sm/f_case_866x72_16p.dat", "--engine", "hdf5", "--rearranger", "subset",
               "--iotasks", 2, "--variables", 1, "--frames", 2, "--repeat", 1, "--keep-files", "--dir", tmp_path],
              tmp_path)
    assert "WRONG" not in out
    path = tmp_path / "pio-hdf5-subset-io2.nc"
    assert "double v1_d(time, dim1, dim2) ;" in dump(path, "-h")
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        assert ds["v1_f"].dims == ("time", "dim1", "dim2") and ds["v1_f"].shape == (2, 72, 866)
        assert float(ds["v1_d"].values[1, 0, 5]) == 5 + 1e6 * 0 + 1e5 * 1   # offset 5, variable 0, frame 1
