// The front file encoded here, in HDF5's file format, instead of by HDF5's
// library - for the trees simulation output is made of: groups, datasets of
// numbers or fixed-length strings whose bytes lie in the log (external
// storage, or virtual datasets over 1-D arrays of the log's runs) or were
// never written (fill values), and attributes of numbers and strings. HDF5's library takes 25-50 us per object to make such a file, even
// in memory (its metadata cache, free lists and skip lists): a front file of
// 100 small datasets cost more than writing and syncing their data
// (docs/benchmarks.md). Encoded here, an object costs about a microsecond.
// Anything else - soft, hard, external and user-defined links, named
// datatypes, compound, enum, variable-length and reference types, user
// blocks - is made by the library (front_file.cpp chooses).
//
// What is written (docs/formats/front-file.md): superblock version 2, object
// headers version 2 with their checksums, links and attributes in the object
// headers ("compact" storage) with their creation order tracked and indexed,
// as the hdf5 engine makes them, virtual datasets' mappings in global heap
// collections as HDF5 1.10 encodes them; readable by HDF5 1.8 and later
// (virtual datasets: 1.10 and later).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engines/log/front_plan.hpp"
#include "h5loom/h5loom.hpp"

namespace h5loom::logfmt {
struct Writer;
}

namespace h5loom::logengine {

class FrontImage {
 public:
  static constexpr int kRoot = 0;  // the root group, there from the start

  FrontImage();

  // Whether a dataset of this type, or this attribute, can be encoded here.
  static bool can_hold(const Datatype& dataset_type);
  static bool can_hold(const std::string& name, const AttributeValue& attribute);
  // Whether a link or attribute name can be encoded here.
  static bool can_hold_name(const std::string& name);
  // Whether an object can hold this many links or attributes in its header
  // (HDF5 finds one there by going through all of them: more go to the
  // library, which keeps them in B-trees).
  static bool can_hold_members(std::size_t count) { return count <= kMaxCompact; }
  // Whether a dataset's external storage of `count` segments fits its header message.
  static bool can_hold_segments(std::size_t count) { return count <= kMaxSegments; }
  // As many segments of external storage as a dataset planned for this
  // encoder may have: HDF5 opens the file again for each segment it reads
  // (1024 segments cost a full read 4.6 ms here); a virtual dataset is the
  // way beyond.
  static constexpr uint64_t kManySegments = 128;

  // A group `name` in group `parent`; returns its number.
  int add_group(int parent, const std::string& name);
  // A dataset of `dtype` (can_hold) and `shape` (at least one dimension) in
  // group `parent`, whose bytes are the `external` segments of the file
  // `file`, in order (the dataset's size in all), or, if there are none, never
  // written: it reads as `fill` (one element; empty: zeros). Returns its number.
  int add_dataset(int parent, const std::string& name, const Datatype& dtype, const Dims& shape,
                  const std::string& file, const std::vector<LogBytes>& external,
                  const std::vector<unsigned char>& fill);
  // A virtual dataset of `dtype` (can_hold) and `shape` in group `parent`: each
  // mapping (can_hold_mappings) a box or regular hyperslab of it filled by a
  // 1-D dataset of this file; elements no mapping covers read as `fill` (one
  // element; empty: zeros). The mappings go to the file's global heap.
  int add_virtual_dataset(int parent, const std::string& name, const Datatype& dtype, const Dims& shape,
                          const std::vector<VirtualMapping>& mappings, const std::vector<unsigned char>& fill);
  static bool can_hold_mappings(const std::vector<VirtualMapping>& mappings);
  // An attribute (can_hold) of object `object`, after those added before.
  void add_attribute(int object, const std::string& name, const AttributeValue& value);

  // The file's bytes.
  std::vector<unsigned char> encode() const;

 private:
  static constexpr std::size_t kMaxCompact = 1000;
  static constexpr std::size_t kMaxName = 1000;
  // The external file list message (16 bytes and 24 per segment) has a 16-bit size.
  static constexpr std::size_t kMaxSegments = 2700;
  // Virtual datasets' mappings list their blocks one by one (HDF5 1.10's
  // encoding), and HDF5 rebuilds the selections from them whenever it opens
  // the dataset: beyond this many blocks in a file the library makes it.
  static constexpr uint64_t kMaxMappedBlocks = 20000;
  // Global heap collections of about this size hold the mappings.
  static constexpr std::size_t kCollectionTarget = 64 * 1024;

  struct Object {
    bool group = false;
    std::vector<std::pair<std::string, int>> links;  // a group's: name, object, in creation order
    std::vector<unsigned char> dataset_messages;       // a dataset's, encoded; the heap's address left 0
    std::size_t heap_address_at = 0;                   // where in them the external file list's heap address goes
    std::vector<unsigned char> heap;                   // a dataset's local heap of external file names (or none)
    std::vector<unsigned char> mappings;               // a virtual dataset's, as its global heap object holds them
    std::size_t mappings_at = 0;                       // where in its messages the heap object's address and index go
    std::vector<std::vector<unsigned char>> attributes;  // attribute messages, in creation order
  };

  // Where each virtual dataset's mappings are: a global heap collection's address and the object's index.
  struct HeapObject {
    uint64_t collection = 0;
    uint32_t index = 0;
  };
  // Encodes object `k`'s header (and heap) at the end of `out`; `address` gives every object's.
  void encode_object(std::size_t k, const std::vector<uint64_t>& address, const std::vector<HeapObject>& mapped,
                     logfmt::Writer& out) const;
  // A dataset's dataspace, datatype and fill value messages, at the end of `w`.
  static void dataset_messages(logfmt::Writer& w, const Datatype& dtype, const Dims& shape,
                               const std::vector<unsigned char>& fill);
  static std::vector<unsigned char> attribute_message(const std::string& name, const AttributeValue& value);
  std::size_t chunk_size(std::size_t k) const;  // the size of object k's messages
  uint64_t header_size(std::size_t k) const;

  std::vector<Object> objects_;
};

}  // namespace h5loom::logengine
