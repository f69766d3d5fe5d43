"""The Python quick start: each rank writes its rows of a 2-D field, then every
rank reads a slice back. Runs as one rank, or under mpirun -n N."""
import sys

import numpy as np
from mpi4py import MPI

import h5loom

path = sys.argv[1] if len(sys.argv) > 1 else "quickstart_py.h5"
comm = MPI.COMM_WORLD
r, n = comm.rank, comm.size
N, M = 4 * n, 3

with h5loom.File(path, "w", comm=comm, engine="hdf5") as f:
    ds = f.create_dataset("fields/rho", shape=(N, M), dtype="f8", chunks="auto")
    ds[4 * r:4 * r + 4, :] = np.full((4, M), float(r))  # each rank writes its rows
    ds.attrs["units"] = "kg/m^3"

with h5loom.File(path, "r", comm=comm) as f:
    rho = f["fields/rho"]
    mean = rho[:, :].mean()
    assert mean == (n - 1) / 2, mean
    if r == 0:
        print(f"{path}: {rho.path} {rho.shape} in {rho.attrs['units']}, mean {mean}")
