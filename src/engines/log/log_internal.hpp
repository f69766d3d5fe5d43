// Internals shared by the log engine's files: the state of an open log file,
// the scan of a log on disk (used by open and by verify), and the HDF5 front file.
#pragma once

#include <mpi.h>

#include <map>
#include <optional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "h5loom/engine.hpp"
#include "engines/log/coalescing_buffer.hpp"
#include "engines/log/format.hpp"

namespace h5loom::logengine {

using logfmt::BlockEntry;
using logfmt::CommitRecord;
using logfmt::LogHeader;

// ---- the state of one open file ----

struct Node {
  ObjectKind kind = ObjectKind::None;
  std::map<std::string, AttributeValue> attrs;
  std::set<std::string> children;  // for groups
  int dataset = -1;                // for datasets: the id
};

struct DatasetIndex {
  std::vector<BlockEntry> entries;  // sorted by start (lexicographic) when !dirty
  Dims max_count;                   // the largest block extent per dimension
  bool dirty = false;
};

// Rounds of regions start on page boundaries, and regions are whole pages, so
// that no two ranks write into one page (the least `region_alignment`).
constexpr uint64_t kRegionAlignment = 4096;

// The size and CRC32C of a front file, recorded in the epoch it was built with.
struct FrontSum {
  uint64_t epoch = 0, size = 0;
  uint32_t crc = 0;
};

struct LogFile final : engine::FileHandle {
  std::string path;
  engine::OpenMode mode = engine::OpenMode::Read;
  MPI_Comm comm = MPI_COMM_NULL, agg_comm = MPI_COMM_NULL;
  int rank = 0, size = 1, agg_rank = 0, agg_size = 1, aggregators = 1;
  int log_fd = -1, commits_fd = -1;
  LogHeader header;
  uint64_t log_end = logfmt::kLogHeaderSize;    // the valid length of the log
  uint64_t epoch = 0;                   // the last committed epoch
  uint64_t commits_end = logfmt::kCommitsHeaderSize;
  uint64_t torn_bytes = 0;              // log bytes after the last commit, found at open

  std::map<std::string, Node> tree;     // by absolute path
  std::vector<std::string> dataset_paths;
  std::vector<DatasetInfo> datasets;    // by id
  std::vector<DatasetIndex> index;      // by id
  std::vector<FrontSum> fronts;         // every front file the log recorded, oldest first
  std::string damage;                   // damage found at open (read-only: the intact epochs are used)

  // Writing: this rank's coalescing buffer, blocks written but not committed,
  // and (rank 0) the metadata operations of the open epoch.
  CoalescingBuffer buffer;
  // Writes put since the last flush that the engine did not take at once (in order).
  std::vector<engine::Write> queued;
  std::vector<BlockEntry> buffered, written;
  // Large writes are not copied: they go out, from the caller's memory, before
  // the engine's write() returns.
  std::vector<BlockEntry> direct;
  std::vector<const unsigned char*> direct_data;
  // Large whole-box writes go straight from the caller's memory to this rank's
  // region of the log, at once (no copy, no aggregator): a round of regions
  // starts at region_base, rank r's at region_base + r * region_size. A round
  // ends at the next placement (a spill or a commit), where the regions' used
  // extent is agreed on; unused parts of regions stay holes.
  uint64_t region_base = 0, region_size = 0;
  uint64_t region_alignment = kRegionAlignment;  // set at open (the knob)
  uint64_t region_used = 0;     // this rank's bytes in its region this round
  uint64_t region_demand = 0;   // bytes this rank wanted there this round (used + what did not fit)
  bool regions_in_epoch = false;  // some rank wrote to a region in the open epoch (all ranks agree)
  bool node_leader = false;       // the lowest rank of its shared-memory node (syncs region writes)
  std::string region_error;       // a failed region write, raised on every rank at the next placement
  std::unique_ptr<unsigned char[]> receive[2];  // an aggregator's two receive buffers, kept between flushes
  uint64_t receive_size = 0;
  nlohmann::json pending_meta = nlohmann::json::array();
  uint64_t meta_ops = 0;  // every rank counts them (the calls are collective)
  uint64_t counter = 0;
  std::string last_dataset_path;  // the last dataset written (writes come in runs)
  int last_dataset_id = -1;
  // Set (on every rank) when a write or sync of the log failed: Linux may have
  // dropped the data of a failed sync, and the epoch's blocks may be partial,
  // so nothing more may be committed through this handle. Every later call
  // raises it; reopening continues from the last committed epoch.
  std::string failed;
  int lock_fd = -1;  // rank 0 of a writer: holds NAME.loom/lock (one writer at a time)

  ~LogFile() override;  // closes descriptors a failed open or close left behind
  bool writable() const { return mode != engine::OpenMode::Read; }
  // Throws the failure that made this handle unusable, if any.
  void require_usable() const;
  std::string where() const { return "log file '" + path + "'"; }
};

// One writer at a time: rank 0 of a writer holds an advisory lock on
// NAME.loom/lock (which names its host and process). A second writer gets an
// IOError naming the holder. On file systems without locks there is no exclusion.
std::string lock_path(const std::string& front);  // NAME.loom/lock
void acquire_writer_lock(LogFile& f);
void release_writer_lock(LogFile& f);

// Applies one index record of a log (its metadata operations, then its blocks).
void replay_index_record(LogFile& f, const unsigned char* p, std::size_t n, uint64_t expected_epoch);

// POSIX I/O that retries short transfers; a short read raises CorruptionError.
void pwrite_all(int fd, const void* data, uint64_t n, uint64_t offset, const std::string& what);
void pread_all(int fd, void* data, uint64_t n, uint64_t offset, const std::string& what);

// What is on disk, as found by a scan of the log and its commit journal.
struct LogState {
  LogHeader header;
  std::vector<CommitRecord> commits;                      // the valid ones, in order
  std::vector<std::vector<unsigned char>> index_records;  // one per commit, checksum verified
  uint64_t log_end = logfmt::kLogHeaderSize;              // the valid length of the log
  uint64_t log_file_size = 0;
  uint64_t torn_log_bytes = 0;      // bytes after log_end: an epoch that never committed
  uint64_t torn_commit_bytes = 0;   // a partial commit record at the end of the journal
  // Damage a crash cannot explain (a whole commit record with a bad checksum,
  // an index record that fails its checksum or lies beyond the log): `commits`
  // and `index_records` then hold only the intact epochs before it.
  std::string damage;
};

// Reads and checks headers, commit records and index records. A torn tail is
// reported, not an error; damage after some intact epochs is reported in
// `damage`; damaged headers raise CorruptionError, a missing log NotFoundError.
LogState scan_log(const std::string& front_path);

// True if `path` names a log-engine file: its journal exists and the front file
// is missing or carries the log marker attribute.
bool is_log_file(const std::string& path);

// The front file (rank 0, MPI_COMM_SELF), written at close; creating a log file
// removes an old one. See docs/engines/log.md for what is directly readable.
constexpr const char* kFrontMarker = "_h5loom_log";
constexpr const char* kFrontId = "_h5loom_log_id";        // the log's file id, hex
constexpr const char* kFrontEpoch = "_h5loom_log_epoch";  // the epoch the front file shows
// The front file's group of the small datasets that virtual datasets map (one
// group per dataset id, one dataset per block).
constexpr const char* kFrontSources = "/_h5loom_blocks";
// The front file is built beside (NAME.loom/front.tmp), then published: renamed
// over NAME at once, so a reader never sees a half-written one.
// The front file carries the log's file id and the epoch it shows, which open
// and verify check against the log (so a log left from an earlier file of the
// same name is never taken for this one's data). Returns its checksum.
FrontSum build_front_file(const LogFile& f, uint64_t epoch, uint64_t max_external_segments);
void publish_front_file(const LogFile& f, bool sync);
// The size and CRC32C of the file at `path` (empty if missing).
std::optional<FrontSum> checksum_file(const std::string& path);
// Rank 0 of close: the front file on disk is the last one the log recorded.
bool front_is_current(const LogFile& f);
// Raises if the front file (if present) does not belong to this log: not HDF5
// (ConfigError if it is HDF5 of another engine, CorruptionError if unreadable),
// another file id, or an epoch the journal does not have.
void check_front_binding(const std::string& path, const LogHeader& header, uint64_t committed_epochs);

// `h5loom verify`: every header, commit, index record and data checksum.
struct VerifyReport {
  uint64_t epochs = 0, blocks = 0, data_bytes = 0, torn_log_bytes = 0, torn_commit_bytes = 0;
  std::vector<std::string> errors;
};
VerifyReport verify_log(const std::string& path);

}  // namespace h5loom::logengine
