// Reading what is on disk of a log: its header, its commit journal and the
// index records of the committed epochs, checked (open and verify use it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engines/log/format.hpp"

namespace h5loom::logengine {

class LogStore;

// What is on disk, as found by a scan of the log and its commit journal.
struct LogState {
  logfmt::LogHeader header;
  std::vector<logfmt::CommitRecord> commits;              // the valid ones, in order
  std::vector<std::vector<unsigned char>> index_records;  // one per commit, checksum verified
  uint64_t log_end = logfmt::kLogHeaderSize;              // the valid length of the log
  uint64_t log_file_size = 0;
  uint64_t torn_log_bytes = 0;     // bytes after log_end: an epoch that never committed
  uint64_t torn_commit_bytes = 0;  // a partial commit record at the end of the journal
  // Damage a crash cannot explain (a whole commit record with a bad checksum,
  // an index record that fails its checksum or lies beyond the log): `commits`
  // and `index_records` then hold only the intact epochs before it.
  std::string damage;
};

// Reads and checks headers, commit records and index records. A torn tail is
// reported, not an error; damage after some intact epochs is reported in
// `damage`; damaged headers raise CorruptionError, a missing log NotFoundError.
LogState scan_log(LogStore& store, const std::string& front_path);

}  // namespace h5loom::logengine
