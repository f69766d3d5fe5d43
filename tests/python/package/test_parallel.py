"""Parallel use through mpi4py. Run at 1 rank by the package suite and under
``mpirun -n 2`` (ctest python-np2)."""
import numpy as np
import pytest

import h5loom


@pytest.mark.parametrize("engine", ["hdf5", {"hdf5": {"transfer": "collective"}}, {"wrappers": ["collcheck"]}])
def test_each_rank_writes_its_rows(shared_path, comm, engine):
    r, n = comm.rank, comm.size
    path = shared_path / "rows.h5"
    with h5loom.File(path, "w", comm=comm, engine=engine) as f:
        assert f.size == n and f.rank == r
        ds = f.create_dataset("fields/rho", shape=(3 * n, 4), dtype="f8", chunks="auto")
        ds[3 * r:3 * r + 3, :] = np.full((3, 4), r, dtype=np.float64)
        ds.attrs["units"] = "kg/m^3"
    with h5loom.File(path, "r", comm=comm, engine=engine) as f:
        rho = f["fields/rho"][...]
        np.testing.assert_array_equal(rho[:, 0], np.repeat(np.arange(n), 3))
        assert f["fields/rho"].attrs["units"] == "kg/m^3"
        # every rank reads a different part; a rank may read nothing
        mine = f["fields/rho"][3 * r:3 * r + 3, 1:3] if r % 2 == 0 else f["fields/rho"][0:0]
        assert mine.size == (6 if r % 2 == 0 else 0)


def test_appending_particles_with_offsets(shared_path, comm):
    r, n = comm.rank, comm.size
    path = shared_path / "particles.h5"
    counts = [k + 1 for k in range(n)]  # rank k has k+1 particles per step
    offset = sum(counts[:r])
    total = sum(counts)
    with h5loom.File(path, "w", comm=comm) as f:
        x = f.create_dataset("x", shape=(0,), maxshape=(None,), dtype="f4")
        for step in range(3):
            base = step * total
            x.extend((base + total,))
            x[base + offset:base + offset + counts[r]] = np.full(counts[r], 10 * step + r, dtype=np.float32)
    with h5loom.File(path, "r", comm=comm) as f:
        x = f["x"][...]
        expect = np.concatenate([np.full(counts[k], 10 * s + k, dtype=np.float32) for s in range(3) for k in range(n)])
        np.testing.assert_array_equal(x, expect)


def test_collective_mismatch_is_an_exception(shared_path, comm):
    if comm.size < 2:
        pytest.skip("needs 2 ranks")
    with h5loom.File(shared_path / "mm.h5", "w", comm=comm, engine={"wrappers": ["collcheck"]}) as f:
        with pytest.raises(h5loom.CollectiveMismatchError, match="do not match"):
            f.create_group(f"rank{comm.rank}")
        f.create_group("agreed")
        assert list(f) == ["agreed"]
