// A Zarr store in a local directory: one file per object, under the key's
// path. An object is written to a temporary file beside it and renamed over
// its name, so a crash leaves the old object or the new one (the log engine's
// crash rule). The renames wait for publish(), at the end of the flush, so
// that a flush that fails puts nothing in place (discard()); with `sync`,
// publish() syncs the file system first (syncfs: one device flush for every
// object of the flush, where a sync per object would cost one each), renames,
// and syncs again for the renames.
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
  void publish() override;
  void discard() override;
  std::vector<std::pair<std::string, uint64_t>> list(const std::string& prefix) override;
  void remove_all(const std::string& prefix) override;
  std::string location_of(const std::string& key) const override { return root_ + "/" + key; }
  Found look() override;
  void make_root() override;

 private:
  void make_parents(const std::string& path);
  std::string root_;
  bool sync_;
  std::set<std::string> made_;  // directories known to exist
  std::vector<std::pair<std::string, std::string>> unpublished_;  // (temporary, final) paths
  int writer_;
  uint64_t counter_ = 0;  // for temporary names
};

}  // namespace h5loom::zarr
