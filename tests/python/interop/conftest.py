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
