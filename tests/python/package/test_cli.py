"""The h5loom command (the built binary): ls, dump, info and --help."""
import os
import pathlib
import subprocess

import pytest

BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()
MPIEXEC = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
H5LOOM = os.environ.get("H5LOOM_CLI", str(BUILD / "h5loom"))


# This pytest process has initialised MPI (mpi4py); children must not inherit its
# Open MPI singleton environment, or mpirun and MPI_Init in them get confused.
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}


def run(*args, check=True):
    return subprocess.run([H5LOOM, *args], capture_output=True, text=True, check=check, timeout=120, env=CLEAN_ENV)


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "ref.h5"
    subprocess.run([MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", "2",
                    str(BUILD / "tests" / "write_reference"), str(path)], check=True, timeout=300, env=CLEAN_ENV)
    return str(path)


def test_ls_shows_tree_shapes_types_and_attributes(ref):
    out = run("ls", ref).stdout.splitlines()
    assert out[0].split() == ["/", "Group"]
    rho = next(line for line in out if line.startswith("/fields/rho"))
    assert "Dataset [4, 3] float64 contiguous" in rho
    ids = next(line for line in out if line.startswith("/particles/id"))
    assert "int64 max [inf] chunked" in ids
    assert '    @units = "kg/m^3"  (string)' in out
    assert "    @count = [1, 2, 3]  (int32)" in out
    assert not any("@" in line for line in run("ls", "--no-attrs", ref).stdout.splitlines())


def test_dump_prints_every_value_with_its_index(ref):
    out = run("dump", ref, "fields/rho").stdout.splitlines()
    assert out[0] == "/fields/rho: Dataset [4, 3] float64 contiguous"
    assert "(0,0): 0, 1, 2" in out
    assert "(3,0): 103, 104, 105" in out
    ids = run("dump", ref, "/particles/id", "--max", "5").stdout
    assert "(0): 0, 1, 2, 3, 4" in ids
    assert "15 more values" in ids
    assert "(0): 0, 127, 255" in run("dump", ref, "types/u8").stdout
    group = run("dump", ref, "fields").stdout
    assert "@count = [1, 2, 3]" in group and "rho/" in group


def test_info_names_engine_and_sizes(ref):
    out = run("info", ref).stdout
    assert "engine: hdf5" in out
    assert f"size: {os.path.getsize(ref)} bytes" in out
    assert "datasets: 4 holding 37 elements, 267 bytes of data" in out


def test_errors_name_the_object_and_exit_nonzero(ref, tmp_path):
    missing = run("dump", ref, "nope", check=False)
    assert missing.returncode == 1
    assert "'nope'" in missing.stderr and ref in missing.stderr
    nofile = run("info", str(tmp_path / "absent.h5"), check=False)
    assert nofile.returncode == 1 and "does not exist" in nofile.stderr
    bad_engine = run("ls", ref, "--engine", "bogus", check=False)
    assert bad_engine.returncode == 1 and "unknown engine 'bogus'" in bad_engine.stderr


@pytest.mark.parametrize("sub", ["ls", "dump", "info"])
def test_every_subcommand_has_help(sub):
    out = run(sub, "--help").stdout
    assert f"h5loom {sub}" in out and "--engine" in out


def test_top_level_help_lists_subcommands():
    out = run("--help").stdout
    for sub in ("ls", "dump", "info"):
        assert sub in out
    assert run(check=False).returncode != 0  # a subcommand is required
