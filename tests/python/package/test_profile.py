"""H5LOOM_PROFILE: counters against known workloads and the trace against the
calls made (issue 7, the recording part). Profiling is decided when a process
starts, so each workload runs in its own process."""
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import h5loom.profile

CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}

WORKLOAD = textwrap.dedent("""
    import sys
    import numpy as np
    import h5loom
    path, engine, n, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with h5loom.File(path, "w", engine=engine) as f:
        d = f.create_dataset("d", shape=(n * size,), dtype="u1")
        for i in range(n):                       # n writes of `size` bytes, one after the other
            d[i * size:(i + 1) * size] = np.full(size, i % 251, dtype="u1")
        d.attrs["n"] = n
    with h5loom.File(path, "r", engine=engine) as f:
        assert (f["d"][...].reshape(n, size) == (np.arange(n) % 251)[:, None]).all()
""")


def run_workload(tmp_path, engine, n, size):
    prof = tmp_path / "prof"
    script = tmp_path / "workload.py"
    script.write_text(WORKLOAD)
    env = dict(CLEAN_ENV, H5LOOM_PROFILE=str(prof), H5LOOM_PROFILE_ALIGNMENT="4096")
    res = subprocess.run([sys.executable, str(script), str(tmp_path / "w.h5"), engine, str(n), str(size)],
                         env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return h5loom.profile.load(prof), str(tmp_path / "w.h5")


@pytest.mark.parametrize("engine", ["hdf5", "log"])
def test_counters_of_n_writes_of_s_bytes(tmp_path, engine):
    n, size = 10, 2000  # 2000 B: the 1K-10K bucket
    prof, path = run_workload(tmp_path, engine, n, size)
    assert prof.ranks == [0]
    (api,) = prof.counters_for(layer="api", file=path + ":/d")
    assert api["writes"] == n and api["bytes_written"] == n * size
    assert api["write_sizes"] == [0, 0, n, 0, 0, 0, 0, 0, 0, 0]
    assert api["consecutive_writes"] == n - 1 and api["sequential_writes"] == n - 1
    assert api["unaligned"] == n - 1  # offsets i * 2000: only the first is a multiple of 4096
    assert api["reads"] == 1 and api["bytes_read"] == n * size
    assert api["read_sizes"] == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0]  # one read of 20000 B: 10K-100K
    (eng,) = prof.counters_for(layer="engine", file=path + ":/d")
    assert eng["writes"] == n and list(prof.histogram("write", layer="engine", file=path + ":/d")) == \
        [0, 0, n, 0, 0, 0, 0, 0, 0, 0]
    if engine == "log":  # the engine's own system calls: appends to the log, then its syncs
        posix = prof.counters_for(layer="posix", file=path + ".loom/log")[0]
        assert posix["bytes_written"] >= n * size and posix["writes"] >= 1


@pytest.mark.parametrize("engine", ["hdf5", "log"])
def test_trace_matches_the_calls(tmp_path, engine):
    n, size = 6, 300
    prof, path = run_workload(tmp_path, engine, n, size)
    t = prof.trace
    writes = t[(t["layer"] == "api") & (t["name"] == "write")]
    assert len(writes) == n
    np.testing.assert_array_equal(writes["offset"], np.arange(n) * size)
    np.testing.assert_array_equal(writes["size"], np.full(n, size))
    assert (writes["file"] == path + ":/d").all() and (writes["kind"] == "write").all()
    assert (t["end"] >= t["start"]).all() and (np.diff(t["start"]) >= 0).all()
    api_names = list(t[t["layer"] == "api"]["name"])
    assert api_names[0] == "create" and "create_dataset" in api_names and "set_attribute" in api_names
    assert api_names.count("close") == 2 and api_names.count("open") == 1 and api_names.count("read") == 1
    # Each write reaches the engine as one put, with its offset and size.
    engine_writes = t[(t["layer"] == "engine") & (t["name"] == "put")]
    np.testing.assert_array_equal(engine_writes["offset"], np.arange(n) * size)
    assert engine_writes["size"].sum() == n * size
    assert prof.duration_s > 0


def test_no_profile_without_the_variable(tmp_path):
    script = tmp_path / "w.py"
    script.write_text("import h5loom\nwith h5loom.File('x.h5', 'w') as f: f.create_group('g')\n")
    subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=CLEAN_ENV, check=True, timeout=120)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.py", "x.h5"]
    with pytest.raises(FileNotFoundError):
        h5loom.profile.load(tmp_path)


def test_mpiio_layer_of_the_hdf5_engine(tmp_path):
    """HDF5's own MPI-IO calls, caught through MPI's profiling interface (C++ program, shared libh5loom)."""
    build = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()
    exe = build / "examples" / "quickstart_cpp"
    if not exe.exists():
        pytest.skip("the C++ quickstart is not built")
    prof = tmp_path / "prof"
    env = dict(CLEAN_ENV, H5LOOM_PROFILE=str(prof), H5LOOM_ENGINE="hdf5")
    mpiexec = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
    subprocess.run([mpiexec, "--oversubscribe", "--allow-run-as-root", "-x", "H5LOOM_PROFILE", "-x", "H5LOOM_ENGINE",
                    "-n", "2", str(exe), str(tmp_path / "q.h5")], env=env, check=True, timeout=300,
                   capture_output=True)
    p = h5loom.profile.load(prof)
    assert p.ranks == [0, 1]
    for rank in (0, 1):
        (mpiio,) = p.counters_for(layer="mpiio", file=str(tmp_path / "q.h5"), rank=rank)
        assert mpiio["writes"] >= 1 and mpiio["bytes_written"] >= 4 * 3 * 8  # each rank's rows, at least
        assert mpiio["reads"] >= 1 and mpiio["meta_ops"] >= 2  # open and close at least
    names = set(p.trace[p.trace["layer"] == "mpiio"]["name"])
    assert {"MPI_File_open", "MPI_File_close"} <= names and names & {"MPI_File_write_at", "MPI_File_write_at_all"}
