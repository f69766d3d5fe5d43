"""Misuse of the h5loom command under mpirun (issue 13; docs/errors.md): a bad
argument on one or every rank, or an error raised on one rank only, ends the
job with a non-zero status and a message naming the problem - it never hangs.
The timeouts only stop a hang; nothing here asserts a duration."""
import os
import pathlib
import subprocess

import pytest

BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()
SOURCE = pathlib.Path(__file__).resolve().parents[3]
MPIEXEC = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
H5LOOM = os.environ.get("H5LOOM_CLI", str(BUILD / "h5loom"))
# Children must not inherit this pytest process's Open MPI singleton environment.
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
LAUNCH = [MPIEXEC, "--oversubscribe", "--allow-run-as-root"]
HANG = 120  # seconds: far beyond any run below; only there to turn a hang into a failure


def mpirun(*ranks, cwd=None):
    """Runs h5loom under mpirun. Each entry of `ranks` is the argument list of
    one rank (MPMD), so ranks can be given different arguments."""
    cmd = list(LAUNCH)
    for i, args in enumerate(ranks):
        cmd += ([":"] if i else []) + ["-n", "1", H5LOOM, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=HANG, env=CLEAN_ENV, cwd=cwd)


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    path = tmp_path_factory.mktemp("misuse") / "ref.h5"
    subprocess.run(LAUNCH + ["-n", "2", str(BUILD / "tests" / "write_reference"), str(path)], check=True,
                   timeout=300, env=CLEAN_ENV)
    return str(path)


def test_ini_path_without_ini_flag_is_an_unexpected_argument(tmp_path):
    # The reported hang: `bogus.ini` was taken as a second engine; rank 0 failed
    # on it alone and rank 1 waited in a barrier forever.
    args = ["bench", "iotest", "--engine", "hdf5", "bogus.ini", "--dir", str(tmp_path)]
    res = mpirun(args, args, cwd=tmp_path)
    assert res.returncode != 0
    assert "The following argument was not expected: bogus.ini" in res.stderr
    assert res.stderr.count("not expected: bogus.ini") == 1  # printed once, not once per rank


@pytest.mark.parametrize("kind", ["iotest", "vpic"])
def test_busy_without_a_compute_phase_is_refused(tmp_path, kind):
    args = ["bench", kind, "--busy", "--dir", str(tmp_path)]
    res = mpirun(args, args, cwd=tmp_path)
    assert res.returncode != 0
    assert res.stderr.count("--busy requires --compute") == 1, res.stderr  # printed once, not once per rank


@pytest.mark.parametrize("engine, message", [
    ("bogus", "unknown engine 'bogus'"),
    ('{"engine":"hdf5","hdf5":{"nope":1}}', "unknown configuration key 'hdf5.nope'"),
    ('{"engine":', "engine configuration is not valid JSON"),
])
def test_bad_engine_on_every_rank_exits_1(tmp_path, engine, message):
    args = ["bench", "iotest", "--engine", engine, "--dir", str(tmp_path)]
    res = mpirun(args, args, cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    assert res.stderr.count(message) == 1, res.stderr
    assert "MPI_Abort" not in res.stderr  # agreed on: the job ends normally


def test_bad_engine_on_one_rank_names_that_rank(tmp_path):
    good = ["bench", "iotest", "--engine", "hdf5", "--dir", str(tmp_path)]
    bad = ["bench", "iotest", "--engine", "bogus", "--dir", str(tmp_path)]
    res = mpirun(good, bad, cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    assert "unknown engine 'bogus'" in res.stderr and "(on rank 1)" in res.stderr


def test_missing_ini_on_one_rank(tmp_path):
    ini = tmp_path / "small.ini"
    ini.write_text((SOURCE / "bench/iotest/tiny.ini").read_text())
    res = mpirun(["bench", "iotest", "--ini", str(ini), "--dir", str(tmp_path)],
                 ["bench", "iotest", "--ini", str(tmp_path / "absent.ini"), "--dir", str(tmp_path)], cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    assert "cannot read iotest ini" in res.stderr and "absent.ini" in res.stderr and "(on rank 1)" in res.stderr


def test_bad_option_on_one_rank(ref):
    res = mpirun(["ls", ref], ["ls", "--no-such-option", ref])
    assert res.returncode != 0
    assert "--no-such-option" in res.stderr


def test_missing_argument_on_every_rank():
    res = mpirun(["dump"], ["dump"])
    assert res.returncode != 0
    assert res.stderr.count("file is required") == 1, res.stderr


@pytest.mark.parametrize("args, message", [
    (["bench", "amrex", "--max-grid-size", "0"], "--max-grid-size: must be a whole number of at least 1, not '0'"),
    (["bench", "qmcpack", "--walkers", "-5"], "--walkers: must be a whole number of at least 0, not '-5'"),
    (["bench", "vpic", "--steps", "-1"], "--steps: must be a whole number of at least 0, not '-1'"),
    (["bench", "hacc", "--repeat", "0"], "--repeat: must be a whole number of at least 1, not '0'"),
    (["bench", "iotest", "--repeat", "x"], "--repeat: must be a whole number of at least 1, not 'x'"),
    (["dump", "F", "/x", "--max", "-1"], "--max: must be a whole number of at least 0, not '-1'"),
])
def test_bad_counts_are_refused(tmp_path, args, message):
    # --max-grid-size 0 used to cut the domain into empty boxes forever; a
    # negative count became 2^64 - n.
    args = args + ["--dir", str(tmp_path)] if args[0] == "bench" else args
    res = mpirun(args, args, cwd=tmp_path)
    assert res.returncode != 0
    assert res.stderr.count(message) == 1, res.stderr


def test_help_is_printed_once():
    res = mpirun(["ls", "--help"], ["ls", "--help"])
    assert res.returncode == 0
    assert res.stdout.count("Usage: h5loom ls") == 1


@pytest.mark.parametrize("command", [["ls"], ["info"], ["dump", "-", "/x"], ["convert", "-", "OUT"], ["verify"]])
def test_missing_file_on_every_rank_exits_1(tmp_path, command):
    command = [str(tmp_path / "absent.h5") if a == "-" else a for a in command]
    if command[-1] == "OUT":
        command[-1] = str(tmp_path / "out.h5")
    if len(command) == 1:
        command.append(str(tmp_path / "absent.h5"))
    res = mpirun(command, command)
    assert res.returncode != 0, res.stderr
    said = res.stdout + res.stderr  # verify reports a damaged or missing file on stdout (status 3)
    assert "absent.h5" in said and ("does not exist" in said or "DAMAGED" in said), said


def test_error_on_one_rank_only_ends_the_job(ref):
    # Rank 1 asks for a dataset that is not there (the command finds out, on
    # rank 1 only); rank 0 goes on into the collective read and waits for rank
    # 1 there. Rank 1 cannot know that, so after a short wait for the others it
    # names the error and ends the job.
    res = mpirun(["dump", ref, "/fields/rho"], ["dump", ref, "nope"])
    assert res.returncode != 0
    assert "h5loom: error on rank 1: no object 'nope' in file" in res.stderr, res.stderr
    assert "rank 1 ends the job (MPI_Abort)" in res.stderr


def test_engine_on_one_rank_only(ref):
    # Either agreed on by the open (the object model compares the engines) or
    # ended by rank 1: never a hang, always the name of the bad engine.
    res = mpirun(["ls", ref], ["ls", ref, "--engine", "bogus"])
    assert res.returncode != 0
    assert "'bogus'" in res.stderr, res.stderr


def test_dump_of_a_missing_dataset_on_every_rank(ref):
    res = mpirun(["dump", ref, "nope"], ["dump", ref, "nope"])
    assert res.returncode == 1
    assert res.stderr.count("'nope'") == 1  # one message, from one rank


def test_iotest_absolute_csv_file_is_used_as_is(tmp_path):
    # Issue 13 item 11: an absolute csv-file (and hdf5-file) was joined onto --dir.
    out = tmp_path / "elsewhere"
    out.mkdir()
    ini = tmp_path / "abs.ini"
    ini.write_text("[DEFAULT]\nversion = 0\nsteps = 1\narrays = 1\nrows = 4\ncolumns = 4\nprocess-rows = 1\n"
                   "scaling = weak\nalignment-increment = 1\nalignment-threshold = 0\nmeta-block-size = 2048\n"
                   f"hdf5-file = {out / 'abs.h5'}\ncsv-file = {out / 'abs.csv'}\n")
    work = tmp_path / "work"
    args = ["bench", "iotest", "--ini", str(ini), "--dir", str(work), "--keep-files", "--no-progress"]
    res = mpirun(args, args, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert f"CSV: {out / 'abs.csv'}" in res.stdout
    assert len((out / "abs.csv").read_text().splitlines()) == 1 + 96  # header + the 96 cases of 2 ranks
    assert (out / "abs.h5").exists()
    assert not any(work.rglob("*.csv")) and not any(work.rglob("*.h5"))


def test_capi_null_handle_on_one_rank_ends_the_job(tmp_path):
    # The C API's side of the same rule (tests/capi/test_capi_misuse.c checks the
    # rest): rank 1 passes a NULL file handle to loom_file_flush, rank 0 its file.
    # Rank 1 has no communicator to agree on, so it ends the job.
    res = subprocess.run(LAUNCH + ["-n", "2", str(BUILD / "tests" / "test_capi_misuse"), str(tmp_path), "null-handle"],
                         capture_output=True, text=True, timeout=HANG, env=CLEAN_ENV)
    assert res.returncode != 0
    assert "h5loom: rank 1: LOOM_ERR_USAGE: loom_file_flush: null file handle 'f'" in res.stderr, res.stderr
    assert "rank 1 ends the job (MPI_Abort)" in res.stderr
    assert "still running" not in res.stderr
