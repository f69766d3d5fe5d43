// The index of a log: which blocks hold each dataset's elements. Reads ask it
// for the blocks that meet a box, verify and the front file walk all of them,
// and its entries travel in index records in the format's block-entry
// encoding. An interface, so that another index (a distributed one, an
// interval tree) can replace the sorted range search without touching its users.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engines/log/format.hpp"

namespace h5loom::logengine {

using logfmt::BlockEntry;

class Index {
 public:
  virtual ~Index() = default;

  // Adds the next dataset (ids are given from 0 in creation order), of `rank` dimensions.
  virtual void add_dataset(std::size_t rank) = 0;
  virtual std::size_t datasets() const = 0;
  // Adds a block. Its dataset must exist and have the block's number of
  // dimensions, else CorruptionError (replay checks blocks fully before).
  virtual void insert(BlockEntry e) = 0;
  // Appends to `out` the blocks of `dataset` whose box meets [start, start + count),
  // in no particular order; they stay valid until the next insert.
  virtual void search(uint32_t dataset, const Dims& start, const Dims& count,
                      std::vector<const BlockEntry*>& out) const = 0;
  // Every block of `dataset`, in no particular order (verify, the front file, conversion).
  virtual const std::vector<BlockEntry>& blocks(uint32_t dataset) const = 0;
  // The number of blocks of all datasets.
  virtual uint64_t size() const = 0;

  // Every block, as the block entries of an index record (back to back, in
  // dataset order). Returns how many.
  uint64_t serialize(logfmt::Writer& w) const;
  // Inserts `count` block entries read from `r` (an index record's entries, or
  // the entries of an epoch exchanged between ranks). `check` (if given) sees
  // each entry before it is inserted and raises if it does not fit the log.
  void deserialize(logfmt::Reader& r, uint64_t count, const std::function<void(const BlockEntry&)>& check = {});
};

// The index h5loom uses: per dataset, the blocks sorted by start
// (lexicographically) and the largest block extent per dimension; a search is
// a range search on the sorted starts, one dimension at a time, so a read does
// not scan the index.
std::unique_ptr<Index> make_sorted_range_index();

}  // namespace h5loom::logengine
