// The log engine on disk, outside the write path: scanning a log and its commit
// journal (open, verify), the HDF5 front file, and detection of log files.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/registry.hpp"
#include "engines/hdf5/hdf5_extras.hpp"
#include "engines/log/boxes.hpp"
#include "engines/log/log_internal.hpp"

namespace h5loom::logengine {

using namespace logfmt;

namespace {

// An fd closed on scope exit.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

uint64_t size_of(int fd) {
  struct stat sb;
  return ::fstat(fd, &sb) == 0 ? uint64_t(sb.st_size) : 0;
}

std::unique_ptr<engine::Engine> front_engine() {
  // One process writes it, built in memory and written out at once (HDF5's core
  // driver): through MPI-IO it cost about 15 % of a log-engine iotest write.
  engine::Knobs knobs("hdf5", engine::Json{{"collective_metadata", false}, {"driver", "core"}});
  return engine::make_hdf5_engine(knobs);
}

}  // namespace

LogFile::~LogFile() {
  if (log_fd >= 0) ::close(log_fd);
  if (commits_fd >= 0) ::close(commits_fd);
}

LogState scan_log(const std::string& front) {
  LogState st;
  const std::string lp = log_path(front), cp = commits_path(front);
  Fd log(::open(lp.c_str(), O_RDONLY | O_CLOEXEC));
  if (log.fd < 0) {
    if (errno == ENOENT)
      throw NotFoundError("file '" + front + "' has no log (" + lp + " does not exist); is it a log-engine file?");
    throw IOError("cannot open " + lp + ": " + std::strerror(errno));
  }
  Fd commits(::open(cp.c_str(), O_RDONLY | O_CLOEXEC));
  if (commits.fd < 0)
    throw CorruptionError("log file '" + front + "' has no commit journal (" + cp + "): " + std::strerror(errno));

  st.log_file_size = size_of(log.fd);
  std::vector<unsigned char> head(kLogHeaderSize);
  if (st.log_file_size < 44) throw CorruptionError(lp + " is too short to be an h5loom log (" +
                                                   std::to_string(st.log_file_size) + " bytes)");
  pread_all(log.fd, head.data(), std::min<uint64_t>(kLogHeaderSize, st.log_file_size), 0, "reading " + lp);
  try {
    st.header = LogHeader::decode(head.data(), head.size(), lp);
  } catch (const IOError& e) {
    throw CorruptionError(e.what());
  }

  const uint64_t csize = size_of(commits.fd);
  std::vector<unsigned char> journal(csize);
  if (csize) pread_all(commits.fd, journal.data(), csize, 0, "reading " + cp);
  if (csize < kCommitsHeaderSize || std::memcmp(journal.data(), kCommitsMagic, 8) != 0)
    throw CorruptionError(cp + " is not an h5loom commit journal");
  if (std::memcmp(journal.data() + 12, st.header.file_id, 16) != 0)
    throw CorruptionError(cp + " belongs to another log (file ids differ)");
  if (crc32c(journal.data(), 28) != Reader{journal.data(), csize, 28, cp}.u32())
    throw CorruptionError(cp + ": checksum mismatch in the journal header");

  uint64_t at = kCommitsHeaderSize;
  for (; at + kCommitRecordSize <= csize; at += kCommitRecordSize) {
    CommitRecord c;
    if (!CommitRecord::decode(journal.data() + at, c)) break;
    if (c.epoch != st.commits.size() + 1)
      throw CorruptionError(cp + ": commit record " + std::to_string(st.commits.size() + 1) + " says epoch " +
                            std::to_string(c.epoch));
    st.commits.push_back(c);
  }
  // Only the last record may be damaged (a commit interrupted while being written).
  for (uint64_t later = at + kCommitRecordSize; later + kCommitRecordSize <= csize; later += kCommitRecordSize) {
    CommitRecord c;
    if (CommitRecord::decode(journal.data() + later, c))
      throw CorruptionError(cp + ": commit record at byte " + std::to_string(at) +
                            " is damaged but later ones are valid");
  }
  st.torn_commit_bytes = csize - at;

  for (const auto& c : st.commits) {
    std::string what = lp + ": index record of epoch " + std::to_string(c.epoch);
    if (c.index_offset + c.index_size > st.log_file_size || c.log_end > st.log_file_size)
      throw CorruptionError(what + " lies beyond the end of the log (" + std::to_string(st.log_file_size) +
                            " bytes; truncated?)");
    std::vector<unsigned char> rec(c.index_size);
    pread_all(log.fd, rec.data(), rec.size(), c.index_offset, "reading " + what);
    if (crc32c(rec.data(), rec.size()) != c.index_crc) throw CorruptionError("checksum mismatch in " + what);
    st.index_records.push_back(std::move(rec));
    st.log_end = c.log_end;
  }
  st.torn_log_bytes = st.log_file_size > st.log_end ? st.log_file_size - st.log_end : 0;
  return st;
}

bool is_log_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(commits_path(path), ec)) return false;
  if (!std::filesystem::exists(path, ec)) return true;  // not closed yet (or crashed before its first close)
  try {
    auto e = front_engine();
    auto h = e->open(path, engine::OpenMode::Read, MPI_COMM_SELF);
    bool marked = e->has_attribute(*h, "/", kFrontMarker);
    e->close(*h);
    return marked;
  } catch (const Error&) {
    return true;  // not HDF5 (damaged front file): the journal decides
  }
}

namespace {

// How a dataset of the log appears in the front file.
struct FrontPlan {
  enum Kind { External, Virtual, LogOnly } kind = LogOnly;
  std::vector<hdf5::ExternalSegment> segments;  // External: the dataset's bytes, in order
  std::vector<hdf5::VirtualBlock> boxes;        // Virtual: one per block
  std::string why_not;                          // LogOnly: the reason, for the link's target
};

// External storage when the blocks tile the dataset exactly once in at most
// kFewSegments runs of the log (cheap to create, readable by any HDF5). Else a
// virtual dataset of the blocks when they do not overlap (never-written
// elements read as 0, as in the log) and number at most max_pieces. Else the
// data stays in the log only.
FrontPlan plan_front_dataset(const LogFile& f, int id, const std::string& log_name, uint64_t max_pieces) {
  constexpr uint64_t kFewSegments = 64;
  FrontPlan plan;
  const DatasetInfo& info = f.datasets[std::size_t(id)];
  const auto& entries = f.index[std::size_t(id)].entries;
  const uint64_t es = datatype_size(info.dtype), total = product(info.shape);
  // The blocks' contiguous runs of the dataset (row-major), to find overlaps and gaps.
  struct Run { uint64_t first, length, offset; };
  std::vector<Run> runs;
  const uint64_t hard_cap = std::max<uint64_t>(max_pieces * 64, 100000);
  for (const auto& e : entries) {
    const std::size_t nd = e.count.size();
    std::size_t inner = nd - 1;
    uint64_t run = e.count[nd - 1];
    while (inner > 0 && e.count[inner] == info.shape[inner]) run *= e.count[--inner];
    uint64_t nruns = product(e.count) / std::max<uint64_t>(run, 1);
    if (runs.size() + nruns > hard_cap) {
      plan.why_not = "its blocks make too many pieces";
      return plan;
    }
    Dims idx(nd, 0), at(nd);
    for (uint64_t k = 0; k < nruns; ++k) {
      // idx counts over dimensions [0, inner) of the block, row-major.
      uint64_t rem = k;
      for (std::size_t d = inner; d-- > 0;) idx[d] = rem % e.count[d], rem /= e.count[d];
      for (std::size_t d = 0; d < nd; ++d) at[d] = e.start[d] + (d < inner ? idx[d] : 0);
      uint64_t in_block = 0;
      for (std::size_t d = 0; d < nd; ++d) in_block = in_block * e.count[d] + (d < inner ? idx[d] : 0);
      runs.push_back({linear_index(at, info.shape), run, e.offset + in_block * es});
    }
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.first < b.first; });
  uint64_t next = 0;
  bool gaps = false;
  for (const auto& r : runs) {
    if (r.first < next) {
      plan.why_not = "some of its elements were written more than once";
      return plan;
    }
    gaps = gaps || r.first > next;
    next = r.first + r.length;
    if (!plan.segments.empty() && plan.segments.back().offset + plan.segments.back().size == r.offset)
      plan.segments.back().size += r.length * es;
    else
      plan.segments.push_back({log_name, r.offset, r.length * es});
  }
  gaps = gaps || next != total;
  if (!gaps && plan.segments.size() <= kFewSegments) {
    plan.kind = FrontPlan::External;
    return plan;
  }
  plan.segments.clear();
  if (entries.size() > max_pieces) {
    plan.why_not = "it has " + std::to_string(entries.size()) + " blocks in the log (more than max_external_segments " +
                   std::to_string(max_pieces) + ")";
    return plan;
  }
  if (f.tree.count(kFrontSources)) {  // the name is taken by the user's own object
    plan.why_not = std::string("the front file's name ") + kFrontSources + " is in use";
    return plan;
  }
  plan.kind = FrontPlan::Virtual;
  for (const auto& e : entries) plan.boxes.push_back({e.start, e.count, {log_name, e.offset, e.nbytes}});
  return plan;
}

}  // namespace

std::string front_tmp_path(const LogFile& f) { return directory_of(f.path) + "/front.tmp"; }

void build_front_file(const LogFile& f, uint64_t max_segments) {
  auto e = front_engine();
  const std::string tmp = front_tmp_path(f);
  auto h = e->open(tmp, engine::OpenMode::Create, MPI_COMM_SELF);
  const std::string log_name = std::filesystem::path(f.path).filename().string() + ".loom/log";
  e->write_attribute(*h, "/", kFrontMarker, AttributeValue(log_name));
  std::vector<std::string> log_only;
  bool sources_group = false;
  for (auto& [path, node] : f.tree) {
    if (path != "/") {
      if (node.kind == ObjectKind::Group) {
        e->create_group(*h, path);
      } else {
        const DatasetInfo& info = f.datasets[std::size_t(node.dataset)];
        auto& di = f.index[std::size_t(node.dataset)];
        std::string why_not;
        if (di.entries.empty() || product(info.shape) == 0) {
          DatasetSpec spec;  // nothing written: the native dataset reads as zeros, like the log
          spec.dtype = info.dtype, spec.shape = info.shape, spec.layout = Layout::Contiguous, spec.layout_auto = false;
          e->create_dataset(*h, path, spec);
        } else if (auto plan = plan_front_dataset(f, node.dataset, log_name, max_segments);
                   plan.kind == FrontPlan::External) {
          hdf5::create_external_dataset(*h, path, info.dtype, info.shape, plan.segments);
        } else if (plan.kind == FrontPlan::Virtual) {
          if (!sources_group) e->create_group(*h, kFrontSources), sources_group = true;
          const std::string sources = std::string(kFrontSources) + "/" + std::to_string(node.dataset);
          e->create_group(*h, sources);
          hdf5::create_virtual_dataset(*h, path, info.dtype, info.shape, plan.boxes, sources);
        } else {
          // A dangling link: stock HDF5 tools report it instead of showing wrong values.
          hdf5::create_soft_link(*h, path, "/h5loom: data in the log only (" + plan.why_not + "); run: h5loom convert");
          log_only.push_back(path);
          continue;
        }
      }
    }
    for (const auto& [name, value] : node.attrs) {
      if (path == "/" && name == kFrontMarker) continue;
      e->write_attribute(*h, path, name, value);
    }
  }
  if (!log_only.empty()) e->write_attribute(*h, "/", "_h5loom_log_only", AttributeValue(log_only));
  e->close(*h);
}

void publish_front_file(const LogFile& f) {
  std::error_code ec;
  std::filesystem::rename(front_tmp_path(f), f.path, ec);
  if (ec) throw IOError("cannot replace front file '" + f.path + "': " + ec.message());
}

VerifyReport verify_log(const std::string& path) {
  VerifyReport rep;
  LogState st;
  try {
    st = scan_log(path);
  } catch (const CorruptionError& e) {
    rep.errors.push_back(e.what());
    return rep;
  }
  rep.epochs = st.commits.size();
  rep.torn_log_bytes = st.torn_log_bytes;
  rep.torn_commit_bytes = st.torn_commit_bytes;
  LogFile f;
  f.path = path;
  f.header = st.header;
  f.tree["/"].kind = ObjectKind::Group;
  for (std::size_t i = 0; i < st.commits.size(); ++i) {
    try {
      replay_index_record(f, st.index_records[i].data(), st.index_records[i].size(), st.commits[i].epoch);
    } catch (const Error& e) {
      rep.errors.push_back(e.what());
      return rep;
    }
  }
  Fd log(::open(log_path(path).c_str(), O_RDONLY | O_CLOEXEC));
  const uint64_t unit = st.header.checksum_unit;
  std::vector<unsigned char> buf;
  for (std::size_t id = 0; id < f.index.size(); ++id) {
    for (const auto& e : f.index[id].entries) {
      ++rep.blocks;
      std::string what = "dataset '" + f.dataset_paths[id] + "': block at log offset " + std::to_string(e.offset) +
                         " (epoch " + std::to_string(e.epoch) + ", rank " + std::to_string(e.rank) + ", " +
                         std::to_string(e.nbytes) + " bytes)";
      if (e.offset + e.nbytes > st.log_end) {
        rep.errors.push_back(what + " lies beyond the committed log");
        continue;
      }
      if (e.unit_crcs.size() != (e.nbytes + unit - 1) / unit) {
        rep.errors.push_back(what + " has a checksum list of the wrong length");
        continue;
      }
      for (uint64_t u = 0; u * unit < e.nbytes; ++u) {
        uint64_t n = std::min(unit, e.nbytes - u * unit);
        buf.resize(n);
        pread_all(log.fd, buf.data(), n, e.offset + u * unit, "reading " + what);
        if (crc32c(buf.data(), n) != e.unit_crcs[u]) {
          rep.errors.push_back("checksum mismatch in " + what + ", bytes " + std::to_string(u * unit) + ".." +
                               std::to_string(u * unit + n) + " of the block");
          break;
        }
      }
      rep.data_bytes += e.nbytes;
    }
  }
  return rep;
}

}  // namespace h5loom::logengine
