// Conformance groups "dataset" and "datatype": N-D datasets, layouts, deferred
// and copying writes, every element type.
#include <cstddef>
#include <limits>
#include <numeric>

#include "conformance.hpp"

using namespace h5loom;
using conformance::env;
H5LOOM_CONFORMANCE_GROUP(dataset, "dataset");
H5LOOM_CONFORMANCE_GROUP(datatype, "datatype");

// Each rank writes a slab of `rows` along dimension 0 of an N-D dataset whose
// element at flat index i holds i * 0.5; every rank then reads the whole thing.
static void slab_round_trip(File& f, const std::string& name, Dims shape_tail, int rank, int size) {
  const uint64_t rows = 3;
  Dims shape{rows * size};
  shape.insert(shape.end(), shape_tail.begin(), shape_tail.end());
  auto ds = f.create_dataset<double>(name, shape);
  EXPECT_EQ(ds.shape(), shape);
  EXPECT_EQ(ds.ndim(), shape.size());
  EXPECT_EQ(ds.dtype(), Datatype::Float64);
  uint64_t row_elems = product(shape_tail);
  std::vector<double> mine(rows * row_elems);
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = (rank * rows * row_elems + i) * 0.5;
  Dims start(shape.size(), 0), count = shape;
  start[0] = rows * rank;
  count[0] = rows;
  ds.write(Selection::box(start, count), mine);
  auto all = ds.read<double>();
  ASSERT_EQ(all.size(), product(shape));
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], i * 0.5) << name << " element " << i;
}

TEST_F(dataset, OneToFourDimensions) {
  auto f = File::create(file_path(), options());
  slab_round_trip(f, "d1", {}, rank(), nranks());
  slab_round_trip(f, "d2", {5}, rank(), nranks());
  slab_round_trip(f, "d3", {4, 3}, rank(), nranks());
  slab_round_trip(f, "d4", {2, 3, 2}, rank(), nranks());
}

TEST_F(dataset, ChunkedExplicitAutoAndContiguous) {
  auto path = file_path();
  {
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.dtype = Datatype::Int32;
    spec.shape = {16, 8};
    spec.layout = Layout::Chunked;
    spec.layout_auto = false;
    spec.chunks = {4, 8};
    auto explicit_chunks = f.create_dataset("explicit", spec);
    EXPECT_EQ(explicit_chunks.layout(), Layout::Chunked);
    EXPECT_EQ(explicit_chunks.chunks(), (Dims{4, 8}));
    spec.chunks.clear();
    auto auto_chunks = f.create_dataset("auto", spec);
    EXPECT_EQ(auto_chunks.layout(), Layout::Chunked);
    ASSERT_EQ(auto_chunks.chunks().size(), 2u);
    for (int d = 0; d < 2; ++d) EXPECT_LE(auto_chunks.chunks()[d], spec.shape[d]);
    auto contiguous = f.create_dataset<int32_t>("contiguous", {16, 8});
    EXPECT_EQ(contiguous.layout(), Layout::Contiguous);
    std::vector<int32_t> data(16 * 8);
    std::iota(data.begin(), data.end(), 0);
    if (rank() == 0)
      for (auto* ds : {&explicit_chunks, &auto_chunks, &contiguous}) ds->write(Selection::all(), data);
    f.close();  // the flush point comes while `data` is still alive
  }
  auto f = File::open(path, Mode::Read, options());
  for (const char* n : {"explicit", "auto", "contiguous"}) {
    auto v = f.dataset(n).read<int32_t>();
    for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], int32_t(i)) << n;
  }
  EXPECT_EQ(f.dataset("explicit").chunks(), (Dims{4, 8}));
}

TEST_F(dataset, DeferredWriteReadsTheBufferAtTheFlushPoint) {
  auto f = File::create(file_path(), options());
  auto deferred = f.create_dataset<int32_t>("deferred", {uint64_t(nranks())});
  auto copied = f.create_dataset<int32_t>("copied", {uint64_t(nranks())});
  int32_t value = 1;
  auto mine = Selection::box({uint64_t(rank())}, {1});
  deferred.write(mine, &value, 1);      // keeps the pointer: the contract says hands off until flush
  copied.write_copy(mine, &value, 1);   // copies now
  value = 2;                            // allowed for the copy, documented as visible for the deferred one
  f.flush();
  for (auto v : deferred.read<int32_t>()) EXPECT_EQ(v, 2);
  for (auto v : copied.read<int32_t>()) EXPECT_EQ(v, 1);
}

TEST_F(dataset, UnevenNumbersOfWritesPerRank) {
  auto f = File::create(file_path(), options());
  const uint64_t n = 10;
  auto a = f.create_dataset<int64_t>("a", {n * nranks()});
  auto b = f.create_dataset<int64_t>("b", {n});
  // Rank r writes its block of `a` in r+1 pieces; only rank 0 writes `b`.
  std::vector<int64_t> block(n);
  std::iota(block.begin(), block.end(), int64_t(rank() * n));
  uint64_t pieces = uint64_t(rank()) + 1, done = 0;
  for (uint64_t p = 0; p < pieces; ++p) {
    uint64_t len = (p + 1 == pieces) ? n - done : n / pieces;
    a.write(Selection::box({rank() * n + done}, {len}), block.data() + done, len);
    done += len;
  }
  std::vector<int64_t> bvals(n, 7);
  if (rank() == 0) b.write(Selection::all(), bvals);
  auto all = a.read<int64_t>();
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], int64_t(i));
  EXPECT_EQ(b.read<int64_t>(), bvals);
}

// Many small copying writes, one row at a time (engines may coalesce them),
// mixed with rewrites of rows already written and with deferred writes: the
// last write of each element wins, whatever was merged or staged.
TEST_F(dataset, RowByRowWritesKeepTheirOrder) {
  auto f = File::create(file_path(), options());
  const uint64_t rows = 40, P = 4, C = 3, first = uint64_t(rank()) * rows;
  auto ds = f.create_dataset<double>("walkers", {rows * nranks(), P, C});
  auto line = f.create_dataset<int32_t>("line", {rows * P * nranks()});
  auto value = [](uint64_t w, uint64_t p, uint64_t c) { return double(w) * 100 + double(p) * 10 + double(c); };
  std::vector<double> row(P * C);
  for (uint64_t w = 0; w < rows; ++w) {
    for (uint64_t i = 0; i < P * C; ++i) row[i] = value(first + w, i / C, i % C);
    ds.write_copy(Selection::box({first + w, 0, 0}, {1, P, C}), row);
  }
  // Rewrites: row 5 (after the rows past it), then half of row 7 by a
  // deferred write, then row 7 again by a copying write after it.
  std::fill(row.begin(), row.end(), -5.0);
  ds.write_copy(Selection::box({first + 5, 0, 0}, {1, P, C}), row);
  std::vector<double> half(2 * C, -7.0);
  ds.write(Selection::box({first + 7, 0, 0}, {1, 2, C}), half.data(), half.size());
  std::vector<double> seven(P * C, -70.0);
  ds.write_copy(Selection::box({first + 7, 1, 0}, {1, 1, C}), seven.data(), C);
  // A 1-D array written in runs of 3 elements, each continuing the last.
  std::vector<int32_t> run(3);
  for (uint64_t at = 0; at < rows * P; at += 3) {
    uint64_t len = std::min<uint64_t>(3, rows * P - at);
    for (uint64_t i = 0; i < len; ++i) run[i] = int32_t(first * P + at + i);
    line.write_copy(Selection::box({first * P + at}, {len}), run.data(), len);
  }
  f.flush();
  for (int pass = 0; pass < 2; ++pass) {  // before and after reopening
    auto back = ds.read<double>();
    for (uint64_t w = 0; w < rows * nranks(); ++w)
      for (uint64_t p = 0; p < P; ++p)
        for (uint64_t c = 0; c < C; ++c) {
          double want = value(w, p, c);
          if (w % rows == 5) want = -5.0;
          if (w % rows == 7 && p == 0) want = -7.0;
          if (w % rows == 7 && p == 1) want = -70.0;
          ASSERT_EQ(back[(w * P + p) * C + c], want) << "walker " << w << " particle " << p << " pass " << pass;
        }
    // A part of the rows, across the rank boundaries.
    auto part = ds.read<double>(Selection::box({rows / 2, 1, 1}, {rows * (nranks() - 1) + 1, 2, 2}));
    EXPECT_EQ(part[0], value(rows / 2, 1, 1));
    auto l = line.read<int32_t>();
    for (uint64_t i = 0; i < l.size(); ++i) ASSERT_EQ(l[i], int32_t(i)) << "line element " << i;
    if (pass == 0) {
      f.close();
      f = File::open(file_path(), Mode::Read, options());
      ds = f.dataset("walkers");
      line = f.dataset("line");
    }
  }
}

TEST_F(dataset, ZeroSizedDataset) {
  auto f = File::create(file_path(), options());
  auto ds = f.create_dataset<float>("empty", {0});
  EXPECT_EQ(ds.shape(), Dims{0});
  EXPECT_TRUE(ds.read<float>().empty());
}

TEST_F(dataset, InfoSurvivesReopen) {
  auto path = file_path();
  {
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.dtype = Datatype::UInt16;
    spec.shape = {6, 4};
    spec.max_shape = {kUnlimited, 4};
    spec.chunks = {3, 4};
    f.create_dataset("grid/u", spec);
  }
  auto f = File::open(path, Mode::Read, options());
  auto ds = f.dataset("grid/u");
  EXPECT_EQ(ds.dtype(), Datatype::UInt16);
  EXPECT_EQ(ds.shape(), (Dims{6, 4}));
  EXPECT_EQ(ds.max_shape(), (Dims{kUnlimited, 4}));
  EXPECT_EQ(ds.layout(), Layout::Chunked);
  EXPECT_EQ(ds.chunks(), (Dims{3, 4}));
  EXPECT_EQ(ds.name(), "u");
}

template <class T>
static void type_round_trip(File& f, int rank, int size) {
  using L = std::numeric_limits<T>;
  std::vector<T> mine = {L::lowest(), L::max(), static_cast<T>(rank), L::min(), static_cast<T>(L::max() / 3)};
  const uint64_t n = mine.size();
  std::string name = datatype_name(datatype_of<T>());
  auto ds = f.create_dataset<T>(name, {n * size});
  EXPECT_EQ(ds.dtype(), datatype_of<T>());
  ds.write(Selection::box({n * rank}, {n}), mine);
  auto all = ds.template read<T>();
  for (int r = 0; r < size; ++r) {
    std::vector<T> expect = {L::lowest(), L::max(), static_cast<T>(r), L::min(), static_cast<T>(L::max() / 3)};
    for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(all[r * n + i], expect[i]) << name << " rank " << r << " item " << i;
  }
}

TEST_F(datatype, EveryElementTypeRoundTripsItsExtremes) {
  auto path = file_path();
  auto f = File::create(path, options());
  type_round_trip<int8_t>(f, rank(), nranks());
  type_round_trip<int16_t>(f, rank(), nranks());
  type_round_trip<int32_t>(f, rank(), nranks());
  type_round_trip<int64_t>(f, rank(), nranks());
  type_round_trip<uint8_t>(f, rank(), nranks());
  type_round_trip<uint16_t>(f, rank(), nranks());
  type_round_trip<uint32_t>(f, rank(), nranks());
  type_round_trip<uint64_t>(f, rank(), nranks());
  type_round_trip<float>(f, rank(), nranks());
  type_round_trip<double>(f, rank(), nranks());
}

// IEEE half precision: its extremes (as bits: the largest, the smallest
// normal and subnormal, negative zero), a rank's value, an attribute.
TEST_F(datatype, HalfPrecisionRoundTrips) {
  auto path = file_path();
  const std::vector<uint16_t> bits = {0xfbff, 0x7bff, 0x0400, 0x0001, 0x8000, 0x3c00};  // -65504 ... 1.0
  {
    auto f = File::create(path, options());
    auto ds = f.create_dataset<Float16>("half", {(bits.size() + 1) * nranks()});
    std::vector<Float16> mine;
    for (auto b : bits) mine.push_back(Float16::from_bits(b));
    mine.push_back(Float16(rank() + 0.5));
    const uint64_t n = mine.size();
    ds.write(Selection::box({n * rank()}, {n}), std::move(mine));  // h5loom keeps the vector until the flush
    ds.set_attribute("scale", Float16(0.25));
    ds.set_attribute("steps", std::vector<Float16>{Float16(1), Float16(2)});
  }
  auto f = File::open(path, Mode::Read, options());
  auto ds = f.dataset("half");
  EXPECT_EQ(ds.dtype(), Datatype::Float16);
  auto all = ds.read<Float16>();
  ASSERT_EQ(all.size(), (bits.size() + 1) * nranks());
  for (int r = 0; r < nranks(); ++r) {
    for (std::size_t i = 0; i < bits.size(); ++i)
      EXPECT_EQ(all[r * (bits.size() + 1) + i].bits(), bits[i]) << "rank " << r << " item " << i;
    EXPECT_EQ(float(all[r * (bits.size() + 1) + bits.size()]), r + 0.5f);
  }
  EXPECT_EQ(ds.attribute("scale").as<double>(), 0.25);  // attributes convert to any number type
  EXPECT_EQ(ds.attribute("steps").as_vector<Float16>()[1].bits(), 0x4000);
}

TEST_F(datatype, TypesSurviveReopen) {
  auto path = file_path();
  {
    auto f = File::create(path, options());
    for (Datatype t : kAllDatatypes) {
      DatasetSpec spec;
      spec.dtype = t;
      spec.shape = {1};
      f.create_dataset(datatype_name(t), spec);
    }
  }
  auto f = File::open(path, Mode::Read, options());
  for (Datatype t : kAllDatatypes) EXPECT_EQ(f.dataset(datatype_name(t)).dtype(), t);
}

// Numbers stored big-endian (HDF5's ..BE types, numpy's '>f8'): the type says
// so after reopen - a scalar, an enum, a compound's member, an attribute - and
// programs read and write them in the host's order, with or without the flag.
TEST_F(datatype, BigEndianTypesAreKeptAndReadInHostOrder) {
  auto path = file_path();
  const Datatype f8be = Datatype::Float64.with_byte_order(ByteOrder::Big);
  const Datatype i16be = Datatype::Int16.with_byte_order(ByteOrder::Big);
  const Datatype colour = Datatype::enumeration(Scalar::UInt16, {{"red", 1}, {"blue", 513}}).with_byte_order(ByteOrder::Big);
  struct Rec {
    int32_t id;
    double x;
  };
  const Datatype rec = Datatype::compound(
      {{"id", offsetof(Rec, id), Datatype::Int32.with_byte_order(ByteOrder::Big)}, {"x", offsetof(Rec, x), Datatype::Float64}},
      sizeof(Rec));
  const uint64_t n = uint64_t(nranks());
  {
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.shape = {n};
    spec.dtype = f8be;
    auto x = f.create_dataset("x", spec);
    const double v = 1.5 + rank();
    x.write_raw(Selection::box({uint64_t(rank())}, {1}), Datatype::Float64, &v, 1, true);  // host order, no flag
    spec.dtype = colour;
    auto c = f.create_dataset("colour", spec);
    const uint16_t blue = 513;
    c.write_raw(Selection::box({uint64_t(rank())}, {1}), colour, &blue, 1, true);  // the flagged type: the same
    spec.dtype = rec;
    auto r = f.create_dataset("records", spec);
    Rec mine{1000 + rank(), -0.25 * rank()};
    r.write_raw(Selection::box({uint64_t(rank())}, {1}), rec.in_memory(), &mine, 1, true);
    const int16_t steps[2] = {258, -2};
    x.set_attribute("steps", AttributeValue::from_raw(AttributeValue::Kind::Array, i16be, 2, steps));
  }
  auto f = File::open(path, Mode::Read, options());
  auto x = f.dataset("x");
  EXPECT_EQ(x.dtype(), f8be) << x.dtype().name();
  EXPECT_EQ(x.dtype().name(), "float64be");
  auto xs = x.read<double>();
  for (int r = 0; r < nranks(); ++r) EXPECT_EQ(xs[r], 1.5 + r);
  auto c = f.dataset("colour");
  EXPECT_EQ(c.dtype(), colour) << c.dtype().name();
  std::vector<uint16_t> cs(n);
  c.read_raw(Selection::all(), c.dtype(), cs.data(), n);
  for (auto v : cs) EXPECT_EQ(v, 513);
  auto r = f.dataset("records");
  EXPECT_EQ(r.dtype(), rec) << r.dtype().name();
  std::vector<Rec> rs(n);
  r.read_raw(Selection::all(), rec, rs.data(), n);
  for (int k = 0; k < nranks(); ++k) {
    EXPECT_EQ(rs[k].id, 1000 + k);
    EXPECT_EQ(rs[k].x, -0.25 * k);
  }
  const AttributeValue steps = x.attribute("steps");
  EXPECT_EQ(steps.dtype(), i16be);
  EXPECT_EQ(steps.as_vector<int>(), (std::vector<int>{258, -2}));
  // Names read back, numpy's spelling too; the flag is for numbers only.
  EXPECT_EQ(datatype_from_name(">f8"), f8be);
  EXPECT_EQ(datatype_from_name(colour.name()), colour);
  EXPECT_EQ(datatype_from_name(rec.name()), rec);
  EXPECT_EQ(datatype_from_name("double"), Datatype::Float64);
  EXPECT_THROW(Datatype::string(4).with_byte_order(ByteOrder::Big), DatatypeError);
}

TEST_F(datatype, RawWriteWithRuntimeType) {
  auto f = File::create(file_path(), options());
  DatasetSpec spec;
  spec.dtype = datatype_from_name("<u4");
  spec.shape = {uint64_t(nranks())};
  auto ds = f.create_dataset("raw", spec);
  uint32_t v = 4000000000u - rank();
  ds.write_raw(Selection::box({uint64_t(rank())}, {1}), Datatype::UInt32, &v, 1, false);
  auto all = ds.read<uint32_t>();
  for (int r = 0; r < nranks(); ++r) EXPECT_EQ(all[r], 4000000000u - r);
}

// Writes of different ranks to the same elements, one after the other with a
// read between them (a flush point that only makes data visible): the later
// write wins, in this run and after reopening.
TEST_F(dataset, LaterWritesOfAnotherRankWinAcrossAVisibleFlush) {
  if (nranks() < 2) GTEST_SKIP() << "needs two ranks";
  const auto path = file_path();
  {
    auto f = File::create(path, options());
    auto ds = f.create_dataset<int32_t>("d", {4});
    std::vector<int32_t> ones(4, 1), twos(4, 2);
    if (rank() == 1) ds.write_copy(Selection::all(), ones);
    EXPECT_EQ(ds.read<int32_t>(), ones);  // a visible flush
    if (rank() == 0) ds.write_copy(Selection::all(), twos);
    EXPECT_EQ(ds.read<int32_t>(), twos);
    f.flush(FlushLevel::Visible);
    if (rank() == 1) ds.write_copy(Selection::box({2}, {2}), std::vector<int32_t>{3, 3});
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.dataset("d").read<int32_t>(), (std::vector<int32_t>{2, 2, 3, 3}));
}
