"""The log engine's promises: crash safety, checksums, verify (issue 5).

* Writers are killed (kill -9, all ranks or one) at several points of a
  multi-step write; every step whose flush completed must read back exactly,
  and nothing else may be returned.
* Bytes are flipped and files truncated; every read must either return the
  right values or raise an h5loom.Error, and flips inside data must be caught.
"""

import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import h5loom

BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()
WRITER = BUILD / "tests" / "log_crash_writer"
CLI = BUILD / "h5loom"
MPIEXEC = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
MPI_FLAGS = ["--oversubscribe", "--allow-run-as-root"]
# Child processes must not inherit this (MPI singleton) process's Open MPI environment.
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}


def cli(*args):
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=120, env=CLEAN_ENV)

pytestmark = pytest.mark.skipif(not WRITER.exists(), reason="log_crash_writer not built")


def expected(step, name, n, ranks):
    values = step * 1e6 + np.arange(n * ranks, dtype=np.float64)
    return values + (0.5 if name == "b" else 0.0)


def check_file(path, n, ranks, committed):
    """Every step <= committed is exact; a later step is absent or exact; returns the steps found."""
    found = []
    with h5loom.File(path, "r", comm=None) as f:
        steps = sorted(int(k[4:]) for k in f.keys() if k.startswith("step"))
        assert steps == list(range(len(steps))), f"steps are not contiguous: {steps}"
        for s in steps:
            g = f[f"step{s}"]
            assert g.attrs["step"] == s
            for name in ("a", "b"):
                np.testing.assert_array_equal(g[name][...], expected(s, name, n, ranks))
            found.append(s)
    assert committed < 0 or found[-1] >= committed, f"step {committed} was committed but is missing"
    return found


def run_and_kill(path, ranks, n, after_commit, extra_delay, kill_all):
    """Starts the writer, waits for 'committed <after_commit>', sleeps, kills; returns the last committed step."""
    cmd = [MPIEXEC, *MPI_FLAGS, "-n", str(ranks), str(WRITER), str(path), "200", str(n)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=CLEAN_ENV)
    pids, committed = {}, -1
    deadline = time.time() + 120
    try:
        for line in proc.stdout:
            m = re.match(r"rank (\d+) pid (\d+)", line)
            if m:
                pids[int(m.group(1))] = int(m.group(2))
            m = re.match(r"committed (\d+)", line)
            if m:
                committed = int(m.group(1))
                if committed >= after_commit and len(pids) == ranks:
                    break
            assert time.time() < deadline, "the writer made no progress"
        time.sleep(extra_delay)
        victims = list(pids.values()) if kill_all else [pids[ranks - 1]]
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        # Steps committed while we slept are allowed to exist (check_file accepts them).
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return committed


@pytest.mark.parametrize("kill_all", [True, False], ids=["kill-all-ranks", "kill-one-rank"])
@pytest.mark.parametrize("after_commit,extra_delay", [(0, 0.0), (1, 0.013), (2, 0.037), (3, 0.071)])
def test_kill_during_multistep_write(tmp_path, kill_all, after_commit, extra_delay):
    path = tmp_path / "crash.h5"
    n, ranks = 300_000, 2
    committed = run_and_kill(path, ranks, n, after_commit, extra_delay, kill_all)
    assert committed >= after_commit
    found = check_file(path, n, ranks, committed)
    # verify: sound, perhaps with a torn tail
    out = cli("verify", str(path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "OK" in out.stdout
    # appending after a crash continues the file
    with h5loom.File(path, "r+") as f:
        g = f.create_group("after")
        g.create_dataset("x", shape=(3,), dtype="f8")[...] = np.array([1.0, 2.0, 3.0])
    with h5loom.File(path, "r") as f:
        np.testing.assert_array_equal(f["after/x"][...], [1.0, 2.0, 3.0])
        assert f"step{found[-1]}" in f


# The default settings put these writes in the buffer; the second makes them
# go to the ranks' regions of the log, written at once (and, the regions
# being small, partly through the flush path when a region is full).
SMALL_WRITES = {"checksum_unit": 4096}
REGION_WRITES = {"checksum_unit": 4096, "direct_threshold": 1024, "aggregate_below": 1024, "region_size": 65536}
LAYOUTS = pytest.mark.parametrize("settings", [SMALL_WRITES, REGION_WRITES], ids=["buffered", "regions"])


def write_reference(path, settings=SMALL_WRITES):
    """A small log file with several datasets and epochs; returns {path: values}."""
    values = {}
    with h5loom.File(path, "w", engine={"engine": "log", "log": settings}) as f:
        for step in range(3):
            for name, dtype in (("u", "f8"), ("v", "i4")):
                data = (np.arange(20_000) * (step + 1)).astype(dtype)
                ds = f.create_dataset(f"s{step}/{name}", shape=data.shape, dtype=dtype)
                for i in range(0, len(data), 5000):
                    ds[i:i + 5000] = data[i:i + 5000]
                values[f"s{step}/{name}"] = data
            f.flush()
    return values


def read_all_or_error(path, values):
    """Reads every dataset: each read must be exact or raise h5loom.Error. Returns the kinds of outcomes."""
    outcomes = set()
    try:
        f = h5loom.File(path, "r")
    except h5loom.Error as e:
        return {type(e).__name__}
    with f:
        for name, want in values.items():
            try:
                got = f[name][...]
            except h5loom.Error as e:
                outcomes.add(type(e).__name__)
                continue
            np.testing.assert_array_equal(got, want, err_msg=f"wrong data returned for {name}")
            outcomes.add("exact")
    return outcomes


@LAYOUTS
def test_flipped_bytes_raise_or_read_exactly(tmp_path, settings):
    ref = tmp_path / "ref.h5"
    values = write_reference(ref, settings)
    log = pathlib.Path(str(ref) + ".loom") / "log"
    size = log.stat().st_size
    seen = set()
    data_flips_caught = 0
    for offset in range(0, size, max(1, size // 150)):
        case = tmp_path / "case.h5"
        shutil.rmtree(str(case) + ".loom", ignore_errors=True)
        shutil.copytree(str(ref) + ".loom", str(case) + ".loom")
        shutil.copy(ref, case)
        with open(str(case) + ".loom/log", "r+b") as fh:
            fh.seek(offset)
            b = fh.read(1)
            fh.seek(offset)
            fh.write(bytes([b[0] ^ 0x5A]))
        outcomes = read_all_or_error(case, values)
        seen |= outcomes
        if offset >= 4096 and "CorruptionError" in outcomes:
            data_flips_caught += 1
    assert "CorruptionError" in seen
    assert data_flips_caught > 100  # flips in data blocks and index records are caught, not returned


@LAYOUTS
def test_truncated_logs_raise_or_read_exactly(tmp_path, settings):
    ref = tmp_path / "ref.h5"
    values = write_reference(ref, settings)
    log = pathlib.Path(str(ref) + ".loom") / "log"
    size = log.stat().st_size
    for keep in [0, 10, 4096, 5000, size // 3, size // 2, size - 100, size - 1]:
        case = tmp_path / "case.h5"
        shutil.rmtree(str(case) + ".loom", ignore_errors=True)
        shutil.copytree(str(ref) + ".loom", str(case) + ".loom")
        shutil.copy(ref, case)
        os.truncate(str(case) + ".loom/log", keep)
        outcomes = read_all_or_error(case, values)
        # Reads are exact or raise (a truncation that cut only the last epochs
        # falls back to the intact ones); verify always reports it.
        assert outcomes, f"truncation to {keep} bytes: nothing read"
        assert cli("verify", str(case)).returncode != 0, f"truncation to {keep} bytes went unnoticed by verify"


def test_truncated_journal_drops_only_the_torn_commit(tmp_path):
    ref = tmp_path / "ref.h5"
    values = write_reference(ref)
    commits = pathlib.Path(str(ref) + ".loom") / "commits"
    # A crash while s2's epoch was committed: its record is torn, and neither
    # the close's epoch nor its front file (published after it) came to be.
    os.truncate(commits, commits.stat().st_size - 64 - 10)
    ref.unlink()
    with h5loom.File(ref, "r") as f:
        assert "s2" not in f  # the last epoch is gone, whole
        for name in ("s0/u", "s0/v", "s1/u", "s1/v"):
            np.testing.assert_array_equal(f[name][...], values[name])
    out = cli("verify", str(ref))
    assert out.returncode == 0 and "torn tail" in out.stdout, out.stdout


def test_verify_names_the_damaged_block(tmp_path):
    ref = tmp_path / "ref.h5"
    write_reference(ref)
    out = cli("verify", str(ref))
    # 3 flushes, and the close's epoch that records the front file's checksum
    assert out.returncode == 0 and "4 committed epochs" in out.stdout, out.stdout
    with open(str(ref) + ".loom/log", "r+b") as fh:  # the first data block: s0/u
        fh.seek(4096 + 100)
        fh.write(b"\xff\xff")
    out = cli("verify", str(ref))
    assert out.returncode == 3, out.stdout
    assert "checksum mismatch" in out.stdout and "'/s0/u'" in out.stdout
    with h5loom.File(ref, "r") as f:
        with pytest.raises(h5loom.CorruptionError, match="s0/u"):
            f["s0/u"][...]
        np.testing.assert_array_equal(f["s1/u"][...], np.arange(20_000) * 2.0)  # the rest still reads


def test_engine_is_detected_and_described(tmp_path):
    ref = tmp_path / "ref.h5"
    write_reference(ref)
    with h5loom.File(ref, "r") as f:
        assert f.engine == "log"
        assert "log-structured" in f.describe()


def test_row_by_row_writes_become_few_blocks(tmp_path):
    # QMCPACK-like: a walker (one row of a 3-D dataset) at a time. Each write
    # continues the last, so the engine grows one block instead of adding 500:
    # a small index, fast reads, and a front file HDF5 can read directly.
    path = tmp_path / "walkers.h5"
    rows = np.arange(500 * 8 * 3, dtype=np.float64).reshape(500, 8, 3)
    with h5loom.File(path, "w", engine="log") as f:
        ds = f.create_dataset("state_0/walkers", shape=(500, 8, 3), dtype="f8")
        for w in range(500):
            ds[w] = rows[w]
        ds[250] = -1.0  # a rewrite after the rows past it still wins
    with h5loom.File(path, "r") as f:
        blocks = int(re.search(r"(\d+) blocks in", f.describe()).group(1))
        assert blocks == 2, f.describe()
        want = rows.copy()
        want[250] = -1.0
        np.testing.assert_array_equal(f["state_0/walkers"][...], want)
        np.testing.assert_array_equal(f["state_0/walkers"][100:300:7, 2], want[100:300:7, 2])
    assert cli("verify", str(path)).returncode == 0


CHILD_FILLS_THE_DISK = r"""
import resource, signal, sys
import numpy as np
import h5loom
path = sys.argv[1]


def flush(f, label):
    try:
        f.flush()
    except h5loom.IOError as e:
        print(label, "raised:", e)
    else:
        print(label, "did not raise")


with h5loom.File(path, "w", engine="log") as f:
    f.create_dataset("kept", shape=(1000,), dtype="f8")[...] = np.arange(1000.0)
    f.flush()  # epoch 1 is on disk
    # From here on the "disk is full": no file may grow past 1 MiB (pwrite
    # fails with EFBIG instead of killing us with SIGXFSZ).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    big = f.create_dataset("lost", shape=(1 << 20,), dtype="f8")
    big[...] = np.ones(1 << 20)  # 8 MiB, one large write: into the rank's region, at once
    flush(f, "flush")
    # The file is unusable now (nothing may be committed over the failed
    # epoch): every later call raises.
    try:
        small = f.create_dataset("small", shape=(32, 8192), dtype="f8")
        print("second part did not raise")
    except h5loom.IOError as e:
        print("second part raised:", "unusable" in str(e))
    try:
        f.close()
    except h5loom.Error as e:
        print("close raised:", type(e).__name__)
"""


def test_a_failed_region_write_is_raised_and_loses_nothing_committed(tmp_path):
    path = tmp_path / "full.h5"
    res = subprocess.run([sys.executable, "-c", CHILD_FILLS_THE_DISK, str(path)], capture_output=True, text=True,
                         timeout=120, env=CLEAN_ENV)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "flush raised:" in res.stdout, res.stdout + res.stderr
    assert "'/lost'" in res.stdout and str(path) in res.stdout  # the error names the dataset and the file
    assert "second part raised: True" in res.stdout, res.stdout + res.stderr
    assert "close raised: IOError" in res.stdout, res.stdout + res.stderr
    with h5loom.File(path, "r") as f:
        np.testing.assert_array_equal(f["kept"][...], np.arange(1000.0))
        if "lost" in f:  # created in the failed epoch: only if a later commit made it
            assert f["lost"].shape == (1 << 20,)
    out = cli("verify", str(path))
    assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("spill_at", [0, 65536])
def test_spill_writes_a_full_buffer_before_the_flush(tmp_path, spill_at):
    """Copied small writes reach the log once the buffer holds spill_at bytes, before any flush; 0 keeps them."""
    path = tmp_path / "spill.h5"
    log = pathlib.Path(str(path) + ".loom") / "log"
    rows = np.arange(40 * 512, dtype="f8").reshape(40, 512)  # 40 writes of 4 KiB: 160 KiB
    with h5loom.File(path, "w", engine={"engine": "log", "log": {"spill_at": spill_at}}) as f:
        ds = f.create_dataset("rows", shape=rows.shape, dtype="f8")
        for i in range(len(rows)):
            ds[i] = rows[i]
        header = 4096
        if spill_at:
            # Two spills of 64 KiB each (16 rows), the last 8 rows still buffered.
            assert log.stat().st_size >= header + 2 * spill_at
        else:
            assert log.stat().st_size == header
    with h5loom.File(path, "r") as f:
        np.testing.assert_array_equal(f["rows"][...], rows)
    out = cli("verify", str(path))
    assert out.returncode == 0, out.stdout + out.stderr
