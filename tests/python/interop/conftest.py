import os

# The tools of h5loom's HDF5 (h5dump, ...) first in PATH: H5LOOM_HDF5_BIN (tests/CMakeLists.txt).
if os.environ.get("H5LOOM_HDF5_BIN"):
    os.environ["PATH"] = os.environ["H5LOOM_HDF5_BIN"] + os.pathsep + os.environ.get("PATH", "")

# h5py is built with MPI here (it imports mpi4py): this pytest process starts no
# MPI, so the mpirun commands the tests run do not inherit the environment of an
# MPI singleton (Open MPI's mpirun fails under one). h5py and h5loom in one MPI
# process: tests/python/onelib.
import mpi4py  # noqa: E402

mpi4py.rc.initialize = False
mpi4py.rc.finalize = False

import pathlib  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture
def run_h5loom(tmp_path):
    """Runs Python code that uses h5loom in its own MPI job (this process starts
    no MPI), in tmp_path, on `ranks` ranks; fails the test with its output if it fails."""
    def run(code: str, ranks: int = 1) -> None:
        script = tmp_path / f"h5loom_script_{abs(hash(code))}.py"
        script.write_text("import numpy as np\nimport h5loom\n" + code)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
        mpiexec = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
        done = subprocess.run([mpiexec, "--oversubscribe", "--allow-run-as-root", "-n", str(ranks), sys.executable,
                               str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"h5loom script failed:\n{done.stdout}\n{done.stderr}"
    return run
