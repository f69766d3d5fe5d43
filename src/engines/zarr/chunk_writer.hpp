// The flush of a Zarr store: every rank's writes reach the chunks they touch,
// and each chunk is written by one rank, its owner - the rank that wrote the
// most of its bytes in this flush (ties: the lowest) - so no two ranks ever
// write one object. The ranks first exchange what they wrote where (a few
// numbers per chunk), then send each owner the parts of its chunks they
// wrote; a chunk not wholly written is read first (or starts as the fill
// value). docs/engines/zarr.md, "Parallel writes".
#pragma once

#include "core/mpi_util.hpp"
#include "engines/zarr/zarr_file.hpp"

namespace h5loom::zarr {

// Collective. Writes the chunks of every write in f.pending (their objects
// reach the store, to be published by the caller) and clears it. Never
// raises: this rank's first error goes into `error`, for the caller to agree on.
void write_pending_chunks(ZarrFile& f, mpi::CaughtError& error);

}  // namespace h5loom::zarr
