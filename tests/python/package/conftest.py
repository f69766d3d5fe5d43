import os
import pathlib

import pytest

from mpi4py import MPI  # noqa: F401  (initialises MPI before h5loom, as applications do)


@pytest.fixture
def shared_path(tmp_path):
    """A directory all ranks share: rank 0's tmp_path, broadcast."""
    comm = MPI.COMM_WORLD
    return pathlib.Path(comm.bcast(str(tmp_path), root=0))


@pytest.fixture
def comm():
    return MPI.COMM_WORLD


def pytest_configure(config):
    os.environ.setdefault("H5LOOM_BUILD_DIR", str(pathlib.Path("build").resolve()))
