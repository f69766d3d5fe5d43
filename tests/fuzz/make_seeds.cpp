// Seed corpus of the log-reader fuzzer, made from files the log engine really
// writes: make_log_seeds OUT_DIR [WORK_DIR]
//
// Each scenario writes a small file with the log engine (public API), reads
// its journal and log back as docs/formats/log.md specifies, and turns them
// into a fuzz input (tests/fuzz/log_input.hpp): the metadata CBOR and the
// block entries and data of every epoch. Then the input is checked: the files
// the harness builds from it must open and hold exactly what the real file
// holds (tree, attributes, every value) - the test of the harness's builder
// against the engine. Exit 1 if a check fails.
#include <h5loom/h5loom.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "log_input.hpp"

using loomfuzz::Bytes;
namespace fs = std::filesystem;

namespace {

uint64_t le(const Bytes& b, std::size_t at, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= uint64_t(b.at(at + std::size_t(i))) << (8 * i);
  return v;
}

// The on-disk log of `name`, as a fuzz input (format: docs/formats/log.md).
loomfuzz::Input input_from_files(const std::string& name) {
  Bytes log, commits;
  if (!loomfuzz::read_file(name + ".loom/log", log) || !loomfuzz::read_file(name + ".loom/commits", commits))
    throw std::runtime_error("cannot read the log of " + name);
  loomfuzz::Input in;
  const uint64_t unit = le(log, 16, 8);
  const bool pow2 = unit && !(unit & (unit - 1)) && unit < (uint64_t(1) << 20);
  if (unit == 65536) in.unit = 0;
  else if (pow2) in.unit = uint8_t(__builtin_ctzll(unit));
  else if (unit >= 64 && unit < 255) in.unit = uint8_t(unit);
  else {
    in.unit = 255;
    in.raw_unit = unit;
  }
  for (std::size_t at = 64; at + 64 <= commits.size(); at += 64) {
    if (std::memcmp(commits.data() + at, "LCMT", 4) != 0) break;
    const uint64_t epoch = le(commits, at + 8, 8), ioff = le(commits, at + 16, 8), isize = le(commits, at + 24, 8);
    const uint64_t log_end = le(commits, at + 40, 8);
    Bytes rec(log.begin() + long(ioff), log.begin() + long(ioff + isize));
    loomfuzz::Epoch ep;
    const uint64_t m = le(rec, 16, 8), count = le(rec, 32, 8);
    ep.meta.assign(rec.begin() + 48, rec.begin() + long(48 + m));
    if (le(rec, 8, 8) != epoch) throw std::runtime_error("index record epoch differs");
    std::size_t p = 48 + std::size_t(m);
    for (uint64_t k = 0; k < count; ++k) {
      loomfuzz::Entry e;
      e.dataset = uint32_t(le(rec, p, 4));
      e.epoch = uint32_t(le(rec, p + 4, 4));
      e.rank = uint32_t(le(rec, p + 8, 4));
      e.nd = uint8_t(rec.at(p + 12));
      e.counter = le(rec, p + 16, 8);
      const uint64_t off = le(rec, p + 24, 8), nbytes = le(rec, p + 32, 8);
      p += 40;
      bool wide = e.dataset > 255 || e.rank > 255 || e.counter > 255 || e.epoch > 255;
      for (unsigned d = 0; d < e.nd; ++d, p += 16) {
        e.start.push_back(le(rec, p, 8));
        e.count.push_back(le(rec, p + 8, 8));
        wide = wide || e.start.back() > 255 || e.count.back() > 255;
      }
      const uint64_t units = le(rec, p, 4);
      p += 4 + 4 * std::size_t(units) + 4;
      e.data.assign(log.begin() + long(off), log.begin() + long(off + nbytes));
      e.flags = uint8_t((wide ? 1 : 0) | (e.epoch != epoch ? 0x40 : 0));
      // Trailing zeros are not spelled out: the harness pads the block (flag bit 7).
      std::size_t keep = e.data.size();
      while (keep > 0 && e.data[keep - 1] == 0) --keep;
      if (e.data.size() - keep > 64 && e.data.size() <= (4u << 20)) {
        e.nbytes = e.data.size();
        e.data.resize(keep);
        e.flags |= 0x84;
        if (e.nbytes > 0xFFFF) e.flags |= 0x01;
      }
      ep.entries.push_back(std::move(e));
    }
    // The real log_end (after aligned regions, holes) differs from where the
    // harness's compact log ends; the harness computes its own.
    (void)log_end;
    in.epochs.push_back(std::move(ep));
  }
  return in;
}

// Everything a reader sees of a file, as text, for comparison.
std::string snapshot(const std::string& name, const std::string& engine) {
  h5loom::FileOptions o;
  o.comm = MPI_COMM_SELF;
  o.engine = engine;
  auto f = h5loom::File::open(name, h5loom::Mode::Read, o);
  std::ostringstream s;
  auto attrs = [&](const h5loom::Object& obj) {
    for (const auto& n : obj.attribute_names()) {
      auto v = obj.attribute(n);
      s << "  @" << n << " = ";
      if (v.is_string()) s << '"' << v.as_string() << '"';
      else if (v.is_string_array()) for (const auto& x : v.as_strings()) s << '"' << x << "\" ";
      else s << v.to_string();  // numbers, and references and records element by element
      s << '\n';
    }
  };
  attrs(f);
  std::vector<std::pair<std::string, h5loom::ObjectKind>> objs;
  f.visit([&](const std::string& p, h5loom::ObjectKind k) { objs.emplace_back(p, k); });
  for (const auto& [p, k] : objs) {
    if (k == h5loom::ObjectKind::Group) {
      s << p << "/\n";
      attrs(f.group(p));
    } else {
      auto ds = f.dataset(p);
      s << p << " " << h5loom::datatype_name(ds.dtype()) << " " << h5loom::dims_to_string(ds.shape()) << " max "
        << h5loom::dims_to_string(ds.max_shape()) << "\n";
      attrs(ds);
      const std::size_t n = std::size_t(h5loom::product(ds.shape()));
      h5loom::ElementBuffer values(ds.dtype(), n + 1);  // never a null buffer, even for 0 elements
      ds.read_raw(h5loom::Selection::all(), ds.dtype(), values.data(), n);
      for (std::size_t i = 0; i < n; ++i) s << h5loom::format_element(ds.dtype(), values.element(i)) << ' ';
      s << '\n';
    }
  }
  f.close();
  return s.str();
}

h5loom::File create(const std::string& name, const std::string& engine) {
  h5loom::FileOptions o;
  o.comm = MPI_COMM_SELF;
  o.engine = engine;
  return h5loom::File::create(name, o);
}

using Scenario = std::function<void(const std::string& name)>;

const char* kLog = "log";
const char* kSmallUnits = R"({"engine":"log","log":{"checksum_unit":512,"front_file":false}})";
const char* kRegions =
    R"({"engine":"log","log":{"direct_threshold":64,"aggregate_below":64,"region_size":4096,"buffer_size":8192,"front_file":false}})";

std::map<std::string, Scenario> scenarios() {
  std::map<std::string, Scenario> s;
  s["attributes"] = [](const std::string& n) {
    auto f = create(n, kLog);
    f.set_attribute("title", "fuzz seed");
    f.set_attribute("step", int64_t(7));
    f.set_attribute("dt", 0.25);
    f.set_attribute("names", std::vector<std::string>{"rho", "ux", ""});
    auto g = f.create_group("fields/sub");
    g.set_attribute("ranks", std::vector<int32_t>{0, 1, 2});
    auto ds = f.create_dataset<int32_t>("fields/sub/a", {6});
    ds.set_attribute("units", "m");
    ds.set_attribute("scale", std::vector<float>{1.5f, 2.5f});
    ds.set_attribute("gone", 1);
    ds.remove_attribute("gone");
    g.rename_attribute("ranks", "rank_list");
    ds.write_copy(h5loom::Selection::all(), std::vector<int32_t>{1, 2, 3, 4, 5, 6});
    f.close();
  };
  s["epochs-2d"] = [](const std::string& n) {
    auto f = create(n, kLog);
    h5loom::DatasetSpec spec;
    spec.dtype = h5loom::Datatype::Float64;
    spec.shape = {4, 5};
    spec.max_shape = {h5loom::kUnlimited, 5};
    spec.layout = h5loom::Layout::Chunked;
    spec.layout_auto = false;
    spec.chunks = {2, 5};
    auto ds = f.create_dataset("rho", spec);
    std::vector<double> a(10), b(6, -1.0);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = double(i) + 0.5;
    ds.write_copy(h5loom::Selection::box({0, 0}, {2, 5}), a);
    f.flush();
    ds.write_copy(h5loom::Selection::box({1, 1}, {2, 3}), b);  // overlaps: the later write wins
    f.flush();
    ds.extend({6, 5});
    ds.write_copy(h5loom::Selection::box({5, 0}, {1, 5}), std::vector<double>(5, 9.0));
    f.close();
  };
  s["dtypes-3d-small-units"] = [](const std::string& n) {
    auto f = create(n, kSmallUnits);
    auto u8 = f.create_dataset<uint8_t>("u8", {3, 4, 5});
    std::vector<uint8_t> v(3 * 4 * 5);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = uint8_t(i * 7);
    u8.write_copy(h5loom::Selection::box({0, 0, 0}, {3, 4, 5}), v);
    f.create_dataset<int16_t>("i16", {3}).write_copy(h5loom::Selection::box({1}, {2}), std::vector<int16_t>{-5, 5});
    f.create_dataset<uint64_t>("u64", {2}).write_copy(h5loom::Selection::all(), std::vector<uint64_t>{1, ~0ull});
    f.create_dataset<float>("f32", {2, 2}).write_copy(h5loom::Selection::all(), std::vector<float>{1, 2, 3, 4});
    f.create_dataset<int64_t>("never_written", {4});
    f.create_dataset<uint32_t>("empty", {0, 3});
    f.close();
  };
  s["rows-regions"] = [](const std::string& n) {
    auto f = create(n, kRegions);
    auto ds = f.create_dataset<int32_t>("walkers", {8, 4});
    for (uint64_t r = 0; r < 8; ++r) {
      std::vector<int32_t> row(4, int32_t(r));
      ds.write_copy(h5loom::Selection::box({r, 0}, {1, 4}), row);  // consecutive rows grow one block
    }
    auto big = f.create_dataset<double>("big", {40});
    big.write_copy(h5loom::Selection::all(), std::vector<double>(40, 3.0));  // >= 64 bytes: a region write
    f.flush();
    ds.write_copy(h5loom::Selection::hyperslab({0, 0}, {4, 2}, {2, 2}), std::vector<int32_t>(8, -1));
    f.close();
  };
  s["large-block"] = [](const std::string& n) {
    auto f = create(n, kLog);
    std::vector<double> v(131072 + 512, 0.0);  // > 1 MiB: a region write, read back straight into the output
    for (std::size_t i = 0; i < 16; ++i) v[i] = double(i) * 1.25;
    f.create_dataset<double>("big", {v.size()}).write_copy(h5loom::Selection::all(), v);
    f.close();
  };
  s["held-values"] = [](const std::string& n) {  // `elements` operations (format v4)
    auto f = create(n, kSmallUnits);
    h5loom::DatasetSpec spec;
    spec.dtype = h5loom::Datatype::varstring(h5loom::Datatype::Charset::Utf8);
    spec.shape = {2, 2};
    spec.max_shape = {h5loom::kUnlimited, 2};
    spec.layout = h5loom::Layout::Chunked;
    spec.layout_auto = false;
    auto names = f.create_dataset("names", spec);
    names.write(h5loom::Selection::all(), std::vector<std::string>{"a", "", "c\xc3\xa9", "dd"});
    names.extend({3, 2});
    names.write(h5loom::Selection::hyperslab({0, 1}, {3, 1}, {1, 1}), std::vector<std::string>{"x", "y", "z"});
    auto refs = f.create_dataset<h5loom::ObjectRef>("refs", {3});
    std::vector<h5loom::ObjectRef> r{f.reference("names"), h5loom::ObjectRef{}, f.reference("/")};
    refs.write(h5loom::Selection::all(), std::move(r));
    f.set_attribute("points_to", h5loom::AttributeValue(f.reference("refs")));
    f.close();
  };
  s["groups-only"] = [](const std::string& n) {
    auto f = create(n, kLog);
    f.create_group("a/b/c");
    f.create_group("d");
    f.group("d").set_attribute("x", uint8_t(1));
    f.close();
  };
  return s;
}

bool write_seed(const std::string& path, const Bytes& b) {
  FILE* fp = std::fopen(path.c_str(), "wb");
  if (!fp) return false;
  bool ok = std::fwrite(b.data(), 1, b.size(), fp) == b.size();
  return std::fclose(fp) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_log_seeds OUT_DIR [WORK_DIR]\n");
    return 2;
  }
  unsetenv("H5LOOM_ENGINE");
  unsetenv("H5LOOM_PROFILE");
  const fs::path out = argv[1];
  const fs::path work = argc > 2 ? fs::path(argv[2]) : out / "work";
  fs::create_directories(out);
  fs::create_directories(work);
  h5loom::ensure_mpi();
  int failures = 0, seeds = 0;
  loomfuzz::Bytes none;
  for (const auto& [label, write] : scenarios()) {
    const std::string real = (work / (label + ".h5")).string();
    const std::string rebuilt = (work / (label + "-rebuilt.h5")).string();
    try {
      write(real);
      loomfuzz::Input in = input_from_files(real);
      Bytes seed = loomfuzz::encode(in);
      Bytes again = loomfuzz::encode(loomfuzz::decode(seed.data(), seed.size()));
      if (again != seed) throw std::runtime_error("the input does not decode to itself (a separator in the data?)");
      if (!loomfuzz::write_files(loomfuzz::build(in), rebuilt, none, none))
        throw std::runtime_error("cannot write " + rebuilt);
      const std::string want = snapshot(real, "log"), got = snapshot(rebuilt, "log");
      if (want != got)
        throw std::runtime_error("the harness's files read differently from the engine's:\n--- engine\n" + want +
                                 "--- harness\n" + got);
      // Variants: the same log under each front-file form and with torn tails.
      const std::vector<std::pair<std::string, std::function<void(loomfuzz::Input&)>>> variants = {
          {"", [](loomfuzz::Input&) {}},
          {"-front-marker-detect", [](loomfuzz::Input& x) { x.flags = 0x01, x.front = 1; }},
          {"-front-unbound", [](loomfuzz::Input& x) { x.front = 1 | 0x04; }},
          {"-version1", [](loomfuzz::Input& x) { x.front = 0x20; }},
          {"-no-front-detect", [](loomfuzz::Input& x) { x.flags = 0x01, x.front = 0; }},
          {"-torn-tails", [](loomfuzz::Input& x) {
             x.flags = 0x30;
             x.tail = Bytes{'L', 'C', 'M', 'T', 1, 0, 0, 0, 9, 9, 9};
           }},
      };
      for (const auto& [suffix, change] : variants) {
        loomfuzz::Input v = in;
        change(v);
        if (!write_seed((out / (label + suffix)).string(), loomfuzz::encode(v)))
          throw std::runtime_error("cannot write a seed into " + out.string());
        ++seeds;
      }
      std::printf("make_log_seeds: %-24s %zu epochs, %zu bytes, the harness's rebuild reads the same\n",
                  label.c_str(), in.epochs.size(), seed.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "make_log_seeds: %s: %s\n", label.c_str(), e.what());
      ++failures;
    }
  }
  std::printf("make_log_seeds: %d seeds in %s, %d failures\n", seeds, out.string().c_str(), failures);
  return failures ? 1 : 0;
}
