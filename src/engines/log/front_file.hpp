// The front file: NAME, plain HDF5 holding the tree, the attributes, and the
// datasets that external storage or a virtual dataset can map onto the log,
// so that stock HDF5 reads a log-engine file (docs/engines/log.md). Written
// at close by one rank (MPI_COMM_SELF, HDF5's core driver), bound to its log
// by the log's file id and the epoch it shows, and checksummed in that epoch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engines/log/format.hpp"
#include "engines/log/metadata.hpp"

namespace h5loom::logengine {

class Index;
class LogStore;

constexpr const char* kFrontMarker = "_h5loom_log";
constexpr const char* kFrontId = "_h5loom_log_id";        // the log's file id, hex
constexpr const char* kFrontEpoch = "_h5loom_log_epoch";  // the epoch the front file shows

// How the front file is made: encoded by the engine itself where its tree
// allows (front_image.hpp), or always by HDF5's library (knob `front_encoder`).
enum class FrontEncoder { Direct, Library };

// Builds the front file of the log of `path` beside it (NAME.loom/front.tmp),
// showing `epoch` of the tree and index given. Returns its size and checksum.
FrontSum build_front_file(LogStore& store, const std::string& path, const logfmt::LogHeader& header,
                          const Tree& tree, const Index& index, uint64_t epoch, uint64_t max_external_segments,
                          FrontEncoder encoder);
// Makes the built front file durable (fsync), before publish_front_file puts
// it in place; it may run on another thread while the epoch commits.
void sync_front_file(LogStore& store, const std::string& path);
// Puts the built front file in place: renamed over NAME at once, so a reader
// never sees a half-written one (with `sync`, it must have been synced by
// sync_front_file, and the directory is synced after).
void publish_front_file(LogStore& store, const std::string& path, bool sync);
// Syncs the directory holding the front file `path` (the rename above, and a
// new file's NAME.loom there).
void sync_front_directory(LogStore& store, const std::string& path);

// The size and CRC32C of the file at `path` (empty if missing).
std::optional<FrontSum> checksum_file(LogStore& store, const std::string& path);
// Rank 0 of close: the front file on disk is the last one the log recorded,
// and it was built with the last committed epoch `epoch` (an epoch committed
// by a flush after it, in a later session, is not in it).
bool front_is_current(LogStore& store, const std::string& path, const Tree& tree, uint64_t epoch);
// Raises if the front file (if present) does not belong to this log: not HDF5
// (ConfigError if it is HDF5 of another engine, CorruptionError if unreadable),
// another file id, or an epoch the journal does not have.
void check_front_binding(LogStore& store, const std::string& path, const logfmt::LogHeader& header,
                         uint64_t committed_epochs);
// True if the HDF5 file at `path` carries the log marker; raises h5loom::Error
// if it is not readable HDF5.
bool front_is_marked(const std::string& path);

// True if `path` names a log-engine file: its journal exists and the front file
// is missing or carries the log marker attribute (the engine's probe()).
bool is_log_file(const std::string& path);

}  // namespace h5loom::logengine
