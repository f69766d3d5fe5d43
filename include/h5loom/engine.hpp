// The engine interface: the one small set of operations every storage engine
// implements. The object model (h5loom.hpp) checks every argument once and then
// calls exactly one of these; an engine only does the work. See docs/engines.md.
//
// Conventions every engine can rely on (the object model guarantees them):
//  * Paths are absolute and normalised ("/a/b"); the root group is "/".
//  * The parent group of a path to create exists; the name does not.
//  * Datasets, groups and attributes passed to non-create calls exist.
//  * Selections have been validated against the dataset's current shape, and
//    memory types equal the dataset's type.
//  * Every call is collective over the file's communicator: all ranks make the
//    same calls on the same objects in the same order. Only the *contents* of
//    write() batches and read() selections differ between ranks.
//
// A wrapper engine (e.g. collcheck) owns an inner engine and forwards to it,
// like an HDF5 pass-through VOL connector; see src/engines/collcheck.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "h5loom/selection.hpp"
#include "h5loom/types.hpp"

namespace h5loom::engine {

enum class OpenMode {
  Read,             // existing file, read-only
  ReadWrite,        // existing file
  Create,           // new file; an existing one is truncated
  CreateExclusive,  // new file; fails with ExistsError if it exists
};

// Engine-specific state of one open file. Engines derive from it.
class FileHandle {
 public:
  virtual ~FileHandle() = default;
};

// One deferred write: `data` points at a dense buffer of selection.num_elements()
// elements of the dataset's type, valid until write() returns.
struct WriteRequest {
  std::string dataset;
  Selection selection = Selection::none();
  Datatype dtype = Datatype::Float64;
  const void* data = nullptr;
};

class Engine {
 public:
  virtual ~Engine() = default;

  // The name this engine was registered under ("hdf5"); wrappers prefix theirs ("collcheck>hdf5").
  virtual std::string name() const = 0;
  // The conformance groups (file, group, dataset, attribute, selection, datatype,
  // extend, errors) the engine claims to pass; the suite skips the others.
  virtual std::vector<std::string> conformance_groups() const = 0;

  // ---- files -----------------------------------------------------------
  virtual std::unique_ptr<FileHandle> open(const std::string& path, OpenMode mode, MPI_Comm comm) = 0;
  // Makes every write issued so far durable in the file (as far as the storage layer goes).
  virtual void flush(FileHandle& f) = 0;
  virtual void close(FileHandle& f) = 0;
  // The files on disk that make up the file named `path` (for tools: size, copy, remove).
  virtual std::vector<std::string> files(const std::string& path) const { return {path}; }
  // A short description of the engine's on-disk layout and knobs, for `h5loom info`.
  virtual std::string describe(FileHandle& f) = 0;

  // ---- groups and links --------------------------------------------------
  virtual ObjectKind kind(FileHandle& f, const std::string& path) = 0;
  virtual void create_group(FileHandle& f, const std::string& path) = 0;
  // Names (not paths) of the members of a group, sorted.
  virtual std::vector<std::string> list(FileHandle& f, const std::string& group) = 0;

  // ---- datasets ----------------------------------------------------------
  virtual void create_dataset(FileHandle& f, const std::string& path, const DatasetSpec& spec) = 0;
  virtual DatasetInfo dataset_info(FileHandle& f, const std::string& path) = 0;
  // New shape: no dimension shrinks, none exceeds max_shape.
  virtual void extend(FileHandle& f, const std::string& path, const Dims& new_shape) = 0;

  // ---- data transfer -----------------------------------------------------
  // Each rank passes its own list (possibly empty) of writes, issued in order.
  virtual void write(FileHandle& f, const std::vector<WriteRequest>& requests) = 0;
  // Optional and NOT collective: an engine may take one write at once - copy
  // it into a buffer of its own, or write it out - instead of the object model
  // queueing it until the next flush point (one copy instead of two, no
  // allocation per write). It must not raise I/O errors here (the other ranks
  // would not know): they are raised at the next collective call.
  // Returns true if it took the write; false (the default) to have it queued
  // and passed to write() later. The object model stages a write only when
  // nothing is queued before it, so the order of writes is kept. The
  // arguments are those of a WriteRequest; `data` is valid only during the call.
  virtual bool stage(FileHandle& f, const std::string& dataset, const Selection& selection, Datatype dtype,
                     const void* data) {
    (void)f, (void)dataset, (void)selection, (void)dtype, (void)data;
    return false;
  }
  // Each rank reads its own selection (possibly none) into a dense buffer.
  virtual void read(FileHandle& f, const std::string& path, const Selection& sel, Datatype dtype,
                    void* out) = 0;

  // ---- attributes (on "/" , a group or a dataset) ------------------------
  virtual bool has_attribute(FileHandle& f, const std::string& object, const std::string& name) = 0;
  // Creates or overwrites. Every rank passes the same value.
  virtual void write_attribute(FileHandle& f, const std::string& object, const std::string& name,
                               const AttributeValue& value) = 0;
  virtual AttributeValue read_attribute(FileHandle& f, const std::string& object,
                                        const std::string& name) = 0;
  virtual std::vector<std::string> list_attributes(FileHandle& f, const std::string& object) = 0;
};

// Builds an engine stack from a configuration: an engine name ("hdf5") or a JSON
// object ({"engine": "hdf5", "wrappers": ["collcheck"], "hdf5": {...knobs}}).
// Throws ConfigError naming the unknown engine or key.
std::unique_ptr<Engine> make_engine(const std::string& config);
// The engine that wrote an existing file, from what is on disk: "log" for a
// log-engine file, otherwise "hdf5". Used when opening without an engine choice.
std::string detect_engine(const std::string& path);
// Names of the registered base engines and wrappers.
std::vector<std::string> engine_names();
std::vector<std::string> wrapper_names();

}  // namespace h5loom::engine
