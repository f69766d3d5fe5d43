#include <gtest/gtest.h>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "h5loom/types.hpp"
#include "h5loom/variable_length.hpp"

using namespace h5loom;

TEST(Datatype, NamesAndNumpyCodes) {
  for (Datatype t : kAllDatatypes) EXPECT_EQ(datatype_from_name(datatype_name(t)), t);
  EXPECT_EQ(datatype_from_name("<f8"), Datatype::Float64);
  EXPECT_EQ(datatype_from_name("f4"), Datatype::Float32);
  EXPECT_EQ(datatype_from_name("u1"), Datatype::UInt8);
  EXPECT_EQ(datatype_from_name("INT64"), Datatype::Int64);
  EXPECT_EQ(datatype_size(Datatype::UInt16), 2u);
  EXPECT_EQ(datatype_of<long long>(), Datatype::Int64);
  try {
    datatype_from_name(">f16");
    FAIL();
  } catch (const DatatypeError& e) {
    EXPECT_NE(std::string(e.what()).find("'>f16'"), std::string::npos);
  }
}

TEST(AttributeValue, KindsAndConversions) {
  AttributeValue s(3.5f);
  EXPECT_EQ(s.kind(), AttributeValue::Kind::Scalar);
  EXPECT_EQ(s.dtype(), Datatype::Float32);
  EXPECT_EQ(s.as<int>(), 3);
  AttributeValue a(std::vector<uint8_t>{1, 2, 255});
  EXPECT_EQ(a.kind(), AttributeValue::Kind::Array);
  EXPECT_EQ(a.as_vector<int>(), (std::vector<int>{1, 2, 255}));
  EXPECT_EQ(a.to_string(), "[1, 2, 255]");
  AttributeValue t("hi");
  EXPECT_TRUE(t.is_string());
  EXPECT_EQ(t.to_string(), "\"hi\"");
  EXPECT_THROW(t.as<double>(), DatatypeError);
  EXPECT_EQ(AttributeValue(int64_t(-5)), AttributeValue(int64_t(-5)));
  EXPECT_NE(AttributeValue(int64_t(-5)), AttributeValue(int32_t(-5)));
}

// A number converts only to a type that holds it: else static_cast is
// undefined (a float past int64's range, a NaN) or changes the value (300
// as uint8). Found by the log reader's fuzzer: a damaged float attribute of
// -1.93e26 read as int64.
TEST(AttributeValue, ConvertsOnlyToATypeThatHoldsTheValue) {
  auto refused = [](auto&& read, const std::string& part) {
    try {
      read();
      ADD_FAILURE() << "no error for " << part;
    } catch (const DatatypeError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const float big = -1.93428e26f;
  refused([&] { AttributeValue(big).as<int64_t>(); }, "attribute value -1.93428e+26 (element 0 of its float32 values) is not a value of int64");
  refused([&] { AttributeValue(std::vector<double>{1.0, std::nan("")}).as_vector<int32_t>(); }, "value nan (element 1");
  EXPECT_TRUE(std::isnan(AttributeValue(std::nan("")).as<double>()));
  refused([&] { AttributeValue(int64_t(300)).as<uint8_t>(); }, "value 300 (element 0 of its int64 values) is not a value of uint8");
  EXPECT_EQ(AttributeValue(int64_t(300)).as<int16_t>(), 300);
  refused([&] { AttributeValue(int64_t(-1)).as<uint64_t>(); }, "not a value of uint64");
  refused([&] { AttributeValue(UINT64_MAX).as<int64_t>(); }, "not a value of int64");
  EXPECT_EQ(AttributeValue(UINT64_MAX).as<uint64_t>(), UINT64_MAX);
  EXPECT_EQ(AttributeValue(INT64_MAX).as<int64_t>(), INT64_MAX);
  EXPECT_EQ(AttributeValue(INT64_MIN).as<int64_t>(), INT64_MIN);
  EXPECT_EQ(AttributeValue(-2.9).as<int>(), -2);  // toward zero, as C++ converts
  EXPECT_EQ(AttributeValue(-0.5).as<uint32_t>(), 0u);
  refused([&] { AttributeValue(9223372036854775808.0).as<int64_t>(); }, "not a value of int64");  // 2^63
  EXPECT_EQ(AttributeValue(-9223372036854775808.0).as<int64_t>(), INT64_MIN);
  refused([&] { AttributeValue(1e300).as<float>(); }, "value 1e+300 (element 0 of its float64 values) is not a value of float32");
  EXPECT_TRUE(std::isinf(AttributeValue(HUGE_VAL).as<float>()));
  refused([&] { AttributeValue(Float16::from_bits(0x7c00)).as<int32_t>(); }, "value inf (element 0 of its float16");
  EXPECT_EQ(AttributeValue(Float16(2.5)).as<int32_t>(), 2);
}

TEST(Dims, Formatting) {
  EXPECT_EQ(dims_to_string({3, kUnlimited}), "[3, inf]");
  EXPECT_EQ(product({2, 3, 4}), 24u);
}

TEST(Datatype, CompoundsRefuseImpossibleOffsets) {
  EXPECT_THROW(Datatype::compound({{"x", ~std::size_t{0} - 3, Datatype::Float64}}, 16), DatatypeError);
  EXPECT_THROW(Datatype::compound({{"x", 12, Datatype::Float64}}, 16), DatatypeError);
  EXPECT_THROW(datatype_from_name("compound[16]{x: float64 @18446744073709551612}"), DatatypeError);
  auto t = Datatype::compound({{"a, b", 0, Datatype::Int32}, {"q\"", 4, Datatype::string(3)}});
  EXPECT_EQ(datatype_from_name(t.name()), t) << t.name();
}

TEST(Datatype, VariableLengthStringsAndReferencesByName) {
  const Datatype types[] = {Datatype::varstring(), Datatype::varstring(Datatype::Charset::Utf8), Datatype::reference(),
                            Datatype::compound({{"ref", 0, Datatype::reference()}, {"dim", 8, Datatype::Int32}})};
  for (const auto& t : types) EXPECT_EQ(datatype_from_name(t.name()), t) << t.name();
  EXPECT_EQ(Datatype::varstring().name(), "string");
  EXPECT_EQ(datatype_from_name("utf8"), datatype_of<std::string>());
  EXPECT_NE(Datatype::varstring(), Datatype::string(8));
  EXPECT_TRUE(types[3].has_references());
  EXPECT_FALSE(Datatype::compound({{"x", 0, Datatype::Float64}}).has_references());
  EXPECT_TRUE(datatype_from_name("compound[32]{s: string @0}").has_variable_length_parts());  // a char* member
  EXPECT_THROW(AttributeValue::from_raw(AttributeValue::Kind::Array, Datatype::varstring(), 0, nullptr), DatatypeError);
}

TEST(Datatype, VariableLengthSequencesAreDescribed) {
  const auto floats = Datatype::sequence(Datatype::Float32);
  EXPECT_EQ(floats.name(), "vlen<float32>");
  EXPECT_EQ(floats.size(), sizeof(VarSequence));
  EXPECT_EQ(floats.sequence_element(), Datatype::Float32);
  EXPECT_TRUE(floats.has_variable_length_parts());
  EXPECT_FALSE(Datatype::varstring().has_variable_length_parts());  // a whole element's string: datasets hold it
  // HDF5's layout: a variable-length string member is a char*, a sequence an hvl_t.
  const auto row = Datatype::compound({{"name", 0, Datatype::varstring()},
                                       {"hits", 8, Datatype::sequence(Datatype::Int32.with_byte_order(ByteOrder::Big))},
                                       {"x", 24, Datatype::Float64}});
  EXPECT_EQ(row.size(), 32u);
  EXPECT_TRUE(row.has_variable_length_parts());
  EXPECT_EQ(row.in_memory().members()[1].type, Datatype::sequence(Datatype::Int32));
  const Datatype types[] = {floats, row, Datatype::sequence(floats), Datatype::array(floats, {2}),
                            Datatype::sequence(Datatype::varstring(Datatype::Charset::Utf8))};
  for (const auto& t : types) EXPECT_EQ(datatype_from_name(t.name()), t) << t.name();
  EXPECT_NE(floats, Datatype::sequence(Datatype::Float64));
  EXPECT_THROW(Datatype::compound({{"name", 0, Datatype::varstring()}, {"x", 4, Datatype::Float64}}), DatatypeError);
  {  // references inside sequences (netCDF's DIMENSION_LIST): packed, visited and translated in memory form
    ObjectRef a[] = {{7}}, b[] = {{8}, {0}};
    const VarSequence axes[] = {{1, a}, {2, b}};
    const auto dims = AttributeValue::from_raw(AttributeValue::Kind::Array, Datatype::sequence(Datatype::reference()),
                                               2, axes);
    std::vector<uint64_t> seen;
    const auto moved = dims.with_references_translated([&](ObjectRef& r) {
      seen.push_back(r.token);
      if (!r.is_null()) r.token += 100;
    });
    EXPECT_EQ(seen, (std::vector<uint64_t>{7, 8, 0}));
    ElementBuffer out(moved.dtype(), 2);
    moved.copy_elements(out.data());
    VarSequence got[2];
    std::memcpy(got, out.data(), sizeof got);
    ASSERT_EQ(got[1].length, 2u);
    EXPECT_EQ(static_cast<const ObjectRef*>(got[0].data)[0].token, 107u);
    EXPECT_EQ(static_cast<const ObjectRef*>(got[1].data)[0].token, 108u);
    EXPECT_TRUE(static_cast<const ObjectRef*>(got[1].data)[1].is_null());
    EXPECT_EQ(dims.with_references_translated([](ObjectRef&) {}), dims);
  }
  float xs[] = {1.5f, 2.5f};
  const VarSequence two{2, xs};
  const auto value = AttributeValue::from_raw(AttributeValue::Kind::Scalar, floats, 1, &two);
  EXPECT_EQ(value.to_string(), "[1.5, 2.5]");
  xs[0] = 0;  // the value keeps its own copy
  EXPECT_NE(value, AttributeValue::from_raw(AttributeValue::Kind::Scalar, floats, 1, &two));  // values compare
  EXPECT_EQ(value.to_string(), "[1.5, 2.5]");
  EXPECT_THROW(AttributeValue::from_stored(AttributeValue::Kind::Scalar, floats, 1, value.data(), value.byte_size() - 1),
               CorruptionError);
  int32_t hits[] = {3, 4};
  const VarSequence one{2, hits};
  EXPECT_EQ(format_element(Datatype::sequence(Datatype::Int32), &one), "[3, 4]");
}

// A row of HDF5's layout: a char* member, then an hvl_t of int32.
struct Row {
  char* name;
  VarSequence hits;
  double x;
};

TEST(VariableLength, PackedElementsUnpackToEqualCopies) {
  const Datatype row = Datatype::compound({{"name", offsetof(Row, name), Datatype::varstring()},
                                           {"hits", offsetof(Row, hits), Datatype::sequence(Datatype::Int32)},
                                           {"x", offsetof(Row, x), Datatype::Float64}},
                                          sizeof(Row));
  int32_t hits[] = {7, 8, 9};
  char name[] = "alpha";
  Row rows[3] = {{name, {3, hits}, 1.5}, {nullptr, {0, nullptr}, -2}, {name, {1, hits + 2}, 0}};
  const auto packed = pack_variable_length(row, rows, 3);
  // Equal values pack equally, whatever the pointers and padding are.
  EXPECT_EQ(pack_variable_length(row, rows, 3), packed);
  EXPECT_EQ(packed_element_size(row, packed.data(), packed.size()), 8 + 5 + 8 + 3 * 4 + 8);
  Row back[3];
  unpack_variable_length(row, packed.data(), packed.size(), back, 3);
  EXPECT_STREQ(back[0].name, "alpha");
  EXPECT_NE(back[0].name, name);  // its own copy
  ASSERT_EQ(back[0].hits.length, 3u);
  EXPECT_EQ(static_cast<int32_t*>(back[0].hits.data)[2], 9);
  EXPECT_EQ(back[1].name, nullptr);  // a null string stays null
  EXPECT_EQ(back[1].hits.data, nullptr);
  EXPECT_EQ(back[1].x, -2);
  EXPECT_EQ(static_cast<int32_t*>(back[2].hits.data)[0], 9);
  EXPECT_EQ(variable_length_bytes(row, back, 3), 6 + 3 * 4 + 6 + 4);
  EXPECT_EQ(format_element(row, &back[0]), "{name: \"alpha\", hits: [7, 8, 9], x: 1.5}");
  reclaim_variable_length(row, back, 3);
  EXPECT_EQ(back[0].name, nullptr);
  EXPECT_EQ(back[0].hits.length, 0u);
  // Sequences of sequences and of strings.
  const Datatype nested = Datatype::sequence(Datatype::sequence(Datatype::varstring()));
  char a[] = "a", b[] = "bc";
  char* words[] = {a, b};
  VarSequence inner[] = {{2, words}, {0, nullptr}};
  VarSequence outer{2, inner};
  const auto p2 = pack_variable_length(nested, &outer, 1);
  VarSequence copy;
  copy_variable_length(nested, &outer, &copy, 1);
  EXPECT_EQ(pack_variable_length(nested, &copy, 1), p2);
  EXPECT_EQ(format_element(nested, &copy), "[[\"a\", \"bc\"], []]");
  reclaim_variable_length(nested, &copy, 1);
}

// HDF5's H5Dvlen_get_buf_size allocator: one block, reallocated at every
// call, never released by the caller - parts must be built children first.
struct CountingAllocator {
  std::size_t total = 0;
  void* block = nullptr;
  static void* allocate(std::size_t size, void* info) {
    auto* c = static_cast<CountingAllocator*>(info);
    c->total += size;
    c->block = std::realloc(c->block, size);
    return c->block;
  }
};

TEST(VariableLength, PartsAreMadeChildrenFirstForACountingAllocator) {
  const Datatype nested = Datatype::sequence(Datatype::sequence(Datatype::varstring()));
  char a[] = "a", b[] = "bc";
  char* words[] = {a, b};
  VarSequence inner[] = {{2, words}, {0, nullptr}};
  VarSequence outer{2, inner}, counted{0, nullptr};
  CountingAllocator c;
  copy_variable_length(nested, &outer, &counted, 1, PartMemory{&CountingAllocator::allocate, &c, nullptr, nullptr});
  EXPECT_EQ(c.total, 2u + 3u + 2 * sizeof(char*) + 2 * sizeof(VarSequence));  // as HDF5 counts
  EXPECT_EQ(variable_length_bytes(nested, &outer, 1), c.total);
  std::free(c.block);
}

TEST(VariableLength, DamagedPackedBytesRaiseCorruption) {
  const Datatype seq = Datatype::sequence(Datatype::Float64);
  double v[] = {1, 2};
  VarSequence one{2, v};
  auto packed = pack_variable_length(seq, &one, 1);
  VarSequence out;
  // Truncated, one byte too many, a length far past the bytes, two elements asked of one.
  EXPECT_THROW(unpack_variable_length(seq, packed.data(), packed.size() - 1, &out, 1), CorruptionError);
  auto longer = packed;
  longer.push_back(0);
  EXPECT_THROW(unpack_variable_length(seq, longer.data(), longer.size(), &out, 1), CorruptionError);
  auto huge = packed;
  huge[7] = 0x10;  // length 2 + 2^60
  EXPECT_THROW(unpack_variable_length(seq, huge.data(), huge.size(), &out, 1), CorruptionError);
  EXPECT_THROW(packed_element_size(seq, huge.data(), huge.size()), CorruptionError);
  VarSequence two[2];
  EXPECT_THROW(unpack_variable_length(seq, packed.data(), packed.size(), two, 2), CorruptionError);
  EXPECT_THROW(AttributeValue::from_stored(AttributeValue::Kind::Array, seq, std::size_t(1) << 60, packed.data(),
                                           packed.size()),
               CorruptionError);  // a count the bytes cannot hold, refused before any allocation
  EXPECT_THROW(Datatype::compound({{"x", 0, Datatype::Int8}}, std::size_t(1) << 40), DatatypeError);
  // A string with a NUL inside.
  const Datatype strings = Datatype::sequence(Datatype::varstring());
  const unsigned char bad[] = {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 'a', 0};
  EXPECT_THROW(unpack_variable_length(strings, bad, sizeof bad, &out, 1), CorruptionError);
  // Whole variable-length strings are std::string elements, not parts.
  EXPECT_THROW(pack_variable_length(Datatype::varstring(), nullptr, 0), DatatypeError);
}

TEST(Datatype, ReferencesInElementsAreVisitedAndPaddingCleared) {
  struct Use {
    ObjectRef ref;
    int32_t dim;
  };  // 4 bytes of padding at the end
  const Datatype t = Datatype::compound({{"ref", 0, Datatype::reference()}, {"dim", 8, Datatype::Int32}}, sizeof(Use));
  Use uses[2];
  std::memset(uses, 0xAB, sizeof uses);
  uses[0] = {ObjectRef{5}, 0}, uses[1] = {ObjectRef{}, 1};
  std::vector<uint64_t> seen;
  for_each_reference(t, uses, 2, [&](ObjectRef& r) { seen.push_back(r.token), r.token += 100; });
  EXPECT_EQ(seen, (std::vector<uint64_t>{5, 0}));
  EXPECT_EQ(uses[0].ref.token, 105u);
  auto v = AttributeValue::from_raw(AttributeValue::Kind::Array, t, 2, uses);
  const auto* bytes = static_cast<const unsigned char*>(v.data());
  for (std::size_t b = 12; b < 16; ++b) EXPECT_EQ(bytes[b], 0) << "padding byte " << b;
  EXPECT_EQ(v.to_string(), "[{ref: reference 105, dim: 0}, {ref: reference 100, dim: 1}]");
  EXPECT_EQ(AttributeValue(std::vector<ObjectRef>{ObjectRef{3}}).as_references().at(0).token, 3u);
}

// Half precision: numpy's float16 bits for the same numbers (np.float16(x).view("u2")).
TEST(Datatype, HalfPrecisionRoundsToNearestEven) {
  auto bits = [](double x) { return Float16(x).bits(); };
  EXPECT_EQ(bits(1.0), 0x3c00);
  EXPECT_EQ(bits(-2.0), 0xc000);
  EXPECT_EQ(bits(0.1), 0x2e66);
  EXPECT_EQ(bits(65504.0), 0x7bff);                 // the largest half
  EXPECT_EQ(bits(65519.0), 0x7bff);                 // below the tie: the largest
  EXPECT_EQ(bits(65520.0), 0x7c00);                 // the tie rounds to even: infinity
  EXPECT_EQ(bits(1e6), 0x7c00);
  EXPECT_EQ(bits(-1e6), 0xfc00);
  EXPECT_EQ(bits(std::ldexp(1.0, -14)), 0x0400);    // the smallest normal
  EXPECT_EQ(bits(std::ldexp(1.0, -24)), 0x0001);    // the smallest subnormal
  EXPECT_EQ(bits(std::ldexp(1.0, -25)), 0x0000);    // its half: the tie rounds to even, zero
  EXPECT_EQ(bits(std::ldexp(3.0, -26)), 0x0001);    // above the tie
  EXPECT_EQ(bits(std::ldexp(1023.0, -24)), 0x03ff); // the largest subnormal
  EXPECT_EQ(bits(1.0 + std::ldexp(1.0, -11)), 0x3c00);      // a tie below an even fraction: down
  EXPECT_EQ(bits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);  // a tie below an odd one: up
  EXPECT_EQ(bits(-0.0), 0x8000);
  EXPECT_EQ(bits(1e-30), 0x0000);
  EXPECT_TRUE(std::isnan(Float16(std::nan("")).to_float()));
  EXPECT_TRUE(std::isinf(Float16::from_bits(0x7c00).to_float()));
  for (uint32_t b = 0; b < 0x10000; ++b) {  // every half survives float and back
    const Float16 h = Float16::from_bits(uint16_t(b));
    if (!std::isnan(h.to_float())) EXPECT_EQ(Float16(h.to_float()).bits(), b) << b;
  }
  EXPECT_EQ(float(Float16::from_bits(0x0001)), std::ldexp(1.0f, -24));
  EXPECT_EQ(datatype_from_name("f2"), Datatype::Float16);
  EXPECT_EQ(datatype_size(Datatype::Float16), 2u);
  const Float16 third = Float16::from_bits(0x3555);
  EXPECT_EQ(format_element(Datatype::Float16, &third), "0.33325");
}
