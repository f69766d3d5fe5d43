// One open Zarr store: the tree of nodes (the same on every rank: every call
// that changes it is collective), the writes put since the last flush, and
// the store the objects live in.
#pragma once

#include <mpi.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engines/zarr/store.hpp"
#include "engines/zarr/zarr_json.hpp"
#include "h5loom/engine.hpp"

namespace h5loom::zarr {

struct ZarrFile : engine::FileHandle {
  std::string path;
  engine::OpenMode mode = engine::OpenMode::Read;
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the program's
  int rank = 0, size = 1;
  std::unique_ptr<ObjectStore> store;

  std::map<std::string, Node> nodes;  // by absolute path; "/" is the root group
  std::set<std::string> dirty;        // nodes whose zarr.json the next flush writes (rank 0)
  // Datasets by a number that means the same on every rank (the order they
  // were made or found in), for the chunk exchange.
  std::vector<std::string> dataset_paths;
  std::map<std::string, uint32_t> dataset_ids;

  std::vector<engine::Write> pending;  // put since the last flush, in order

  ~ZarrFile() override;
  bool writable() const { return mode != engine::OpenMode::Read; }
  std::string where() const { return "Zarr store '" + path + "'"; }
  Node& node(const std::string& p);  // NotFoundError if absent
  void add_node(const std::string& p, Node n);
};

// Store keys: a node's metadata, and one of its chunks.
std::string metadata_key(const std::string& path);
std::string chunk_key(const std::string& path, const Dims& chunk);

}  // namespace h5loom::zarr
