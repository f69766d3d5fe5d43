"""The async wrapper from Python (docs/async.md): writes return at once, arrays
can be reused right after ``ds[...] = a``, ``flush_async`` returns a Request.
Run at 1 rank by the package suite and under ``mpirun -n 2`` (ctest
python-package-np2)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import h5loom

ENGINES = ["async+log", {"engine": "hdf5", "wrappers": ["async"]},
           # every write made at once on the program's thread (written through), as when the mover is behind
           {"engine": "log", "wrappers": ["async"], "async": {"write_through": "always"}}]


@pytest.mark.parametrize("engine", ENGINES)
def test_an_array_reused_right_after_a_write_does_not_change_what_is_stored(shared_path, comm, engine):
    r, n = comm.rank, comm.size
    path = shared_path / "reused.h5"
    with h5loom.File(path, "w", comm=comm, engine=engine) as f:
        ds = f.create_dataset("x", shape=(4, 1000 * n), dtype="f8")
        a = np.empty(1000)
        for step in range(4):
            a[:] = np.arange(1000) + 1000 * r + 1e6 * step
            ds[step, 1000 * r:1000 * (r + 1)] = a
            a[:] = -1.0  # at once: the write copied it
            req = f.flush_async()
            assert isinstance(req, h5loom.Request)
            req.wait()
            assert req.done()
        queued, through = map(int, re.search(r"writes queued (\d+) \((\d+) of them written through\)",
                                             f.describe()).groups())
        assert queued == 4
        if isinstance(engine, dict) and engine.get("async", {}).get("write_through") == "always":
            assert through == 4
    with h5loom.File(path, "r", comm=comm) as f:
        want = np.arange(1000 * n)[None, :] + 1e6 * np.arange(4)[:, None]
        np.testing.assert_array_equal(f["x"][...], want)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lent_array_is_read_when_the_flush_completes(shared_path, comm, engine):
    r, n = comm.rank, comm.size
    path = shared_path / "lent.h5"
    with h5loom.File(path, "w", comm=comm, engine=engine) as f:
        ds = f.create_dataset("x", shape=(8 * n,), dtype="i8")
        lent = np.arange(8 * r, 8 * r + 8, dtype="i8")
        ds.write(lent, h5loom.Selection.box([8 * r], [8]), copy=False)  # lent, not copied
        with f.flush_async():  # waits when the block ends
            pass
        lent[:] = -5  # after the flush completed: not stored
        np.testing.assert_array_equal(ds[...], np.arange(8 * n))


def test_a_dropped_request_completes_at_the_next_collective_call(shared_path, comm):
    r, n = comm.rank, comm.size
    path = shared_path / "dropped.h5"
    with h5loom.File(path, "w", comm=comm, engine="async+log") as f:
        ds = f.create_dataset("x", shape=(n,), dtype="f4")
        ds[r] = np.float32(r + 0.5)
        f.flush_async()  # dropped
        f.create_group("after")
        np.testing.assert_array_equal(ds[...], np.arange(n, dtype="f4") + 0.5)
        assert "async" in f.describe()


def test_every_engine_has_flush_async(shared_path, comm):
    path = shared_path / "plain.h5"
    with h5loom.File(path, "w", comm=comm, engine="hdf5") as f:
        f.create_dataset("x", shape=(2,), dtype="i4")[...] = np.array([1, 2], dtype="i4")
        req = f.flush_async(durable=False)
        assert req.done()  # a synchronous engine: complete on return
        req.wait()


SINGLE = r"""
import sys
import mpi4py
mpi4py.rc.thread_level = "single"
from mpi4py import MPI
import h5loom
try:
    h5loom.File(sys.argv[1], "w", engine="async+log")
    print("opened")
except h5loom.ConfigError as e:
    print("refused:", e)
"""


def test_mpi_thread_single_is_refused_with_a_clear_error(tmp_path, comm):
    if comm.size > 1:
        pytest.skip("starts its own single-process MPI program")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    out = subprocess.run([sys.executable, "-c", SINGLE, str(tmp_path / "single.h5")], capture_output=True, text=True,
                         timeout=120, env=env)
    assert "refused:" in out.stdout, out.stdout + out.stderr
    assert "MPI_THREAD_FUNNELED" in out.stdout and "MPI_THREAD_SINGLE" in out.stdout


def test_reading_alone_while_a_flush_is_pending_is_refused_without_a_hang(shared_path, comm):
    r, n = comm.rank, comm.size
    path = shared_path / "alone.h5"
    with h5loom.File(path, "w", comm=comm, engine="async+log") as f:
        ds = f.create_dataset("x", shape=(n,), dtype="f8")
        ds[r] = float(r)
        f.flush()
        req = f.flush_async()
        if r == 0:  # one rank alone: the pending flush needs every rank
            with pytest.raises(h5loom.UsageError, match="pending"):
                ds.read(independent=True)
        req.wait()
        if r == 0:
            np.testing.assert_array_equal(ds.read(independent=True), np.arange(n, dtype="f8"))


def test_a_stack_with_async_twice_is_refused(tmp_path, comm):
    if comm.size > 1:
        pytest.skip("one rank is enough")
    with pytest.raises(h5loom.ConfigError, match="stacked twice"):
        h5loom.File(tmp_path / "twice.h5", "w", engine={"engine": "log", "wrappers": ["async", "async"]})


@pytest.mark.parametrize("engine", ENGINES + ["log"])
def test_close_async_stores_every_write_when_waited_for(shared_path, comm, engine):
    r, n = comm.rank, comm.size
    path = shared_path / "closing.h5"
    f = h5loom.File(path, "w", comm=comm, engine=engine)
    ds = f.create_dataset("x", shape=(n, 1000), dtype="f8")
    a = np.arange(1000.0) + 1000 * r
    ds[r] = a
    a[:] = -1.0  # copied: free at once
    req = f.close_async()
    assert isinstance(req, h5loom.Request)
    assert not f.is_open and not req.done()
    with pytest.raises(h5loom.UsageError, match="closing"):
        ds[...]
    with req:  # waits when the block ends
        pass
    assert req.done()
    f.close()  # closed already: harmless
    with h5loom.File(path, "r", comm=comm) as f:
        np.testing.assert_array_equal(f["x"][...], np.arange(1000.0 * n).reshape(n, 1000))


def test_close_completes_a_close_begun_asynchronously(shared_path, comm):
    r, n = comm.rank, comm.size
    path = shared_path / "closed-by-with.h5"
    with h5loom.File(path, "w", comm=comm, engine="async+log") as f:
        f.create_dataset("x", shape=(n,), dtype="i4")[r] = r + 10
        req = f.close_async()
    assert req.done()  # the with block's close completed it
    req.wait()
    with h5loom.File(path, "r", comm=comm) as f:
        np.testing.assert_array_equal(f["x"][...], np.arange(n, dtype="i4") + 10)
