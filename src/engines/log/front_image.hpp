// The front file encoded here, in HDF5's file format, instead of by HDF5's
// library - for the trees simulation output is made of: groups, datasets of
// numbers or fixed-length strings whose bytes lie in the log (external
// storage) or were never written (fill values), and attributes of numbers and
// strings. HDF5's library takes 25-50 us per object to make such a file, even
// in memory (its metadata cache, free lists and skip lists): a front file of
// 100 small datasets cost more than writing and syncing their data
// (docs/benchmarks.md). Encoded here, an object costs about a microsecond.
// Anything else - soft, hard, external and user-defined links, named
// datatypes, compound, enum, variable-length and reference types, virtual
// datasets, user blocks - is made by the library (front_file.cpp chooses).
//
// What is written (docs/formats/front-file.md): superblock version 2, object
// headers version 2 with their checksums, links and attributes in the object
// headers ("compact" storage) with their creation order tracked and indexed,
// as the hdf5 engine makes them; readable by HDF5 1.8 and later.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "h5loom/h5loom.hpp"

namespace h5loom::logengine {

class FrontImage {
 public:
  static constexpr int kRoot = 0;  // the root group, there from the start

  FrontImage();

  // Whether a dataset of this type, or this attribute, can be encoded here.
  static bool can_hold(const Datatype& dataset_type);
  static bool can_hold(const AttributeValue& attribute);
  // Whether a link or attribute name can be encoded here (its message, like every header message, has a 16-bit size).
  static bool can_hold_name(const std::string& name) { return !name.empty() && name.size() <= 1000; }
  // Whether an object can hold `links` links or `attributes` attributes in its header.
  static bool can_hold_members(std::size_t count) { return count <= kMaxCompact; }
  // Whether a dataset's external storage of `count` segments fits its header message.
  static bool can_hold_segments(std::size_t count) { return count <= kMaxSegments; }
  // As many segments of external storage as a dataset planned for this
  // encoder may have (HDF5 reads one segment after another; a virtual
  // dataset, made by the library, is the way beyond).
  static constexpr uint64_t kManySegments = 1024;

  // A group `name` in group `parent`; returns its number.
  int add_group(int parent, const std::string& name);
  // A dataset of `dtype` (can_hold) and `shape` (at least one dimension) in
  // group `parent`, whose bytes are the `external` segments, in order (the
  // dataset's size in all), or, if there are none, never written: it reads
  // as `fill` (one element; empty: zeros). Returns its number.
  int add_dataset(int parent, const std::string& name, const Datatype& dtype, const Dims& shape,
                  std::vector<ExternalSegment> external, const std::vector<unsigned char>& fill);
  // An attribute (can_hold) of object `object`, after those added before.
  void add_attribute(int object, const std::string& name, const AttributeValue& value);

  // The file's bytes.
  std::vector<unsigned char> encode() const;

 private:
  // HDF5 counts links and attributes kept in an object header in 16 bits.
  static constexpr std::size_t kMaxCompact = 65535;
  // The external file list message (16 bytes and 24 per segment) has a 16-bit size.
  static constexpr std::size_t kMaxSegments = 2700;

  struct Object {
    bool group = false;
    std::vector<std::pair<std::string, int>> links;  // a group's: name, object, in creation order
    std::vector<unsigned char> dataset_messages;       // a dataset's, encoded; the heap's address left 0
    std::size_t heap_address_at = 0;                   // where in them the external file list's heap address goes
    std::vector<unsigned char> heap;                   // a dataset's local heap of external file names (or none)
    std::vector<std::vector<unsigned char>> attributes;  // attribute messages, in creation order
  };

  // Encodes object `k`'s header (and heap) at `at`; `address` gives every object's.
  void encode_object(std::size_t k, const std::vector<uint64_t>& address, std::vector<unsigned char>& out) const;
  uint64_t header_size(std::size_t k) const;

  std::vector<Object> objects_;
};

}  // namespace h5loom::logengine
