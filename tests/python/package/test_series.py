"""The Python series API: steps, particles and fields in both layouts.

Runs at 1 rank (python-package) and at 2 ranks (python-package-np2); every value
read back is checked against the formula that wrote it.
"""

import numpy as np
import pytest

import h5loom

LAYOUTS = ["openpmd", "h5part"]


def particle_count(rank):
    return 0 if rank == 1 else 3 + rank  # rank 1 has none


def global_count(size):
    return sum(particle_count(r) for r in range(size))


def x_values(size):
    return np.concatenate([np.arange(particle_count(r)) + 100.0 * r for r in range(size)])


def box_1d(rank, size):
    """Irregular boxes along x: rank r owns r+2 cells."""
    start = sum(r + 2 for r in range(rank))
    return start, rank + 2


def rho_global(size, step):
    nx = sum(r + 2 for r in range(size))
    z, y, x = np.meshgrid(np.arange(2), np.arange(3), np.arange(nx), indexing="ij")
    return (1000 * step + 100 * z + 10 * y + x).astype("f8")


def write_series(path, comm, layout, steps=2):
    rank, size = comm.rank, comm.size
    nx = sum(r + 2 for r in range(size))
    x0, nloc = box_1d(rank, size)
    with h5loom.Series(path, "w", comm=comm, layout=layout) as s:
        s.attrs["code"] = "test_series"
        for n in range(steps):
            with s.write_step(n, time=0.5 * n, dt=0.5) as st:
                k = particle_count(rank)
                st.particles("electrons").write(x=np.arange(k) + 100.0 * rank,
                                                id=np.arange(k, dtype=np.int64) + 1000 * rank)
                # local box with a ghost layer of width 1 filled with garbage
                local = np.full((2 + 2, 3 + 2, nloc + 2), -999.0)
                local[1:-1, 1:-1, 1:-1] = rho_global(size, n)[:, :, x0:x0 + nloc]
                st.field("rho", global_shape=(2, 3, nx), offset=(0, 0, x0),
                         spacing=(0.1, 0.2, 0.3), origin=(1.0, 2.0, 3.0)).write(local, ghost=1)
                st.attrs["cycle"] = 10 * n


@pytest.mark.parametrize("layout", LAYOUTS)
def test_series_roundtrip(shared_path, comm, layout):
    path = shared_path / f"series_{layout}.h5"
    write_series(path, comm, layout)
    rank, size = comm.rank, comm.size
    with h5loom.Series(path, "r", comm=comm) as s:
        assert s.layout == layout
        assert s.step_numbers() == [0, 1]
        assert len(s) == 2
        for n, st in enumerate(s.steps()):
            assert st.index == n and st.time == pytest.approx(0.5 * n)
            assert st.attrs["cycle"] == 10 * n
            species = st.particle_species()
            assert len(species) == 1
            e = st.particles(species[0])
            assert sorted(e.arrays()) == ["id", "x"]
            assert e.global_count == global_count(size)
            np.testing.assert_array_equal(e["x"].read(), x_values(size))
            assert e["id"].dtype == np.int64
            b, end = e.my_share()
            np.testing.assert_array_equal(e["x"].read_my_share(), x_values(size)[b:end])
            np.testing.assert_array_equal(e["x"][1:4], x_values(size)[1:4])
            np.testing.assert_array_equal(e["x"][[2, 0, 2]], x_values(size)[[2, 0, 2]])
            total = comm.allreduce(end - b)
            assert total == global_count(size)

            assert st.fields() == ["rho"]
            rho = st.field("rho")
            ref = rho_global(size, n)
            assert rho.shape == ref.shape
            np.testing.assert_array_equal(rho.read(), ref)
            # my box plus a halo of 1, -1 outside the domain
            x0, nloc = box_1d(rank, size)
            got = rho.read(box=((0, 0, x0), (2, 3, x0 + nloc)), halo=1, fill=-1.0)
            padded = np.pad(ref, 1, constant_values=-1.0)
            np.testing.assert_array_equal(got, padded[:, :, x0:x0 + nloc + 2])
            assert rho.spacing == pytest.approx((0.1, 0.2, 0.3))
            assert rho.origin == pytest.approx((1.0, 2.0, 3.0))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_append_steps(shared_path, comm, layout):
    path = shared_path / f"append_{layout}.h5"
    write_series(path, comm, layout, steps=1)
    with h5loom.Series(path, "a", comm=comm) as s:
        with s.write_step(1, time=2.0) as st:
            st.particles("electrons").write(x=np.full(2, float(comm.rank)))
    with h5loom.Series(path, "r", comm=comm) as s:
        assert s.step_numbers() == [0, 1]
        assert s[1].time == 2.0
        np.testing.assert_array_equal(s[1].particles("electrons")["x"].read(),
                                      np.repeat(np.arange(comm.size, dtype="f8"), 2))


def test_vector_field_components(shared_path, comm):
    path = shared_path / "vector.h5"
    n = comm.size
    with h5loom.Series(path, "w", comm=comm, layout="openpmd") as s:
        with s.write_step(0) as st:
            E = st.field("E", global_shape=(4 * n,), offset=(4 * comm.rank,), components=3)
            base = np.arange(4.0) + 4 * comm.rank
            E.write((base, base + 100, base + 200))
    with h5loom.Series(path, "r", comm=comm) as s:
        E = s[0].field("E")
        assert E.components == 3
        for c in range(3):
            np.testing.assert_array_equal(E.read(component=c), np.arange(4.0 * n) + 100 * c)


def test_errors(shared_path, comm):
    path = shared_path / "errors.h5"
    with h5loom.Series(path, "w", comm=comm, layout="h5part") as s:
        with s.write_step(0) as st:
            with pytest.raises(h5loom.SelectionError, match="differ in length"):
                st.particles("p").write(x=np.zeros(3), y=np.zeros(2))
            with pytest.raises(h5loom.UsageError, match="TimeValue"):
                st.attrs["TimeValue"] = 1.0
            f = st.field("phi", global_shape=(4, 4), offset=(0, 0))
            with pytest.raises(h5loom.SelectionError, match="phi"):
                f.write(np.zeros(4))
            with pytest.raises(h5loom.DatatypeError, match="phi"):
                f.write(np.zeros((4, 4), dtype=np.complex128))
            if comm.rank == 0:
                f.write(np.ones((4, 4)))
            else:
                f.write(np.ones((0, 0)), offset=(0, 0))
        with pytest.raises(h5loom.Error, match="step"):
            s.write_step(2)  # h5part numbers steps without gaps
    with pytest.raises(h5loom.UsageError, match="mode"):
        h5loom.Series(path, "x", comm=comm)
    with h5loom.Series(path, "r", comm=comm) as s:
        with pytest.raises(h5loom.NotFoundError, match="nope"):
            s[0].field("nope")
        np.testing.assert_array_equal(s[0].field("phi").read(), np.ones((4, 4)))
