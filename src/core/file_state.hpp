// The state behind every File, Group and Dataset handle of one open file:
// the engine stack, the engine's file handle and a cache of dataset shapes (so
// that write() can validate without engine calls). Deferred writes are the
// engine's: each is put() at once, with its buffer's lifetime.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "h5loom/h5loom.hpp"

namespace h5loom::detail {

struct FileState {
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<engine::FileHandle> handle;
  std::string filename;
  Mode mode = Mode::Read;
  MPI_Comm comm = MPI_COMM_NULL;  // our duplicate of the user's communicator
  // Another duplicate, used only to find out whether every rank is closing the
  // file (close and close_on_error each enter one barrier on it); none at 1 rank.
  MPI_Comm closing_comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  bool open = false;
  // Between File::close_async and the close's completion: not open (every
  // call but close raises), but the engine still holds the file.
  bool closing = false;
  // close_on_error gave up (the other ranks did not close): never closed.
  bool abandoned = false;
  std::size_t unflushed_puts = 0;  // writes put on this rank since the last flush point
  // The datasets opened, by path. Every name of one dataset (soft and hard
  // links) shares one entry when the engine has tokens: a change of shape
  // through one name is seen through the others.
  std::map<std::string, std::shared_ptr<DatasetInfo>> datasets;
  std::map<uint64_t, std::weak_ptr<DatasetInfo>> datasets_by_token;
  // The engine stack's conformance groups, asked once (supports()).
  mutable std::optional<std::vector<std::string>> conformance_groups;

  ~FileState();

  // Throws UsageError if the file was closed; `what` describes the attempted call.
  void require_open(const std::string& what) const;
  // Throws ReadOnlyError if the file is open read-only.
  void require_writable(const std::string& what) const;
  // Collective: runs the argument checks of a collective call; if they fail on
  // any rank, every rank raises that rank's error (one rank's mistake must not
  // leave the others waiting in the call).
  void agree(const std::function<void()>& check) const;
  // Collective: a flush point. Every write put so far becomes visible to reads
  // (Visible) or also durable (Durable); borrowed buffers are released.
  void flush(engine::FlushLevel level = engine::FlushLevel::Visible);
  // The same flush point, not waited for: the engine's request (null if complete).
  engine::RequestPtr start_flush(engine::FlushLevel level);
  // Collective (File::close_async): the engine starts the close; close()
  // completes it - at the request's wait(), or when the last handle goes. If
  // the engine fails here, the close completes at once and its error is raised.
  void begin_close();
  // Collective: closes the file, or completes a close begun with begin_close().
  void close();
  // Closes the file while this rank handles an error (a C++ exception
  // unwinding, a Python `with` block left by an exception): collectively if
  // every rank does the same within H5LOOM_ERROR_TIMEOUT seconds (default 10);
  // else the other ranks are elsewhere and a collective close would wait
  // forever, so the file is left unclosed and - unless H5LOOM_ABORT_ON_ERROR=0
  // - the job ends with a message.
  void close_on_error(const std::string& error = {});
  // The cached entry of dataset `path`, filled from the engine if missing (collective then).
  const DatasetInfo& dataset_info(const std::string& path);
  // Collective: the entry of `path` (and so of its other names) read again from the engine.
  void refresh_dataset(const std::string& path);
  // Collective (after a link moves or goes): every entry is dropped.
  void forget_datasets();
  // Whether a link `abs_path` exists: an object's name, or a soft or external
  // link (which may lead nowhere here).
  bool link_exists(const std::string& abs_path) const;
  // Whether the engine stack declares the conformance group `group`.
  bool supports(const std::string& group) const;
  // "file 'a.h5'" — every error message starts from this.
  std::string describe_file() const { return "file '" + filename + "'"; }
};

// Path helpers: absolute, normalised paths ("/a/b"); ".." is refused.
std::string normalize_path(const std::string& path);
std::string parent_path(const std::string& abs_path);
std::string join_path(const std::string& group, const std::string& name);
// "group", "dataset", "named datatype" ("nothing" for None), for messages.
const char* kind_name(ObjectKind kind);

}  // namespace h5loom::detail
