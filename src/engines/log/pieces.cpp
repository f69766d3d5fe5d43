#include "engines/log/pieces.hpp"

#include <algorithm>
#include <cstring>

#include "core/memory_copy.hpp"
#include "engines/log/boxes.hpp"

namespace h5loom::logengine {

void PieceList::copy(const BlockEntry& block, const Dims& start, const Dims& count, const unsigned char* src,
                     const Dims& dense, const Dims* dense_start, std::size_t es) {
  const uint64_t at = buffer_.size(), nbytes = block.nbytes;
  unsigned char* dst = buffer_.append(nbytes, reservation_);
  if (!dense_start) copy_bytes(dst, src, nbytes);
  else copy_subbox(src, dense, *dense_start, dst, count, Dims(count.size(), 0), count, es);
  if (!pieces_.empty()) {
    Piece& last = pieces_.back();
    BlockEntry& e = last.block;
    if (last.bytes == Piece::Bytes::Copied && e.dataset == block.dataset && e.counter + 1 == block.counter && e.round == block.round &&
        e.offset + e.nbytes == at && append_box(e.start, e.count, start, count)) {
      e.nbytes += nbytes;
      e.counter = block.counter;
      return;
    }
  }
  Piece p{block, Piece::Bytes::Copied, nullptr, nullptr};
  p.block.start = start, p.block.count = count, p.block.offset = at;
  pieces_.push_back(std::move(p));
}

void PieceList::refer(BlockEntry block, const unsigned char* data, std::shared_ptr<const void> keep) {
  const auto bytes = keep ? Piece::Bytes::Kept : Piece::Bytes::Borrowed;
  if (!keep) ++borrowed_;
  pieces_.push_back(Piece{std::move(block), bytes, data, std::move(keep)});
}

void PieceList::written(BlockEntry block, const unsigned char* src, uint64_t at, uint64_t epoch, uint64_t unit) {
  if (!pieces_.empty()) {
    Piece& last = pieces_.back();
    BlockEntry& e = last.block;
    if (last.bytes == Piece::Bytes::InLog && e.dataset == block.dataset && e.counter + 1 == block.counter &&
        e.round == block.round && e.epoch == uint32_t(epoch) && e.offset + e.nbytes == at &&
        append_box(e.start, e.count, block.start, block.count)) {
      // The last unit of `e` may be short: the new bytes fill it first (a
      // CRC32C continues over appended bytes), then make units of their own.
      uint64_t used = 0;
      if (const uint64_t short_by = e.nbytes % unit ? unit - e.nbytes % unit : 0; short_by) {
        used = std::min(short_by, block.nbytes);
        e.unit_crcs.back() = logfmt::crc32c(src, used, e.unit_crcs.back());
      }
      for (; used < block.nbytes; used += unit)
        e.unit_crcs.push_back(logfmt::crc32c(src + used, std::min(unit, block.nbytes - used)));
      e.nbytes += block.nbytes;
      e.counter = block.counter;
      return;
    }
  }
  seal(block, src, at, epoch, unit);
  pieces_.push_back(Piece{std::move(block), Piece::Bytes::InLog, nullptr, nullptr});
}

void PieceList::spilled(uint64_t at, uint64_t epoch, uint64_t unit) {
  const unsigned char* buffer = buffer_.data();
  for (auto& p : pieces_)
    if (p.bytes == Piece::Bytes::Copied) {
      seal(p.block, buffer + p.block.offset, at + p.block.offset, epoch, unit);
      p.bytes = Piece::Bytes::InLog;
    }
  buffer_.clear(/*keep_at_most=*/reservation_);
}

void PieceList::placed(bool written) {
  if (written) {
    for (auto& p : pieces_) p.bytes = Piece::Bytes::InLog, p.data = nullptr, p.keep.reset();
  } else {
    pieces_.erase(std::remove_if(pieces_.begin(), pieces_.end(),
                                 [](const Piece& p) { return p.bytes != Piece::Bytes::InLog; }),
                  pieces_.end());
  }
  borrowed_ = 0;
  buffer_.clear(/*keep_at_most=*/reservation_);
}

void PieceList::clear() {
  pieces_.clear();
  borrowed_ = 0;
  buffer_.clear(/*keep_at_most=*/reservation_);
}

void seal(BlockEntry& e, const unsigned char* p, uint64_t at, uint64_t epoch, uint64_t unit) {
  e.epoch = uint32_t(epoch);
  e.unit_crcs.clear();
  for (uint64_t u = 0; u < e.nbytes; u += unit)
    e.unit_crcs.push_back(logfmt::crc32c(p + u, std::min(unit, e.nbytes - u)));
  e.offset = at;
}

}  // namespace h5loom::logengine
