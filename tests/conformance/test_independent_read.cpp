// Conformance group "independent_read": one rank reads while the others do
// not call at all (no hang), seeing what the last flush point made visible;
// a rank with unflushed writes is refused instead of reading stale data.
#include "conformance.hpp"

using namespace h5loom;
H5LOOM_CONFORMANCE_GROUP(independent_read, "independent_read");

namespace {

std::vector<int64_t> expected(int nranks, uint64_t per_rank) {
  std::vector<int64_t> v(per_rank * uint64_t(nranks));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = int64_t(1000 * (i / per_rank) + i % per_rank);
  return v;
}

}  // namespace

TEST_F(independent_read, OneRankReadsAloneAfterAFlush) {
  const uint64_t per = 5;
  const auto path = file_path();
  auto f = File::create(path, options());
  DatasetSpec chunked;
  chunked.dtype = Datatype::Int64;
  chunked.shape = {per * uint64_t(nranks())};
  chunked.max_shape = {kUnlimited};
  chunked.chunks = {3};
  auto a = f.create_dataset("chunked", chunked);
  auto b = f.create_dataset<int64_t>("contiguous", {per * uint64_t(nranks())});
  std::vector<int64_t> mine(per);
  for (uint64_t i = 0; i < per; ++i) mine[i] = int64_t(1000 * rank() + i);
  a.write(Selection::box({per * rank()}, {per}), mine.data(), per);
  b.write(Selection::box({per * rank()}, {per}), mine.data(), per);
  // Not flushed yet: this rank's own writes would be missed.
  EXPECT_THROW(a.read_independent<int64_t>(), UsageError);
  f.flush();
  const auto all = expected(nranks(), per);
  if (rank() == 0) {  // the others do not call at all
    EXPECT_EQ(a.read_independent<int64_t>(), all);
    EXPECT_EQ(b.read_independent<int64_t>(), all);
  }
  if (rank() == nranks() - 1) {  // a part written by another rank, strided
    const uint64_t half = (all.size() + 1) / 2;
    auto part = a.read_independent<int64_t>(Selection::hyperslab({0}, {half}, {2}));
    ASSERT_EQ(part.size(), half);
    for (uint64_t k = 0; k < half; ++k) EXPECT_EQ(part[k], all[2 * k]);
  }
  // Collective calls still line up after ranks read alone.
  f.set_attribute("done", 1);
  EXPECT_EQ(a.read<int64_t>(), all);
}

TEST_F(independent_read, AfterReopenAndOnOneRankOnly) {
  const uint64_t per = 4;
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    auto d = f.create_dataset<int64_t>("g/d", {per * uint64_t(nranks())});
    std::vector<int64_t> mine(per);
    for (uint64_t i = 0; i < per; ++i) mine[i] = int64_t(1000 * rank() + i);
    d.write_copy(Selection::box({per * rank()}, {per}), mine);
  }
  auto f = File::open(path, Mode::Read, options());
  auto d = f.dataset("g/d");
  const auto all = expected(nranks(), per);
  if (rank() == nranks() - 1) {
    EXPECT_EQ(d.read_independent<int64_t>(), all);
    // A bad selection is this rank's error alone.
    EXPECT_THROW(d.read_independent<int64_t>(Selection::box({per * uint64_t(nranks())}, {1})), SelectionError);
  }
  EXPECT_EQ(d.read<int64_t>(), all);
}
