"""Data safety (issue 13): no path may destroy, serve stale, or silently corrupt
a user's data. Each test reproduces one way h5loom lost or misreported data
before, and checks the values read back, the error raised and the files left.

Failing system calls come from an LD_PRELOAD shim (tests/tools/fault_shim.c)
or RLIMIT_FSIZE, in a child process.
"""

import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import h5loom

BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()
CLI = BUILD / "h5loom"
SHIM = BUILD / "tests" / "libh5loom_fault_shim.so"
# Child processes must not inherit this (MPI singleton) process's Open MPI environment.
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_", "H5LOOM_ENGINE"))}


def cli(*args):
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120, env=CLEAN_ENV)


def child(script, *args, env=None, timeout=120):
    """Runs a Python script in its own process; returns (returncode, stdout + stderr)."""
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *map(str, args)], capture_output=True,
                         text=True, timeout=timeout, env={**CLEAN_ENV, **(env or {})})
    return res.returncode, res.stdout + res.stderr


def child_with_faults(script, path, *args, fault_path, **fault):
    """Runs `script` in its own process with the fault shim preloaded, for the
    files whose path holds `fault_path` (the script names the call to fail,
    H5LOOM_FAULT_CALL, when it is ready); `fault`: the shim's other settings
    (errno=5 is H5LOOM_FAULT_ERRNO=5, times=1 H5LOOM_FAULT_TIMES=1). Skips the
    test when the shim is not built; returns the output of a child that
    exited 0."""
    if not SHIM.exists():
        pytest.skip("fault shim not built")
    env = {"LD_PRELOAD": str(SHIM), "H5LOOM_FAULT_PATH": fault_path}
    env.update({f"H5LOOM_FAULT_{key.upper()}": str(value) for key, value in fault.items()})
    code, out = child(script, path, *args, env=env)
    assert code == 0, out
    return out


def write_steps(path, steps=3, n=1000, engine="log"):
    """Epoch k holds group s<k> with dataset x = arange(n) + 1000 k."""
    with h5loom.File(path, "w", engine=engine) as f:
        for k in range(steps):
            f.create_dataset(f"s{k}/x", shape=(n,), dtype="f8")[...] = np.arange(n) + 1000.0 * k
            f.flush()


def check_steps(path, steps, n=1000):
    with h5loom.File(path, "r") as f:
        assert sorted(k for k in f.keys() if k.startswith("s")) == [f"s{k}" for k in range(steps)]
        for k in range(steps):
            np.testing.assert_array_equal(f[f"s{k}/x"][...], np.arange(n) + 1000.0 * k)


# ---- engine choice: the wrong engine never truncates or rewrites a file ----

def test_append_mode_with_another_engine_leaves_the_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "run.h5"
    with h5loom.File(path, "w", engine="hdf5") as f:
        f.create_dataset("x", shape=(100,), dtype="f8")[...] = np.arange(100.0)
    before = path.read_bytes()
    monkeypatch.setenv("H5LOOM_ENGINE", "log")
    with pytest.raises(h5loom.ConfigError, match=r"written by engine 'hdf5'"):
        h5loom.File(path, "a")
    with pytest.raises(h5loom.ConfigError, match=r"'log'"):
        h5loom.File(path, "r+")
    assert path.read_bytes() == before  # byte for byte
    assert not pathlib.Path(str(path) + ".loom").exists()
    monkeypatch.delenv("H5LOOM_ENGINE")
    with h5loom.File(path, "a") as f:  # the engine that wrote it
        np.testing.assert_array_equal(f["x"][...], np.arange(100.0))


def test_append_mode_creates_a_missing_file(tmp_path, monkeypatch):
    monkeypatch.setenv("H5LOOM_ENGINE", "log")
    with h5loom.File(tmp_path / "new.h5", "a") as f:
        f.create_dataset("x", shape=(4,), dtype="i4")[...] = np.arange(4, dtype="i4")
    with h5loom.File(tmp_path / "new.h5", "r") as f:
        assert f.engine == "log"
        np.testing.assert_array_equal(f["x"][...], np.arange(4))


# ---- item 1: a log left from an earlier file of the same name ----

def test_a_stale_log_is_never_taken_for_a_newer_file(tmp_path):
    p = tmp_path / "p.h5"
    write_steps(p, steps=2, engine="log")
    with h5loom.File(p, "w", engine="hdf5") as f:  # the same name, rewritten by another engine
        f.create_dataset("y", shape=(10,), dtype="i4")[...] = np.arange(10, dtype="i4")
    with h5loom.File(p, "r") as f:  # intact: it is the hdf5 file, not the old log
        assert f.engine == "hdf5" and list(f.keys()) == ["y"]
    assert cli("verify", p).returncode == 0
    os.truncate(p, 1024)  # the hdf5 file is damaged (a crash mid-write, a full disk)
    with pytest.raises(h5loom.Error) as err:
        with h5loom.File(p, "r") as f:
            f["s0/x"][...]
    assert "not readable HDF5" in str(err.value) and "earlier log-engine file" in str(err.value)
    out = cli("verify", p)
    assert out.returncode != 0 and "not readable HDF5" in out.stdout + out.stderr


def test_a_front_file_of_another_log_is_refused(tmp_path):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    write_steps(a, steps=1)
    write_steps(b, steps=2)
    shutil.copy(a, b)  # b's front file now belongs to a's log
    with pytest.raises(h5loom.CorruptionError, match="belongs to another log"):
        h5loom.File(b, "r")


# ---- the front file: its checksum is in the log ----

def test_a_flipped_byte_in_the_front_file_is_found_by_verify(tmp_path):
    p = tmp_path / "p.h5"
    write_steps(p, steps=2)
    assert cli("verify", p).returncode == 0
    size = p.stat().st_size
    caught = 0
    for offset in range(0, size, max(1, size // 40)):
        case = tmp_path / "case.h5"
        shutil.rmtree(str(case) + ".loom", ignore_errors=True)
        shutil.copytree(str(p) + ".loom", str(case) + ".loom")
        data = bytearray(p.read_bytes())
        data[offset] ^= 0x5A
        case.write_bytes(bytes(data))
        out = cli("verify", case)
        assert out.returncode != 0, f"a flip at byte {offset} of the front file went unnoticed"
        caught += "front file" in out.stdout + out.stderr or "not readable HDF5" in out.stdout + out.stderr
    assert caught >= 35


def test_a_missing_front_file_is_rebuilt_and_recorded(tmp_path):
    p = tmp_path / "p.h5"
    write_steps(p, steps=2)
    p.unlink()  # lost (or removed by the user after damage)
    check_steps(p, 2)  # the log alone is the file
    with h5loom.File(p, "r+"):
        pass  # a read-write open rebuilds it, and records its checksum
    assert p.exists() and cli("verify", p).returncode == 0
    check_steps(p, 2)


# ---- items 2, 3, 4: a failed write or sync poisons the handle ----

FAILING_COMMIT = r"""
import sys
import numpy as np
import h5loom
path, engine, lost = sys.argv[1], sys.argv[3], int(sys.argv[4])
f = h5loom.File(path, "w", engine=engine)
f.create_dataset("kept", shape=(1000,), dtype="f8")[...] = np.arange(1000.0)
f.flush()  # epoch 1: on disk
import os
os.environ["H5LOOM_FAULT_CALL"] = sys.argv[2]  # from here on, the shim fails the call
f.create_dataset("lost", shape=(lost,), dtype="f8")[...] = np.ones(lost)
try:
    f.flush()
except h5loom.IOError as e:
    print("flush raised:", e)
for what, call in [("read", lambda: f["kept"][...]), ("write", lambda: f["kept"].__setitem__(slice(0, 1), 5.0)),
                   ("flush", f.flush), ("close", f.close)]:
    try:
        call()
        print(what, "did not raise")
    except h5loom.IOError as e:
        print(what, "raised:", "unusable" in str(e))
"""


@pytest.mark.parametrize("engine", ["log", "async+log"])
@pytest.mark.parametrize("call,path_part,errno_,skip", [("fdatasync", ".loom/commits", 5, 0),
                                                        ("fdatasync", ".loom/log", 5, 0),
                                                        ("pwrite", ".loom/commits", 28, 0),
                                                        # the epoch's data (one write), then its index record,
                                                        # which rank 0 writes with its sync, on a helper thread
                                                        ("pwrite", ".loom/log", 28, 1)])
def test_a_failed_commit_poisons_the_handle_and_loses_nothing_committed(tmp_path, call, path_part, errno_, skip,
                                                                         engine):
    path = tmp_path / "f.h5"
    # The shim is loaded from the start but fails nothing until the script names the call.
    out = child_with_faults(FAILING_COMMIT, path, call, engine, 1000, fault_path=path_part, errno=errno_, skip=skip)
    assert "flush raised:" in out, out
    if skip:
        assert "flush raised: writing an index record" in out, out
    for what in ("read", "write", "flush", "close"):
        assert f"{what} raised: True" in out, out  # every later call raises: nothing is committed over it
    with h5loom.File(path, "r") as f:
        np.testing.assert_array_equal(f["kept"][...], np.arange(1000.0))
        assert "lost" not in f  # its epoch never completed
    out = cli("verify", path)
    assert out.returncode == 0, out.stdout + out.stderr
    with h5loom.File(path, "r+") as f:  # reopening continues from the last committed epoch
        f.create_dataset("after", shape=(3,), dtype="i4")[...] = np.arange(3, dtype="i4")
    with h5loom.File(path, "r") as f:
        np.testing.assert_array_equal(f["after"][...], np.arange(3))
        np.testing.assert_array_equal(f["kept"][...], np.arange(1000.0))


FAILING_RECORD_SYNC = r"""
import sys
import numpy as np
import h5loom
path = sys.argv[1]
f = h5loom.File(path, "w", engine="async+log")
f.create_dataset("kept", shape=(1000,), dtype="f8")[...] = np.arange(1000.0)
f.flush()  # epoch 1: on disk
import os
os.environ["H5LOOM_FAULT_CALL"] = "fdatasync"  # from here on, the journal's syncs fail
f.create_dataset("lost", shape=(1000,), dtype="f8")[...] = np.ones(1000)
lost = f.flush_async()  # its data and index go out at the next collective call
f.create_group("g1")
f.create_dataset("later", shape=(4,), dtype="f8")[...] = np.ones(4)
second = f.flush_async()
f.create_group("g2")  # the first flush's commit record is written; its sync fails on a helper thread
print("done before its confirmation:", lost.done())
for what, call in [("first flush", lost.wait), ("second flush", second.wait), ("read", lambda: f["kept"][...]),
                   ("close", f.close)]:
    try:
        call()
        print(what, "did not raise")
    except h5loom.IOError as e:
        print(what, "raised:", e)
"""


def test_a_commit_record_whose_sync_fails_in_the_background_is_reported_and_cut(tmp_path):
    """async+log writes a flush's commit record at the next flush and syncs it
    on a helper thread; the flush completes when the ranks agree that the sync
    went well. When it failed, the flush raises, the record is cut from the
    journal (the epoch is not on disk), the handle commits nothing more, and
    what was committed before stays readable."""
    path = tmp_path / "f.h5"
    out = child_with_faults(FAILING_RECORD_SYNC, path, fault_path=".loom/commits", errno=5)
    assert "done before its confirmation: False" in out, out
    assert "first flush raised: cannot write or sync a commit record to the journal" in out, out
    assert "Input/output error" in out, out
    for what in ("second flush", "read", "close"):
        assert f"{what} raised:" in out, out
    with h5loom.File(path, "r") as f:
        np.testing.assert_array_equal(f["kept"][...], np.arange(1000.0))
        assert "lost" not in f and "later" not in f  # their epochs never completed
    out = cli("verify", path)
    assert out.returncode == 0, out.stdout + out.stderr


RECORD_SYNCING_WHEN_THE_HANDLE_FAILS = r"""
import sys
import numpy as np
import h5loom
path = sys.argv[1]
f = h5loom.File(path, "w", engine="async+log")
f.create_dataset("a", shape=(1000,), dtype="f8")[...] = np.arange(1000.0)
first = f.flush_async()
f.create_group("g1")  # the first flush's collective part: its data and index go out
f.create_dataset("b", shape=(1000,), dtype="f8")[...] = np.ones(1000)
second = f.flush_async()  # its write to the log fails (the shim's H5LOOM_FAULT_SKIP)
try:
    f.create_group("g2")  # the second one's: the first one's record goes out (syncing); the log write fails
    print("g2 did not raise")
except h5loom.IOError as e:
    print("g2 raised:", e)
print("first done:", first.done())
try:
    first.wait()  # collective: confirms its record, syncing on a helper thread
    print("first completed")
except h5loom.IOError as e:
    print("first raised:", e)
try:
    f.close()
    print("close did not raise")
except h5loom.IOError as e:
    print("close raised:", "unusable" in str(e))
"""


def test_a_commit_record_still_syncing_when_the_handle_fails_is_confirmed_by_its_wait(tmp_path):
    """The first flush's commit record is syncing on a helper thread when the
    second flush's log write fails and the handle becomes unusable. The first
    flush's wait() confirms the record (it is on disk) on every rank, and
    its data reads back."""
    path = tmp_path / "f.h5"
    # The log's fourth write fails: the first three are its header, the first
    # flush's data and its index record. Rank 0 writes that record with its
    # sync on a helper thread, so the script cannot tell when it is out and
    # turn the fault on after it; the second flush waits for it.
    out = child_with_faults(RECORD_SYNCING_WHEN_THE_HANDLE_FAILS, path, fault_path=".loom/log", errno=28,
                            call="pwrite", skip=3)
    assert "g2 raised:" in out and "close raised: True" in out, out
    assert "first done: False" in out and "first completed" in out, out
    with h5loom.File(path, "r") as f:
        np.testing.assert_array_equal(f["a"][...], np.arange(1000.0))
        assert "b" not in f
    out = cli("verify", path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_failed_early_sync_of_region_writes_is_raised_by_the_flush(tmp_path):
    """async+log syncs a rank's region writes on its background thread before
    a durable flush (prepare_flush). Linux reports a failed write-back to one
    sync only: here only that early sync fails, and the commit's own sync
    would succeed - the flush must raise all the same."""
    path = tmp_path / "f.h5"
    engine = json.dumps({"engine": "log", "wrappers": ["async"], "async": {"write_through": "never"}})
    out = child_with_faults(FAILING_COMMIT, path, "fdatasync", engine, 1 << 18,  # 2 MiB: a region write
                            fault_path=".loom/log", times=1)
    assert "flush raised:" in out and "cannot sync the region writes" in out, out
    for what in ("read", "write", "flush", "close"):
        assert f"{what} raised: True" in out, out
    with h5loom.File(path, "r") as f:
        np.testing.assert_array_equal(f["kept"][...], np.arange(1000.0))
        assert "lost" not in f
    assert cli("verify", path).returncode == 0


QUEUED_WRITE_WHEN_THE_DISK_FILLS = r"""
import json, resource, signal, sys
import numpy as np
import h5loom
path = sys.argv[1]
f = h5loom.File(path, "w", engine={"engine": "log", "log": {"region_size": 2 << 20}, **json.loads(sys.argv[2])})
f.create_dataset("kept", shape=(1000,), dtype="f8")[...] = np.arange(1000.0)
f.flush()
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))  # the soft limit: lifted below
big = f.create_dataset("big", shape=(3 << 16,), dtype="f8")
big[...] = np.ones(3 << 16)  # 1.5 MiB into the rank's 2 MiB region, at once: fails
queued = f.create_dataset("queued", shape=(1 << 19,), dtype="f8")
# A borrowed buffer, too large for the region: queued until the flush point,
# then kept uncopied for the aggregator - and freed once the flush raises.
queued.write(np.full(1 << 19, 7.0), copy=False)
try:
    f.flush()
except h5loom.IOError as e:
    print("flush raised")
import gc; gc.collect()
junk = [np.full(1 << 19, 9.0) for _ in range(8)]  # reuse the freed memory
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
try:
    f.close()
    print("close did not raise")
except h5loom.IOError:
    print("close raised")
"""


@pytest.mark.parametrize("stack", [{}, {"wrappers": ["async"]},
                                   # the failing write made at once on the program's thread (written through)
                                   {"wrappers": ["async"], "async": {"write_through": "always"}}])
def test_a_failed_region_write_never_commits_a_freed_queued_buffer(tmp_path, stack):
    path = tmp_path / "full.h5"
    code, out = child(QUEUED_WRITE_WHEN_THE_DISK_FILLS, path, json.dumps(stack))
    assert code == 0, out
    assert "flush raised" in out and "close raised" in out, out
    with h5loom.File(path, "r") as f:
        np.testing.assert_array_equal(f["kept"][...], np.arange(1000.0))
        for name, n, want in (("big", 3 << 16, 1.0), ("queued", 1 << 19, 7.0)):
            if name in f:  # only if its epoch committed, and then exact
                np.testing.assert_array_equal(f[name][...], np.full(n, want))
    assert cli("verify", path).returncode == 0


# ---- item 5: a torn tail is cut, damage is reported and never repaired ----

def commit_record_offset(epoch):
    return 64 + 64 * (epoch - 1)


def test_a_damaged_last_commit_record_is_reported_not_cut(tmp_path):
    p = tmp_path / "p.h5"
    write_steps(p, steps=3)
    commits = pathlib.Path(str(p) + ".loom/commits")
    journal = bytearray(commits.read_bytes())
    n_epochs = (len(journal) - 64) // 64
    journal[commit_record_offset(n_epochs) + 20] ^= 0x01  # a whole record, bad CRC: damage, not a crash
    commits.write_bytes(bytes(journal))
    with pytest.raises(h5loom.CorruptionError, match="damaged"):
        h5loom.File(p, "r+")  # never repaired by a writer
    assert commits.read_bytes() == bytes(journal)
    out = cli("verify", p)
    assert out.returncode != 0 and "damaged" in out.stdout, out.stdout
    with h5loom.File(p, "r") as f:  # readers fall back to the intact epochs
        assert "DAMAGED" in f.describe()
        np.testing.assert_array_equal(f["s0/x"][...], np.arange(1000.0))


def test_a_zeroed_last_commit_record_is_a_torn_tail(tmp_path):
    p = tmp_path / "p.h5"
    write_steps(p, steps=3)
    commits = pathlib.Path(str(p) + ".loom/commits")
    journal = bytearray(commits.read_bytes())
    n_epochs = (len(journal) - 64) // 64
    at = commit_record_offset(n_epochs)
    journal[at:at + 64] = bytes(64)  # the size grew, the record never landed: a crash
    commits.write_bytes(bytes(journal))
    # The front file goes out only after its epoch's commit record is durable:
    # this crash came before it (the first close's front file never appeared).
    out = cli("verify", p)
    assert out.returncode != 0 and "shows epoch" in out.stdout, out.stdout  # an impossible state is not accepted
    p.unlink()
    assert cli("verify", p).returncode == 0
    with h5loom.File(p, "r+") as f:  # a writer cuts the torn record and goes on
        f.create_dataset("again", shape=(2,), dtype="i4")[...] = np.arange(2, dtype="i4")
    with h5loom.File(p, "r") as f:
        np.testing.assert_array_equal(f["again"][...], np.arange(2))
        np.testing.assert_array_equal(f["s1/x"][...], np.arange(1000.0) + 1000)


def read_commit(journal, epoch):
    at = commit_record_offset(epoch)
    _, _, ep, off, size, crc = struct.unpack_from("<4sIQQQI", journal, at)
    assert ep == epoch
    return off, size


def test_a_bad_index_record_falls_back_to_the_last_good_epoch(tmp_path):
    p = tmp_path / "p.h5"
    write_steps(p, steps=4)
    journal = pathlib.Path(str(p) + ".loom/commits").read_bytes()
    off, size = read_commit(journal, 2)  # the epoch of s1 (epoch 1: the root and s0)
    with open(str(p) + ".loom/log", "r+b") as fh:
        fh.seek(off + size // 2)
        b = fh.read(1)
        fh.seek(off + size // 2)
        fh.write(bytes([b[0] ^ 0xFF]))
    with h5loom.File(p, "r") as f:
        assert sorted(f.keys()) == ["s0"]  # epochs before the damaged one, nothing after it
        np.testing.assert_array_equal(f["s0/x"][...], np.arange(1000.0))
    out = cli("verify", p)
    assert out.returncode != 0 and "checksum mismatch in" in out.stdout and "intact" in out.stdout, out.stdout
    with pytest.raises(h5loom.CorruptionError):
        h5loom.File(p, "r+")


# ---- item 6: never-written elements read as 0 everywhere ----

@pytest.mark.parametrize("engine", ["hdf5", "log", '{"engine":"hdf5","hdf5":{"fill_time":"never"}}',
                                    '{"engine":"hdf5","hdf5":{"layout":"chunked"}}'])
def test_never_written_elements_read_as_zero(tmp_path, engine):
    path = tmp_path / "z.h5"
    junk = [np.full(1 << 16, 3.25) for _ in range(16)]  # dirty the heap np.empty draws from
    del junk
    with h5loom.File(path, "w", engine=engine) as f:
        f.create_dataset("never", shape=(1 << 16,), dtype="f8")
        part = f.create_dataset("part", shape=(1 << 16,), dtype="f8")
        part[:100] = np.ones(100)
    for _ in range(3):
        junk = [np.full(1 << 16, 3.25) for _ in range(16)]
        del junk
        with h5loom.File(path, "r") as f:
            np.testing.assert_array_equal(f["never"][...], np.zeros(1 << 16))
            want = np.zeros(1 << 16)
            want[:100] = 1
            np.testing.assert_array_equal(f["part"][...], want)


# ---- item 7: one writer at a time ----

def test_a_second_writer_is_refused_with_the_holder_named(tmp_path):
    path = tmp_path / "w.h5"
    write_steps(path, steps=1)
    with h5loom.File(path, "r+") as first:
        first.create_dataset("mine", shape=(2,), dtype="i4")[...] = np.arange(2, dtype="i4")
        for mode in ("r+", "a"):
            with pytest.raises(h5loom.IOError, match=rf"being written by host \S+, pid {os.getpid()}"):
                h5loom.File(path, mode)
        code, out = child("import sys, h5loom\ntry:\n    h5loom.File(sys.argv[1], 'r+')\nexcept h5loom.IOError as e:\n"
                          "    print('refused:', e)\n", path)
        assert "refused:" in out and f"pid {os.getpid()}" in out, out
        with h5loom.File(path, "r") as reader:  # readers are never locked out
            np.testing.assert_array_equal(reader["s0/x"][...], np.arange(1000.0))
    with h5loom.File(path, "r+") as again:  # released at close
        np.testing.assert_array_equal(again["mine"][...], np.arange(2))
    check_steps(path, 1)


# ---- item 9: sizes and counts from the file are bounded before use ----

def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def rewrite_last_index(p, edit):
    """Replaces the last epoch's index record by edit(meta, entries) -> (meta, entries, count),
    appended to the log, and points its commit record at it with every CRC recomputed."""
    commits = pathlib.Path(str(p) + ".loom/commits")
    journal = bytearray(commits.read_bytes())
    epoch = (len(journal) - 64) // 64
    off, size = read_commit(journal, epoch)
    log = pathlib.Path(str(p) + ".loom/log")
    data = bytearray(log.read_bytes())
    rec = data[off:off + size]
    magic, version, ep, m, e, count, _ = struct.unpack_from("<4sIQQQQQ", rec, 0)
    meta, entries, count = edit(bytes(rec[48:48 + m]), bytes(rec[48 + m:48 + m + e]), count)
    new = struct.pack("<4sIQQQQQ", magic, version, ep, len(meta), len(entries), count, 0) + meta + entries
    at = len(data)
    data += new
    log.write_bytes(bytes(data))
    c = commit_record_offset(epoch)
    struct.pack_into("<QQI", journal, c + 16, at, len(new), crc32c(new))
    struct.pack_into("<Q", journal, c + 40, at + len(new))
    struct.pack_into("<I", journal, c + 56, crc32c(bytes(journal[c:c + 56])))
    commits.write_bytes(bytes(journal))


def entry_fields(entries):
    """Offsets of the fields of the first block entry."""
    nd = entries[12]
    return {"nbytes": 32, "offset": 24, "nd": 12, "end": 40 + 16 * nd}


def reseal_first_entry(entries):
    nd = entries[12]
    k = struct.unpack_from("<I", entries, 40 + 16 * nd)[0]
    crc_at = 40 + 16 * nd + 4 + 4 * k
    b = bytearray(entries)
    struct.pack_into("<I", b, crc_at, crc32c(bytes(b[:crc_at])))
    return bytes(b)


@pytest.mark.parametrize("field,value", [("nbytes", 1 << 40), ("offset", (1 << 64) - 16), ("nbytes", 8)])
def test_crafted_block_entries_are_refused(tmp_path, field, value):
    p = tmp_path / "c.h5"
    with h5loom.File(p, "w", engine="log") as f:
        f.create_dataset("x", shape=(64,), dtype="f8")[...] = np.arange(64.0)

    def edit(meta, entries, count):
        b = bytearray(entries)
        struct.pack_into("<Q", b, entry_fields(entries)[field], value)
        return meta, reseal_first_entry(bytes(b)), count

    rewrite_last_index(p, edit)
    with pytest.raises(h5loom.CorruptionError):
        with h5loom.File(p, "r") as f:
            f["x"][...]
    assert cli("verify", p).returncode != 0


def test_deeply_nested_metadata_is_refused(tmp_path):
    p = tmp_path / "n.h5"
    with h5loom.File(p, "w", engine="log") as f:
        f.attrs["a"] = 1
    depth = 200_000
    rewrite_last_index(p, lambda meta, entries, count: (b"\x81" * depth + b"\x80", b"", 0))
    with pytest.raises(h5loom.CorruptionError, match="nested deeper"):
        h5loom.File(p, "r")
    assert cli("verify", p).returncode != 0


@pytest.mark.parametrize("op", [
    {"op": "attr", "object": "/nope", "name": "a", "value": {"kind": "string", "text": "x"}},
    {"op": "dataset", "path": "/d", "dtype": "float64", "shape": [1 << 62, 1 << 62], "max_shape": [1 << 62, 1 << 62],
     "layout": "contiguous", "chunks": []},
    {"op": "extend", "path": "/", "shape": [3]},
    {"op": "group", "path": "/a/b/c"},
    {"op": "dataset", "path": "/e", "dtype": "nope", "shape": [1], "max_shape": [1], "layout": "contiguous",
     "chunks": []},
])
def test_impossible_metadata_operations_are_refused(tmp_path, op):
    cbor = pytest.importorskip("cbor2")
    p = tmp_path / "m.h5"
    with h5loom.File(p, "w", engine="log") as f:
        f.attrs["a"] = 1
    root = {"op": "group", "path": "/"}
    rewrite_last_index(p, lambda meta, entries, count: (cbor.dumps([root, op]), b"", 0))
    with pytest.raises(h5loom.CorruptionError):
        h5loom.File(p, "r")


# ---- item 10: limits of the format are checked when the object is made ----

@pytest.mark.parametrize("engine", ["hdf5", "log"])
def test_more_than_32_dimensions_are_refused_at_create(tmp_path, engine):
    with h5loom.File(tmp_path / "r.h5", "w", engine=engine) as f:
        with pytest.raises(h5loom.SelectionError, match="33 dimensions"):
            f.create_dataset("d", shape=(1,) * 33, dtype="u1")
        f.create_dataset("ok", shape=(1,) * 32, dtype="u1")[...] = np.ones((1,) * 32, dtype="u1")
    with h5loom.File(tmp_path / "r.h5", "r") as f:
        assert f["ok"].shape == (1,) * 32


def test_a_file_that_crashed_before_its_first_commit_can_be_reopened_and_written(tmp_path):
    # Found by the crash-state explorer: the root was recorded only by the first
    # epoch, so a writer reopening such a file made a log no one could open.
    p = tmp_path / "early.h5"
    code, out = child("import os, sys, h5loom\nf = h5loom.File(sys.argv[1], 'w', engine='log')\n"
                      "f.create_dataset('never_committed', shape=(4,), dtype='i4')\nos._exit(0)\n", p)
    assert code == 0, out
    with h5loom.File(p, "r") as f:
        assert list(f.keys()) == []
    with h5loom.File(p, "r+") as f:
        f.create_dataset("g/x", shape=(4,), dtype="i4")[...] = np.arange(4, dtype="i4")
    with h5loom.File(p, "r") as f:
        np.testing.assert_array_equal(f["g/x"][...], np.arange(4))
    assert cli("verify", p).returncode == 0


# ---- item 8: a rank that leaves an open file because of an error ----

MPIEXEC = [os.environ.get("H5LOOM_MPIEXEC", "mpirun"), "--oversubscribe", "--allow-run-as-root", "-n", "2"]


def mpirun(*args, env=None, timeout=120):
    res = subprocess.run([*MPIEXEC, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                         env={**CLEAN_ENV, "H5LOOM_ERROR_TIMEOUT": "3", **(env or {})})
    return res.returncode, res.stdout + res.stderr


# The start of a 2-rank script: dataset "kept" is flushed, then writes to the
# log fail (after H5LOOM_FAULT_SKIP of them) - checked by kept_but_not_lost.
KEPT_THEN_FAILING_WRITES = r"""
import os, sys, time
from mpi4py import MPI
import numpy as np
import h5loom
comm = MPI.COMM_WORLD
f = h5loom.File(sys.argv[1], "w", comm=comm, engine=sys.argv[2])
r = comm.rank
f.create_dataset("kept", shape=(2000,), dtype="f8")[1000 * r:1000 * r + 1000] = np.arange(1000.0) + r
f.flush()
os.environ["H5LOOM_FAULT_CALL"] = "pwrite"  # from here on, log writes fail
"""


def kept_but_not_lost(path):
    """What KEPT_THEN_FAILING_WRITES flushed is there, nothing after it, and the file verifies."""
    with h5loom.File(path, "r") as f:
        np.testing.assert_array_equal(f["kept"][...], np.concatenate([np.arange(1000.0), np.arange(1000.0) + 1]))
        assert "lost" not in f
    assert cli("verify", path).returncode == 0


FAILING_INDEX_RECORD = KEPT_THEN_FAILING_WRITES + r"""
f.create_dataset("lost", shape=(2000,), dtype="f8")[1000 * r:1000 * r + 1000] = np.ones(1000)
said = []
try:
    f.flush()
    said.append(f"{r} flush did not raise")
except h5loom.IOError as e:
    said.append(f"{r} flush raised: {e}")
try:
    f.close()
except h5loom.IOError as e:
    said.append(f"{r} close raised: {'unusable' in str(e)}")
for lines in comm.gather(said) or []:  # rank 0 prints every rank's, whole
    print("\n".join(lines))
"""


@pytest.mark.parametrize("engine", ["log", "async+log"])
def test_a_failed_index_record_on_rank_0_is_raised_on_every_rank(tmp_path, engine):
    """Rank 0 writes the epoch's index record with its sync, on a helper
    thread; its failure is agreed on with the syncs'. At 2 ranks rank 0 (the
    aggregator) writes its bytes and rank 1's, then the index record: the
    third write to the log fails."""
    if not SHIM.exists():
        pytest.skip("fault shim not built")
    path = tmp_path / "f.h5"
    env = {"LD_PRELOAD": str(SHIM), "H5LOOM_FAULT_PATH": ".loom/log", "H5LOOM_FAULT_SKIP": "2",
           "H5LOOM_FAULT_ERRNO": "28"}
    code, out = mpirun(sys.executable, "-c", FAILING_INDEX_RECORD, path, engine, env=env)
    assert code == 0, out
    for rank in (0, 1):
        assert f"{rank} flush raised: writing an index record" in out, out
        assert f"{rank} close raised: True" in out, out
    kept_but_not_lost(path)


def test_a_cpp_exception_on_one_rank_ends_the_job_instead_of_hanging(tmp_path):
    # The File's destructor runs while the exception unwinds on one rank; main
    # catches it. A collective close there would wait forever for the others.
    code, out = mpirun(BUILD / "tests" / "leave_on_error", tmp_path / "one.h5", "one")
    assert code != 0 and "leaves file" in out and "MPI_Abort" in out, out


def test_a_cpp_exception_on_every_rank_still_closes_the_file(tmp_path):
    code, out = mpirun(BUILD / "tests" / "leave_on_error", tmp_path / "all.h5", "all")
    assert code == 3, out  # main's own error code: no abort, the file was closed
    with h5loom.File(tmp_path / "all.h5", "r") as f:
        np.testing.assert_array_equal(f["x"][...], np.repeat([0.0, 1.0], 4))


LEAVE_A_WITH_BLOCK = r"""
import sys
from mpi4py import MPI
import numpy as np
import h5loom
comm = MPI.COMM_WORLD
try:
    with h5loom.File(sys.argv[1], "w", comm=comm, engine=sys.argv[3]) as f:
        f.create_dataset("x", shape=(2 * comm.size,), dtype="f8")[2 * comm.rank:2 * comm.rank + 2] = 1.0
        f.flush()
        if sys.argv[2] == "all" or comm.rank == 1:
            raise RuntimeError("the analysis failed")
        f["x"][...]  # the other rank goes on to a collective read
except RuntimeError:
    sys.exit(3)
"""


@pytest.mark.parametrize("engine", ["hdf5", "log"])
def test_leaving_a_with_block_on_one_rank_ends_the_job(tmp_path, engine):
    code, out = mpirun(sys.executable, "-c", LEAVE_A_WITH_BLOCK, tmp_path / "w.h5", "one", engine)
    assert code != 0 and "leaves file" in out, out
    code, out = mpirun(sys.executable, "-c", LEAVE_A_WITH_BLOCK, tmp_path / "w.h5", "all", engine)
    assert code == 3, out
    with h5loom.File(tmp_path / "w.h5", "r") as f:
        np.testing.assert_array_equal(f["x"][...], np.ones(4))


FAILING_CLOSE_ASYNC = KEPT_THEN_FAILING_WRITES + r"""
n = 1 << 18  # 2 MiB per rank: async+log writes it into the rank's region on its background thread
f.create_dataset("lost", shape=(2 * n,), dtype="f8")[n * r:n * r + n] = np.ones(n)
req = f.close_async()
time.sleep(0.05)  # the program computes; the data moves (and fails) meanwhile
said = []
try:
    req.wait()
    said.append(f"{r} wait did not raise")
except h5loom.IOError as e:
    said.append(f"{r} wait raised: {e}")
said.append(f"{r} after: done {req.done()}, open {f.is_open}")
for lines in comm.gather(said) or []:
    print("\n".join(lines))
"""


@pytest.mark.parametrize("engine", ["log", "async+log"])
def test_a_failed_write_under_close_async_is_raised_at_the_wait_on_every_rank(tmp_path, engine):
    """close_async returns at once; a write that then fails (on the async
    wrapper's background thread) is raised by the request's wait, on every
    rank, naming the file, and what the last flush committed stays readable."""
    if not SHIM.exists():
        pytest.skip("fault shim not built")
    path = tmp_path / "f.h5"
    env = {"LD_PRELOAD": str(SHIM), "H5LOOM_FAULT_PATH": ".loom/log", "H5LOOM_FAULT_ERRNO": "28"}
    code, out = mpirun(sys.executable, "-c", FAILING_CLOSE_ASYNC, path, engine, env=env)
    assert code == 0, out
    for rank in (0, 1):
        assert re.search(rf"{rank} wait raised: .*{re.escape(str(path))}", out), out
        assert f"{rank} after: done True, open False" in out, out
    kept_but_not_lost(path)



def test_a_close_request_dropped_after_mpi_finalize_says_so_without_crashing(tmp_path):
    """The file's close (close_async, never waited) cannot run after MPI_Finalize:
    the library says so, and the async wrapper's background thread, still moving
    the file's writes, does not crash the program."""
    code, out = mpirun(BUILD / "tests" / "close_after_finalize", tmp_path / "late.h5")
    assert code == 0, out
    for rank in (0, 1):
        assert f"rank {rank}: after the request" in out, out
    assert "was not closed before MPI was finalised" in out, out


LEAVE_A_CLOSING_BLOCK = r"""
import sys
from mpi4py import MPI
import numpy as np
import h5loom
comm = MPI.COMM_WORLD
f = h5loom.File(sys.argv[1], "w", comm=comm, engine="async+log")
f.create_dataset("x", shape=(2 * comm.size,), dtype="f8")[2 * comm.rank:2 * comm.rank + 2] = 1.0
try:
    with f.close_async():  # the close completes when the block ends
        if comm.rank == 0:
            raise RuntimeError("the analysis failed")
except RuntimeError:
    print(f"rank {comm.rank} caught it; file open: {f.is_open}")
    sys.exit(3)
print(f"rank {comm.rank} closed")
"""


def test_leaving_a_close_async_block_on_one_rank_still_closes_the_file(tmp_path):
    """The rank that leaves the block by an exception closes with close_on_error,
    which meets the other rank's close: the file is closed on both."""
    code, out = mpirun(sys.executable, "-c", LEAVE_A_CLOSING_BLOCK, tmp_path / "c.h5")
    assert code == 3, out
    assert "rank 0 caught it; file open: False" in out and "rank 1 closed" in out, out
    with h5loom.File(tmp_path / "c.h5", "r") as f:
        np.testing.assert_array_equal(f["x"][...], np.ones(4))
