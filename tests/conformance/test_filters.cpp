// Conformance group "filters": HDF5's filter pipeline on datasets (shuffle,
// deflate, Fletcher-32) - kept after reopen in order with their ids and flags
// (parameters as given, or as HDF5 completes them: shuffle adds the element size),
// values written by every rank read back, chunked when the engine chooses the
// layout, kept by copies; a contiguous layout or a filter this HDF5 lacks refused.
#include "conformance.hpp"
#include "h5loom/tools.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(filters, "filters");

namespace {

// The filters' ids, flags and deflate's level: what every engine keeps as given.
std::vector<std::pair<uint32_t, bool>> ids_of(const std::vector<Filter>& filters) {
  std::vector<std::pair<uint32_t, bool>> out;
  for (const auto& f : filters) out.emplace_back(f.id, f.optional);
  return out;
}

std::vector<Filter> pipeline() {
  Filter shuffle, deflate, checksum;
  shuffle.id = Filter::kShuffle;
  deflate.id = Filter::kDeflate;
  deflate.params = {4};
  checksum.id = Filter::kFletcher32;
  return {shuffle, deflate, checksum};
}

}  // namespace

TEST_F(filters, PipelinesAreKeptAndValuesReadBack) {
  const auto path = file_path();
  const uint64_t n = 1000;  // per rank: compressible, several chunks
  {
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.dtype = Datatype::Float64;
    spec.shape = {n * uint64_t(nranks())};
    spec.chunks = {256};
    spec.layout = Layout::Chunked;
    spec.layout_auto = false;
    spec.filters = pipeline();
    auto ds = f.create_dataset("smooth", spec);
    std::vector<double> mine(n);
    for (uint64_t i = 0; i < n; ++i) mine[i] = double((rank() * n + i) / 10);
    ds.write(Selection::box({n * rank()}, {n}), std::move(mine));  // h5loom keeps it until the flush
    DatasetSpec automatic;  // the engine picks the layout: chunked, for the filters
    automatic.dtype = Datatype::Int32;
    automatic.shape = {64};
    automatic.filters = {pipeline()[1]};
    auto a = f.create_dataset("automatic", automatic);
    if (rank() == 0) a.write(Selection::all(), std::vector<int32_t>(64, 7));
  }
  auto f = File::open(path, Mode::ReadWrite, options());
  auto ds = f.dataset("smooth");
  EXPECT_EQ(ids_of(ds.filters()), ids_of(pipeline()));
  ASSERT_EQ(ds.filters().size(), 3u);
  EXPECT_EQ(ds.filters()[1].params, std::vector<uint32_t>{4});
  EXPECT_EQ(ds.layout(), Layout::Chunked);
  auto all = ds.read<double>();
  ASSERT_EQ(all.size(), n * nranks());
  for (uint64_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], double(i / 10)) << "element " << i;
  auto a = f.dataset("automatic");
  EXPECT_EQ(a.layout(), Layout::Chunked);
  ASSERT_EQ(a.filters().size(), 1u);
  EXPECT_EQ(a.filters()[0].id, Filter::kDeflate);
  EXPECT_EQ(a.read<int32_t>(), std::vector<int32_t>(64, 7));
  copy_object(f, "/smooth", f, "/copy");
  EXPECT_EQ(ids_of(f.dataset("copy").filters()), ids_of(pipeline()));
  EXPECT_EQ(f.dataset("copy").read<double>(), all);
}

TEST_F(filters, ContiguousLayoutsAndMissingFiltersAreRefused) {
  auto f = File::create(file_path(), options());
  DatasetSpec spec;
  spec.dtype = Datatype::Float32;
  spec.shape = {16};
  spec.layout = Layout::Contiguous;
  spec.layout_auto = false;
  spec.filters = pipeline();
  EXPECT_THROW(f.create_dataset("contiguous", spec), UsageError);
  Filter missing;
  missing.id = 31999;  // registered with The HDF Group to no one this HDF5 knows
  spec.layout_auto = true;
  spec.filters = {missing};
  EXPECT_THROW(f.create_dataset("missing", spec), UsageError);
  spec.filters = {Filter{}};  // id 0
  EXPECT_THROW(f.create_dataset("zero", spec), UsageError);
  EXPECT_FALSE(f.exists("contiguous") || f.exists("missing") || f.exists("zero"));
}
