// The log-structured engine. Writes are appended, never placed: each rank
// coalesces its writes in memory, aggregators append them to the log in large
// sequential writes, and each flush ends an epoch with an index record and a
// commit record. Reads find the blocks of a selection through a sorted index.
// Format: docs/formats/log.md (engines/log/format.hpp); knobs: docs/engines/log.md.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "engine/registry.hpp"
#include "engines/hdf5/chunking.hpp"
#include "engines/log/boxes.hpp"
#include "engines/log/format.hpp"
#include "core/mpi_util.hpp"
#include "engines/log/log_internal.hpp"
#include "profile/profiler.hpp"

namespace h5loom::logengine {

using engine::FileHandle;
using engine::Json;
using engine::OpenMode;
using namespace logfmt;

constexpr uint64_t MiB = 1024 * 1024;

// ---- POSIX helpers -----------------------------------------------------------------

[[noreturn]] void posix_fail(const std::string& what) {
  throw IOError(what + ": " + std::strerror(errno));
}

void pwrite_all(int fd, const void* data, uint64_t n, uint64_t offset, const std::string& what) {
  auto* p = static_cast<const unsigned char*>(data);
  while (n > 0) {
    ssize_t k = ::pwrite(fd, p, std::min<uint64_t>(n, 1ull << 30), static_cast<off_t>(offset));
    if (k < 0) {
      if (errno == EINTR) continue;
      posix_fail(what);
    }
    p += k, n -= uint64_t(k), offset += uint64_t(k);
  }
}

// Reads exactly n bytes; a short file is corruption (a commit promised these bytes).
void pread_all(int fd, void* data, uint64_t n, uint64_t offset, const std::string& what) {
  auto* p = static_cast<unsigned char*>(data);
  while (n > 0) {
    ssize_t k = ::pread(fd, p, std::min<uint64_t>(n, 1ull << 30), static_cast<off_t>(offset));
    if (k < 0) {
      if (errno == EINTR) continue;
      posix_fail(what);
    }
    if (k == 0) throw CorruptionError(what + ": the file ends early (truncated?)");
    p += k, n -= uint64_t(k), offset += uint64_t(k);
  }
}

// Starts the write-back of [offset, offset + n) now, so that the sync at the
// commit has little left to wait for - only of the pages the range covers
// whole: a page under write-back cannot be changed until it is on disk, and
// the next write (the next block, another aggregator's run, the index record)
// often begins in the page where this one ended. The sync writes those.
void start_write_back(int fd, uint64_t offset, uint64_t n) {
  constexpr uint64_t page = 4096;
  const uint64_t first = (offset + page - 1) / page * page, end = (offset + n) / page * page;
  if (end > first) ::sync_file_range(fd, off_t(first), off_t(end - first), SYNC_FILE_RANGE_WRITE);
}

// The system calls of the engine, as the profile's POSIX layer sees them.
void traced_pwrite(int fd, const void* data, uint64_t n, uint64_t offset, const std::string& file,
                   const std::string& what) {
  profile::Scope s(profile::Layer::Posix, profile::Kind::Write, "pwrite", file, offset, n);
  pwrite_all(fd, data, n, offset, what);
}
void traced_pread(int fd, void* data, uint64_t n, uint64_t offset, const std::string& file, const std::string& what) {
  profile::Scope s(profile::Layer::Posix, profile::Kind::Read, "pread", file, offset, n);
  pread_all(fd, data, n, offset, what);
}
int traced_fdatasync(int fd, const std::string& file) {
  profile::Scope s(profile::Layer::Posix, profile::Kind::Meta, "fdatasync", file);
  return ::fdatasync(fd);
}

using mpi::CaughtError;
using mpi::share_error;
using mpi::share_first_error;

// Runs fn on rank 0 only; its error (if any) is raised on every rank.
template <class Fn>
void on_root(MPI_Comm comm, int rank, Fn&& fn) {
  CaughtError e;
  if (rank == 0) e.run(fn);
  share_error(comm, 0, e);
}

void bcast_bytes(MPI_Comm comm, std::vector<unsigned char>& bytes) {
  uint64_t n = bytes.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm);
  bytes.resize(n);
  for (uint64_t at = 0; at < n; at += (1u << 30))
    MPI_Bcast(bytes.data() + at, int(std::min<uint64_t>(n - at, 1u << 30)), MPI_BYTE, 0, comm);
}

// ---- metadata operations (the tree), as JSON, stored as CBOR in index records -------

Json attribute_to_json(const AttributeValue& v) {
  using K = AttributeValue::Kind;
  switch (v.kind()) {
    case K::String: return {{"kind", "string"}, {"text", v.as_string()}};
    case K::StringArray: return {{"kind", "strings"}, {"strings", v.as_strings()}};
    default: {
      auto* p = static_cast<const unsigned char*>(v.data());
      std::vector<std::uint8_t> bytes(p, p + v.size() * datatype_size(v.dtype()));
      return {{"kind", v.kind() == K::Scalar ? "scalar" : "array"},
              {"dtype", datatype_name(v.dtype())},
              {"data", Json::binary(std::move(bytes))}};
    }
  }
}

AttributeValue attribute_from_json(const Json& j) {
  std::string kind = j.at("kind");
  if (kind == "string") return AttributeValue(j.at("text").get<std::string>());
  if (kind == "strings") return AttributeValue(j.at("strings").get<std::vector<std::string>>());
  Datatype dt = datatype_from_name(j.at("dtype").get<std::string>());
  const auto& bytes = j.at("data").get_binary();
  return AttributeValue::from_raw(kind == "scalar" ? AttributeValue::Kind::Scalar : AttributeValue::Kind::Array, dt,
                                  bytes.size() / datatype_size(dt), bytes.data());
}

struct Settings {
  uint64_t buffer_size = 256 * MiB;  // per rank; reaching it writes the buffers out
  uint64_t direct_threshold = 1 * MiB;  // larger single-box writes are not copied into the buffer
  uint64_t region_size = 64 * MiB;      // per rank, the first round of regions (0: no regions)
  uint64_t region_alignment = kRegionAlignment;  // where rounds start, what region sizes are multiples of
  std::string aggregators = "node";  // "node", "all", or a count
  int aggregator_count = 0;          // when a count was given
  bool sync = true;                  // fdatasync before each commit record
  uint64_t checksum_unit = 64 * 1024;
  bool front_file = true;
  uint64_t max_external_segments = 2000;
};

// ---- applying metadata operations (at run time and at replay) -----------------------

// Applies one metadata operation. Each is checked against the tree as it is
// (the object model checked the calls that made it; a damaged or crafted log
// is refused here with CorruptionError instead of building an impossible tree).
void apply_op(LogFile& f, const Json& op) {
  const std::string kind = op.at("op");
  auto bad = [&](const std::string& why) {
    throw CorruptionError(f.where() + ": metadata operation '" + kind + "' " + why);
  };
  auto node_of = [&](const std::string& p, ObjectKind want) -> Node& {
    auto it = f.tree.find(p);
    if (it == f.tree.end() || (want != ObjectKind::None && it->second.kind != want))
      bad("names '" + p + "', which is not an existing " + (want == ObjectKind::Dataset ? "dataset" : "object"));
    return it->second;
  };
  auto parent_of = [](const std::string& p) {
    auto slash = p.rfind('/');
    return slash == 0 ? std::string("/") : p.substr(0, slash);
  };
  auto name_of = [](const std::string& p) { return p.substr(p.rfind('/') + 1); };
  if (kind == "group" && op.at("path") == "/") {
    f.tree["/"].kind = ObjectKind::Group;
  } else if (kind == "group" || kind == "dataset") {
    std::string p = op.at("path");
    if (p.size() < 2 || p[0] != '/' || p.back() == '/' || f.tree.count(p)) bad("has a bad or existing path '" + p + "'");
    Node& parent = node_of(parent_of(p), ObjectKind::Group);
    Node n;
    n.kind = kind == "group" ? ObjectKind::Group : ObjectKind::Dataset;
    if (kind == "dataset") {
      DatasetInfo info;
      info.dtype = datatype_from_name(op.at("dtype").get<std::string>());
      info.shape = op.at("shape").get<Dims>();
      info.max_shape = op.at("max_shape").get<Dims>();
      info.layout = op.at("layout") == "chunked" ? Layout::Chunked : Layout::Contiguous;
      info.chunks = op.at("chunks").get<Dims>();
      if (info.shape.empty() || info.shape.size() > kMaxRank || info.max_shape.size() != info.shape.size() ||
          (!info.chunks.empty() && info.chunks.size() != info.shape.size()))
        bad("of '" + p + "' has inconsistent ranks");
      uint64_t bytes = datatype_size(info.dtype);
      for (std::size_t d = 0; d < info.shape.size(); ++d) {
        if (info.shape[d] > info.max_shape[d] || (info.shape[d] && bytes > (uint64_t(1) << 62) / info.shape[d]))
          bad("of '" + p + "' has an impossible shape " + dims_to_string(info.shape));
        bytes *= std::max<uint64_t>(info.shape[d], 1);
      }
      n.dataset = int(f.datasets.size());
      f.datasets.push_back(info);
      f.dataset_paths.push_back(p);
      DatasetIndex di;
      di.max_count.assign(info.shape.size(), 0);
      f.index.push_back(std::move(di));
    }
    parent.children.insert(name_of(p));
    f.tree[p] = std::move(n);
  } else if (kind == "extend") {
    const std::string p = op.at("path");
    DatasetInfo& info = f.datasets.at(std::size_t(node_of(p, ObjectKind::Dataset).dataset));
    Dims shape = op.at("shape").get<Dims>();
    bool ok = shape.size() == info.shape.size();
    uint64_t bytes = datatype_size(info.dtype);
    for (std::size_t d = 0; ok && d < shape.size(); ++d) {
      ok = shape[d] >= info.shape[d] && shape[d] <= info.max_shape[d] &&
           (!shape[d] || bytes <= (uint64_t(1) << 62) / shape[d]);
      bytes *= std::max<uint64_t>(shape[d], 1);
    }
    if (!ok) bad("of '" + p + "' to " + dims_to_string(shape) + " is not a growth of " + dims_to_string(info.shape));
    info.shape = std::move(shape);
  } else if (kind == "front") {  // the checksum of the front file built with this epoch
    f.fronts.push_back({op.at("epoch").get<uint64_t>(), op.at("size").get<uint64_t>(), op.at("crc").get<uint32_t>()});
  } else if (kind == "attr") {
    node_of(op.at("object").get<std::string>(), ObjectKind::None).attrs[op.at("name").get<std::string>()] =
        attribute_from_json(op.at("value"));
  } else {
    bad("is unknown");
  }
}

// Every rank keeps the epoch's operations: the commit checks that all ranks
// made the same collective calls, and rank 0 writes them.
void record(LogFile& f, Json op) {
  apply_op(f, op);
  ++f.meta_ops;
  f.pending_meta.push_back(std::move(op));
}

void add_entry(LogFile& f, BlockEntry e) {
  if (e.dataset >= f.index.size())
    throw CorruptionError(f.where() + ": a block refers to dataset id " + std::to_string(e.dataset) +
                          ", which does not exist");
  auto& di = f.index[e.dataset];
  if (e.start.size() != di.max_count.size())
    throw CorruptionError(f.where() + ": a block of dataset '" + f.dataset_paths[e.dataset] + "' has " +
                          std::to_string(e.start.size()) + " dimensions");
  for (std::size_t d = 0; d < e.count.size(); ++d) di.max_count[d] = std::max(di.max_count[d], e.count[d]);
  di.entries.push_back(std::move(e));
  di.dirty = true;
}

// A block of a log on disk fits its dataset and the log: its byte count is
// that of its box (so a read never copies past a buffer) and it lies within
// the valid log. CRCs do not protect against crafted files; this does.
void check_entry(const LogFile& f, const BlockEntry& e, const std::string& what) {
  if (e.dataset >= f.datasets.size())
    throw CorruptionError(what + ": a block refers to dataset id " + std::to_string(e.dataset) + ", which does not exist");
  const DatasetInfo& info = f.datasets[e.dataset];
  const std::string where = what + ": block of dataset '" + f.dataset_paths[e.dataset] + "' at log offset " +
                            std::to_string(e.offset);
  if (e.start.size() != info.shape.size())
    throw CorruptionError(where + " has " + std::to_string(e.start.size()) + " dimensions");
  uint64_t bytes = datatype_size(info.dtype);
  for (std::size_t d = 0; d < e.start.size(); ++d) {
    if (e.count[d] == 0 || e.start[d] > info.shape[d] || e.count[d] > info.shape[d] - e.start[d])
      throw CorruptionError(where + " lies outside the dataset's shape " + dims_to_string(info.shape));
    bytes *= e.count[d];  // no overflow: the shape's byte size fits (apply_op)
  }
  if (e.nbytes != bytes) throw CorruptionError(where + " holds " + std::to_string(e.nbytes) + " bytes, its box " +
                                               std::to_string(bytes));
  if (e.offset > f.log_end || e.nbytes > f.log_end - e.offset)
    throw CorruptionError(where + " lies beyond the committed log (" + std::to_string(f.log_end) + " bytes)");
  if (e.unit_crcs.size() != (e.nbytes + f.header.checksum_unit - 1) / f.header.checksum_unit)
    throw CorruptionError(where + " has a checksum list of the wrong length");
}

namespace {

// Builds the JSON of a CBOR document like nlohmann's DOM parser, refusing
// nesting deeper than metadata ever is (the parser recurses: a crafted record
// must not exhaust the stack).
struct DepthLimitedParser : nlohmann::detail::json_sax_dom_parser<Json> {
  static constexpr std::size_t kMaxDepth = 16;
  std::size_t depth = 0;
  using nlohmann::detail::json_sax_dom_parser<Json>::json_sax_dom_parser;
  bool deeper() {
    if (++depth > kMaxDepth) throw CorruptionError("metadata nested deeper than " + std::to_string(kMaxDepth));
    return true;
  }
  bool start_object(std::size_t n) { return deeper() && json_sax_dom_parser::start_object(n); }
  bool start_array(std::size_t n) { return deeper() && json_sax_dom_parser::start_array(n); }
  bool end_object() { return --depth, json_sax_dom_parser::end_object(); }
  bool end_array() { return --depth, json_sax_dom_parser::end_array(); }
};

}  // namespace

// Applies one index record (metadata first, then blocks). Throws CorruptionError.
void replay_index_record(LogFile& f, const unsigned char* p, std::size_t n, uint64_t expected_epoch) {
  std::string what = f.where() + ": index record of epoch " + std::to_string(expected_epoch);
  if (n < kIndexHeaderSize || std::memcmp(p, kIndexMagic, 4) != 0) throw CorruptionError(what + " is damaged");
  try {
    Reader r{p, n, 4, what};
    if (!readable_version(r.u32())) throw CorruptionError(what + " has an unknown format version");
    uint64_t epoch = r.u64(), meta_size = r.u64(), entries_size = r.u64(), entry_count = r.u64();
    if (epoch != expected_epoch || meta_size > n || entries_size > n || kIndexHeaderSize + meta_size + entries_size != n)
      throw CorruptionError(what + " has inconsistent sizes");
    Json ops;
    DepthLimitedParser sax(ops, /*allow_exceptions=*/true);
    if (!Json::sax_parse(p + kIndexHeaderSize, p + kIndexHeaderSize + meta_size, &sax, nlohmann::detail::input_format_t::cbor) ||
        !ops.is_array())
      throw CorruptionError(what + ": unreadable metadata");
    for (const auto& op : ops) apply_op(f, op);
    Reader er{p + kIndexHeaderSize + meta_size, entries_size, 0, what};
    for (uint64_t i = 0; i < entry_count; ++i) {
      BlockEntry e = BlockEntry::decode(er);
      check_entry(f, e, what);
      add_entry(f, std::move(e));
    }
  } catch (const CorruptionError&) {
    throw;
  } catch (const std::exception& e) {  // bad CBOR, a missing key or a wrong type, a short record...
    throw CorruptionError(what + " is damaged: " + e.what());
  }
}

// ---- the engine ------------------------------------------------------------------

class LogEngine final : public engine::Engine {
 public:
  explicit LogEngine(Settings s) : settings_(std::move(s)) {}

  std::string name() const override { return "log"; }
  std::vector<std::string> conformance_groups() const override {
    return {"file", "group", "dataset", "attribute", "selection", "datatype", "extend", "errors", "series",
            "compound", "string", "enum"};
  }
  // ---- storage ----
  engine::Claim probe(const std::string& location) const noexcept override {
    try {
      return is_log_file(location) ? engine::Claim::Mine : engine::Claim::No;
    } catch (...) {
      return engine::Claim::No;
    }
  }
  // The front file, the log, the journal and the writer lock (in NAME.loom/).
  std::vector<engine::StoragePiece> storage(const std::string& path) const override {
    std::vector<engine::StoragePiece> out;
    for (const auto& p : {path, log_path(path), commits_path(path), lock_path(path)}) {
      struct stat st {};
      if (::stat(p.c_str(), &st) == 0) out.push_back({p, static_cast<uint64_t>(st.st_size)});
    }
    return out;
  }
  void remove(const std::string& path) const override {
    Engine::remove(path);
    ::rmdir(directory_of(path).c_str());  // left if something else is in it
  }
  std::optional<engine::VerifyReport> verify(const std::string& path) const override {
    auto rep = verify_log(path);
    engine::VerifyReport r;
    r.engine = "log";
    r.counts = {{"committed epochs", rep.epochs}, {"blocks", rep.blocks}, {"data bytes checked", rep.data_bytes}};
    if (rep.torn_log_bytes || rep.torn_commit_bytes)
      r.notes.push_back("torn tail: " + std::to_string(rep.torn_log_bytes) + " log bytes and " +
                        std::to_string(rep.torn_commit_bytes) +
                        " journal bytes after the last commit (an interrupted flush; ignored)");
    r.errors = rep.errors;
    return r;
  }

  std::unique_ptr<FileHandle> open(const std::string& path, OpenMode mode, MPI_Comm comm) override {
    auto f = std::make_unique<LogFile>();
    f->path = path;
    f->mode = mode;
    f->comm = comm;
    MPI_Comm_rank(comm, &f->rank);
    MPI_Comm_size(comm, &f->size);
    bool creating = mode == OpenMode::Create || mode == OpenMode::CreateExclusive;
    if (creating) {
      f->header.checksum_unit = settings_.checksum_unit;
      std::random_device rd;
      for (auto& b : f->header.file_id) b = static_cast<unsigned char>(rd());
      MPI_Bcast(f->header.file_id, 16, MPI_UNSIGNED_CHAR, 0, comm);  // rank 0's: it writes the header
      on_root(comm, f->rank, [&] { create_files(*f); });
    }
    std::vector<unsigned char> replay;  // rank 0 reads the log's index; everyone replays it
    on_root(comm, f->rank, [&] {
      if (creating) return;
      if (f->writable()) acquire_writer_lock(*f);
      replay = read_committed(*f);
    });
    if (!creating) {
      bcast_bytes(comm, replay);
      // The root exists before any epoch: a file that crashed before its first
      // commit never recorded it, and a writer that reopened it went on without.
      f->tree["/"].kind = ObjectKind::Group;
      Reader r{replay.data(), replay.size(), 0, f->where()};
      r.raw(f->header.file_id, 16);
      f->header.checksum_unit = r.u64();
      f->log_end = r.u64(), f->epoch = r.u64(), f->commits_end = r.u64(), f->torn_bytes = r.u64();
      f->damage.resize(r.u64());
      r.raw(f->damage.data(), f->damage.size());
      while (r.at < r.n) {
        uint64_t epoch = r.u64(), n = r.u64();
        r.need(n);
        replay_index_record(*f, r.p + r.at, n, epoch);
        r.at += n;
      }
    }
    int flags = f->writable() ? O_RDWR : O_RDONLY;
    f->log_fd = ::open(log_path(path).c_str(), flags | O_CLOEXEC);
    int ok = f->log_fd >= 0, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
      if (f->log_fd >= 0) ::close(f->log_fd);
      throw IOError("cannot open the log of '" + path + "' on every rank (" + log_path(path) + ")");
    }
    if (f->writable()) {
      on_root(comm, f->rank, [&] {
        f->commits_fd = ::open(commits_path(path).c_str(), O_RDWR | O_CLOEXEC);
        if (f->commits_fd < 0) posix_fail("opening " + commits_path(path));
        // A torn commit record at the end is cut off, so the next one follows the last valid one.
        if (::ftruncate(f->commits_fd, static_cast<off_t>(f->commits_end)) != 0)
          posix_fail("trimming " + commits_path(path));
      });
    }
    if (f->writable()) {
      setup_aggregation(*f);
      // The first round's regions: as large as the last round of the previous
      // file this process wrote settled on (a code that writes a file per step
      // writes about as much to each), else region_size. Agreed on by all
      // ranks (their histories may differ).
      f->region_alignment = settings_.region_alignment;
      uint64_t first = round_up(settings_.region_size, f->region_alignment);
      if (first > 0 && last_region_size_ > 0) first = std::min(first, last_region_size_);
      MPI_Allreduce(&first, &f->region_size, 1, MPI_UINT64_T, MPI_MAX, comm);
      open_round(*f);
    }
    if (creating) record(*f, Json{{"op", "group"}, {"path", "/"}});  // the first epoch records the root
    return f;
  }

  // Visible: the writes put so far join the log (what the object model's
  // write batch did). Durable: and the epoch commits. Reads commit too
  // (read()), so Visible alone does not make data readable yet.
  engine::RequestPtr flush(FileHandle& fh, engine::FlushLevel level) override {
    auto& f = cast(fh);
    std::vector<engine::Write> writes = std::move(f.queued);
    f.queued.clear();  // failed writes are not retried by a later flush
    write_batch(f, writes);
    if (level == engine::FlushLevel::Durable) writing(f, [&] { commit(f); });
    return nullptr;
  }

  void close(FileHandle& fh) override {
    auto& f = static_cast<LogFile&>(fh);
    struct Release {  // whatever happens below, the handle's resources go
      LogFile& f;
      ~Release() {
        if (f.log_fd >= 0) ::close(f.log_fd), f.log_fd = -1;
        if (f.commits_fd >= 0) ::close(f.commits_fd), f.commits_fd = -1;
        if (f.agg_comm != MPI_COMM_NULL) MPI_Comm_free(&f.agg_comm);
        release_writer_lock(f);
      }
    } release{f};
    f.require_usable();  // a failed handle commits nothing more
    if (f.writable()) writing(f, [&] { close_epoch(f); });
  }

  // The last epoch, then the front file.
  void close_epoch(LogFile& f) {
    if (!settings_.front_file) {
      commit(f);
      return;
    }
    // Nothing new and the front file is the one the log recorded: keep it.
    int idle = f.written.empty() && f.buffered.empty() && f.direct.empty() && f.meta_ops == 0, all_idle = 0;
    MPI_Allreduce(&idle, &all_idle, 1, MPI_INT, MPI_MIN, f.comm);
    if (all_idle) {
      int current = 0;
      if (f.rank == 0) current = front_is_current(f);
      MPI_Bcast(&current, 1, MPI_INT, 0, f.comm);
      if (current) return;
    }
    // The last rank builds the front file while the aggregators write the last
    // epoch (it has the whole tree and index once the epoch's blocks are placed
    // and exchanged; with one aggregator per node it is the last one whose
    // data the aggregator takes). Its checksum is committed with the epoch
    // (so verify can check it), and it replaces the old front file only once
    // the commit record is on disk, so the front file never shows an epoch
    // that a crash could still lose. Its error, if any, is raised on every
    // rank after the commit.
    const int builder = f.size - 1;
    CaughtError front;
    FrontSum sum;
    auto build = [&] {
      if (f.rank == builder)
        front.run([&] { sum = build_front_file(f, f.epoch + 1, settings_.max_external_segments); });
    };
    auto front_op = [&]() -> Json {
      uint64_t v[3] = {uint64_t(front.code == 0), sum.size, sum.crc};
      MPI_Bcast(v, 3, MPI_UINT64_T, builder, f.comm);
      if (!v[0]) return Json();
      return Json{{"op", "front"}, {"epoch", f.epoch + 1}, {"size", v[1]}, {"crc", v[2]}};
    };
    commit(f, build, front_op, /*force=*/true);
    if (f.rank == builder && front.code == 0) front.run([&] { publish_front_file(f, settings_.sync); });
    share_error(f.comm, builder, front);
  }

  engine::Properties describe(FileHandle& fh) override {
    auto& f = static_cast<LogFile&>(fh);
    std::size_t blocks = 0;
    for (const auto& di : f.index) blocks += di.entries.size();
    auto text = [](auto v) { return std::to_string(v); };
    engine::Properties p = {
        {"engine", "log (log-structured), format version " + text(kVersion)},
        {"log", log_path(f.path) + ", " + text(f.log_end) + " bytes valid in " + text(f.epoch) + " epochs, " +
                    text(blocks) + " blocks in " + text(f.datasets.size()) + " datasets"},
        {"checksums", "CRC32C per " + text(f.header.checksum_unit) + " bytes of data, per block entry and per index"},
    };
    if (f.torn_bytes) p.emplace_back("torn tail", text(f.torn_bytes) + " bytes after the last commit (ignored)");
    if (!f.failed.empty()) p.emplace_back("unusable", f.failed);
    if (!f.damage.empty()) p.emplace_back("DAMAGED", f.damage + " (reading the " + text(f.epoch) + " intact epochs)");
    if (f.writable())
      p.emplace_back("writing", "buffer " + text(settings_.buffer_size) + " bytes per rank, " + text(f.aggregators) +
                                    " aggregator(s), regions of " + text(f.region_size) +
                                    " bytes per rank for writes of " + text(settings_.direct_threshold) +
                                    " bytes or more, sync " + (settings_.sync ? "on" : "off"));
    return p;
  }

  // ---- tree ----
  ObjectKind kind(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    auto it = f.tree.find(path);
    return it == f.tree.end() ? ObjectKind::None : it->second.kind;
  }
  void create_group(FileHandle& fh, const std::string& path) override {
    auto& f = writable(fh, "create group '" + path + "'");
    record(f, Json{{"op", "group"}, {"path", path}});
  }
  std::vector<std::string> list(FileHandle& fh, const std::string& group) override {
    const auto& c = cast(fh).tree.at(group).children;
    return {c.begin(), c.end()};
  }

  // ---- datasets ----
  void create_dataset(FileHandle& fh, const std::string& path, const DatasetSpec& spec) override {
    auto& f = writable(fh, "create dataset '" + path + "'");
    // Holes read as zero: a fill value would be silently lost.
    if (!spec.fill.empty())
      throw UsageError("cannot create dataset '" + path + "' in " + f.where() +
                       " with a fill value: engine 'log' does not keep fill values yet (conformance group 'fill')");
    Dims max_shape = spec.max_shape.empty() ? spec.shape : spec.max_shape;
    // The log has no chunks; they are chosen as the hdf5 engine would and kept
    // for conversion to native HDF5.
    Dims chunks = hdf5::resolve_chunks(path, spec, /*chunked_by_default=*/false, MiB);
    const bool chunked = !chunks.empty();
    record(f, Json{{"op", "dataset"},
                   {"path", path},
                   {"dtype", datatype_name(spec.dtype)},
                   {"shape", spec.shape},
                   {"max_shape", max_shape},
                   {"layout", chunked ? "chunked" : "contiguous"},
                   {"chunks", chunks}});
  }
  DatasetInfo dataset_info(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    return f.datasets.at(std::size_t(f.tree.at(path).dataset));
  }
  void extend(FileHandle& fh, const std::string& path, const Dims& new_shape) override {
    auto& f = writable(fh, "extend dataset '" + path + "'");
    record(f, Json{{"op", "extend"}, {"path", path}, {"shape", new_shape}});
  }

  // ---- data ----
  // Collective: every rank's writes kept since the last flush.
  void write_batch(LogFile& f, const std::vector<engine::Write>& requests) {
    if (!f.writable()) {
      if (requests.empty()) return;  // a flush point of a read-only file
      throw ReadOnlyError("cannot write to '" + requests[0].dataset + "': " + f.where() + " is open read-only");
    }
    for (const auto& req : requests)
      add_blocks(f, dataset_id(f, req.dataset), req.selection, req.data(), /*may_keep=*/true);
    // Collective: the data goes out when any rank's buffer is full, or has
    // uncopied large writes (their memory is only ours until we return: a
    // failed spill leaves no pointer to it behind, see fail()).
    int mine = f.buffer.size() >= settings_.buffer_size || !f.direct.empty(), any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, f.comm);
    if (any) writing(f, [&] { spill(f); });
  }

  // A copying write is taken at once if it has room: a large one-box write in
  // the rank's region of the log (written now, uncopied), a small one in the
  // buffer (one copy instead of two: the object model's, then ours). Any other
  // is left to the object model's queue and reaches write() at the flush
  // point, which spills collectively: the buffer never outgrows buffer_size.
  // A write whose buffer stays valid is kept (its bytes move at the flush);
  // one valid only now is staged if it can be, else copied and kept. Writes
  // are staged only while none is kept before them, so they stay in order.
  void put(FileHandle& fh, engine::Write w) override {
    auto& f = cast(fh);
    if (w.buffer.lifetime() == engine::Lifetime::DuringCall) {
      if (f.queued.empty() && stage(f, w.dataset, w.selection, w.data())) return;
      w = w.kept();
    }
    f.queued.push_back(std::move(w));
  }

  bool stage(LogFile& f, const std::string& dataset, const Selection& sel, const void* data) {
    if (!f.writable()) return false;  // write_batch() raises the error, at the flush point
    const int id = dataset_id(f, dataset);
    const DatasetInfo& info = f.datasets[std::size_t(id)];
    const uint64_t nbytes = sel.num_elements(info.shape) * datatype_size(info.dtype);
    if (nbytes >= settings_.direct_threshold) {
      const bool one_box = sel.kind() == Selection::Kind::All || is_one_box(sel);
      if (!one_box || !region_has_room(f, nbytes)) return false;  // write() counts it in the region demand
    } else if (f.buffer.size() + nbytes > settings_.buffer_size) {
      return false;
    }
    add_blocks(f, id, sel, static_cast<const unsigned char*>(data), /*may_keep=*/false);
    return true;
  }

  engine::RequestPtr read(FileHandle& fh, const std::string& path, const Selection& sel, Datatype,
                          void* out) override {
    auto& f = cast(fh);
    writing(f, [&] { commit(f); });  // a read sees every write before it (collective, like the read)
    // A damaged block found by one rank is raised on every rank.
    mpi::agree(f.comm, [&] {
      if (!read_through_bounding_box(f, path, sel, out)) read_selection(f, path, sel, out);
    });
    return nullptr;
  }

  // ---- attributes ----
  bool has_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    return cast(fh).tree.at(object).attrs.count(name) > 0;
  }
  void write_attribute(FileHandle& fh, const std::string& object, const std::string& name,
                       const AttributeValue& value) override {
    auto& f = writable(fh, "write attribute '" + name + "' on '" + object + "'");
    record(f, Json{{"op", "attr"}, {"object", object}, {"name", name}, {"value", attribute_to_json(value)}});
  }
  AttributeValue read_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    return cast(fh).tree.at(object).attrs.at(name);
  }
  std::vector<std::string> list_attributes(FileHandle& fh, const std::string& object) override {
    std::vector<std::string> out;
    for (const auto& [name, _] : cast(fh).tree.at(object).attrs) out.push_back(name);
    return out;
  }

 private:
  // Every call but close and describe goes through here: a failed handle raises.
  static LogFile& cast(FileHandle& fh) {
    auto& f = static_cast<LogFile&>(fh);
    f.require_usable();
    return f;
  }

  // Runs a step that writes or syncs the log. Its failures are raised on every
  // rank (the steps share them), so every rank marks the handle unusable and
  // drops what the open epoch held: nothing of it may be committed later (its
  // blocks may be partial, a failed sync may have lost pages, and writes not
  // yet copied point into buffers the caller frees once we raise).
  template <class Fn>
  static void writing(LogFile& f, Fn&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      if (f.failed.empty()) f.failed = e.what();
      f.buffered.clear();
      f.direct.clear();
      f.direct_data.clear();
      f.written.clear();
      f.pending_meta = Json::array();
      throw;
    }
  }
  static LogFile& writable(FileHandle& fh, const std::string& what) {
    auto& f = cast(fh);
    if (!f.writable()) throw ReadOnlyError("cannot " + what + ": " + f.where() + " is open read-only");
    return f;
  }

  // ---- files ----

  void create_files(LogFile& f) {
    namespace fs = std::filesystem;
    const std::string dir = directory_of(f.path);
    std::error_code ec;
    if (f.mode == OpenMode::CreateExclusive && (fs::exists(f.path, ec) || fs::exists(dir, ec)))
      throw ExistsError("cannot create file '" + f.path + "': it already exists (use create() to overwrite)");
    fs::create_directories(dir, ec);
    if (ec) throw IOError("cannot create directory '" + dir + "': " + ec.message());
    acquire_writer_lock(f);  // before anything is truncated: another writer may be at work
    auto make = [&](const std::string& p, const std::vector<unsigned char>& header) {
      int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) posix_fail("cannot create '" + p + "'");
      pwrite_all(fd, header.data(), header.size(), 0, "writing the header of '" + p + "'");
      ::close(fd);  // made durable by the first commit's syncs
    };
    make(log_path(f.path), f.header.encode());
    Writer ch;
    ch.raw(kCommitsMagic, 8);
    ch.u32(kVersion);
    ch.raw(f.header.file_id, 16);
    ch.u32(crc32c(ch.bytes.data(), ch.bytes.size()));
    ch.bytes.resize(kCommitsHeaderSize, 0);
    make(commits_path(f.path), ch.bytes);
    // No front file until close: an old one (of any engine) must not describe
    // this file, and a log whose front file is missing is recognised as a log.
    if (::unlink(f.path.c_str()) != 0 && errno != ENOENT) posix_fail("cannot remove old file '" + f.path + "'");
    // The new files' names (and the old front file's removal) are durable
    // before any epoch can be: a commit syncs file contents, not directories.
    if (settings_.sync)
      for (const std::string& d : {dir, fs::absolute(f.path).parent_path().string()}) {
        int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || ::fsync(fd) != 0) {
          if (fd >= 0) ::close(fd);
          posix_fail("cannot sync directory '" + d + "'");
        }
        ::close(fd);
      }
  }

  // Rank 0: validates the commit journal and reads every committed index
  // record. Returns the replay blob: file id, checksum unit, log_end, epoch,
  // commits_end, torn bytes, then (epoch, size, bytes) per index record.
  std::vector<unsigned char> read_committed(LogFile& f) {
    LogState st = scan_log(f.path);
    if (!st.damage.empty()) {
      if (st.commits.empty()) throw CorruptionError(st.damage + " (no intact epoch before it)");
      if (f.writable())
        throw CorruptionError(st.damage + ". " + f.where() + " is not opened for writing: that would build on a "
                              "damaged log (epochs 1.." + std::to_string(st.commits.size()) +
                              " are intact; open it read-only to read them, h5loom convert to copy them)");
      std::fprintf(stderr, "h5loom: warning: %s; reading the %zu intact epochs before it\n", st.damage.c_str(),
                   st.commits.size());
    }
    // (A damaged journal has lost epochs the front file may show: that is reported already.)
    check_front_binding(f.path, st.header, st.damage.empty() ? st.commits.size() : UINT64_MAX);
    Writer w;
    w.raw(st.header.file_id, 16);
    w.u64(st.header.checksum_unit);
    w.u64(st.log_end);
    w.u64(st.commits.size());
    w.u64(kCommitsHeaderSize + st.commits.size() * kCommitRecordSize);
    w.u64(st.torn_log_bytes);
    w.u64(st.damage.size());
    w.raw(st.damage.data(), st.damage.size());
    for (std::size_t i = 0; i < st.commits.size(); ++i) {
      w.u64(st.commits[i].epoch);
      w.u64(st.index_records[i].size());
      w.raw(st.index_records[i].data(), st.index_records[i].size());
    }
    return std::move(w.bytes);
  }

  void setup_aggregation(LogFile& f) {
    // Ranks are grouped; the first rank of each group (its aggregator) writes the
    // group's data. "node": one group per shared-memory node.
    int color = 0;
    MPI_Comm node;
    MPI_Comm_split_type(f.comm, MPI_COMM_TYPE_SHARED, f.rank, MPI_INFO_NULL, &node);
    int node_leader_world = f.rank;
    MPI_Bcast(&node_leader_world, 1, MPI_INT, 0, node);
    MPI_Comm_free(&node);
    f.node_leader = node_leader_world == f.rank;
    if (settings_.aggregators == "node") {
      color = node_leader_world;
    } else {
      int m = settings_.aggregators == "all" ? f.size : std::clamp(settings_.aggregator_count, 1, f.size);
      // Contiguous groups of ranks, as even as possible.
      color = int((int64_t(f.rank) * m) / f.size);
    }
    MPI_Comm_split(f.comm, color, f.rank, &f.agg_comm);
    MPI_Comm_rank(f.agg_comm, &f.agg_rank);
    MPI_Comm_size(f.agg_comm, &f.agg_size);
    int leader = f.agg_rank == 0 ? 1 : 0;
    MPI_Allreduce(&leader, &f.aggregators, 1, MPI_INT, MPI_SUM, f.comm);
  }

  // ---- writing ----

  // A hyperslab that is a single dense box (its start and count say it all).
  static bool is_one_box(const Selection& sel) {
    return sel.kind() == Selection::Kind::Hyperslab && sel.is_box() && product(sel.block()) == 1;
  }

  // Takes one write, one block per box of its selection: copied into the
  // buffer, or - if `may_keep` (the data stays valid until write() returns)
  // and the box is large and whole - kept as a pointer and written uncopied.
  void add_blocks(LogFile& f, int id, const Selection& sel, const unsigned char* src, bool may_keep) {
    const DatasetInfo& info = f.datasets[std::size_t(id)];
    const std::size_t es = datatype_size(info.dtype);
    if (is_one_box(sel)) {
      // The common case, one box (a row, a slab): no box list to build.
      add_block(f, id, sel.start(), sel.count(), src, sel.count(), nullptr, es, may_keep);
      return;
    }
    const Dims dense = sel.selected_shape(info.shape);
    for (const auto& box : selection_boxes(sel, info.shape))
      add_block(f, id, box.start, box.count, src, dense, &box.dense_start, es, may_keep);
  }

  // One box [start, +count) of dataset `id`, whose elements are at dense_start
  // (null: all of it) of the dense array src of shape `dense`.
  void add_block(LogFile& f, int id, const Dims& start, const Dims& count, const unsigned char* src,
                 const Dims& dense, const Dims* dense_start, std::size_t es, bool may_keep) {
    const uint64_t nbytes = product(count) * es;
    if (nbytes == 0) return;
    const bool whole = dense_start == nullptr || count == dense;
    const uint64_t counter = f.counter++;
    if (whole && nbytes >= settings_.direct_threshold && f.region_size > 0) {
      f.region_demand += nbytes;
      if (region_has_room(f, nbytes)) return write_to_region(f, new_entry(f, id, start, count, nbytes, counter), src);
    }
    if (may_keep && whole && nbytes >= settings_.direct_threshold) {
      f.direct.push_back(new_entry(f, id, start, count, nbytes, counter));
      f.direct_data.push_back(src);
      return;
    }
    const uint64_t at = f.buffer.size();  // within the buffer until written
    unsigned char* dst = f.buffer.append(nbytes, settings_.buffer_size);
    if (whole) std::memcpy(dst, src, nbytes);
    else copy_subbox(src, dense, *dense_start, dst, count, Dims(count.size(), 0), count, es);
    // Coalesce: a write that continues the previous one (the next row, the
    // next run of a 1-D array) grows its block instead of adding one. Only
    // if nothing was written in between, so that the write order stays exact.
    if (!f.buffered.empty()) {
      BlockEntry& last = f.buffered.back();
      if (last.dataset == uint32_t(id) && last.counter + 1 == counter && last.offset + last.nbytes == at &&
          append_box(last.start, last.count, start, count)) {
        last.nbytes += nbytes;
        last.counter = counter;
        return;
      }
    }
    f.buffered.push_back(new_entry(f, id, start, count, nbytes, counter));
    f.buffered.back().offset = at;
  }

  static BlockEntry new_entry(const LogFile& f, int id, const Dims& start, const Dims& count, uint64_t nbytes,
                              uint64_t counter) {
    BlockEntry e;
    e.dataset = uint32_t(id);
    e.rank = uint32_t(f.rank);
    e.counter = counter;
    e.start = start;
    e.count = count;
    e.nbytes = nbytes;
    return e;
  }

  // ---- regions: large writes go to the log at once, each rank to its own region ----

  static uint64_t round_up(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

  static bool region_has_room(const LogFile& f, uint64_t nbytes) {
    return f.region_size > 0 && f.region_used + nbytes <= f.region_size;
  }

  // Opens a round of regions after everything placed so far (every rank, at
  // the same point of the collective sequence).
  static void open_round(LogFile& f) {
    f.region_base = round_up(f.log_end, f.region_alignment);
    f.region_used = 0;
    f.region_demand = 0;
  }

  // Collective: ends the round. The log continues after the last byte any rank
  // wrote in its region; the next round's regions are as large as the largest
  // demand of this one (the first round's are region_size), so that a code that
  // writes as much at every step leaves almost no holes. A region write that
  // failed on any rank is raised here, on every rank.
  void close_round(LogFile& f) {
    uint64_t mine[3] = {f.region_used ? uint64_t(f.rank) * f.region_size + f.region_used : 0, f.region_demand,
                        uint64_t(f.region_error.empty() ? 0 : 1)},
             most[3] = {0, 0, 0};
    MPI_Allreduce(mine, most, 3, MPI_UINT64_T, MPI_MAX, f.comm);
    if (most[0] > 0) {
      f.log_end = f.region_base + most[0];
      f.regions_in_epoch = true;
    }
    if (most[1] > 0) {
      f.region_size =
          std::min(round_up(most[1], f.region_alignment), round_up(settings_.region_size, f.region_alignment));
      last_region_size_ = f.region_size;
    }
    f.region_used = f.region_demand = 0;
    if (most[2]) {
      // The round is over either way: the blocks written in it keep their
      // places, and the next writes go to a new round after them.
      open_round(f);
      CaughtError e;
      if (!f.region_error.empty()) e.code = int(ErrorCode::IO), e.msg = f.region_error;
      f.region_error.clear();
      share_first_error(f.comm, f.rank, e);
    }
  }

  // Where this rank's next region write goes.
  static uint64_t region_cursor(const LogFile& f) {
    return f.region_base + uint64_t(f.rank) * f.region_size + f.region_used;
  }

  // Gives a block of the open epoch its log offset and the checksums of its
  // bytes `p` (computed by the rank that owns the data).
  static void seal(const LogFile& f, BlockEntry& e, const unsigned char* p, uint64_t at) {
    const uint64_t unit = f.header.checksum_unit;
    e.epoch = uint32_t(f.epoch + 1);
    e.unit_crcs.clear();
    for (uint64_t u = 0; u < e.nbytes; u += unit) e.unit_crcs.push_back(crc32c(p + u, std::min(unit, e.nbytes - u)));
    e.offset = at;
  }

  // Writes one block to this rank's region now, from the caller's memory; it
  // joins the epoch's written blocks. An I/O error is kept for close_round (a
  // write is not a collective call: raising it here could leave the other
  // ranks waiting in the next collective one).
  void write_to_region(LogFile& f, BlockEntry e, const unsigned char* src) {
    seal(f, e, src, region_cursor(f));
    CaughtError err;
    err.run([&] {
      traced_pwrite(f.log_fd, src, e.nbytes, e.offset, log_path(f.path),
                    "writing dataset '" + f.dataset_paths[e.dataset] + "' to the log of '" + f.path + "'");
    });
    if (err.code != 0) {
      if (f.region_error.empty()) f.region_error = err.msg;
      return;
    }
    if (settings_.sync) start_write_back(f.log_fd, e.offset, e.nbytes);
    f.region_used += e.nbytes;
    f.written.push_back(std::move(e));
  }

  // The id of a dataset; the last one is remembered (writes come in runs).
  static int dataset_id(LogFile& f, const std::string& path) {
    if (f.last_dataset_id >= 0 && path == f.last_dataset_path) return f.last_dataset_id;
    f.last_dataset_id = f.tree.at(path).dataset;
    f.last_dataset_path = path;
    return f.last_dataset_id;
  }

  // Collective: every rank's buffered and direct data goes to the log through
  // the aggregators. A rank's bytes are its buffer, then its direct pieces.
  void spill(LogFile& f) {
    write_placed(f, place(f));
    open_round(f);
  }

  // Where a spill's bytes go, decided before they move.
  struct Placement {
    struct Piece {
      const unsigned char* data;
      uint64_t nbytes;
    };
    std::vector<Piece> pieces;  // this rank's, in log order, through the aggregators
    uint64_t mine = 0, my_offset = 0, total = 0;
    Piece own{nullptr, 0};      // this rank's buffer, if it goes to its region instead
    uint64_t own_offset = 0;
  };

  // Collective: gives every buffered and direct block of every rank its place
  // in the log and its checksums (so the index is known before the data moves).
  Placement place(LogFile& f) {
    Placement pl;
    // A rank whose coalesced bytes add up to a large write writes them itself,
    // into its region, like any large write (aggregation pays for small pieces
    // of many ranks, not for a rank's megabytes).
    bool buffer_in_region = false;
    if (f.region_size > 0 && f.buffer.size() >= settings_.direct_threshold) {
      f.region_demand += f.buffer.size();
      if (region_has_room(f, f.buffer.size())) {
        const uint64_t at = region_cursor(f);
        for (auto& e : f.buffered) seal(f, e, f.buffer.data() + e.offset, at + e.offset);
        pl.own = {f.buffer.data(), f.buffer.size()};
        pl.own_offset = at;
        f.region_used += f.buffer.size();
        buffer_in_region = true;
      }
    }
    close_round(f);
    auto& pieces = pl.pieces;
    if (!f.buffer.empty() && !buffer_in_region) pieces.push_back({f.buffer.data(), f.buffer.size()});
    for (std::size_t i = 0; i < f.direct.size(); ++i) pieces.push_back({f.direct_data[i], f.direct[i].nbytes});
    uint64_t& mine = pl.mine;
    for (const auto& p : pieces) mine += p.nbytes;

    // Where each rank's bytes land: the group's region follows the groups before
    // it; within the group, ranks follow each other in order.
    uint64_t in_group = 0, group_total = 0, group_base = 0;
    uint64_t& total = pl.total;
    MPI_Exscan(&mine, &in_group, 1, MPI_UINT64_T, MPI_SUM, f.agg_comm);
    if (f.agg_rank == 0) in_group = 0;
    MPI_Allreduce(&mine, &group_total, 1, MPI_UINT64_T, MPI_SUM, f.agg_comm);
    uint64_t contribution = f.agg_rank == 0 ? group_total : 0;
    MPI_Exscan(&contribution, &group_base, 1, MPI_UINT64_T, MPI_SUM, f.comm);
    if (f.rank == 0) group_base = 0;
    MPI_Bcast(&group_base, 1, MPI_UINT64_T, 0, f.agg_comm);
    MPI_Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, f.comm);
    if (total == 0) return pl;
    pl.my_offset = f.log_end + group_base + in_group;
    const uint64_t my_offset = pl.my_offset;
    uint64_t at = my_offset;
    if (!buffer_in_region) {
      for (auto& e : f.buffered) seal(f, e, f.buffer.data() + e.offset, my_offset + e.offset);
      at += f.buffer.size();
    }
    for (std::size_t i = 0; i < f.direct.size(); ++i) {
      seal(f, f.direct[i], f.direct_data[i], at);
      at += f.direct[i].nbytes;
    }
    return pl;
  }

  // Collective: moves the placed bytes to the log (members to their aggregator,
  // aggregators to the file); the blocks join the epoch's written ones.
  // `meanwhile` (if given) runs on every rank while its bytes move: a member
  // runs it once its messages are posted (the aggregator takes them without
  // it), an aggregator before it writes.
  // A failed write does not stop the bytes moving (no rank is left waiting):
  // the error is raised on every rank at the end, and none of the blocks of
  // this placement joins the epoch (their data may be incomplete).
  void write_placed(LogFile& f, const Placement& pl, const std::function<void()>& meanwhile = {}) {
    std::string what = "writing to the log of '" + f.path + "'";
    CaughtError failed;  // this rank's first failed write
    auto write_at = [&](const unsigned char* p, uint64_t n, uint64_t off) {
      if (failed.code != 0) return;
      failed.run([&] { traced_pwrite(f.log_fd, p, n, off, log_path(f.path), what); });
      if (failed.code == 0 && settings_.sync) start_write_back(f.log_fd, off, n);
    };
    if (pl.own.nbytes) write_at(pl.own.data, pl.own.nbytes, pl.own_offset);  // the buffer, in the rank's region
    if (pl.total == 0) {
      if (meanwhile) meanwhile();
      finish_placed(f, failed);
      return;
    }
    const auto& pieces = pl.pieces;
    const uint64_t mine = pl.mine, my_offset = pl.my_offset, total = pl.total;

    constexpr uint64_t kMessage = 64 * MiB;  // MPI counts are int; also the aggregator's pipeline step
    std::vector<uint64_t> sizes(std::size_t(f.agg_size));
    if (f.agg_size > 1) MPI_Gather(&mine, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, 0, f.agg_comm);
    if (f.agg_rank != 0) {
      // Members send their pieces in messages of at most kMessage bytes, in
      // order (MPI keeps the order of messages between two ranks).
      std::vector<MPI_Request> sends;
      for (const auto& p : pieces)
        for (uint64_t done = 0; done < p.nbytes; done += kMessage) {
          sends.emplace_back();
          MPI_Isend(p.data + done, int(std::min(kMessage, p.nbytes - done)), MPI_BYTE, 0, 77, f.agg_comm,
                    &sends.back());
        }
      if (meanwhile) meanwhile();
      MPI_Waitall(int(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
    } else {
      if (meanwhile) meanwhile();
      uint64_t off = my_offset;
      for (const auto& p : pieces) write_at(p.data, p.nbytes, off), off += p.nbytes;
      // Then each member's bytes, receiving the next message while writing one.
      uint64_t biggest = 0;
      for (int r = 1; r < f.agg_size; ++r) biggest = std::max(biggest, sizes[std::size_t(r)]);
      const uint64_t cap = std::min(kMessage, biggest);
      if (f.receive_size < cap) {  // kept between flushes: fresh pages cost as much as the copy
        for (auto& b : f.receive) b.reset(new unsigned char[cap]);
        f.receive_size = cap;
      }
      auto& bufs = f.receive;
      for (int r = 1; r < f.agg_size; ++r) {
        uint64_t left = sizes[std::size_t(r)];
        int cur = 0, got = 0;
        MPI_Request req = MPI_REQUEST_NULL;
        if (left > 0) MPI_Irecv(bufs[cur].get(), int(f.receive_size), MPI_BYTE, r, 77, f.agg_comm, &req);
        while (left > 0) {
          MPI_Status st;
          MPI_Wait(&req, &st);
          MPI_Get_count(&st, MPI_BYTE, &got);
          left -= uint64_t(got);
          if (left > 0) MPI_Irecv(bufs[1 - cur].get(), int(f.receive_size), MPI_BYTE, r, 77, f.agg_comm, &req);
          write_at(bufs[cur].get(), uint64_t(got), off);
          off += uint64_t(got);
          cur = 1 - cur;
        }
      }
    }
    f.log_end += total;
    finish_placed(f, failed);
  }

  // Collective: the placed blocks join the epoch's written ones - unless a
  // write failed on any rank, which is then raised everywhere; the buffer is
  // reused either way.
  void finish_placed(LogFile& f, CaughtError& failed) {
    int bad = failed.code != 0, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, f.comm);
    if (!any) {
      for (auto& e : f.buffered) f.written.push_back(std::move(e));
      for (auto& e : f.direct) f.written.push_back(std::move(e));
    }
    f.buffered.clear();
    f.direct.clear();
    f.direct_data.clear();
    f.buffer.clear(/*keep_at_most=*/settings_.buffer_size);
    if (any) share_first_error(f.comm, f.rank, failed);
  }

  // Collective: ends the epoch if anything happened in it. After it returns the
  // epoch is on disk with its commit record, and every rank's index has it.
  // `while_writing` (if given, and only if there was an epoch to commit) runs on
  // every rank once the index is complete, before the rank's data moves.
  // Returns whether there was an epoch to commit.
  // `front_op` (if given; collective) returns the front file's checksum record
  // once `while_writing` has run, to be committed with the epoch; `force`
  // commits an epoch even if nothing happened (to record that checksum).
  bool commit(LogFile& f, const std::function<void()>& while_writing = {},
              const std::function<Json()>& front_op = {}, bool force = false) {
    if (!f.writable()) return false;
    // The blocks get their places first, so that the index is exchanged
    // before the bytes move and `while_writing` can use it meanwhile.
    const Placement placed = place(f);
    Writer mine;
    uint64_t entries = 0;
    for (const auto* list : {&f.written, &f.buffered, &f.direct}) {
      for (const auto& e : *list) e.encode(mine);
      entries += list->size();
    }
    uint64_t local[2] = {entries, mine.bytes.size()}, global[2] = {0, 0};
    MPI_Allreduce(local, global, 2, MPI_UINT64_T, MPI_SUM, f.comm);
    if (global[0] == 0 && f.meta_ops == 0 && !force) {  // then nothing was placed either
      open_round(f);
      return false;
    }
    std::vector<std::uint8_t> meta = Json::to_cbor(f.pending_meta);
    require_same_metadata(f, meta);

    // Everyone gets every rank's entries (reads may touch any block).
    std::vector<int> counts(std::size_t(f.size)), displs(std::size_t(f.size));
    int n = int(mine.bytes.size());
    MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, f.comm);
    uint64_t sum = 0;
    for (int r = 0; r < f.size; ++r) displs[std::size_t(r)] = int(sum), sum += uint64_t(counts[std::size_t(r)]);
    if (sum > uint64_t(INT32_MAX)) throw IOError(f.where() + ": the index of one epoch exceeds 2 GiB; flush more often");
    std::vector<unsigned char> all(sum);
    MPI_Allgatherv(mine.bytes.data(), n, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, f.comm);
    const uint64_t epoch = f.epoch + 1;
    Reader r{all.data(), all.size(), 0, f.where()};
    for (uint64_t i = 0; i < global[0]; ++i) add_entry(f, BlockEntry::decode(r));
    write_placed(f, placed, while_writing);
    f.written.clear();
    if (front_op) {
      if (Json op = front_op(); !op.is_null()) {
        apply_op(f, op);
        f.pending_meta.push_back(std::move(op));
        if (f.rank == 0) meta = Json::to_cbor(f.pending_meta);
      }
    }

    // Rank 0 appends the index record while the aggregators make their data
    // durable; each syncs what it wrote (one sync round, in parallel), and only
    // when all have done so does the commit record go out.
    uint64_t new_end = 0;
    CommitRecord c;
    on_root(f.comm, f.rank, [&] {
      Writer rec;
      rec.raw(kIndexMagic, 4);
      rec.u32(kVersion);
      rec.u64(epoch);
      rec.u64(meta.size());
      rec.u64(all.size());
      rec.u64(global[0]);
      rec.u64(0);
      rec.raw(meta.data(), meta.size());
      rec.raw(all.data(), all.size());
      c.epoch = epoch;
      c.index_offset = f.log_end;
      c.index_size = rec.bytes.size();
      c.index_crc = crc32c(rec.bytes.data(), rec.bytes.size());
      c.log_end = f.log_end + rec.bytes.size();
      traced_pwrite(f.log_fd, rec.bytes.data(), rec.bytes.size(), c.index_offset, log_path(f.path),
                    "writing an index record to " + f.where());
    });
    int synced = 1, all_synced = 0;
    // Region writes are synced by one rank per node (a sync flushes the node's
    // pages of the file, whoever wrote them).
    const bool syncs = f.agg_rank == 0 || f.rank == 0 || (f.node_leader && f.regions_in_epoch);
    if (settings_.sync && syncs) synced = traced_fdatasync(f.log_fd, log_path(f.path)) == 0 ? 1 : 0;
    MPI_Allreduce(&synced, &all_synced, 1, MPI_INT, MPI_MIN, f.comm);
    if (!all_synced) throw IOError("cannot sync the log of '" + f.path + "' to storage (fdatasync failed)");
    on_root(f.comm, f.rank, [&] {
      c.unix_time_ns = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count());
      // The commit record goes last: until it is on disk, the epoch does not exist.
      auto bytes = c.encode();
      try {
        traced_pwrite(f.commits_fd, bytes.data(), bytes.size(), f.commits_end, commits_path(f.path),
                      "writing a commit record of " + f.where());
        if (settings_.sync && traced_fdatasync(f.commits_fd, commits_path(f.path)) != 0)
          posix_fail("cannot sync the commit journal of '" + f.path + "' (" + commits_path(f.path) + ")");
      } catch (const Error&) {
        // The flush failed: its record is taken back (as far as the storage
        // still lets us), so that a reader does not see an epoch we reported lost.
        (void)!::ftruncate(f.commits_fd, off_t(f.commits_end));
        throw;
      }
      new_end = c.log_end;
    });
    MPI_Bcast(&new_end, 1, MPI_UINT64_T, 0, f.comm);
    f.log_end = new_end;
    f.epoch = epoch;
    f.commits_end += kCommitRecordSize;
    f.pending_meta = Json::array();
    f.meta_ops = 0;
    f.regions_in_epoch = false;
    open_round(f);
    return true;
  }

  // Collective: the epoch's metadata operations (collective calls: every rank
  // makes the same ones) are the same on every rank - else the log (rank 0's)
  // and the front file (the last rank's tree) would disagree.
  static void require_same_metadata(const LogFile& f, const std::vector<std::uint8_t>& meta) {
    if (f.size == 1) return;
    const uint32_t crc = crc32c(meta.data(), meta.size());
    std::vector<uint32_t> all(std::size_t(f.size));
    MPI_Allgather(&crc, 1, MPI_UINT32_T, all.data(), 1, MPI_UINT32_T, f.comm);
    for (int r = 1; r < f.size; ++r)
      if (all[std::size_t(r)] != all[0])
        throw CollectiveMismatchError(f.where() + ": rank " + std::to_string(r) +
                         " made different collective calls than rank 0 in this epoch (groups, datasets, extents or "
                         "attribute values differ); the epoch is not committed");
  }

  // ---- reading ----

  static void sort_index(DatasetIndex& di) {
    if (!di.dirty) return;
    std::sort(di.entries.begin(), di.entries.end(),
              [](const BlockEntry& a, const BlockEntry& b) { return a.start < b.start; });
    di.dirty = false;
  }

  // Collects the entries whose box meets [qs, qs+qc): a range search on the
  // lexicographically sorted starts, one dimension at a time.
  static void search(const DatasetIndex& di, std::size_t lo, std::size_t hi, std::size_t d, const Dims& qs,
                     const Dims& qc, std::vector<const BlockEntry*>& out) {
    const std::size_t nd = qs.size();
    const uint64_t from = qs[d] + 1 > di.max_count[d] ? qs[d] + 1 - di.max_count[d] : 0;  // start > qs - maxc
    const uint64_t to = qs[d] + qc[d];                                                      // start < qs + qc
    auto first = std::partition_point(di.entries.begin() + long(lo), di.entries.begin() + long(hi),
                                      [&](const BlockEntry& e) { return e.start[d] < from; });
    auto last = std::partition_point(first, di.entries.begin() + long(hi),
                                     [&](const BlockEntry& e) { return e.start[d] < to; });
    if (d + 1 == nd) {
      Dims s, c;
      for (auto it = first; it != last; ++it)
        if (intersect(it->start, it->count, qs, qc, s, c)) out.push_back(&*it);
      return;
    }
    for (auto it = first; it != last;) {
      auto group_end = std::partition_point(it, last, [&](const BlockEntry& e) { return e.start[d] == it->start[d]; });
      search(di, std::size_t(it - di.entries.begin()), std::size_t(group_end - di.entries.begin()), d + 1, qs, qc, out);
      it = group_end;
    }
  }

  void read_selection(LogFile& f, const std::string& path, const Selection& sel, void* out) {
    const int id = f.tree.at(path).dataset;
    const DatasetInfo& info = f.datasets.at(std::size_t(id));
    DatasetIndex& di = f.index.at(std::size_t(id));
    const std::size_t es = datatype_size(info.dtype);
    const Dims dense = sel.selected_shape(info.shape);
    auto* dst = static_cast<unsigned char*>(out);
    if (product(dense) > 0) std::memset(dst, 0, product(dense) * es);  // never-written elements read as 0, as in HDF5
    if (di.entries.empty()) return;
    sort_index(di);

    struct Hit {
      const BlockEntry* entry;
      const PlacedBox* box;
    };
    auto boxes = selection_boxes(sel, info.shape);
    std::vector<Hit> hits;
    std::vector<const BlockEntry*> found;
    for (const auto& b : boxes) {
      found.clear();
      search(di, 0, di.entries.size(), 0, b.start, b.count, found);
      for (const auto* e : found) hits.push_back({e, &b});
    }
    // Older writes first, so that later ones overwrite them.
    std::stable_sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
      return std::tie(a.entry->epoch, a.entry->rank, a.entry->counter) <
             std::tie(b.entry->epoch, b.entry->rank, b.entry->counter);
    });
    // What each hit needs: the checksum units covering its bytes. A large block
    // that lands whole and contiguous in the output is read straight there;
    // the others are staged, and staged reads that lie close together in the
    // log are merged into one (a rank's many small writes were appended together).
    const uint64_t unit = f.header.checksum_unit;
    struct Need {
      const BlockEntry* e;
      Dims in_entry, in_dense, count;
      uint64_t r0, r1;            // unit-aligned byte range within the block
      unsigned char* direct;      // the output, or null: staged
      std::size_t staged = 0;     // offset in the staging buffer
    };
    constexpr uint64_t kDirectMin = 1 << 20, kGap = 64 << 10, kBatch = 256ull << 20;
    std::vector<Need> needs;
    needs.reserve(hits.size());
    Dims s, c;
    for (const auto& h : hits) {
      const BlockEntry& e = *h.entry;
      intersect(e.start, e.count, h.box->start, h.box->count, s, c);
      Need n{&e, Dims(s.size()), Dims(s.size()), c, 0, 0, nullptr};
      Dims last(s.size());
      for (std::size_t d = 0; d < s.size(); ++d) {
        n.in_entry[d] = s[d] - e.start[d];
        last[d] = n.in_entry[d] + c[d] - 1;
        n.in_dense[d] = h.box->dense_start[d] + (s[d] - h.box->start[d]);
      }
      if (e.unit_crcs.size() != (e.nbytes + unit - 1) / unit)
        throw CorruptionError("checksum list of " + describe_block(f, path, e) + " has the wrong length");
      uint64_t b0 = linear_index(n.in_entry, e.count) * es, b1 = (linear_index(last, e.count) + 1) * es;
      n.r0 = b0 / unit * unit;
      n.r1 = std::min((b1 + unit - 1) / unit * unit, e.nbytes);
      bool contiguous = c == e.count;
      for (std::size_t d = 1; d < c.size(); ++d) contiguous = contiguous && c[d] == dense[d];
      if (contiguous && e.nbytes >= kDirectMin) n.direct = dst + linear_index(n.in_dense, dense) * es;
      needs.push_back(std::move(n));
    }
    std::vector<unsigned char> staging;
    for (std::size_t begin = 0; begin < needs.size();) {
      // A batch of needs (in write order) whose staged bytes stay under kBatch.
      std::size_t end = begin;
      uint64_t staged = 0;
      while (end < needs.size() && (end == begin || staged < kBatch)) {
        if (!needs[end].direct) staged += needs[end].r1 - needs[end].r0;
        ++end;
      }
      // Staged reads, merged in log order.
      std::vector<Need*> order;
      for (std::size_t i = begin; i < end; ++i)
        if (!needs[i].direct) order.push_back(&needs[i]);
      std::sort(order.begin(), order.end(),
                [](const Need* a, const Need* b) { return a->e->offset + a->r0 < b->e->offset + b->r0; });
      struct Span { uint64_t from, to; std::size_t at; };
      std::vector<Span> spans;
      uint64_t total = 0;
      for (Need* n : order) {
        uint64_t from = n->e->offset + n->r0, to = n->e->offset + n->r1;
        if (spans.empty() || from > spans.back().to + kGap || from < spans.back().from) {
          spans.push_back({from, to, total});
        } else if (to > spans.back().to) {
          spans.back().to = to;
        }
        total = spans.back().at + (spans.back().to - spans.back().from);
        n->staged = spans.back().at + (from - spans.back().from);
      }
      staging.resize(total);
      for (const auto& sp : spans)
        traced_pread(f.log_fd, staging.data() + sp.at, sp.to - sp.from, sp.from, log_path(f.path),
                     "reading dataset '" + path + "' in " + f.where());
      // Then every need of the batch, in write order: read direct ones, check, copy.
      for (std::size_t i = begin; i < end; ++i) {
        Need& n = needs[i];
        const BlockEntry& e = *n.e;
        unsigned char* bytes = n.direct ? n.direct : staging.data() + n.staged;
        if (n.direct)
          traced_pread(f.log_fd, bytes, n.r1 - n.r0, e.offset + n.r0, log_path(f.path), "reading " + describe_block(f, path, e));
        for (uint64_t at = n.r0; at < n.r1; at += unit) {
          uint64_t len = std::min(unit, e.nbytes - at);
          if (crc32c(bytes + (at - n.r0), len) != e.unit_crcs[at / unit])
            throw CorruptionError("checksum mismatch in " + describe_block(f, path, e) + ", bytes " +
                                  std::to_string(at) + ".." + std::to_string(at + len) + " of the block");
        }
        if (!n.direct) copy_subbox(bytes, e.count, n.in_entry, dst, dense, n.in_dense, n.count, es, n.r0);
      }
      begin = end;
    }
  }

  // A strided selection of many small pieces (every 8th particle, say) is read
  // as its bounding box, then picked apart in memory: one range search and
  // large reads instead of one per piece. Only when the box is not much larger.
  bool read_through_bounding_box(LogFile& f, const std::string& path, const Selection& sel, void* out) {
    if (sel.kind() != Selection::Kind::Hyperslab || sel.is_box()) return false;
    const DatasetInfo& info = f.datasets.at(std::size_t(f.tree.at(path).dataset));
    auto boxes = selection_boxes(sel, info.shape);
    const Dims dense = sel.selected_shape(info.shape);
    if (boxes.size() < 64) return false;
    Dims lo = boxes.front().start, hi(lo.size(), 0);
    for (const auto& b : boxes)
      for (std::size_t d = 0; d < lo.size(); ++d)
        lo[d] = std::min(lo[d], b.start[d]), hi[d] = std::max(hi[d], b.start[d] + b.count[d]);
    Dims extent(lo.size());
    for (std::size_t d = 0; d < lo.size(); ++d) extent[d] = hi[d] - lo[d];
    if (product(extent) > 16 * product(dense) || product(extent) * datatype_size(info.dtype) > (512ull << 20))
      return false;
    const std::size_t es = datatype_size(info.dtype);
    std::vector<unsigned char> whole(product(extent) * es);
    read_selection(f, path, Selection::box(lo, extent), whole.data());
    Dims at(lo.size());
    for (const auto& b : boxes) {
      for (std::size_t d = 0; d < lo.size(); ++d) at[d] = b.start[d] - lo[d];
      copy_subbox(whole.data(), extent, at, static_cast<unsigned char*>(out), dense, b.dense_start, b.count, es);
    }
    return true;
  }

  static std::string describe_block(const LogFile& f, const std::string& path, const BlockEntry& e) {
    return "dataset '" + path + "' in " + f.where() + ": block at log offset " + std::to_string(e.offset) +
           " (epoch " + std::to_string(e.epoch) + ", rank " + std::to_string(e.rank) + ")";
  }

  Settings settings_;
  // The region size the last round of this process's last file settled on
  // (0: none yet); a hint for the next file's first round.
  static inline uint64_t last_region_size_ = 0;
};

}  // namespace h5loom::logengine

namespace h5loom::engine {
std::unique_ptr<Engine> make_log_engine(Knobs& knobs) {
  logengine::Settings s;
  s.buffer_size = knobs.get<uint64_t>("buffer_size", s.buffer_size);
  if (s.buffer_size == 0) knobs.bad_value("buffer_size", "must be at least 1 byte");
  if (const Json* a = knobs.raw("aggregators")) {
    if (a->is_string()) {
      s.aggregators = a->get<std::string>();
      if (s.aggregators != "node" && s.aggregators != "all")
        knobs.bad_value("aggregators", "'" + s.aggregators + "' is not 'node', 'all' or a positive count");
    } else if (a->is_number_integer() && a->get<int64_t>() > 0) {
      s.aggregators = "count";
      s.aggregator_count = int(std::min<int64_t>(a->get<int64_t>(), INT32_MAX));
    } else {
      knobs.bad_value("aggregators", a->dump() + " is not 'node', 'all' or a positive count");
    }
  }
  s.direct_threshold = knobs.get<uint64_t>("direct_threshold", s.direct_threshold);
  s.region_size = knobs.get<uint64_t>("region_size", s.region_size);
  s.region_alignment = knobs.get<uint64_t>("region_alignment", s.region_alignment);
  if (s.region_alignment == 0 || s.region_alignment % logengine::kRegionAlignment != 0 ||
      s.region_alignment > (uint64_t(1) << 30))
    knobs.bad_value("region_alignment",
                    std::to_string(s.region_alignment) + " is not a multiple of 4096 bytes up to 1 GiB");
  s.sync = knobs.get<bool>("sync", s.sync);
  s.checksum_unit = knobs.get<uint64_t>("checksum_unit", s.checksum_unit);
  if (s.checksum_unit < 512 || s.checksum_unit > (1u << 30))
    knobs.bad_value("checksum_unit", std::to_string(s.checksum_unit) + " is outside [512, 2^30]");
  s.front_file = knobs.get<bool>("front_file", s.front_file);
  s.max_external_segments = knobs.get<uint64_t>("max_external_segments", s.max_external_segments);
  return std::make_unique<logengine::LogEngine>(s);
}
}  // namespace h5loom::engine
