import os

# The tools of h5loom's HDF5 (h5dump, ...) first in PATH: H5LOOM_HDF5_BIN (tests/CMakeLists.txt).
if os.environ.get("H5LOOM_HDF5_BIN"):
    os.environ["PATH"] = os.environ["H5LOOM_HDF5_BIN"] + os.pathsep + os.environ.get("PATH", "")
