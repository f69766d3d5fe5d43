#include "engines/log/write_pipeline.hpp"

#include "engines/log/boxes.hpp"
#include "engines/log/log_store.hpp"

namespace h5loom::logengine {

namespace {

// A hyperslab that is a single dense box (its start and count say it all).
bool is_one_box(const Selection& sel) {
  return sel.kind() == Selection::Kind::Hyperslab && sel.is_box() && product(sel.block()) == 1;
}

}  // namespace

WritePipeline::WritePipeline(const Team& team, const std::string& path, StoredFile& log, const Settings& settings,
                             uint64_t checksum_unit, uint64_t log_end, uint64_t open_epoch)
    : team_(team),
      path_(path),
      log_(log),
      settings_(settings),
      unit_(checksum_unit),
      log_end_(log_end),
      epoch_(open_epoch),
      pieces_(settings.buffer_size),
      transport_(team, settings.aggregators, settings.aggregator_count),
      regions_(team, settings.region_size, settings.region_alignment) {
  regions_.open_round(log_end_);
}

bool WritePipeline::put(uint32_t id, const std::string& dataset, const DatasetInfo& info, const Selection& sel,
                        const unsigned char* data, Hold hold, std::shared_ptr<const void> keep) {
  const std::size_t es = datatype_size(info.dtype);
  if (hold == Hold::DuringCall) {
    // Taken only if it can be done now: a large one-box write that fits the
    // region, or a small one that fits the buffer (which thus never outgrows
    // buffer_size between write-outs).
    const uint64_t nbytes = sel.num_elements(info.shape) * es;
    if (nbytes >= settings_.large_write) {
      const bool one_box = sel.kind() == Selection::Kind::All || is_one_box(sel);
      if (!one_box || !regions_.has_room(nbytes)) return false;
    } else if (pieces_.buffered_bytes() + nbytes > settings_.buffer_size) {
      return false;
    }
  }
  const bool may_keep = hold != Hold::DuringCall;
  if (is_one_box(sel)) {
    // The common case, one box (a row, a slab): no box list to build.
    add_block(id, dataset, sel.start(), sel.count(), data, sel.count(), nullptr, es, may_keep, keep);
    return true;
  }
  const Dims dense = sel.selected_shape(info.shape);
  for (const auto& box : selection_boxes(sel, info.shape))
    add_block(id, dataset, box.start, box.count, data, dense, &box.dense_start, es, may_keep, keep);
  return true;
}

// One box [start, +count) of dataset `id`, whose elements are at dense_start
// (null: all of it) of the dense array src of shape `dense`.
void WritePipeline::add_block(uint32_t id, const std::string& dataset, const Dims& start, const Dims& count,
                              const unsigned char* src, const Dims& dense, const Dims* dense_start, std::size_t es,
                              bool may_keep, const std::shared_ptr<const void>& keep) {
  const uint64_t nbytes = product(count) * es;
  if (nbytes == 0) return;
  const bool whole = dense_start == nullptr || count == dense;
  BlockEntry e;
  e.dataset = id;
  e.rank = uint32_t(team_.rank);
  e.counter = counter_++;
  e.round = round_;
  e.nbytes = nbytes;
  // The box goes into the entry only where a new piece is sure: a copy may
  // grow the last block instead (see PieceList::copy).
  auto boxed = [&]() -> BlockEntry&& {
    e.start = start, e.count = count;
    return std::move(e);
  };
  const bool large = whole && nbytes >= settings_.large_write;
  if (large && regions_.size() > 0) {
    regions_.add_demand(nbytes);
    if (regions_.has_room(nbytes)) return write_to_region(boxed(), dataset, src);
  }
  if (large && may_keep) return pieces_.refer(boxed(), src, keep);
  pieces_.copy(e, start, count, src, dense, whole ? nullptr : dense_start, es);
  spill_if_full();
}

// A buffer of `spill_at` bytes goes into the rank's region now, in one write
// started to storage at once (with `sync`): many small writes then reach the
// device while the program goes on, as large ones do, instead of all at the
// commit, and one system call serves many writes. Without room it waits for
// the write-out. An I/O error is kept for the end of the round (Regions::fail); the
// pieces stay in the buffer, never committed (the round's end raises it).
void WritePipeline::spill_if_full() {
  const uint64_t n = pieces_.buffered_bytes();
  if (settings_.spill_at == 0 || n < settings_.spill_at || regions_.failed() || !regions_.has_room(n)) return;
  const auto at = write_into_region(pieces_.buffer().data(), n, "writing buffered writes to the log of '" + path_ + "'");
  if (!at) return;
  regions_.add_demand(n);
  pieces_.spilled(*at, epoch_, unit_);
}

// Writes one block to this rank's region now, from the caller's memory; it
// joins the epoch's pieces as written. An I/O error is kept for the end of
// the round (Regions::fail).
void WritePipeline::write_to_region(BlockEntry e, const std::string& dataset, const unsigned char* src) {
  const auto at = write_into_region(src, e.nbytes, "writing dataset '" + dataset + "' to the log of '" + path_ + "'");
  if (at) pieces_.written(std::move(e), src, *at, epoch_, unit_);
}

// Writes n bytes at the region's cursor and claims them (its write-back
// started, with `sync`); returns where they went, or nothing if the write
// failed: the error is kept for the end of the round (Regions::fail).
std::optional<uint64_t> WritePipeline::write_into_region(const unsigned char* src, uint64_t n, const std::string& what) {
  const uint64_t at = regions_.cursor();
  mpi::CaughtError err;
  err.run([&] { log_.write(src, n, at, what); });
  if (err.code != 0) {
    regions_.fail(err.msg);
    return std::nullopt;
  }
  if (settings_.sync) log_.start_write_back(at, n);
  regions_.take(n);
  unsynced_region_bytes_ += n;
  return at;
}

void WritePipeline::sync_region_writes() {
  if (!settings_.sync || unsynced_region_bytes_ == 0) return;
  unsynced_region_bytes_ = 0;
  // One rank per node syncs early. A sync flushes the node's pages of the
  // log whoever wrote them, and while it writes the file's metadata it holds
  // the inode that the node's other ranks' region writes wait for (ext4, a
  // kernel trace at 4 ranks: docs/benchmarks.md, "Async"). Pages written
  // after it are synced by the commit, whose syncs do not depend on this one.
  if (!transport_.node_leader()) return;
  if (const int err = log_.sync()) {
    early_sync_failed_ = true;
    regions_.fail(with_reason("cannot sync the region writes to the log of '" + path_ + "' (fdatasync)", err));
  }
}

bool WritePipeline::wants_write_out() const {
  return pieces_.buffered_bytes() >= settings_.buffer_size || pieces_.has_borrowed();
}

void WritePipeline::write_out() {
  write_placed(place());
  open_round();
}

EntrySummary WritePipeline::entry_summary() const {
  EntrySummary s;
  for (const auto& p : pieces_.pieces()) {
    const uint64_t units = (p.block.nbytes + unit_ - 1) / unit_;  // as seal() makes them
    s.bytes += logfmt::BlockEntry::encoded_size(p.block.start.size(), units);
    ++s.count;
  }
  return s;
}

Placement WritePipeline::place(const EntrySummary& entries) {
  return logengine::place(pieces_, regions_, transport_, team_, log_end_, epoch_, unit_, settings_.own_region_min,
                          entries);
}

void WritePipeline::write_placed(const Placement& pl, const std::function<void()>& meanwhile,
                                 const std::function<void()>& written) {
  if (pl.written_at_write_out == 0) {
    // No rank writes anything here (every byte went to the regions before the
    // placement, whose exchange raised a failed region write): nothing to agree on.
    if (written) written();
    if (meanwhile) meanwhile();
    pieces_.placed(/*written=*/true);
    return;
  }
  const std::string what = "writing to the log of '" + path_ + "'";
  mpi::CaughtError failed;  // this rank's first failure
  auto write_at = [&](const unsigned char* p, uint64_t n, uint64_t off) {
    if (failed.code != 0) return;
    failed.run([&] { log_.write(p, n, off, what); });
    if (failed.code == 0 && settings_.sync) log_.start_write_back(off, n);
  };
  if (pl.own.nbytes) write_at(pl.own.data, pl.own.nbytes, pl.own_offset);  // the buffer, in the rank's region
  if (pl.total == 0) {
    if (written) written();
    if (meanwhile) meanwhile();
  } else {
    transport_.move(pl.runs, pl.bytes_of, pl.offset, write_at, meanwhile, written);
    log_end_ += pl.total;
  }
  // The placed pieces are in the log - unless a write failed on any rank,
  // which is then raised everywhere.
  int bad = failed.code != 0, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, team_.comm);
  pieces_.placed(/*written=*/!any);
  if (any) mpi::share_first_error(team_.comm, team_.rank, failed);
}

void WritePipeline::start_epoch(uint64_t open_epoch, uint64_t log_end) {
  epoch_ = open_epoch;
  round_ = 0;
  log_end_ = log_end;
  unsynced_region_bytes_ = 0;  // the commit that opens this epoch syncs them
  regions_.new_epoch();
  open_round();
}

}  // namespace h5loom::logengine
