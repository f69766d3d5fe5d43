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
  // The newest format HDF5 1.10 writes has checksums on its metadata, so stock
  // readers notice a damaged front file instead of reading through it.
  engine::Knobs knobs("hdf5", engine::Json{{"collective_metadata", false}, {"driver", "core"}, {"libver_low", "latest"}});
  // The bare hdf5 engine (no wrappers: hdf5_extras casts its handles).
  return engine::registry().engines().at("hdf5")(knobs);
}

}  // namespace

LogFile::~LogFile() {
  if (log_fd >= 0) ::close(log_fd);
  if (commits_fd >= 0) ::close(commits_fd);
  release_writer_lock(*this);
}

void LogFile::require_usable() const {
  if (!failed.empty())
    throw IOError(where() + " is unusable: an earlier write or sync of its log failed (" + failed +
                  "); nothing after its last committed epoch is kept. Reopen the file to continue from there");
}

std::string lock_path(const std::string& front) { return directory_of(front) + "/lock"; }

void acquire_writer_lock(LogFile& f) {
  const std::string p = lock_path(f.path);
  int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ENOENT) return;  // no log here: opening it says so
  if (fd < 0) throw IOError("cannot open the writer lock " + p + ": " + std::strerror(errno));
  struct flock lk {};
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_SET;
  if (::fcntl(fd, F_OFD_SETLK, &lk) != 0) {
    const int err = errno;
    if (err == EAGAIN || err == EACCES) {
      char holder[256] = {};
      ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
      ::close(fd);
      std::string who = n > 0 ? std::string(holder, std::size_t(n)) : std::string("an unknown process");
      while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
      throw IOError("cannot open log file '" + f.path + "' for writing: it is being written by " + who +
                    " (lock " + p + "); one writer at a time");
    }
    // ENOLCK, EINVAL...: this file system has no locks; go on without exclusion.
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string who = "host " + std::string(host) + ", pid " + std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, who.data(), who.size(), 0);
  f.lock_fd = fd;
}

void release_writer_lock(LogFile& f) {
  if (f.lock_fd < 0) return;
  (void)!::ftruncate(f.lock_fd, 0);  // no stale holder is shown once we are gone
  ::close(f.lock_fd);  // releases the lock
  f.lock_fd = -1;
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

  // The commit records, up to the first that is not valid. A crash can leave
  // a short record, or a whole one of zeros (the size grew, the data did not
  // land); a record is 64-byte aligned, so no sector boundary tears it. So a
  // whole, non-zero record with a bad checksum is damage, not a crash: it is
  // reported and never cut away, and readers stop at the last intact epoch.
  auto damaged = [&](const std::string& why) {
    if (st.damage.empty()) st.damage = why;
  };
  uint64_t at = kCommitsHeaderSize;
  for (; at + kCommitRecordSize <= csize; at += kCommitRecordSize) {
    CommitRecord c;
    const unsigned char* rec = journal.data() + at;
    if (!CommitRecord::decode(rec, c)) {
      if (std::any_of(rec, rec + kCommitRecordSize, [](unsigned char b) { return b != 0; }))
        damaged(cp + ": commit record of epoch " + std::to_string(st.commits.size() + 1) + " (byte " +
                std::to_string(at) + ") is damaged: a whole record with a bad checksum, which a crash cannot leave");
      break;
    }
    if (c.epoch != st.commits.size() + 1) {
      damaged(cp + ": commit record " + std::to_string(st.commits.size() + 1) + " says epoch " +
              std::to_string(c.epoch));
      break;
    }
    st.commits.push_back(c);
  }
  // Only the last record may be missing or torn (a commit interrupted while being written).
  for (uint64_t later = at + kCommitRecordSize; later + kCommitRecordSize <= csize; later += kCommitRecordSize) {
    CommitRecord c;
    if (CommitRecord::decode(journal.data() + later, c))
      damaged(cp + ": commit record at byte " + std::to_string(at) + " is damaged but later ones are valid");
  }
  st.torn_commit_bytes = st.damage.empty() ? csize - at : 0;

  // The index records; a damaged or missing one ends the intact epochs.
  for (std::size_t i = 0; i < st.commits.size(); ++i) {
    const auto& c = st.commits[i];
    std::string what = lp + ": index record of epoch " + std::to_string(c.epoch);
    const bool inside = c.index_offset <= st.log_file_size && c.index_size <= st.log_file_size - c.index_offset &&
                        c.log_end <= st.log_file_size && c.index_size <= (uint64_t(1) << 34);
    if (!inside) {
      damaged(what + " lies beyond the end of the log (" + std::to_string(st.log_file_size) + " bytes; truncated?)");
    } else {
      std::vector<unsigned char> rec(c.index_size);
      pread_all(log.fd, rec.data(), rec.size(), c.index_offset, "reading " + what);
      if (crc32c(rec.data(), rec.size()) == c.index_crc) {
        st.index_records.push_back(std::move(rec));
        st.log_end = c.log_end;
        continue;
      }
      damaged("checksum mismatch in " + what);
    }
    st.commits.resize(i);
    break;
  }
  st.torn_log_bytes = st.log_file_size > st.log_end ? st.log_file_size - st.log_end : 0;
  return st;
}

namespace {

std::string hex_id(const unsigned char (&id)[16]) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : id) out += digits[b >> 4], out += digits[b & 15];
  return out;
}

// What the front file at `path` says about its log: nothing if it is HDF5 without
// the marker; throws h5loom::Error if it is not readable HDF5.
struct FrontMarks {
  bool marked = false;
  std::optional<std::string> id;
  std::optional<uint64_t> epoch;
};
FrontMarks read_front_marks(const std::string& path) {
  FrontMarks m;
  auto e = front_engine();
  auto h = e->open(path, engine::OpenMode::Read, MPI_COMM_SELF);
  m.marked = e->has_attribute(*h, "/", kFrontMarker);
  if (m.marked && e->has_attribute(*h, "/", kFrontId)) m.id = e->read_attribute(*h, "/", kFrontId).as_string();
  if (m.marked && e->has_attribute(*h, "/", kFrontEpoch))
    m.epoch = e->read_attribute(*h, "/", kFrontEpoch).as<uint64_t>();
  e->close(*h);
  return m;
}

}  // namespace

bool is_log_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(commits_path(path), ec)) return false;
  if (!std::filesystem::exists(path, ec)) return true;  // not closed yet (or crashed before its first close)
  try {
    return read_front_marks(path).marked;  // HDF5 without the marker: another engine's file; the log is stale
  } catch (const Error&) {
    return true;  // not HDF5: the log engine's open tells why it cannot use the log
  }
}

void check_front_binding(const std::string& path, const LogHeader& header, uint64_t committed_epochs) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;  // crashed before its first close: the log alone is the file
  FrontMarks m;
  try {
    m = read_front_marks(path);
  } catch (const Error& e) {
    throw CorruptionError("file '" + path + "' is not readable HDF5 (" + e.what() + "), so it cannot be matched with " +
                          directory_of(path) + ", which may be left from an earlier log-engine file of that name. If '" +
                          path + "' is that log's damaged front file, remove it: a read-write open rebuilds it from the log");
  }
  if (!m.marked)
    throw ConfigError("file '" + path + "' was not written by the log engine (it is HDF5 without the log marker); " +
                      directory_of(path) + " is left from an earlier log-engine file of that name");
  if (m.id && *m.id != hex_id(header.file_id))
    throw CorruptionError("front file '" + path + "' belongs to another log (file id " + *m.id + ", the log in " +
                          directory_of(path) + " has " + hex_id(header.file_id) + ")");
  if (m.epoch && *m.epoch > committed_epochs)
    throw CorruptionError("front file '" + path + "' shows epoch " + std::to_string(*m.epoch) + " but the journal " +
                          commits_path(path) + " has " + std::to_string(committed_epochs) +
                          " intact epochs: committed epochs are missing or damaged");
}

std::optional<FrontSum> checksum_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.fd < 0) return std::nullopt;
  FrontSum sum;
  sum.size = size_of(fd.fd);
  std::vector<unsigned char> buf(std::min<uint64_t>(sum.size, 4 << 20));
  for (uint64_t at = 0; at < sum.size; at += buf.size()) {
    const uint64_t n = std::min<uint64_t>(buf.size(), sum.size - at);
    pread_all(fd.fd, buf.data(), n, at, "reading '" + path + "'");
    sum.crc = crc32c(buf.data(), n, sum.crc);
  }
  return sum;
}

bool front_is_current(const LogFile& f) {
  auto sum = checksum_file(f.path);
  if (!sum) return false;
  if (f.fronts.empty()) return true;  // a file from before front checksums: keep its front file
  return sum->size == f.fronts.back().size && sum->crc == f.fronts.back().crc;
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

FrontSum build_front_file(const LogFile& f, uint64_t epoch, uint64_t max_segments) {
  auto e = front_engine();
  const std::string tmp = front_tmp_path(f);
  auto h = e->open(tmp, engine::OpenMode::Create, MPI_COMM_SELF);
  const std::string log_name = std::filesystem::path(f.path).filename().string() + ".loom/log";
  e->write_attribute(*h, "/", kFrontMarker, AttributeValue(log_name));
  e->write_attribute(*h, "/", kFrontId, AttributeValue(hex_id(f.header.file_id)));
  e->write_attribute(*h, "/", kFrontEpoch, AttributeValue(epoch));
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
      if (path == "/" && (name == kFrontMarker || name == kFrontId || name == kFrontEpoch)) continue;
      e->write_attribute(*h, path, name, value);
    }
  }
  if (!log_only.empty()) e->write_attribute(*h, "/", "_h5loom_log_only", AttributeValue(log_only));
  e->close(*h);
  auto sum = checksum_file(tmp);
  if (!sum) throw IOError("the front file '" + tmp + "' vanished while it was built");
  sum->epoch = epoch;
  return *sum;
}

void publish_front_file(const LogFile& f, bool sync) {
  const std::string tmp = front_tmp_path(f);
  // Durable before it replaces the old one, and the rename durable before we
  // return: a crash leaves the old front file or the new one, whole.
  auto sync_path = [&](const std::string& p, int flags) {
    Fd fd(::open(p.c_str(), flags | O_CLOEXEC));
    if (fd.fd < 0 || ::fsync(fd.fd) != 0) throw IOError("cannot sync '" + p + "': " + std::strerror(errno));
  };
  if (sync) sync_path(tmp, O_RDONLY);
  std::error_code ec;
  std::filesystem::rename(tmp, f.path, ec);
  if (ec) throw IOError("cannot replace front file '" + f.path + "': " + ec.message());
  if (sync) sync_path(std::filesystem::absolute(f.path).parent_path().string(), O_RDONLY | O_DIRECTORY);
}

namespace {

// The front file belongs to this log and is byte for byte one the log recorded
// (the last one, or an earlier one if a crash came before it was replaced).
void verify_front_file(const LogFile& f, uint64_t epochs, std::vector<std::string>& errors) {
  try {
    check_front_binding(f.path, f.header, epochs);
  } catch (const Error& e) {
    errors.push_back(e.what());
    return;
  }
  auto sum = checksum_file(f.path);
  if (!sum || f.fronts.empty()) return;  // not built yet, or from before front checksums
  for (const auto& rec : f.fronts)
    if (rec.size == sum->size && rec.crc == sum->crc) return;
  errors.push_back("front file '" + f.path + "' is damaged: its checksum (" + std::to_string(sum->size) +
                   " bytes, CRC32C " + std::to_string(sum->crc) + ") matches none the log recorded (the last: epoch " +
                   std::to_string(f.fronts.back().epoch) + ", " + std::to_string(f.fronts.back().size) +
                   " bytes); remove it and open the file read-write to rebuild it from the log");
}

}  // namespace

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
  if (!st.damage.empty())
    rep.errors.push_back(st.damage + " (epochs 1.." + std::to_string(st.commits.size()) +
                         " are intact; readers use those; the file cannot be opened for writing)");
  LogFile f;
  f.path = path;
  f.header = st.header;
  f.log_end = st.log_end;
  f.tree["/"].kind = ObjectKind::Group;
  for (std::size_t i = 0; i < st.commits.size(); ++i) {
    try {
      replay_index_record(f, st.index_records[i].data(), st.index_records[i].size(), st.commits[i].epoch);
    } catch (const Error& e) {
      rep.errors.push_back(e.what());
      return rep;
    }
  }
  verify_front_file(f, st.damage.empty() ? st.commits.size() : UINT64_MAX, rep.errors);
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
