// Conformance group "variable_length": datasets of elements with
// variable-length parts (variable_length.hpp) - sequences (HDF5's H5T_VLEN,
// h5py's ragged arrays), strings inside compounds, sequences of strings and of
// sequences - written by every rank, read back in HDF5's memory layout, also
// after reopening, through selections, and after the dataset grows; and
// attributes of such types.
#include <cstddef>
#include <cstring>

#include "conformance.hpp"

using namespace h5loom;

H5LOOM_CONFORMANCE_GROUP(variable_length, "variable_length");

namespace {

// One event of a detector: a name, the hits it made (ragged) and an energy.
struct Event {
  char* name;
  VarSequence hits;  // int32
  double energy;
};

Datatype event_type() {
  return Datatype::compound({{"name", offsetof(Event, name), Datatype::varstring(Datatype::Charset::Utf8)},
                             {"hits", offsetof(Event, hits), Datatype::sequence(Datatype::Int32)},
                             {"energy", offsetof(Event, energy), Datatype::Float64}},
                            sizeof(Event));
}

std::string event_name(uint64_t i) { return i % 4 == 3 ? std::string() : "event " + std::to_string(i) + " \xc3\xa9"; }
int32_t hit(uint64_t i, uint64_t k) { return int32_t(1000 * i + k); }
uint64_t hit_count(uint64_t i) { return i * 7 % 5; }  // 0 included: empty sequences

// Events i0 .. i0+n-1 in memory the program owns (the vectors keep the parts alive).
struct Events {
  std::vector<std::string> names;
  std::vector<std::vector<int32_t>> hits;
  std::vector<Event> rows;
  Events(uint64_t i0, uint64_t n) : names(n), hits(n), rows(n) {
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t i = i0 + k;
      names[k] = event_name(i);
      for (uint64_t h = 0; h < hit_count(i); ++h) hits[k].push_back(hit(i, h));
      rows[k] = Event{names[k].data(), {hits[k].size(), hits[k].empty() ? nullptr : hits[k].data()}, 0.5 * double(i)};
    }
  }
};

void expect_event(const Event& got, uint64_t i) {
  ASSERT_NE(got.name, nullptr) << "event " << i;
  EXPECT_EQ(std::string(got.name), event_name(i));
  ASSERT_EQ(got.hits.length, hit_count(i)) << "event " << i;
  for (uint64_t h = 0; h < hit_count(i); ++h) EXPECT_EQ(static_cast<int32_t*>(got.hits.data)[h], hit(i, h));
  EXPECT_EQ(got.energy, 0.5 * double(i));
}

}  // namespace

TEST_F(variable_length, CompoundsWithStringsAndSequencesRoundTrip) {
  const auto path = file_path();
  const Datatype type = event_type();
  const uint64_t per_rank = 4, n = per_rank * uint64_t(nranks());
  {
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.dtype = type;
    spec.shape = {n};
    auto ds = f.create_dataset("events", spec);
    EXPECT_EQ(ds.dtype(), type);
    Events mine(per_rank * uint64_t(rank()), per_rank);
    ds.write_raw(Selection::box({per_rank * uint64_t(rank())}, {per_rank}), type, mine.rows.data(), per_rank,
                 /*copy=*/true);
    // write() kept its own copy of every part: changing them now changes nothing.
    for (auto& s : mine.names) s.assign(s.size(), '#');
    for (auto& h : mine.hits) std::fill(h.begin(), h.end(), -1);
    f.flush();
    std::vector<Event> back(n);
    ds.read_raw(Selection::all(), type, back.data(), n);
    for (uint64_t i = 0; i < n; ++i) expect_event(back[i], i);
    reclaim_variable_length(type, back.data(), n);
  }
  auto f = File::open(path, Mode::Read, options());
  auto ds = f.dataset("events");
  EXPECT_EQ(ds.dtype(), type) << ds.dtype().name();
  std::vector<Event> all(n);
  ds.read_raw(Selection::all(), type, all.data(), n);
  for (uint64_t i = 0; i < n; ++i) expect_event(all[i], i);
  reclaim_variable_length(type, all.data(), n);
  // Every other event, from the second.
  const uint64_t half = n / 2;
  std::vector<Event> odd(half);
  ds.read_raw(Selection::hyperslab({1}, {half}, {2}), type, odd.data(), half);
  for (uint64_t k = 0; k < half; ++k) expect_event(odd[k], 2 * k + 1);
  EXPECT_EQ(variable_length_bytes(type, odd.data(), half) > 0, true);
  reclaim_variable_length(type, odd.data(), half);
}

TEST_F(variable_length, NestedSequencesGrowAndKeepUnwrittenEmpty) {
  const auto path = file_path();
  // Each element: a sequence of words (strings), and a 2-D grid of ragged float rows.
  const Datatype words = Datatype::sequence(Datatype::varstring());
  const Datatype rows = Datatype::sequence(Datatype::sequence(Datatype::Float32));
  const uint64_t r = uint64_t(rank()), np = uint64_t(nranks());
  {
    auto f = File::create(path, options());
    DatasetSpec spec;
    spec.dtype = words;
    spec.shape = {2, np};
    spec.max_shape = {kUnlimited, np};
    auto w = f.create_dataset("words", spec);
    spec.dtype = rows;
    spec.shape = {np + 1};
    spec.max_shape = {};
    auto g = f.create_dataset("grid", spec);
    // Rank r writes words[0][r]: r+1 words; words[1] stays unwritten.
    std::vector<std::string> text;
    for (uint64_t k = 0; k <= r; ++k) text.push_back("w" + std::to_string(r) + "." + std::to_string(k));
    std::vector<char*> ptrs;
    for (auto& s : text) ptrs.push_back(s.data());
    VarSequence mine{ptrs.size(), ptrs.data()};
    w.write_raw(Selection::box({0, r}, {1, 1}), words, &mine, 1, true);
    // Rank r writes grid[r]: r rows, row k of k+1 floats; grid[np] stays unwritten.
    std::vector<std::vector<float>> values(r);
    std::vector<VarSequence> row(r);
    for (uint64_t k = 0; k < r; ++k) {
      for (uint64_t j = 0; j <= k; ++j) values[k].push_back(float(r) + 0.25f * float(j));
      row[k] = VarSequence{values[k].size(), values[k].data()};
    }
    VarSequence grid{row.size(), row.empty() ? nullptr : row.data()};
    g.write_raw(Selection::box({r}, {1}), rows, &grid, 1, true);
    f.flush();
    w.extend({3, np});  // a third row, never written
    w.write_raw(Selection::box({2, r}, {1, 1}), words, &mine, 1, true);
  }
  auto f = File::open(path, Mode::Read, options());
  auto w = f.dataset("words");
  EXPECT_EQ(w.dtype(), words);
  EXPECT_EQ(w.shape(), (Dims{3, np}));
  std::vector<VarSequence> all(3 * np);
  w.read_raw(Selection::all(), words, all.data(), all.size());
  for (uint64_t q = 0; q < np; ++q) {
    ASSERT_EQ(all[q].length, q + 1);
    EXPECT_STREQ(static_cast<char**>(all[q].data)[q], ("w" + std::to_string(q) + "." + std::to_string(q)).c_str());
    EXPECT_EQ(all[np + q].length, 0u);  // never written: empty
    EXPECT_EQ(all[np + q].data, nullptr);
    EXPECT_EQ(all[2 * np + q].length, q + 1);
  }
  reclaim_variable_length(words, all.data(), all.size());
  auto g = f.dataset("grid");
  std::vector<VarSequence> grid(np + 1);
  g.read_raw(Selection::all(), rows, grid.data(), grid.size());
  for (uint64_t q = 0; q <= np; ++q) {
    ASSERT_EQ(grid[q].length, q < np ? q : 0) << q;
    for (uint64_t k = 0; k < grid[q].length; ++k) {
      const auto& one = static_cast<VarSequence*>(grid[q].data)[k];
      ASSERT_EQ(one.length, k + 1);
      EXPECT_EQ(static_cast<float*>(one.data)[k], float(q) + 0.25f * float(k));
    }
  }
  reclaim_variable_length(rows, grid.data(), grid.size());
}

TEST_F(variable_length, WhatCannotBeHeldIsRefusedNamingTheDataset) {
  auto f = File::create(file_path(), options());
  DatasetSpec spec;
  spec.dtype = Datatype::sequence(Datatype::Int64);
  spec.shape = {2};
  spec.fill = std::vector<unsigned char>(sizeof(VarSequence), 0);
  try {
    f.create_dataset("filled", spec);
    ADD_FAILURE() << "no error";
  } catch (const DatatypeError& e) {
    EXPECT_NE(std::string(e.what()).find("'/filled'"), std::string::npos) << e.what();
  }
  spec.fill.clear();
  spec.dtype = Datatype::sequence(Datatype::reference());
  EXPECT_THROW(f.create_dataset("refs", spec), DatatypeError);
  spec.dtype = Datatype::sequence(Datatype::Int64);
  auto ds = f.create_dataset("kept", spec);
  int64_t v[] = {4, 5};
  VarSequence two[] = {{2, v}, {1, v + 1}};
  ds.write_raw(Selection::all(), spec.dtype, two, 2, true);
  // Another element type: refused, and what was written stays.
  EXPECT_THROW(ds.write_raw(Selection::all(), Datatype::sequence(Datatype::Int32), two, 2, true), DatatypeError);
  std::vector<VarSequence> back(2);
  ds.read_raw(Selection::all(), spec.dtype, back.data(), 2);
  ASSERT_EQ(back[0].length, 2u);
  EXPECT_EQ(static_cast<int64_t*>(back[0].data)[1], 5);
  EXPECT_EQ(static_cast<int64_t*>(back[1].data)[0], 5);
  reclaim_variable_length(spec.dtype, back.data(), 2);
}

TEST_F(variable_length, AttributesHoldThemAsValues) {
  const auto path = file_path();
  const Datatype type = event_type();
  {
    auto f = File::create(path, options());
    auto g = f.create_group("detector");
    Events three(0, 3);
    g.set_attribute("events", AttributeValue::from_raw(AttributeValue::Kind::Array, type, 3, three.rows.data()));
    for (auto& s : three.names) s.assign(s.size(), '#');  // the value keeps its own copy
    const Datatype words = Datatype::sequence(Datatype::varstring());
    char a[] = "x", b[] = "yz";
    char* w[] = {a, b};
    const VarSequence one{2, w};
    g.set_attribute("labels", AttributeValue::from_raw(AttributeValue::Kind::Scalar, words, 1, &one));
    EXPECT_EQ(g.attribute("labels").to_string(), "[\"x\", \"yz\"]");
  }
  auto f = File::open(path, Mode::Read, options());
  const AttributeValue v = f.group("detector").attribute("events");
  EXPECT_EQ(v.dtype(), type);
  ASSERT_EQ(v.size(), 3u);
  std::vector<Event> back(3);
  v.copy_elements(back.data());
  for (uint64_t i = 0; i < 3; ++i) expect_event(back[i], i);
  reclaim_variable_length(type, back.data(), 3);
  EXPECT_EQ(v, f.group("detector").attribute("events"));  // values compare by content, not pointers
  const AttributeValue labels = f.group("detector").attribute("labels");
  EXPECT_EQ(labels.kind(), AttributeValue::Kind::Scalar);
  EXPECT_EQ(labels.to_string(), "[\"x\", \"yz\"]");
}
