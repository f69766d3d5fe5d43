// The log engine's Index: search finds exactly the blocks that meet a box
// (checked against a scan of all blocks), and serialize/deserialize keep them.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "engines/log/boxes.hpp"
#include "engines/log/index.hpp"
#include "h5loom/errors.hpp"

using namespace h5loom;
using h5loom::logengine::BlockEntry;
using h5loom::logengine::Index;
using h5loom::logengine::make_sorted_range_index;

namespace {

BlockEntry block(uint32_t dataset, Dims start, Dims count, uint64_t counter) {
  BlockEntry e;
  e.dataset = dataset;
  e.epoch = 1;
  e.counter = counter;
  e.start = std::move(start);
  e.count = std::move(count);
  e.offset = 4096 + counter * 8;
  e.nbytes = product(e.count);
  e.unit_crcs = {uint32_t(counter)};
  return e;
}

std::vector<uint64_t> counters(const std::vector<const BlockEntry*>& found) {
  std::vector<uint64_t> out;
  for (const auto* e : found) out.push_back(e->counter);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(LogIndex, SearchFindsTheBlocksThatMeetABox) {
  auto index = make_sorted_range_index();
  index->add_dataset(2);
  index->insert(block(0, {0, 0}, {4, 4}, 0));
  index->insert(block(0, {0, 4}, {4, 4}, 1));
  index->insert(block(0, {4, 0}, {4, 8}, 2));
  index->insert(block(0, {2, 2}, {1, 1}, 3));  // overlaps block 0
  std::vector<const BlockEntry*> found;
  index->search(0, {3, 3}, {2, 2}, found);  // meets 0, 1, 2 - not 3
  EXPECT_EQ(counters(found), (std::vector<uint64_t>{0, 1, 2}));
  found.clear();
  index->search(0, {2, 2}, {1, 1}, found);
  EXPECT_EQ(counters(found), (std::vector<uint64_t>{0, 3}));
  found.clear();
  index->search(0, {8, 0}, {1, 8}, found);  // beyond every block
  EXPECT_TRUE(found.empty());
  EXPECT_EQ(index->size(), 4u);
  EXPECT_EQ(index->blocks(0).size(), 4u);
}

TEST(LogIndex, SearchAgreesWithAScanOnRandomBlocks) {
  std::mt19937_64 rng(7);
  auto index = make_sorted_range_index();
  index->add_dataset(1);  // a dataset without blocks: searches find nothing
  index->add_dataset(3);
  std::vector<BlockEntry> all;
  auto coord = [&](uint64_t n) { return rng() % n; };
  for (uint64_t i = 0; i < 400; ++i) {
    Dims start{coord(40), coord(40), coord(40)}, count{1 + coord(6), 1 + coord(6), 1 + coord(6)};
    all.push_back(block(1, start, count, i));
    index->insert(all.back());
    if (i % 50 != 49) continue;
    for (int q = 0; q < 50; ++q) {  // searched between inserts too: the order is kept up to date
      Dims qs{coord(44), coord(44), coord(44)}, qc{1 + coord(10), 1 + coord(10), 1 + coord(10)};
      std::vector<const BlockEntry*> found;
      index->search(1, qs, qc, found);
      std::vector<uint64_t> want;
      Dims s, c;
      for (const auto& e : all)
        if (logengine::intersect(e.start, e.count, qs, qc, s, c)) want.push_back(e.counter);
      ASSERT_EQ(counters(found), want);
    }
  }
  std::vector<const BlockEntry*> none;
  index->search(0, {0}, {100}, none);
  EXPECT_TRUE(none.empty());
}

TEST(LogIndex, SerializeAndDeserializeKeepEveryBlock) {
  auto index = make_sorted_range_index();
  index->add_dataset(1);
  index->add_dataset(2);
  index->insert(block(1, {3, 4}, {2, 2}, 5));
  index->insert(block(0, {10}, {6}, 6));
  index->insert(block(1, {0, 0}, {1, 9}, 7));
  logfmt::Writer w;
  ASSERT_EQ(index->serialize(w), 3u);

  auto copy = make_sorted_range_index();
  copy->add_dataset(1);
  copy->add_dataset(2);
  logfmt::Reader r{w.bytes.data(), w.bytes.size(), 0, "test"};
  std::vector<uint32_t> checked;
  copy->deserialize(r, 3, [&](const BlockEntry& e) { checked.push_back(uint32_t(e.counter)); });
  EXPECT_EQ(r.at, w.bytes.size());
  EXPECT_EQ(checked.size(), 3u);
  ASSERT_EQ(copy->size(), 3u);
  for (uint32_t id : {0u, 1u}) {
    ASSERT_EQ(copy->blocks(id).size(), index->blocks(id).size());
    for (const auto& e : index->blocks(id)) {
      std::vector<const BlockEntry*> found;
      copy->search(id, e.start, e.count, found);
      auto same = std::find_if(found.begin(), found.end(), [&](const BlockEntry* f) {
        return f->counter == e.counter && f->offset == e.offset && f->nbytes == e.nbytes && f->start == e.start &&
               f->count == e.count && f->unit_crcs == e.unit_crcs && f->epoch == e.epoch;
      });
      EXPECT_NE(same, found.end()) << "block " << e.counter;
    }
  }
}

TEST(LogIndex, RefusesBlocksOfUnknownDatasetsOrRanks) {
  auto index = make_sorted_range_index();
  index->add_dataset(2);
  EXPECT_THROW(index->insert(block(1, {0, 0}, {1, 1}, 0)), CorruptionError);
  EXPECT_THROW(index->insert(block(0, {0}, {1}, 0)), CorruptionError);
  logfmt::Writer w;
  block(0, {0, 0}, {1, 1}, 0).encode(w);
  logfmt::Reader r{w.bytes.data(), w.bytes.size(), 0, "test"};
  EXPECT_THROW(index->deserialize(r, 1, [](const BlockEntry&) { throw CorruptionError("refused"); }),
               CorruptionError);
  EXPECT_EQ(index->size(), 0u);  // a refused block is not inserted
}

// The placement tells every rank the size of each rank's entries before the
// blocks have their places (and checksums): encoded_size must be what encode writes.
TEST(LogIndex, EncodedSizeIsWhatEncodeWrites) {
  for (std::size_t dims = 0; dims <= 4; ++dims)
    for (std::size_t units = 0; units <= 3; ++units) {
      BlockEntry e = block(2, Dims(dims, 1), Dims(dims, 3), 7);
      e.unit_crcs.assign(units, 0xabcdef01u);
      h5loom::logfmt::Writer w;
      e.encode(w);
      EXPECT_EQ(w.bytes.size(), BlockEntry::encoded_size(dims, units)) << dims << " dimensions, " << units << " units";
    }
}
