// Conformance group "opaque": HDF5's opaque datatype - bytes h5loom never
// interprets, with a tag saying what they are - as a dataset's type written by
// every rank, as a compound member and as an attribute's type; the bytes and
// the tag come back as written after reopen, a type with another tag or size
// is refused as the memory type, bad tags and sizes are refused.
#include <cstddef>
#include <cstring>
#include <string>

#include "conformance.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(opaque, "opaque");

namespace {

// 13 bytes (an odd size, so nothing lines up by accident) of a pattern per element.
constexpr std::size_t kSize = 13;
void fill_element(unsigned char* out, int rank, uint64_t i) {
  for (std::size_t b = 0; b < kSize; ++b) out[b] = static_cast<unsigned char>(31 * rank + 7 * i + b * b);
}

struct Sample {
  int64_t time;
  unsigned char blob[kSize];
};

}  // namespace

TEST_F(opaque, BytesAndTagsRoundTrip) {
  const uint64_t n = 4;
  const auto path = file_path();
  const Datatype blob = Datatype::opaque(kSize, "instrument frame v2");
  const Datatype untagged = Datatype::opaque(3);
  const Datatype sample = Datatype::compound(
      {{"time", offsetof(Sample, time), Datatype::Int64}, {"blob", offsetof(Sample, blob), blob}}, sizeof(Sample));
  {
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.dtype = blob;
    spec.shape = {n * uint64_t(nranks())};
    auto frames = f.create_dataset("frames", spec);
    EXPECT_EQ(frames.dtype(), blob);
    std::vector<unsigned char> mine(kSize * n);
    for (uint64_t i = 0; i < n; ++i) fill_element(&mine[kSize * i], rank(), i);
    frames.write_raw(Selection::box({n * rank()}, {n}), blob, mine.data(), n, /*copy=*/true);
    spec.dtype = sample;
    spec.shape = {uint64_t(nranks())};
    auto samples = f.create_dataset("samples", spec);
    Sample s;
    std::memset(&s, 0, sizeof s);
    s.time = 1000 + rank();
    fill_element(s.blob, rank(), 99);
    samples.write_raw(Selection::box({uint64_t(rank())}, {1}), sample, &s, 1, /*copy=*/true);
    const unsigned char magic[3] = {0xca, 0xfe, 0x00};
    frames.set_attribute("magic", AttributeValue::from_raw(AttributeValue::Kind::Scalar, untagged, 1, magic));
  }
  auto f = File::open(path, Mode::Read, options());
  auto frames = f.dataset("frames");
  EXPECT_EQ(frames.dtype(), blob) << frames.dtype().name();
  EXPECT_EQ(frames.dtype().opaque_tag(), "instrument frame v2");
  std::vector<unsigned char> all(kSize * n * nranks());
  frames.read_raw(Selection::all(), blob, all.data(), n * nranks());
  for (int r = 0; r < nranks(); ++r)
    for (uint64_t i = 0; i < n; ++i) {
      unsigned char want[kSize];
      fill_element(want, r, i);
      EXPECT_EQ(std::memcmp(&all[kSize * (n * r + i)], want, kSize), 0) << "rank " << r << " element " << i;
    }
  auto samples = f.dataset("samples");
  EXPECT_EQ(samples.dtype(), sample) << samples.dtype().name();
  std::vector<Sample> back(nranks());
  samples.read_raw(Selection::all(), sample, back.data(), back.size());
  for (int r = 0; r < nranks(); ++r) {
    unsigned char want[kSize];
    fill_element(want, r, 99);
    EXPECT_EQ(back[r].time, 1000 + r);
    EXPECT_EQ(std::memcmp(back[r].blob, want, kSize), 0);
  }
  const AttributeValue magic = frames.attribute("magic");
  EXPECT_EQ(magic.dtype(), untagged) << magic.dtype().name();
  ASSERT_EQ(magic.size(), 1u);
  EXPECT_EQ(std::memcmp(magic.data(), "\xca\xfe\x00", 3), 0);
}

TEST_F(opaque, BadOpaqueTypesAreRefused) {
  EXPECT_THROW(Datatype::opaque(0), DatatypeError);
  EXPECT_THROW(Datatype::opaque(4, std::string(256, 't')), DatatypeError);
  EXPECT_THROW(Datatype::opaque(4, std::string("a\0b", 3)), DatatypeError);
  // Names read back as the same type, tags with delimiters and spaces too.
  for (const Datatype& t : {Datatype::opaque(5), Datatype::opaque(8, "NUMPY:<M8[s]"), Datatype::opaque(2, " a, b ")})
    EXPECT_EQ(datatype_from_name(t.name()), t) << t.name();
  EXPECT_EQ(datatype_from_name("V6"), Datatype::opaque(6));
  EXPECT_NE(Datatype::opaque(4, "x"), Datatype::opaque(4, "y"));
  // Another tag or size as the memory type is refused: opaque bytes never convert.
  auto f = File::create(file_path(), options());
  DatasetSpec spec;
  spec.dtype = Datatype::opaque(4, "x");
  spec.shape = {2};
  auto ds = f.create_dataset("o", spec);
  unsigned char bytes[8] = {};
  EXPECT_THROW(ds.write_raw(Selection::all(), Datatype::opaque(4, "y"), bytes, 2, true), DatatypeError);
  EXPECT_THROW(ds.write_raw(Selection::all(), Datatype::opaque(2, "x"), bytes, 4, true), DatatypeError);
}
