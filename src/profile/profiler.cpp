// The profiler behind H5LOOM_PROFILE (profiler.hpp). Events and counters live
// in memory and are written out, whole, at every file close and at exit:
// DIR/rank-<r>.trace (fixed 40-byte records, appended) and DIR/rank-<r>.json
// (counters, the name and file tables, rewritten). Format: docs/formats/profile.md.
#include "profile/profiler.hpp"

#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

namespace h5loom::profile {

namespace {

constexpr int kBuckets = 10;  // Darshan's access-size buckets
constexpr uint64_t kBucketTop[kBuckets - 1] = {100, 1024, 10240, 102400, 1048576, 4194304, 10485760, 104857600,
                                               1073741824};
const char* const kBucketNames[kBuckets] = {"0-100",   "100-1K",   "1K-10K",    "10K-100K", "100K-1M",
                                            "1M-4M",   "4M-10M",   "10M-100M",  "100M-1G",  "1G+"};
const char* const kLayerNames[4] = {"api", "engine", "posix", "mpiio"};

int bucket_of(uint64_t size) {
  for (int b = 0; b < kBuckets - 1; ++b)
    if (size <= kBucketTop[b]) return b;  // upper bounds inclusive
  return kBuckets - 1;
}

struct Counters {
  uint64_t ops[3] = {0, 0, 0}, bytes[3] = {0, 0, 0};
  std::array<uint64_t, kBuckets> hist[2] = {};  // reads, writes
  uint64_t sequential[2] = {0, 0}, consecutive[2] = {0, 0}, unaligned = 0;
  uint64_t last_end[2] = {0, 0};
  bool seen[2] = {false, false};
  double data_s = 0, meta_s = 0;
};

struct Event {
  int64_t start, end;
  uint8_t layer, kind;
  uint16_t name;
  uint32_t file;
  uint64_t offset, size;
};

struct State {
  std::mutex mu;
  bool on = false;
  std::string dir;
  uint64_t alignment = 4096;
  std::vector<Event> events;
  std::size_t dumped = 0;  // events already in the trace file
  int64_t counters_written_ns = 0;
  std::map<std::pair<int, std::string>, Counters> counters;  // (layer, file)
  std::map<std::string, uint16_t> names;
  std::map<std::string, uint32_t> files;
  int64_t start_ns = 0;
};

State& state() {
  static State* s = [] {
    auto* st = new State;  // never destroyed: records may come from other static destructors
    const char* dir = std::getenv("H5LOOM_PROFILE");
    st->on = dir && *dir;
    if (st->on) {
      st->dir = dir;
      ::mkdir(dir, 0755);
      if (const char* a = std::getenv("H5LOOM_PROFILE_ALIGNMENT"); a && *a) st->alignment = std::strtoull(a, nullptr, 10);
      if (st->alignment == 0) st->alignment = 1;
      st->start_ns = now_ns();
      std::atexit([] { dump(true); });
    }
    return st;
  }();
  return *s;
}

template <class Map>
auto id_of(Map& m, const std::string& key) {
  auto it = m.find(key);
  if (it != m.end()) return it->second;
  typename Map::mapped_type id = typename Map::mapped_type(m.size());
  m.emplace(key, id);
  return id;
}

void count_locked(State& s, Layer layer, Kind kind, const std::string& file, uint64_t offset, uint64_t size) {
  Counters& c = s.counters[{int(layer), file}];
  int k = int(kind);
  c.ops[k] += 1;
  c.bytes[k] += size;
  if (kind == Kind::Meta) return;
  c.hist[k][std::size_t(bucket_of(size))] += 1;
  if (c.seen[k]) {
    if (offset == c.last_end[k]) c.consecutive[k] += 1;
    if (offset >= c.last_end[k]) c.sequential[k] += 1;
  }
  c.seen[k] = true;
  c.last_end[k] = offset + size;
  if (offset % s.alignment != 0) c.unaligned += 1;
}

int my_rank() {
  int init = 0, fin = 0, rank = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool enabled() { return state().on; }

uint64_t byte_offset(const Selection& sel, const DatasetInfo& info) {
  if (sel.kind() != Selection::Kind::Hyperslab) return 0;
  if (sel.start().size() != info.shape.size()) return 0;  // shape not known (a wrapper's guess)
  return row_major_index(sel.start(), info.shape) * datatype_size(info.dtype);
}

void record(Layer layer, Kind kind, const char* name, const std::string& file, uint64_t offset, uint64_t size,
            int64_t start_ns, int64_t end_ns, bool counted) {
  State& s = state();
  if (!s.on) return;
  std::lock_guard<std::mutex> lock(s.mu);
  Event e{start_ns, end_ns, uint8_t(layer), uint8_t(kind), id_of(s.names, name), id_of(s.files, file), offset, size};
  s.events.push_back(e);
  if (counted) count_locked(s, layer, kind, file, offset, size);
  Counters& c = s.counters[{int(layer), file}];
  double secs = double(end_ns - start_ns) * 1e-9;
  (kind == Kind::Meta ? c.meta_s : c.data_s) += secs;
}

void count(Layer layer, Kind kind, const std::string& file, uint64_t offset, uint64_t size) {
  State& s = state();
  if (!s.on) return;
  std::lock_guard<std::mutex> lock(s.mu);
  count_locked(s, layer, kind, file, offset, size);  // the call that carried it is traced once
}

void dump(bool force) {
  State& s = state();
  if (!s.on) return;
  std::lock_guard<std::mutex> lock(s.mu);
  const int64_t now = now_ns();
  static int rank = -1;
  if (rank < 0) rank = my_rank();
  char base[64];
  std::snprintf(base, sizeof base, "/rank-%05d", rank);
  const std::string stem = s.dir + base;

  // The trace: 40-byte little-endian records, appended since the last dump (the
  // counters file, written after, says how many records are valid).
  if (std::FILE* out = std::fopen((stem + ".trace").c_str(), s.dumped == 0 ? "wb" : "ab")) {
    for (std::size_t i = s.dumped; i < s.events.size(); ++i) {
      const Event& e = s.events[i];
      unsigned char r[40];
      std::memcpy(r, &e.start, 8);
      std::memcpy(r + 8, &e.end, 8);
      r[16] = e.layer, r[17] = e.kind;
      std::memcpy(r + 18, &e.name, 2);
      std::memcpy(r + 20, &e.file, 4);
      std::memcpy(r + 24, &e.offset, 8);
      std::memcpy(r + 32, &e.size, 8);
      std::fwrite(r, 1, 40, out);
    }
    std::fclose(out);
    s.dumped = s.events.size();
  }

  // The counters (and the count of valid trace records) at most once a second,
  // but always at exit: rewriting them at every close cost ~10 % on iotest.
  if (!force && now - s.counters_written_ns < 1000000000) return;
  s.counters_written_ns = now;
  nlohmann::json j;
  j["format"] = "h5loom-profile";
  j["version"] = 1;
  j["rank"] = rank;
  j["start_unix_ns"] = s.start_ns;
  j["alignment"] = s.alignment;
  j["events"] = s.events.size();
  std::vector<std::string> names(s.names.size()), files(s.files.size());
  for (const auto& [n, id] : s.names) names[id] = n;
  for (const auto& [f, id] : s.files) files[id] = f;
  j["names"] = names;
  j["files"] = files;
  j["layers"] = std::vector<std::string>(kLayerNames, kLayerNames + 4);
  j["buckets"] = std::vector<std::string>(kBucketNames, kBucketNames + kBuckets);
  auto& cs = j["counters"] = nlohmann::json::array();
  for (const auto& [key, c] : s.counters) {
    nlohmann::json x;
    x["layer"] = kLayerNames[key.first];
    x["file"] = key.second;
    x["reads"] = c.ops[0], x["writes"] = c.ops[1], x["meta_ops"] = c.ops[2];
    x["bytes_read"] = c.bytes[0], x["bytes_written"] = c.bytes[1];
    x["read_sizes"] = c.hist[0], x["write_sizes"] = c.hist[1];
    x["sequential_reads"] = c.sequential[0], x["sequential_writes"] = c.sequential[1];
    x["consecutive_reads"] = c.consecutive[0], x["consecutive_writes"] = c.consecutive[1];
    x["unaligned"] = c.unaligned;
    x["data_time_s"] = c.data_s, x["meta_time_s"] = c.meta_s;
    cs.push_back(std::move(x));
  }
  const std::string tmp = stem + ".json.tmp";
  if (std::FILE* out = std::fopen(tmp.c_str(), "w")) {
    std::string text = j.dump(1);
    std::fwrite(text.data(), 1, text.size(), out);
    std::fclose(out);
    std::rename(tmp.c_str(), (stem + ".json").c_str());
  }
}

}  // namespace h5loom::profile
