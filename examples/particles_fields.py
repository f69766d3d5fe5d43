"""Steps with particles and a 3-D block field, in the openPMD or H5Part layout.

    mpirun -n 4 python examples/particles_fields.py run.h5 [openpmd|h5part]

Each rank owns a slab of the grid along x and its own particles (rank 1 none);
h5loom computes global sizes and offsets. Then every rank reads its slab with a
halo of one cell taken from its neighbours.
"""
import sys

import numpy as np
from mpi4py import MPI

import h5loom

path = sys.argv[1] if len(sys.argv) > 1 else "particles_fields_py.h5"
layout = sys.argv[2] if len(sys.argv) > 2 else "openpmd"
comm = MPI.COMM_WORLD
rank, nranks = comm.rank, comm.size
nz, ny, nxl = 4, 4, 8  # each rank a 4 x 4 x 8 box, [z][y][x]

with h5loom.Series(path, "w", comm=comm, layout=layout) as s:
    for n in range(3):
        with s.write_step(n, time=0.1 * n, dt=0.1) as st:
            k = 0 if rank == 1 else 1000
            x = rank * nxl + np.linspace(0, nxl, k, endpoint=False)
            st.particles("electrons").write(x=x, px=np.zeros(k), id=np.arange(k, dtype=np.int64))
            local = np.full((nz + 2, ny + 2, nxl + 2), float(rank))  # the box with one ghost cell per side
            st.field("rho", global_shape=(nz, ny, nxl * nranks), offset=(0, 0, rank * nxl),
                     spacing=(0.5, 0.5, 0.5)).write(local, ghost=1)

with h5loom.Series(path, "r", comm=comm) as s:
    for st in s.steps():
        electrons = st.particles(st.particle_species()[0])
        x = electrons["x"].read_my_share()
        rho = st.field("rho").read(box=((0, 0, rank * nxl), (nz, ny, (rank + 1) * nxl)), halo=1, fill=-1.0)
        row = rho[1, 1, :]  # left neighbour's cell, my cells, right neighbour's cell
        assert row[0] == (rank - 1 if rank > 0 else -1) and row[-1] == (rank + 1 if rank + 1 < nranks else -1)
        assert (row[1:-1] == rank).all()
        if rank == 0:
            print(f"{path} step {st.index} (t={st.time:g}): {electrons.global_count} particles, "
                  f"{len(x)} read here, halo verified")
