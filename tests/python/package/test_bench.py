"""`h5loom bench`: small runs for correctness (no timing assertions). Every case
runs on every engine, reads back what it wrote (a wrong value fails the run),
and the CSV has hdf5-iotest's columns plus ours."""
import csv
import os
import pathlib
import subprocess
import sys

import pytest

BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()
SOURCE = pathlib.Path(__file__).resolve().parents[3]
MPIEXEC = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}

IOTEST_COLUMNS = ("steps,arrays,rows,cols,scaling,proc-rows,proc-cols,slowdim,rank,version,alignment-increment,"
                  "alignment-threshold,meta-block-size,layout,fill,fmt,io, async, wall [s],fsize [B],"
                  "write-phase-min [s],write-phase-max [s],creat-min [s],creat-max [s],write-min [s],write-max [s],"
                  "read-phase-min [s],read-phase-max [s],read-min [s],read-max [s]").split(",")


def bench(ranks, *args, cwd):
    cmd = [MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", str(ranks), str(BUILD / "h5loom"), "bench", *args]
    res = subprocess.run(cmd, cwd=cwd, env=CLEAN_ENV, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_iotest_runs_every_case_on_every_engine(tmp_path, ranks):
    out = bench(ranks, "iotest", "--ini", str(SOURCE / "bench/iotest/tiny.ini"), "--engine", "hdf5",
                "--engine", "log", "--dir", str(tmp_path), cwd=tmp_path)
    rows = list(csv.reader(open(tmp_path / "iotest-tiny.csv")))
    header, rows = rows[0], rows[1:]
    assert header[:len(IOTEST_COLUMNS)] == IOTEST_COLUMNS
    assert header[len(IOTEST_COLUMNS)] == "engine"
    per_section = 96 if ranks > 1 else 48  # no collective I/O on one rank
    assert len(rows) == 2 * 2 * per_section  # two sections (weak, strong) x two engines
    col = {name: i for i, name in enumerate(header)}
    for engine in ("hdf5", "log"):
        mine = [r for r in rows if r[col["engine"]] == engine]
        assert len(mine) == 2 * per_section
        assert {r[col["rank"]] for r in mine} == {"2", "3", "4"}
        assert {r[col["layout"]] for r in mine} == {"contiguous", "chunked"}
        assert all(float(r[col["write-ratio"]]) > 0 and int(r[col["fsize [B]"]]) > 0 for r in mine)
    # knobs that only the hdf5 engine has are recorded as not applicable for log
    assert all(r[col["fmt"]] == "n/a" for r in rows if r[col["engine"]] == "log")
    assert {r[col["fmt"]] for r in rows if r[col["engine"]] == "hdf5"} == {"earliest", "latest"}
    assert "write / POSIX" in out


@pytest.mark.parametrize("ranks", [1, 2])
def test_iotest_through_hdf5s_api_native_and_through_the_connector(tmp_path, ranks):
    """--api hdf5: the sweep through HDF5's C API with the cases' property
    lists, natively and through h5loom's VOL connector (hdf5 and log engines),
    in one run; every value read back is checked (a wrong one fails the run)."""
    out = bench(ranks, "iotest", "--api", "hdf5", "--ini", str(SOURCE / "bench/iotest/tiny.ini"),
                "--engine", "native", "--engine", "hdf5", "--engine", "log", "--dir", str(tmp_path), cwd=tmp_path)
    rows = list(csv.reader(open(tmp_path / "iotest-tiny.csv")))
    header, rows = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    per_section = 96 if ranks > 1 else 48
    labels = ("HDF5 native", "HDF5 + h5loom hdf5", "HDF5 + h5loom log")
    for label in labels:
        mine = [r for r in rows if r[col["engine"]] == label]
        assert len(mine) == 2 * per_section, label
        assert all(float(r[col["write-ratio"]]) > 0 and int(r[col["fsize [B]"]]) > 0 for r in mine)
        # the cases' HDF5 properties are set for every engine through HDF5's API
        assert {r[col["fmt"]] for r in mine} == {"earliest", "latest"}
    assert all(label in out for label in labels)
    with pytest.raises(AssertionError, match="unknown engine"):  # "native" only with --api hdf5
        bench(ranks, "iotest", "--ini", str(SOURCE / "bench/iotest/tiny.ini"), "--engine", "native",
              "--dir", str(tmp_path), cwd=tmp_path)


def test_plots_are_made_from_the_csv(tmp_path):
    # --repeat 2: each case twice, the best of each metric kept; still one row per case
    bench(2, "iotest", "--ini", str(SOURCE / "bench/iotest/tiny.ini"), "--engine", "hdf5", "--engine", "log",
          "--repeat", "2", "--dir", str(tmp_path), cwd=tmp_path)
    assert len(list(csv.reader(open(tmp_path / "iotest-tiny.csv")))) == 1 + 2 * 2 * 96
    res = subprocess.run([sys.executable, str(SOURCE / "tools/bench_plot.py"), str(tmp_path / "iotest-tiny.csv"),
                          "-o", str(tmp_path / "plots")], capture_output=True, text=True, timeout=300, env=CLEAN_ENV)
    assert res.returncode == 0, res.stderr
    for name in ("iotest-tiny-2ranks-write.png", "iotest-tiny-2ranks-read.png"):
        png = tmp_path / "plots" / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = subprocess.run([sys.executable, str(SOURCE / "tools/bench_summary.py"), str(tmp_path / "iotest-tiny.csv")],
                             capture_output=True, text=True, timeout=60)
    assert summary.returncode == 0 and "log against hdf5" in summary.stdout, summary.stderr


def test_iotest_rejects_a_bad_ini(tmp_path):
    ini = tmp_path / "bad.ini"
    ini.write_text("[DEFAULT]\nversion = 0\nsteps = 2\narrays = 2\nrows = 5\ncolumns = 4\nprocess-rows = 1\n"
                   "process-columns = 3\nscaling = weak\nalignment-increment = 1\nalignment-threshold = 0\n"
                   "meta-block-size = 2048\nhdf5-file = x.h5\ncsv-file = x.csv\n")
    cmd = [MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", "2", str(BUILD / "h5loom"), "bench", "iotest",
           "--ini", str(ini), "--dir", str(tmp_path)]
    res = subprocess.run(cmd, env=CLEAN_ENV, capture_output=True, text=True, timeout=120)
    assert res.returncode != 0
    assert "process-rows x process-columns = 1 x 3" in res.stderr and "2" in res.stderr


KERNELS = {
    "qmcpack": ["--walkers", "50", "--particles", "4", "--state-size", "16"],
    "vpic": ["--particles", "1000", "--steps", "2"],
    "hacc": ["--particles", "2000"],
    "amrex": ["--cells", "16", "--max-grid-size", "8", "--components", "2"],
    "e3sm": ["--map", str(SOURCE / "bench/e3sm/f_case_866x72_16p.dat"), "--variables", "2"],
}


@pytest.mark.parametrize("ranks", [1, 2, 4])
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_kernels_verify_on_every_engine(tmp_path, kernel, ranks):
    out = bench(ranks, kernel, *KERNELS[kernel], "--repeat", "1", "--engine", "hdf5", "--engine", "log",
                "--dir", str(tmp_path), cwd=tmp_path)
    rows = list(csv.DictReader(open(tmp_path / f"{kernel}.csv")))
    assert [r["engine"] for r in rows] == ["hdf5", "log"]
    assert all(r["kernel"] == kernel and r["verified"] == "yes" and int(r["ranks"]) == ranks for r in rows)
    assert all(float(r["write-ratio"]) > 0 and float(r["read-ratio"]) > 0 for r in rows)
    assert "w/POSIX" in out


@pytest.mark.parametrize("kernel,args", [("vpic", ["--lend"]), ("vpic", []), ("vpic", ["--busy"]), ("amrex", [])])
def test_a_compute_phase_is_left_out_of_the_blocked_time(tmp_path, kernel, args):
    out = bench(2, kernel, *KERNELS[kernel], *args, "--repeat", "1", "--compute", "0.05", "--engine", "log",
                "--engine", "async+log", "--dir", str(tmp_path), cwd=tmp_path)
    rows = list(csv.DictReader(open(tmp_path / f"{kernel}.csv")))
    assert [r["engine"] for r in rows] == ["log", "async+log"]
    steps = 2 if kernel == "vpic" else 1
    for r in rows:
        assert r["verified"] == "yes"
        blocked, not_io, write = float(r["blocked [s]"]), float(r["not I/O [s]"]), float(r["write [s]"])
        assert not_io >= 0.05 * steps and abs(blocked + not_io - write) < 1e-3
        assert len(r["blocked per step [s]"].split(";")) == steps
    assert "blocked per step" in out


@pytest.mark.parametrize("compute", [[], ["--compute", "0.01"], ["--compute", "0.01", "--busy"]])
def test_iotest_lends_its_tiles_and_reads_back_every_value(tmp_path, compute):
    """--lend: the tiles are lent until their step's flush completes (a set per
    step in flight); every value read back is checked, so a tile refilled too
    early fails the run. Through HDF5's API --lend is refused (on every rank:
    the job ends with the message, printed once)."""
    bench(2, "iotest", "--ini", str(SOURCE / "bench/iotest/tiny.ini"), "--lend", *compute, "--engine", "log",
          "--engine", "async+log", "--engine", "hdf5", "--dir", str(tmp_path), cwd=tmp_path)
    rows = list(csv.DictReader(open(tmp_path / "iotest-tiny.csv")))
    assert {r["engine"] for r in rows} == {"log", "async+log", "hdf5"} and len(rows) == 3 * 2 * 96
    cmd = [MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", "2", str(BUILD / "h5loom"), "bench", "iotest",
           "--api", "hdf5", "--lend", "--ini", str(SOURCE / "bench/iotest/tiny.ini"), "--dir", str(tmp_path)]
    res = subprocess.run(cmd, env=CLEAN_ENV, capture_output=True, text=True, timeout=120)
    assert res.returncode != 0 and "--lend is for --api h5loom" in res.stderr, res.stderr


def test_submit_reports_the_cost_of_one_write(tmp_path):
    out = bench(2, "submit", "--writes", "500", "--repeat", "1", "--engine", "log", "--engine", "async+log",
                "--dir", str(tmp_path), cwd=tmp_path)
    lines = [l.split() for l in out.splitlines() if l.startswith(("log", "async+log"))]
    assert [l[0] for l in lines] == ["log", "async+log"] and all(float(l[1]) > 0 for l in lines)


def test_e3sm_rejects_a_bad_map(tmp_path):
    bad = tmp_path / "bad.dat"
    bad.write_text("version 2001 npes 2 ndims 1\n10\n0 2\n1 2\n1 1\n99\n")
    cmd = [MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", "1", str(BUILD / "h5loom"), "bench", "e3sm",
           "--map", str(bad), "--dir", str(tmp_path)]
    res = subprocess.run(cmd, env=CLEAN_ENV, capture_output=True, text=True, timeout=120)
    assert res.returncode != 0 and "offset 99, outside the [10] array" in res.stderr, res.stderr


def test_missing_directory_is_created_and_bad_csv_fails_on_every_rank(tmp_path):
    out = bench(2, "qmcpack", "--walkers", "10", "--particles", "2", "--repeat", "1",
                "--dir", str(tmp_path / "new" / "dir"), cwd=tmp_path)
    assert (tmp_path / "new" / "dir" / "qmcpack.csv").exists() and "w/POSIX" in out
    cmd = [MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", "2", str(BUILD / "h5loom"), "bench", "iotest",
           "--ini", str(SOURCE / "bench/iotest/tiny.ini"), "--dir", str(tmp_path), "--csv", "/nonexistent/x.csv"]
    res = subprocess.run(cmd, env=CLEAN_ENV, capture_output=True, text=True, timeout=120)  # an error, not a hang
    assert res.returncode != 0 and "cannot write CSV file '/nonexistent/x.csv'" in res.stderr


def test_peers_runs_every_library_and_workload_and_checks_what_they_read(tmp_path):
    """`h5loom bench peers --quick`: raw POSIX, h5py, ADIOS2, zarr-python and the
    h5loom engines each write and read back every workload (a wrong value fails the run)."""
    env = dict(CLEAN_ENV, H5LOOM_PYTHON=sys.executable)
    res = subprocess.run([str(BUILD / "h5loom"), "bench", "peers", "--quick", "--repeat", "2", "--sync",
                          "--dir", str(tmp_path)], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "skipping" not in res.stderr  # h5py and adios2 are in the project's .venv
    rows = list(csv.DictReader(open(tmp_path / "peers.csv")))
    libraries = ["posix", "h5py", "adios2", "zarr-python", "h5loom-hdf5", "h5loom-log", "h5loom-zarr"]
    for workload in ("qmcpack", "vpic", "iotest-8k", "iotest-512k"):
        for lib in libraries:
            runs = [r for r in rows if r["workload"] == workload and r["library"] == lib]
            assert len(runs) == 2, (workload, lib)
            assert all(r["verified"] == "True" and float(r["write"]) > 0 and float(r["read"]) > 0 for r in runs)
            assert len({r["bytes"] for r in runs}) == 1
        assert len({r["bytes"] for r in rows if r["workload"] == workload}) == 1  # the same bytes for everyone
    assert {r["library"] for r in rows if r["workload"] == "startup"} == {"numpy", *libraries}
    assert (tmp_path / "peers.png").stat().st_size > 0
    assert "| qmcpack write |" in res.stdout
    # no file is left behind but the results
    assert sorted(p.name for p in tmp_path.iterdir()) == ["peers.csv", "peers.png"]


def test_peers_refuses_a_bad_repeat_count(tmp_path):
    env = dict(CLEAN_ENV, H5LOOM_PYTHON=sys.executable)
    res = subprocess.run([str(BUILD / "h5loom"), "bench", "peers", "--repeat", "0", "--dir", str(tmp_path)],
                         env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "--repeat must be at least 1, not 0" in res.stderr
