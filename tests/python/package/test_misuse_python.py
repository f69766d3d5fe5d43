"""Misuse of the Python package (issue 13; docs/errors.md): scalar and list
writes follow the safe-cast rule of array writes, and an exception that nobody
catches on one rank ends the MPI job instead of leaving the others waiting.
The timeouts only stop a hang; nothing here asserts a duration."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import h5loom

MPIEXEC = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
# Children must not inherit this pytest process's Open MPI singleton environment.
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
HANG = 120  # seconds: only there to turn a hang into a failure


@pytest.fixture
def f(tmp_path):
    # One rank per file (COMM_SELF): these tests also run inside the 2-rank pytest.
    from mpi4py import MPI
    with h5loom.File(tmp_path / "casts.h5", "w", comm=MPI.COMM_SELF, engine="hdf5") as f:
        yield f


@pytest.mark.parametrize("dtype, value, why", [
    ("int32", 1.7, "a float does not convert to the integer type int32"),
    ("int32", 2.0, "a float does not convert to the integer type int32"),
    ("int32", [3e9], "a float does not convert to the integer type int32"),
    ("int32", [1, 2.5, 3, 4], "a float does not convert to the integer type int32"),
    ("int32", 3_000_000_000, "outside the range of int32, [-2147483648, 2147483647]"),
    ("int32", [0, 0, 0, -3_000_000_000], "outside the range of int32"),
    ("uint8", -1, "outside the range of uint8, [0, 255]"),
    ("uint8", [256], "outside the range of uint8"),
    ("int64", 2**70, "outside the range of int64"),
    ("uint64", [2**64], "outside the range of uint64"),
    ("float32", 1e300, "too large for float32"),
    ("float32", np.float64(1.5), "float64 does not convert safely to float32"),
    ("int32", np.int64(7), "int64 does not convert safely to int32"),
    ("int16", np.float16(1), "float16 does not convert safely to int16"),
])
def test_lossy_scalar_and_list_writes_raise(f, dtype, value, why):
    ds = f.create_dataset(f"d_{dtype}", shape=(4,), dtype=dtype)
    ds[:] = np.zeros(4, dtype=dtype)
    with pytest.raises(h5loom.DatatypeError) as err:
        ds[:] = value
    msg = str(err.value)
    assert f"dataset '/d_{dtype}' of type {dtype}" in msg and why in msg, msg
    assert "cannot write " in msg and "without losing values" in msg
    assert isinstance(err.value, TypeError)  # what a generic handler catches
    np.testing.assert_array_equal(ds[:], np.zeros(4, dtype=dtype))  # nothing was written


@pytest.mark.parametrize("value", [True, "7", 1 + 2j, None, [1, "a"]])
def test_non_numbers_raise(f, value):
    ds = f.create_dataset("d", shape=(4,), dtype="int32")
    with pytest.raises(h5loom.DatatypeError) as err:
        ds[:] = value
    assert "dataset '/d'" in str(err.value) and "int32" in str(err.value)


@pytest.mark.parametrize("dtype, value, want", [
    ("int32", 5, [5, 5, 5, 5]),
    ("int32", [1, 2, 3, -2147483648], [1, 2, 3, -2147483648]),
    ("uint8", [0, 255, 1, 2], [0, 255, 1, 2]),
    ("uint64", 2**64 - 1, [2**64 - 1] * 4),
    ("int64", [2**63 - 1] * 4, [2**63 - 1] * 4),
    ("float32", 0.1, [np.float32(0.1)] * 4),   # a Python float goes into any float type
    ("float64", 3, [3.0] * 4),                 # an int into a float type: a safe cast
    ("float64", np.float32(0.5), [0.5] * 4),
    ("int64", np.int32(-7), [-7] * 4),
])
def test_safe_scalar_and_list_writes_store_the_value(f, dtype, value, want):
    ds = f.create_dataset("d", shape=(4,), dtype=dtype)
    ds[:] = value
    np.testing.assert_array_equal(ds[:], np.array(want, dtype=dtype))


def test_single_element_write(f):
    ds = f.create_dataset("d", shape=(2, 3), dtype="int16")
    ds[:] = np.zeros((2, 3), dtype="int16")
    ds[1, 2] = 9
    with pytest.raises(h5loom.DatatypeError, match=r"cannot write 40000 to dataset '/d' of type int16"):
        ds[0, 0] = 40000
    assert ds[1, 2] == 9 and ds[0, 0] == 0


def run_script(tmp_path, source, ranks=2, env=None):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    cmd = [MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", str(ranks), sys.executable, str(script),
           str(tmp_path)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=HANG, env={**CLEAN_ENV, **(env or {})},
                          cwd=tmp_path)


def test_uncaught_exception_on_one_rank_ends_the_job(tmp_path):
    # Rank 1 raises; rank 0 waits for it in a collective call (a barrier)
    # and would wait forever if rank 1 just exited.
    res = run_script(tmp_path, """
        import sys
        import h5loom
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        if comm.rank == 1:
            raise ValueError("only rank 1 fails")
        comm.Barrier()
    """)
    assert res.returncode != 0
    assert "ValueError: only rank 1 fails" in res.stderr  # the traceback comes first
    assert "h5loom: uncaught ValueError on rank 1 of 2: ending the MPI job (MPI_Abort)" in res.stderr


def test_bad_cast_on_one_rank_ends_the_job(tmp_path):
    # The misuse of a write, made by one rank: its DatatypeError is not caught,
    # and rank 0 is already waiting in the collective close.
    res = run_script(tmp_path, """
        import sys
        import h5loom
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        with h5loom.File(sys.argv[1] + "/one.h5", "w", comm=comm, engine="hdf5") as f:
            ds = f.create_dataset("x", shape=(2,), dtype="int32")
            ds[comm.rank] = 1.7 if comm.rank == 1 else 1
    """)
    assert res.returncode != 0
    assert "DatatypeError: cannot write 1.7 to dataset '/x' of type int32" in res.stderr, res.stderr
    assert "h5loom: uncaught DatatypeError on rank 1 of 2" in res.stderr


def test_previous_excepthook_is_chained(tmp_path):
    res = run_script(tmp_path, """
        import sys
        def mine(t, v, tb):
            sys.stderr.write("my hook saw " + t.__name__ + "\\n")
        sys.excepthook = mine
        import h5loom
        from mpi4py import MPI
        if MPI.COMM_WORLD.rank == 1:
            raise KeyError("k")
        MPI.COMM_WORLD.Barrier()
    """)
    assert res.returncode != 0
    assert "my hook saw KeyError" in res.stderr
    assert "h5loom: uncaught KeyError on rank 1 of 2" in res.stderr


def test_abort_can_be_turned_off(tmp_path):
    # With H5LOOM_ABORT_ON_ERROR=0 the traceback is all: the script's other
    # rank must not wait (here it waits for nothing).
    res = run_script(tmp_path, """
        import h5loom
        from mpi4py import MPI
        if MPI.COMM_WORLD.rank == 1:
            raise RuntimeError("left to the caller")
    """, env={"H5LOOM_ABORT_ON_ERROR": "0"})
    assert res.returncode != 0
    assert "RuntimeError: left to the caller" in res.stderr
    assert "MPI_Abort" not in res.stderr


def test_one_rank_alone_is_not_aborted(tmp_path):
    res = run_script(tmp_path, """
        import h5loom
        h5loom._core.world_rank_size()
        raise RuntimeError("alone")
    """, ranks=1)
    assert res.returncode == 1
    assert "RuntimeError: alone" in res.stderr and "MPI_Abort" not in res.stderr
