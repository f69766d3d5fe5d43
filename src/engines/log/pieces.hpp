// The open epoch's writes on their way to the log: one ordered list of pieces,
// each a block of the log and where its bytes are now - owned (copied into
// the rank's coalescing buffer, or kept alive by a shared reference) or
// borrowed (the caller's memory, valid until the next write-out returns), or
// already in the log. Coalescing happens here, as pieces are appended; where
// the bytes go (regions, aggregators) is decided over the list by placement.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engines/log/coalescing_buffer.hpp"
#include "engines/log/format.hpp"

namespace h5loom::logengine {

using logfmt::BlockEntry;

struct Piece {
  enum class Bytes {
    Copied,    // owned: in the coalescing buffer, at block.offset of it until placed
    Kept,      // owned: `data`, kept alive by `keep` as long as the piece lives
    Borrowed,  // `data`, the caller's memory, valid until the next write-out returns
    InLog,     // in the log (written, or placed and being written): block.offset is the log's
  };
  BlockEntry block;
  Bytes bytes = Bytes::Copied;
  const unsigned char* data = nullptr;  // Kept, Borrowed
  std::shared_ptr<const void> keep;     // Kept
};

// A run of bytes in memory, on its way to the log.
struct ByteRun {
  const unsigned char* data = nullptr;
  uint64_t nbytes = 0;
};

class PieceList {
 public:
  explicit PieceList(uint64_t buffer_reservation) : reservation_(buffer_reservation) {}

  // Copies the box [start, +count) of `block` (an entry with dataset, rank and
  // counter; nbytes its size) into the buffer: the elements of the dense
  // array `src` of shape `dense` from `dense_start` (null: all of it). A write
  // that continues the last piece (the next row, the next run of a 1-D array)
  // grows that block instead of adding one - only if nothing came in between
  // (counters follow each other), so that the write order stays exact. Then
  // no entry is made (`block` is only read), which is what keeps a code that
  // writes a row at a time cheap.
  void copy(const BlockEntry& block, const Dims& start, const Dims& count, const unsigned char* src,
            const Dims& dense, const Dims* dense_start, std::size_t es);
  // Appends a piece whose bytes stay in the caller's memory (kept alive by
  // `keep` if given, else borrowed until the next write-out).
  void refer(BlockEntry block, const unsigned char* data, std::shared_ptr<const void> keep = {});
  // Appends a block just written to the log at `at` (its bytes `src`), sealing
  // it for `epoch` with one CRC32C per `unit` bytes. A block that continues the
  // last piece - in the log (right after it), in the dataset (as `copy` grows
  // one) and in the rank's write order - grows that block instead, its
  // checksums continued: a rank that writes a large array in slabs into its
  // region leaves one block.
  void written(BlockEntry block, const unsigned char* src, uint64_t at, uint64_t epoch, uint64_t unit);
  // The whole buffer was written to the log at `at`, before any write-out (a
  // spill): its pieces are in the log now, sealed for `epoch` as placement
  // would seal them, and the buffer is empty for the writes that follow.
  void spilled(uint64_t at, uint64_t epoch, uint64_t unit);

  std::vector<Piece>& pieces() { return pieces_; }
  const std::vector<Piece>& pieces() const { return pieces_; }
  CoalescingBuffer& buffer() { return buffer_; }
  uint64_t buffered_bytes() const { return buffer_.size(); }
  // Whether a borrowed piece is waiting: its memory is only ours until the next write-out returns.
  bool has_borrowed() const { return borrowed_ > 0; }

  // After a write-out: every piece placed is in the log now (`written`), or,
  // if the write-out failed, dropped (their bytes may not have reached the
  // log). The buffer is emptied either way (memory kept up to `reservation`).
  void placed(bool written);
  // Forgets every piece: the commit (or a visible flush) indexed them, or the
  // handle failed and commits nothing more.
  void clear();

 private:
  std::vector<Piece> pieces_;
  CoalescingBuffer buffer_;
  uint64_t reservation_;
  uint64_t borrowed_ = 0;
};

// Gives a block of the open epoch `epoch` its log offset `at` and the checksums
// of its bytes `p`, one per `unit` bytes (computed by the rank that owns the data).
void seal(BlockEntry& e, const unsigned char* p, uint64_t at, uint64_t epoch, uint64_t unit);

}  // namespace h5loom::logengine
