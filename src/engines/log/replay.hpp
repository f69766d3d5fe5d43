// Replay: what a log's committed epochs build, once they are read - the tree
// and the index that readers use - and the committed state a writer goes on
// from. Open (rank 0 scans, every rank replays) and verify use it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engines/log/format.hpp"
#include "engines/log/index.hpp"
#include "engines/log/metadata.hpp"

namespace h5loom::logengine {

class LogStore;

// What readers see of a log: its tree and its index.
struct Catalog {
  Tree tree;
  std::unique_ptr<Index> index = make_sorted_range_index();

  // The root exists before any epoch (Tree's constructor makes it): a file
  // that crashed before its first commit never recorded it, and a writer that
  // reopened it went on without.
  // Applies a metadata operation (apply_op); a new dataset gets its place in the index.
  void apply(const Json& op, const std::string& where);
  // A dataset made from its values (add_dataset), with its place in the index. Returns its id.
  int add_dataset(const std::string& path, DatasetInfo info, std::optional<uint64_t> type_token,
                  const std::string& where);
};

// The log's committed state: where its epochs end.
struct Committed {
  logfmt::LogHeader header;
  uint64_t epoch = 0;                                      // the last committed epoch
  uint64_t log_end = logfmt::kLogHeaderSize;               // the log's valid length after it
  uint64_t commits_end = logfmt::kCommitsHeaderSize;       // where the next commit record goes
  uint64_t torn_bytes = 0;  // log bytes after the last commit, found at open
  std::string damage;       // damage found at open (read-only: the intact epochs are used)
};

// A block of a log on disk fits its dataset and the log: its byte count is
// that of its box (so a read never copies past a buffer) and it lies within
// the valid log [0, log_end). CRCs do not protect against crafted files; this
// does. CorruptionError naming `what` otherwise.
void check_block(const Tree& tree, const BlockEntry& e, uint64_t log_end, uint64_t checksum_unit,
                 const std::string& what);

// Applies one index record of epoch `expected_epoch` (its metadata operations,
// then its blocks, each checked), and the front file its commit record names
// (`front_crc`, version 12; 0: none). `where` names the file. Throws CorruptionError.
void replay_index_record(Catalog& catalog, const unsigned char* p, std::size_t n, uint64_t expected_epoch,
                         uint32_t front_crc, uint64_t log_end, uint64_t checksum_unit, const std::string& where);

// Rank 0 of open: scans the log (raising on damage if `writable`: a writer
// would build on damaged ground), checks the front file's binding, and packs
// the committed state and every committed index record for the other ranks.
std::vector<unsigned char> read_committed(LogStore& store, const std::string& path, bool writable);
// Every rank: the packed state, replayed.
void replay_committed(const std::vector<unsigned char>& packed, Committed& committed, Catalog& catalog,
                      const std::string& where);

}  // namespace h5loom::logengine
