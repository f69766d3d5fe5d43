// The storage seam of the zarr engine: a Zarr store is a set of objects named
// by keys ("zarr.json", "grid/u/zarr.json", "grid/u/c/0/1"). The engine asks
// for whole objects and writes whole objects; a store makes each write appear
// whole or not at all. Today: a directory (directory_store.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace h5loom::zarr {

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // What is there: nothing (or an empty directory), a Zarr store (a root
  // zarr.json), other objects or files, or something that cannot hold a
  // store (a regular file where the directory would be).
  enum class Found { Nothing, Store, Other, NotAStore };
  virtual Found look() = 0;
  // Makes the store's root exist (a directory; nothing for a bucket), a
  // file in the way replaced.
  virtual void make_root() = 0;
  // "directory '/scratch/run.zarr'", for messages.
  virtual std::string describe() const = 0;
  // The object's bytes; nullopt if there is none. IOError if it cannot be read.
  virtual std::optional<std::vector<unsigned char>> get(const std::string& key) = 0;
  // Writes the object, replacing any: a reader sees the old bytes or the new
  // ones, never a part - the new ones from publish() on (or at once, in a
  // store whose writes cannot be held back: S3). IOError if it cannot be written.
  virtual void put(const std::string& key, const void* data, std::size_t size) = 0;
  // Every put so far is in place, and - if the store syncs - survives a power loss.
  virtual void publish() = 0;
  // Drops every put not yet in place (a flush that failed on some rank).
  virtual void discard() = 0;
  // Every key under `prefix` ("" for all), with its size, in no order.
  virtual std::vector<std::pair<std::string, uint64_t>> list(const std::string& prefix) = 0;
  // Removes every object under `prefix` ("" for the whole store).
  virtual void remove_all(const std::string& prefix) = 0;
  // Where a key's object lives, for tools (a path; a URL for remote stores).
  virtual std::string location_of(const std::string& key) const = 0;
};

}  // namespace h5loom::zarr
