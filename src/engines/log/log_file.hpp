// An open log-engine file: the engine's handle, made of the parts that own
// its state - the committed state and the catalog (tree and index) every
// handle has, and, when it is open for writing, the writer's parts.
#pragma once

#include <memory>
#include <string>

#include "h5loom/engine.hpp"
#include "engines/log/log_store.hpp"
#include "engines/log/metadata.hpp"
#include "engines/log/replay.hpp"
#include "engines/log/settings.hpp"
#include "engines/log/team.hpp"
#include "engines/log/write_pipeline.hpp"
#include "engines/log/writer_lock.hpp"

namespace h5loom::logengine {

// The epoch being written, beyond its pieces (which the pipeline holds).
struct OpenEpoch {
  // Its metadata operations: every rank keeps them (the calls are collective;
  // the commit checks that all ranks made the same), rank 0 writes them.
  Json ops = Json::array();
  // Blocks made visible before the commit (make_visible): how many, and (on
  // rank 0, which writes the index record) their entries.
  uint64_t visible_count = 0;
  std::vector<unsigned char> visible_entries;
};

// What only a writer has.
struct Writing {
  explicit Writing(const Settings& s) : settings(s) {}
  Settings settings;
  WriterLock lock;                          // rank 0: one writer at a time
  std::unique_ptr<StoredFile> commits;      // rank 0: the commit journal
  std::unique_ptr<WritePipeline> pipeline;  // every rank's writes on their way to the log
  OpenEpoch epoch;
  // The last dataset written, by path (writes come in runs).
  std::string last_dataset;
  int last_dataset_id = -1;
};

struct LogFile final : engine::FileHandle {
  std::string path;
  engine::OpenMode mode = engine::OpenMode::Read;
  Team team;
  LogStore* store = &posix_store();
  std::unique_ptr<StoredFile> log;  // every rank: the log
  Committed committed;
  Catalog catalog;
  std::unique_ptr<Writing> writing;  // null when open read-only
  // Set (on every rank) when a write or sync of the log failed: Linux may have
  // dropped the data of a failed sync, and the epoch's blocks may be partial,
  // so nothing more may be committed through this handle. Every later call
  // raises it; reopening continues from the last committed epoch.
  std::string failed;

  bool writable() const { return mode != engine::OpenMode::Read; }
  // Throws the failure that made this handle unusable, if any.
  void require_usable() const;
  std::string where() const { return "log file '" + path + "'"; }
};

}  // namespace h5loom::logengine
