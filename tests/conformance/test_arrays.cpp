// Conformance group "arrays": HDF5's array datatype - a fixed block of
// elements in each element - as a dataset's type, as a compound member, and as
// an attribute's type; written by every rank, read back whole and strided,
// the same type after reopen; bad arrays refused.
#include <cstddef>
#include <cstring>

#include "conformance.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(arrays, "arrays");

namespace {

// A particle whose position and a 2x2 tensor are arrays inside the record.
struct Body {
  int32_t id;
  double pos[3];
  float stress[2][2];
};

Datatype body_type() {
  return Datatype::compound({{"id", offsetof(Body, id), Datatype::Int32},
                             {"pos", offsetof(Body, pos), Datatype::array(Datatype::Float64, {3})},
                             {"stress", offsetof(Body, stress), Datatype::array(Datatype::Float32, {2, 2})}},
                            sizeof(Body));
}

Body body(int rank, int i) {
  Body b;
  std::memset(&b, 0, sizeof b);
  b.id = 100 * rank + i;
  for (int d = 0; d < 3; ++d) b.pos[d] = rank + 0.5 * i + 0.125 * d;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) b.stress[r][c] = float(10 * rank + i + r - c);
  return b;
}

}  // namespace

TEST_F(arrays, ArrayElementsAndMembersRoundTrip) {
  const uint64_t n = 3;
  const auto path = file_path();
  const Datatype vec3 = Datatype::array(Datatype::Float64, {3});
  const Datatype type = body_type();
  {
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.dtype = vec3;
    spec.shape = {n * uint64_t(nranks())};
    auto velocity = f.create_dataset("velocity", spec);
    EXPECT_EQ(velocity.dtype(), vec3);
    std::vector<double> mine(3 * n);
    for (uint64_t k = 0; k < mine.size(); ++k) mine[k] = 1000.0 * rank() + double(k);
    velocity.write_raw(Selection::box({n * rank()}, {n}), vec3, mine.data(), n, /*copy=*/true);
    spec.dtype = type;
    auto bodies = f.create_dataset("bodies", spec);
    std::vector<Body> records;
    for (int i = 0; i < int(n); ++i) records.push_back(body(rank(), i));
    bodies.write_raw(Selection::box({n * rank()}, {n}), type, records.data(), n, /*copy=*/true);
    const int32_t origin[2][3] = {{1, 2, 3}, {4, 5, 6}};
    bodies.set_attribute("origin", AttributeValue::from_raw(AttributeValue::Kind::Scalar,
                                                            Datatype::array(Datatype::Int32, {2, 3}), 1, origin));
  }
  auto f = File::open(path, Mode::Read, options());
  auto velocity = f.dataset("velocity");
  EXPECT_EQ(velocity.dtype(), vec3) << velocity.dtype().name();
  EXPECT_EQ(velocity.dtype().name(), "array<float64>[3]");
  std::vector<double> all(3 * n * nranks());
  velocity.read_raw(Selection::all(), vec3, all.data(), n * nranks());
  for (int r = 0; r < nranks(); ++r)
    for (uint64_t k = 0; k < 3 * n; ++k) EXPECT_EQ(all[3 * n * r + k], 1000.0 * r + double(k));
  auto bodies = f.dataset("bodies");
  EXPECT_EQ(bodies.dtype(), type) << bodies.dtype().name();
  // Every other record, across the ranks' parts.
  const uint64_t half = (n * nranks() + 1) / 2;
  std::vector<Body> every_other(half);
  bodies.read_raw(Selection::hyperslab({0}, {half}, {2}), type, every_other.data(), half);
  for (uint64_t k = 0; k < half; ++k) {
    const Body want = body(int(2 * k / n), int(2 * k % n));
    EXPECT_EQ(every_other[k].id, want.id);
    EXPECT_EQ(std::memcmp(every_other[k].pos, want.pos, sizeof want.pos), 0);
    EXPECT_EQ(std::memcmp(every_other[k].stress, want.stress, sizeof want.stress), 0);
  }
  const AttributeValue origin = bodies.attribute("origin");
  EXPECT_EQ(origin.dtype(), Datatype::array(Datatype::Int32, {2, 3}));
  ASSERT_EQ(origin.size(), 1u);
  int32_t back[6];
  std::memcpy(back, origin.data(), sizeof back);
  for (int k = 0; k < 6; ++k) EXPECT_EQ(back[k], k + 1);
}

TEST_F(arrays, BadArraysAreRefused) {
  EXPECT_THROW(Datatype::array(Datatype::Float64, {}), DatatypeError);
  EXPECT_THROW(Datatype::array(Datatype::Float64, {2, 0}), DatatypeError);
  EXPECT_THROW(Datatype::array(Datatype::varstring(), {2}), DatatypeError);
  EXPECT_THROW(Datatype::array(Datatype::Float64, std::vector<uint64_t>(33, 1)), DatatypeError);
  EXPECT_THROW(Datatype::array(Datatype::Float64, {uint64_t(1) << 40}), DatatypeError);
  // A name that reads back as the same type, nested.
  const Datatype nested = Datatype::array(Datatype::array(Datatype::UInt8, {2}), {3, 4});
  EXPECT_EQ(datatype_from_name(nested.name()), nested);
  EXPECT_EQ(nested.size(), 24u);
  // A memory type that is not the dataset's (a float32 vector for a float64 one) is refused.
  auto f = File::create(file_path(), options());
  DatasetSpec spec;
  spec.dtype = Datatype::array(Datatype::Float64, {3});
  spec.shape = {2};
  auto ds = f.create_dataset("v", spec);
  std::vector<float> wrong(6);
  EXPECT_THROW(ds.write_raw(Selection::all(), Datatype::array(Datatype::Float32, {3}), wrong.data(), 2, true),
               DatatypeError);
}
