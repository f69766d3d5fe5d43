// A Zarr store in a local directory: one file per object, under the key's
// path. An object is written to a temporary file beside it and renamed over
// its name, so a crash leaves the old object or the new one (the log engine's
// crash rule); with `sync`, the file is synced before the rename and the
// directories it changed at sync().
#pragma once

#include <set>

#include "engines/zarr/store.hpp"

namespace h5loom::zarr {

class DirectoryStore : public ObjectStore {
 public:
  // `writer` tells this process's temporary files from every other's (the rank).
  DirectoryStore(std::string root, bool sync, int writer);

  std::string describe() const override { return "directory '" + root_ + "'"; }
  std::optional<std::vector<unsigned char>> get(const std::string& key) override;
  void put(const std::string& key, const void* data, std::size_t size) override;
  void sync() override;
  std::vector<std::pair<std::string, uint64_t>> list(const std::string& prefix) override;
  void remove_all(const std::string& prefix) override;
  std::string location_of(const std::string& key) const override { return root_ + "/" + key; }

  // What is at `root`: nothing, a directory holding a Zarr store (a
  // zarr.json), another directory, or something else (a file).
  enum class Found { Nothing, Store, OtherDirectory, NotADirectory };
  static Found look(const std::string& root);

 private:
  void make_parents(const std::string& path);
  std::string root_;
  bool sync_;
  std::set<std::string> made_;     // directories known to exist
  std::set<std::string> changed_;  // directories with entries not yet synced
  int writer_;
  uint64_t counter_ = 0;  // for temporary names
};

}  // namespace h5loom::zarr
