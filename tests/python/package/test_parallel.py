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


def test_log_regions_reserve_what_the_last_file_used(shared_path, comm):
    # A large write goes to the rank's region of the log; rank r's region of a
    # round starts r region sizes in. The first round of a file reserves as
    # much as the last round of the previous file settled on (at most
    # region_size), so a code that writes a file per step leaves no holes.
    import os

    r, n = comm.rank, comm.size
    engine = {"engine": "log", "log": {"region_size": 8 << 20}}
    sizes = []
    for k, per_rank in enumerate([(9 << 20) // 8, (3 << 19) // 8, (3 << 19) // 8]):  # 9 MiB, then 1.5 MiB twice
        path = shared_path / f"regions{k}.h5"
        with h5loom.File(path, "w", comm=comm, engine=engine) as f:
            ds = f.create_dataset("x", shape=(n * per_rank,), dtype="f8")
            ds[r * per_rank:(r + 1) * per_rank] = np.full(per_rank, 10.0 * k + r)
        with h5loom.File(path, "r", comm=comm) as f:
            want = np.repeat(10.0 * k + np.arange(n), per_rank)
            np.testing.assert_array_equal(f["x"][...], want)
        sizes.append(os.path.getsize(str(path) + ".loom/log"))
    # The second file's regions are 8 MiB (the first one's demand, capped):
    # ranks after the first leave holes. The third's are 1.5 MiB: none.
    if n > 1:
        assert sizes[1] >= (n - 1) * (8 << 20), sizes
        assert sizes[2] < n * (2 << 20), sizes


def test_a_write_that_fails_on_one_rank_is_raised_on_every_rank(shared_path, comm):
    # Every rank writes its own buffered data ("aggregators": "all"); the last
    # rank's "disk is full" (RLIMIT_FSIZE). Its pwrite fails; the flush raises
    # IOError on every rank (no rank hangs), and the data committed before
    # stays readable.
    import resource
    import signal

    if comm.size < 2:
        pytest.skip("needs 2 ranks")
    r, n = comm.rank, comm.size
    path = shared_path / "onefails.h5"
    engine = {"engine": "log", "log": {"aggregators": "all", "region_size": 0}}
    raised = False
    with h5loom.File(path, "w", comm=comm, engine=engine) as f:
        kept = f.create_dataset("kept", shape=(n * 100,), dtype="f8")
        kept[r * 100:(r + 1) * 100] = np.full(100, float(r))
        f.flush()
        lost = f.create_dataset("lost", shape=(n * 1000,), dtype="f8")
        lost[r * 1000:(r + 1) * 1000] = np.full(1000, 1.0)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        handler = signal.getsignal(signal.SIGXFSZ)
        if r == n - 1:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))
        try:
            f.flush()
        except h5loom.IOError as e:
            raised = "File too large" in str(e) and str(path) in str(e)
        finally:
            if r == n - 1:
                resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
                signal.signal(signal.SIGXFSZ, handler)
        with pytest.raises(h5loom.IOError, match="unusable"):
            f.close()  # nothing is committed over the failed epoch, on any rank
    assert raised, f"rank {r}: the flush did not raise the failed write"
    with h5loom.File(path, "r", comm=comm) as f:
        np.testing.assert_array_equal(f["kept"][...], np.repeat(np.arange(n, dtype=np.float64), 100))


def test_a_damaged_block_read_by_one_rank_raises_on_every_rank(shared_path, comm):
    # Issue 13, item 8: rank 0 reads an intact block, the last rank a damaged
    # one; both raise the CorruptionError (no rank is left waiting in the next
    # collective call), and the intact data still reads afterwards.
    r, n = comm.rank, comm.size
    path = shared_path / "damaged.h5"
    with h5loom.File(path, "w", comm=comm, engine="log") as f:
        ds = f.create_dataset("x", shape=(n, 1000), dtype="f8")
        ds[r] = np.full(1000, float(r))
    if r == 0:  # damage the last rank's block: the aggregator wrote the rows in rank order
        with open(str(path) + ".loom/log", "r+b") as fh:
            fh.seek(4096 + (n - 1) * 8000 + 100)
            fh.write(b"\xff" * 8)
    comm.Barrier()
    with h5loom.File(path, "r", comm=comm) as f:
        with pytest.raises(h5loom.CorruptionError, match=r"'/x'"):
            f["x"][n - 1 if r == n - 1 else 0]
        if n > 1:
            np.testing.assert_array_equal(f["x"][0], np.zeros(1000))  # still usable, on every rank


def test_an_attribute_that_differs_by_rank_is_not_committed(shared_path, comm):
    # Issue 13, item 10: the log takes metadata from rank 0 and the front file
    # from the last rank; ranks that disagree get an error, all of them, and
    # the epoch is not committed (the earlier one is).
    if comm.size < 2:
        pytest.skip("needs 2 ranks")
    path = shared_path / "attrs.h5"
    f = h5loom.File(path, "w", comm=comm, engine="log")
    f.attrs["same"] = 1
    f.flush()
    f.attrs["time"] = float(comm.rank)  # a per-rank clock, say
    with pytest.raises(h5loom.CollectiveMismatchError, match="rank 1 made different collective calls"):
        f.flush()
    with pytest.raises(h5loom.IOError, match="unusable"):
        f.close()
    with h5loom.File(path, "r", comm=comm) as g:
        assert g.attrs["same"] == 1 and "time" not in g.attrs


@pytest.mark.parametrize("engine", ["hdf5", {"wrappers": ["collcheck"]}, "log"])
def test_each_rank_writes_references(shared_path, comm, engine):
    # obj.ref and f[ref] are collective (collcheck checks that every rank makes
    # them alike); writing references is not.
    if "reference_datasets" not in h5loom.engine_groups(engine):
        pytest.skip(f"engine {engine} does not declare the conformance group 'reference_datasets'")
    r, n = comm.rank, comm.size
    path = shared_path / "refs.h5"
    with h5loom.File(path, "w", comm=comm, engine=engine) as f:
        targets = [f.create_group(f"g{k}").ref for k in range(n)]
        refs = f.create_dataset("refs", shape=(n,), dtype=h5loom.ref_dtype)
        refs[r] = targets[(r + 1) % n]
        f.attrs["all"] = targets
    with h5loom.File(path, "r", comm=comm, engine=engine) as f:
        got = f["refs"][...]
        assert [f[ref].path for ref in got] == [f"/g{(k + 1) % n}" for k in range(n)]
        assert [f.dereference(ref) for ref in f.attrs["all"]] == [f"/g{k}" for k in range(n)]


@pytest.mark.parametrize("engine", ["log", {"engine": "hdf5", "hdf5": {"collective_metadata": False}}])
def test_one_rank_reads_alone(shared_path, comm, engine):
    """read(independent=True): the last rank reads while the others go on (no
    hang), seeing what the last flush made visible; unflushed writes refuse it."""
    r, n = comm.rank, comm.size
    with h5loom.File(shared_path / "alone.h5", "w", comm=comm, engine=engine) as f:
        d = f.create_dataset("d", shape=(2 * n,), dtype="i8", chunks=(3,), maxshape=(None,))
        d[2 * r:2 * r + 2] = [10 * r, 10 * r + 1]
        with pytest.raises(h5loom.UsageError, match="not yet flushed"):
            d.read(independent=True)
        f.flush()
        if r == n - 1:
            got = d.read(independent=True)
            np.testing.assert_array_equal(got, [10 * (k // 2) + k % 2 for k in range(2 * n)])
            with pytest.raises(h5loom.SelectionError):
                d.read(h5loom.Selection.box([2 * n], [1]), independent=True)
        f.attrs["after"] = 1  # a collective call lines up after the lone read


def test_hdf5_engine_with_collective_metadata_refuses_reading_alone(shared_path, comm):
    with h5loom.File(shared_path / "coll.h5", "w", comm=comm) as f:
        d = f.create_dataset("d", data=np.arange(4))
        f.flush()
        if comm.size > 1:
            with pytest.raises(h5loom.UsageError, match="collective_metadata"):
                d.read(independent=True)
        else:  # one rank: collective metadata reads are every rank's
            np.testing.assert_array_equal(d.read(independent=True), np.arange(4))


def test_each_rank_writes_ragged_rows_to_a_log_file(shared_path, comm):
    """Variable-length sequences (vlen_dtype) from every rank: the log engine
    keeps them in its metadata; every rank reads every row."""
    r, n = comm.rank, comm.size
    path = shared_path / "ragged.h5"
    with h5loom.File(path, "w", comm=comm, engine="log") as f:
        ds = f.create_dataset("hits", shape=(2 * n,), dtype=h5loom.vlen_dtype("i4"))
        ds[2 * r:2 * r + 2] = [np.full(r, r, dtype="i4"), np.arange(r + 1, dtype="i4")]
    with h5loom.File(path, "r", comm=comm) as f:
        got = f["hits"][...]
        for q in range(n):
            assert got[2 * q].tolist() == [q] * q and got[2 * q + 1].tolist() == list(range(q + 1))
