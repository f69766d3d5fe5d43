"""xarray reads what the series veneer writes on the zarr engine (issue 18):
openPMD meshes as variables over their axis labels, each species' records
along a dimension named after the species - the layouts that map to xarray's
model - value for value, written at 1, 2 and 4 ranks."""
import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")

from test_zarr_readers import run_h5loom  # noqa: E402

WRITER = r'''
from mpi4py import MPI
comm = MPI.COMM_WORLD
r, n = comm.rank, comm.size
nz, ny, nx = 2, 3, 4                                  # each rank's slab of x
with h5loom.Series("run.zarr", "w", comm=comm, layout="openpmd", engine="zarr") as s:
    for step in range(2):
        with s.write_step(step, time=0.5 * step, dt=0.5) as st:
            k = np.arange(3 * r, 3 * r + 3)           # 3 particles per rank
            st.particles("electrons").write(x=k * 1.0 + step, y=k * 2.0, z=-k * 1.0, px=k * 0.1, id=k.astype("i8"))
            z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx * r, nx * r + nx), indexing="ij")
            rho = (100 * z + 10 * y + x + step).astype("f8")
            st.field("rho", global_shape=(nz, ny, nx * n), offset=(0, 0, nx * r)).write(rho)
            st.field("E", global_shape=(nz, ny, nx * n), offset=(0, 0, nx * r), components=3).write(
                (rho, 2 * rho, 3 * rho))
'''


@pytest.fixture(scope="module", params=[1, 2, 4], ids=["np1", "np2", "np4"])
def series(request, tmp_path_factory):
    n = request.param
    d = tmp_path_factory.mktemp(f"xarray{n}")
    run_h5loom(WRITER, n, d)
    return d / "run.zarr", n


def expected_rho(n, step):
    z, y, x = np.meshgrid(np.arange(2), np.arange(3), np.arange(4 * n), indexing="ij")
    return (100 * z + 10 * y + x + step).astype("f8")


def test_xarray_opens_meshes_over_their_axes(series):
    path, n = series
    for step in range(2):
        meshes = xr.open_zarr(path, group=f"data/{step}/meshes", consolidated=False)
        assert meshes["rho"].dims == ("z", "y", "x")
        assert meshes.sizes == {"z": 2, "y": 3, "x": 4 * n}
        np.testing.assert_array_equal(meshes["rho"].values, expected_rho(n, step))
        assert list(meshes["rho"].attrs["axisLabels"]) == ["z", "y", "x"]   # openPMD's own record of them
        e = xr.open_zarr(path, group=f"data/{step}/meshes/E", consolidated=False)
        for c, factor in zip("xyz", (1, 2, 3)):
            assert e[c].dims == ("z", "y", "x")
            np.testing.assert_array_equal(e[c].values, factor * expected_rho(n, step))


def test_xarray_opens_particles_along_their_species(series):
    path, n = series
    k = np.arange(3 * n)
    for step in range(2):
        position = xr.open_zarr(path, group=f"data/{step}/particles/electrons/position", consolidated=False)
        assert position["x"].dims == ("electrons",) and position.sizes == {"electrons": 3 * n}
        np.testing.assert_array_equal(position["x"].values, k * 1.0 + step)
        np.testing.assert_array_equal(position["y"].values, k * 2.0)
        np.testing.assert_array_equal(position["z"].values, -k * 1.0)
        species = xr.open_zarr(path, group=f"data/{step}/particles/electrons", consolidated=False)
        np.testing.assert_array_equal(species["id"].values, k)
        momentum = xr.open_zarr(path, group=f"data/{step}/particles/electrons/momentum", consolidated=False)
        np.testing.assert_allclose(momentum["x"].values, k * 0.1)


def test_xarray_opens_the_whole_series_as_a_tree(series):
    path, n = series
    tree = xr.open_datatree(path, engine="zarr", consolidated=False)
    np.testing.assert_array_equal(tree["data/1/meshes"]["rho"].values, expected_rho(n, 1))
    np.testing.assert_array_equal(tree["data/1/particles/electrons"]["id"].values, np.arange(3 * n))
    assert tree["data/1/meshes/E"]["y"].dims == ("z", "y", "x")
