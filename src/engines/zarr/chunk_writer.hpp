// The flush of a Zarr store: every rank's writes reach the chunks they touch,
// and each chunk is written by one rank, its owner - the rank that wrote the
// most of its bytes in this flush (ties: the lowest) - so no two ranks ever
// write one object. The ranks first exchange what they wrote where (a few
// numbers per chunk), then send each owner the parts of its chunks they
// wrote; a chunk not wholly written is read first (or starts as the fill
// value). docs/engines/zarr.md, "Parallel writes".
#pragma once

#include "engines/zarr/zarr_file.hpp"

namespace h5loom::zarr {

// Collective. Writes the chunks of every write in f.pending and clears it.
// Errors are raised on every rank (the lowest failing rank's).
void write_pending_chunks(ZarrFile& f);

}  // namespace h5loom::zarr
