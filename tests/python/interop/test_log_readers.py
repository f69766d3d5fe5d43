"""Log-engine files and stock HDF5 readers (issue 5):

* `h5loom convert` turns a log file into a native HDF5 file that equals, value
  for value and attribute for attribute, what the hdf5 engine writes;
* the log file's front file is read directly by h5py and h5dump: datasets whose
  blocks tile them are mapped onto the log with HDF5 external storage, the
  others are dangling links listed in `_h5loom_log_only` (never wrong values).
"""
import os
import pathlib
import subprocess
import sys

import h5py
import numpy as np
import pytest

BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()
MPIEXEC = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
MPI = [MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n"]


def run(*cmd, cwd=None, env=None):
    return subprocess.run([str(c) for c in cmd], check=True, timeout=300, capture_output=True, text=True,
                          cwd=cwd, env=env)


def walk(f):
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj))
    return out


def attrs_of(obj):
    return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in obj.attrs.items() if not k.startswith("_h5loom")}


def assert_same_attrs(a, b):
    aa, bb = attrs_of(a), attrs_of(b)
    assert aa.keys() == bb.keys()
    for k in aa:
        np.testing.assert_array_equal(np.asarray(aa[k]), np.asarray(bb[k]), err_msg=k)


@pytest.fixture(scope="module", params=[1, 2, 4])
def files(request, tmp_path_factory):
    n = request.param
    d = tmp_path_factory.mktemp(f"log{n}")
    run(*MPI, n, BUILD / "tests" / "write_reference", d / "native.h5", "hdf5")
    run(*MPI, n, BUILD / "tests" / "write_reference", d / "log.h5", "log")
    run(*MPI, n, BUILD / "h5loom", "convert", d / "log.h5", d / "converted.h5")
    return d, n


def test_converted_file_equals_the_native_one(files):
    d, _ = files
    with h5py.File(d / "native.h5", "r") as a, h5py.File(d / "converted.h5", "r") as c:
        assert_same_attrs(a, c)
        wa, wc = walk(a), walk(c)
        assert wa.keys() == wc.keys()
        for name, obj in wa.items():
            assert type(obj) is type(wc[name]), name
            assert_same_attrs(obj, wc[name])
            if isinstance(obj, h5py.Dataset):
                assert obj.dtype == wc[name].dtype and obj.shape == wc[name].shape, name
                np.testing.assert_array_equal(obj[...], wc[name][...], err_msg=name)
            if isinstance(obj, h5py.Datatype):  # a named datatype
                assert obj.dtype == wc[name].dtype, name
        assert isinstance(wc["types/vec3"], h5py.Datatype) and wc["types/vec3"].dtype == np.dtype(("<f8", (3,)))


def test_hard_links_read_by_h5py(files):
    """One group under two names, in the front file and the converted file as in
    the native one: the same object (h5py compares addresses), counted twice."""
    d, _ = files
    for name in ["native.h5", "log.h5", "converted.h5"]:
        with h5py.File(d / name, "r") as f:
            assert f["latest"] == f["fields"], name
            assert h5py.h5o.get_info(f["latest"].id).rc == 2, name
            assert isinstance(f.get("latest", getlink=True), h5py.HardLink), name


def test_external_links_followed_by_h5py(files):
    """The external link to native.h5 beside it: kept by the front file and by
    convert, and followed by stock h5py (relative to the linking file)."""
    d, _ = files
    with h5py.File(d / "native.h5", "r") as a:
        rho = a["fields/rho"][...]
    for name in ["native.h5", "log.h5", "converted.h5"]:
        with h5py.File(d / name, "r") as f:
            link = f.get("outside", getlink=True)
            assert isinstance(link, h5py.ExternalLink), name
            assert (link.filename, link.path) == ("native.h5", "/fields/rho"), name
            np.testing.assert_array_equal(f["outside"][...], rho, err_msg=name)


def check_front_file(d):
    with h5py.File(d / "native.h5", "r") as a, h5py.File(d / "log.h5", "r") as front:
        log_only = [p.decode() if isinstance(p, bytes) else p for p in front.attrs.get("_h5loom_log_only", [])]
        direct = 0
        for name, obj in walk(a).items():
            link = front.get(name, getlink=True)
            assert link is not None, name
            if "/" + name in log_only:
                assert isinstance(link, h5py.SoftLink) and "h5loom convert" in link.path
                try:
                    front[name]
                    raise AssertionError(f"{name}: a log-only dataset opened")
                except KeyError:
                    pass
                continue
            assert_same_attrs(obj, front[name])
            if isinstance(obj, h5py.Datatype):
                assert isinstance(front[name], h5py.Datatype) and obj.dtype == front[name].dtype, name
            if isinstance(obj, h5py.Dataset):
                np.testing.assert_array_equal(obj[...], front[name][...], err_msg=name)
                direct += 1
        assert direct >= 1  # fields/rho: each rank's rows, one piece each


def in_fresh_python(call):
    """HDF5 reads HDF5_EXTFILE_PREFIX when it starts: run h5py in a new process with it set
    (external storage names the log relative to the front file)."""
    env = dict(os.environ, HDF5_EXTFILE_PREFIX="${ORIGIN}")
    code = f"import sys, pathlib; sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r}); " \
           f"import test_log_readers as t; t.{call}"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300, env=env)


def test_front_file_is_read_directly_or_refuses(files):
    d, _ = files
    in_fresh_python(f"check_front_file(pathlib.Path({str(d)!r}))")


def test_h5dump_reads_the_front_file(files):
    d, n = files
    env = dict(os.environ, HDF5_EXTFILE_PREFIX="${ORIGIN}")
    out = run("h5dump", "-d", "/fields/rho", d / "log.h5", env=env).stdout
    assert "DATASPACE  SIMPLE { ( %d, 3 ) / ( %d, 3 ) }" % (2 * n, 2 * n) in out
    assert "101, 102" in out or n == 1


def check_crash_writer_file(path):
    with h5py.File(path, "r") as f:
        assert "_h5loom_log_only" not in f.attrs
        for s in range(3):
            np.testing.assert_array_equal(f[f"step{s}/a"][...], s * 1e6 + np.arange(20000.0))
            np.testing.assert_array_equal(f[f"step{s}/b"][...], s * 1e6 + np.arange(20000.0) + 0.5)


def test_crash_writer_file_is_directly_readable(tmp_path):
    """Slab-decomposed 1-D datasets written in many small pieces by 2 ranks."""
    run(*MPI, 2, BUILD / "tests" / "log_crash_writer", tmp_path / "w.h5", 3, 10000)
    in_fresh_python(f"check_crash_writer_file({str(tmp_path / 'w.h5')!r})")


WRITE_TILES = """
import sys, numpy as np, h5loom
with h5loom.File(sys.argv[1], "w", engine="log") as f:
    a = np.arange(64 * 96, dtype=np.float64).reshape(64, 96)
    t = f.create_dataset("tiles", shape=a.shape, dtype="f8")  # 4 x 4 tiles: 256 runs of the dataset
    for i in (3, 0, 2, 1):
        for j in (1, 3, 0, 2):
            t[16 * i:16 * (i + 1), 24 * j:24 * (j + 1)] = a[16 * i:16 * (i + 1), 24 * j:24 * (j + 1)]
    p = f.create_dataset("partial", shape=(8, 100), dtype="i4")  # rows 2 and 5 never written
    for r in (0, 1, 3, 4, 6, 7):
        p[r] = np.arange(100, dtype=np.int32) + 1000 * r
    o = f.create_dataset("overlap", shape=(10,), dtype="f4")
    o[0:6] = 1.0
    o[4:10] = 2.0
"""


def check_tile_file(path):
    with h5py.File(path, "r") as f:
        assert f["tiles"].is_virtual and f["partial"].is_virtual
        np.testing.assert_array_equal(f["tiles"][...], np.arange(64 * 96, dtype=np.float64).reshape(64, 96))
        np.testing.assert_array_equal(f["tiles"][5:40:3, 90], np.arange(64 * 96).reshape(64, 96)[5:40:3, 90])
        want = np.arange(100, dtype=np.int32) + 1000 * np.arange(8, dtype=np.int32)[:, None]
        want[[2, 5]] = 0  # never written: the fill value, as the log engine reads them
        np.testing.assert_array_equal(f["partial"][...], want)
        assert list(f.attrs["_h5loom_log_only"]) in (["/overlap"], [b"/overlap"])
        assert isinstance(f.get("overlap", getlink=True), h5py.SoftLink)


def test_tiles_and_partial_datasets_are_virtual_datasets(tmp_path):
    """Blocks that do not tile a dataset in few runs (2-D tiles, rows left out) become
    an HDF5 virtual dataset of the blocks; overlapping writes stay in the log only."""
    path = tmp_path / "tiles.h5"
    subprocess.run([sys.executable, "-c", WRITE_TILES, str(path)], check=True, timeout=300,
                   env={k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_"))})
    in_fresh_python(f"check_tile_file({str(path)!r})")
    env = dict(os.environ, HDF5_EXTFILE_PREFIX="${ORIGIN}")
    out = run("h5dump", "-d", "/tiles", "-s", "63,93", "-c", "1,3", path, env=env).stdout
    assert "6141, 6142, 6143" in out


WRITE_SHRUNK = """
import sys, numpy as np, h5loom
with h5loom.File(sys.argv[1], "w", engine="log") as f:
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    cut = f.create_dataset("cut", data=a, maxshape=(4, 6), chunks=(2, 6))
    cut.resize((4, 3))  # every row keeps its first 3 elements: 4 runs of the log
    regrown = f.create_dataset("regrown", data=a, maxshape=(None, 6))
    regrown.resize((2, 6))
    regrown.resize((4, 6))  # rows 2 and 3: the fill value
    gone = f.create_dataset("gone", data=np.arange(4.0), maxshape=(None,))
    gone.resize((0,))
    gone.resize((4,))  # nothing of the first write is left
with h5loom.File(sys.argv[1], "r") as f:  # the log engine reads the hidden parts as the fill value
    want = np.arange(24, dtype=np.int32).reshape(4, 6)
    want[2:] = 0
    assert (f["regrown"][...] == want).all() and (f["gone"][...] == 0).all()
"""


def check_shrunk_file(path):
    with h5py.File(path, "r") as f:
        a = np.arange(24, dtype=np.int32).reshape(4, 6)
        np.testing.assert_array_equal(f["cut"][...], a[:, :3])
        np.testing.assert_array_equal(f["gone"][...], np.zeros(4))
        # Part of its one block is hidden and the rest does not tile it: log only, never stale values.
        assert list(f.attrs["_h5loom_log_only"]) in (["/regrown"], [b"/regrown"])
        assert isinstance(f.get("regrown", getlink=True), h5py.SoftLink)


def test_shrunk_datasets_in_the_front_file(tmp_path):
    """The log engine's front file after shrinks (format version 6): what a
    shrink hid never shows; a block cut by one is mapped in runs."""
    path = tmp_path / "shrunk.h5"
    subprocess.run([sys.executable, "-c", WRITE_SHRUNK, str(path)], check=True, timeout=300,
                   env={k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_"))})
    in_fresh_python(f"check_shrunk_file({str(path)!r})")


WRITE_STEPS = """
import sys, numpy as np, h5loom
S, A, R, C = 5, 4, 8, 4  # steps, arrays, rows and columns of a rank's tile
with h5loom.File(sys.argv[1], "w", engine={"engine": "log", "log": {"front_encoder": sys.argv[2]}}) as f:
    n, r = f.size, f.rank
    def tile(s, a):
        return (1000 * s + 100 * a + 10 * r + np.arange(R * C, dtype=np.float64)).reshape(R, C)
    by_step = f.create_dataset("by_step", shape=(S, A, R, n * C), dtype="f8")
    by_array = f.create_dataset("by_array", shape=(A, S, R, n * C), dtype="f8")
    steps = f.create_dataset("steps", shape=(S, R, n * C), dtype="f8")
    # As hdf5-iotest writes a file: step after step, every array.
    for s in range(S):
        for a in range(A):
            by_step[s, a, :, r * C:(r + 1) * C] = tile(s, a)
    for s in range(S):
        for a in range(A):
            by_array[a, s, :, r * C:(r + 1) * C] = tile(s, a)
    for s in range(S):
        steps[s, :, r * C:(r + 1) * C] = tile(s, 0)
    # A dataset per array, every array's tile at each step (iotest's "array" layout,
    # netCDF's record variables): a rank's tiles of one dataset repeat in the log.
    per_array = [f.create_dataset(f"v{a}", shape=(S, R, n * C), dtype="f8") for a in range(A)]
    for s in range(S):
        for a in range(A):
            per_array[a][s, :, r * C:(r + 1) * C] = tile(s, a)
    # Next to each other in the dataset and in the log, but interleaved row by row: not one box.
    halves = f.create_dataset("halves", shape=(2 * n, 8), dtype="i4")
    halves[2 * r:2 * r + 2, 0:4] = np.arange(8, dtype=np.int32).reshape(2, 4) + 100 * r
    halves[2 * r:2 * r + 2, 4:8] = np.arange(8, 16, dtype=np.int32).reshape(2, 4) + 100 * r
"""


def check_step_file(path, n, encoder):
    S, A, R, C = 5, 4, 8, 4
    tile = lambda s, a, r: (1000 * s + 100 * a + 10 * r + np.arange(R * C, dtype=np.float64)).reshape(R, C)
    with h5py.File(path, "r") as f:
        for r in range(n):
            cols = slice(r * C, (r + 1) * C)
            for s in range(S):
                np.testing.assert_array_equal(f["steps"][s, :, cols], tile(s, 0, r))
                for a in range(A):
                    np.testing.assert_array_equal(f[f"v{a}"][s, :, cols], tile(s, a, r))
                for a in range(A):
                    np.testing.assert_array_equal(f["by_step"][s, a, :, cols], tile(s, a, r))
                    np.testing.assert_array_equal(f["by_array"][a, s, :, cols], tile(s, a, r))
            want = np.arange(16, dtype=np.int32).reshape(2, 2, 4).transpose(1, 0, 2).reshape(2, 8) + 100 * r
            np.testing.assert_array_equal(f["halves"][2 * r:2 * r + 2], want)
        # A rank's tiles of successive steps are one box of the virtual dataset;
        # those of a dataset per array, the other arrays' tiles in between, one
        # repeated box (a regular hyperslab); where the copies would interleave
        # (by_array: every array's tile of a step is one box), one per step.
        # (On one rank, the few runs of a dataset are external storage; so are
        # up to 128 runs when the engine encodes the front file, 64 when
        # HDF5's library does.)
        def external(runs):
            return n == 1 or (encoder == "auto" and runs <= 128)
        if external(S * A * R * n):
            assert not f["by_step"].is_virtual and not f["by_array"].is_virtual
        else:
            assert len(f["by_step"].virtual_sources()) == n
            assert len(f["by_array"].virtual_sources()) == n * S
        if external(S * R * n):
            assert not f["v1"].is_virtual
        else:
            for a in range(A):
                assert len(f[f"v{a}"].virtual_sources()) == n
        if n > 1:
            np.testing.assert_array_equal(f["v2"][1:4, 1, C - 1:C + 2], [[tile(s, 2, 0)[1, C - 1], tile(s, 2, 1)[1, 0],
                                                                          tile(s, 2, 1)[1, 1]] for s in (1, 2, 3)])
        assert not f["halves"].is_virtual  # 4 runs per rank: external storage


@pytest.mark.parametrize("encoder", ["hdf5", "auto"])
@pytest.mark.parametrize("n", [1, 2, 4])
def test_successive_tiles_are_one_box_of_the_front_file(tmp_path, n, encoder):
    """iotest's pattern: each rank's tile of every step, one after another in
    the log. The front file maps a rank's tiles of a dataset that continue each
    other in the log and in the dataset as one box (not one per write), and
    never joins writes whose elements interleave."""
    path = tmp_path / "steps.h5"
    run(*MPI, n, sys.executable, "-c", WRITE_STEPS, path, encoder)
    in_fresh_python(f"check_step_file({str(path)!r}, {n}, {encoder!r})")


WRITE_SCRAMBLED = """
import sys, numpy as np, h5loom
with h5loom.File(sys.argv[1], "w", engine="log") as f:
    r, n = f.rank, f.size
    few = f.create_dataset("few", shape=(6, 4 * n), dtype="f8")  # 3 blocks a rank, the last rows first
    for b in (2, 0, 1):
        few[2 * b:2 * b + 2, 4 * r:4 * r + 4] = np.arange(8.0).reshape(2, 4) + 100 * b + 10 * r
    many = f.create_dataset("many", shape=(12, 4 * n), dtype="i4")  # 12 one-row blocks a rank, scrambled
    for row in (7, 2, 11, 0, 5, 9, 1, 10, 3, 8, 6, 4):
        many[row, 4 * r:4 * r + 4] = np.arange(4, dtype=np.int32) + 1000 * row + 10 * r
"""


def check_scrambled_file(path, n):
    with h5py.File(path, "r") as f:
        few, many = f["few"], f["many"]
        assert not few.is_virtual and few.external and not many.is_virtual and many.external  # external storage
        want = np.empty((6, 4 * n))
        for b in range(3):
            for r in range(n):
                want[2 * b:2 * b + 2, 4 * r:4 * r + 4] = np.arange(8.0).reshape(2, 4) + 100 * b + 10 * r
        np.testing.assert_array_equal(few[...], want)
        want = np.empty((12, 4 * n), dtype=np.int32)
        for row in range(12):
            for r in range(n):
                want[row, 4 * r:4 * r + 4] = np.arange(4) + 1000 * row + 10 * r
        np.testing.assert_array_equal(many[...], want)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_blocks_written_out_of_order_map_in_dataset_order(tmp_path, n):
    """The front file lists a dataset's external storage in dataset order
    whatever order its blocks came in (each block's runs merged with the
    others', or all sorted when there are many blocks)."""
    path = tmp_path / "scrambled.h5"
    run(*MPI, n, sys.executable, "-c", WRITE_SCRAMBLED, path)
    in_fresh_python(f"check_scrambled_file({str(path)!r}, {n})")


WRITE_THEN_APPEND = """
import sys, numpy as np, h5loom
with h5loom.File(sys.argv[1], "w", engine="log") as f:
    f.create_dataset("x", data=np.arange(4.0))
with h5loom.File(sys.argv[1], "r+", engine="log") as f:
    f.create_dataset("y", data=np.arange(6, dtype=np.int32) + 10)
    f.attrs["sessions"] = 2
    f.flush()  # the epoch commits here: nothing is left for the close
"""


def check_appended_file(path):
    with h5py.File(path, "r") as f:
        np.testing.assert_array_equal(f["x"][...], np.arange(4.0))
        np.testing.assert_array_equal(f["y"][...], np.arange(6, dtype=np.int32) + 10)
        assert f.attrs["sessions"] == 2


def test_front_file_shows_an_epoch_committed_by_a_flush_before_close(tmp_path):
    """A session that appends and flushes durably, then closes with nothing
    new, still gets a new front file: the old one matched its checksum in the
    log but showed the epoch before (stale values for stock readers)."""
    path = tmp_path / "appended.h5"
    subprocess.run([sys.executable, "-c", WRITE_THEN_APPEND, str(path)], check=True, timeout=300,
                   env={k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_"))})
    in_fresh_python(f"check_appended_file({str(path)!r})")


WRITE_ASYNC_STEPS = """
import sys, numpy as np, h5loom
from mpi4py import MPI
comm = MPI.COMM_WORLD
r, n = comm.rank, comm.size
with h5loom.File(sys.argv[1], "w", comm=comm, engine="async+log") as f:
    for step in range(3):
        ds = f.create_dataset(f"step{step}", shape=(5 * n,), dtype="f8")
        ds[5 * r:5 * r + 5] = np.arange(5.0) + 5 * r + 100 * step
        f.flush_async()  # the last one's commit record waits for the close
"""


def check_async_steps(path, n):
    with h5py.File(path, "r") as f:
        for step in range(3):
            np.testing.assert_array_equal(f[f"step{step}"][...], np.arange(5.0 * n) + 100 * step)


@pytest.mark.parametrize("n", [1, 2])
def test_an_async_close_names_the_front_file_in_the_last_flushs_commit(tmp_path, n):
    """Under the async wrapper the last flush's commit record is still to be
    written when close() comes with nothing new: the front file is named in
    that commit, not in an empty epoch after it - three flushes, three epochs -
    and stock readers and verify see every step."""
    path = tmp_path / "async.h5"
    run(*MPI, n, sys.executable, "-c", WRITE_ASYNC_STEPS, path)
    out = run(BUILD / "h5loom", "verify", path).stdout
    assert "3 committed epochs" in out, out
    in_fresh_python(f"check_async_steps({str(path)!r}, {n})")
