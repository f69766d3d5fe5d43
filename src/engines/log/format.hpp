// The on-disk format of the log engine, version 9 (reads 1 to 9). docs/formats/log.md is the
// specification; this header is its code. All integers are little-endian.
//
//   <name>                 an HDF5 "front" file: the tree, attributes, and the
//                          datasets whose data can be mapped onto the log with
//                          HDF5 external storage (rewritten at every close)
//   <name>.loom/log        header, then data blocks and index records, appended
//   <name>.loom/commits    header, then one 64-byte commit record per epoch
//
// An epoch ends at each flush: the data blocks written since the last epoch,
// then one index record (metadata operations + block entries), then - after
// both are on disk - its commit record. Whatever lies after the last valid
// commit record is a torn tail and is ignored.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/crc32c.hpp"
#include "h5loom/types.hpp"

namespace h5loom::logfmt {

// Visible flush rounds per epoch: 24 bits of a block entry (then a flush commits).
constexpr uint32_t kMaxRound = (1u << 24) - 1;
constexpr uint32_t kVersion = 12;        // written; 2 added the front file's checksum and binding,
                                          // 3 links (softlink, unlink, move) and fill values,
                                          // 4 the `elements` operation (held_values.hpp),
                                          // 5 deleting and renaming attributes,
                                          // 6 shrinking datasets (the `resize` operation),
                                          // 7 named datatypes (the `type` operation),
                                          // 8 hard and external links (`hardlink`, `extlink`),
                                          // 9 opaque datatypes (`opaque[N]{tag}`),
                                          // 10 variable-length parts (`vlen<T>`, `packed` elements),
                                          // 11 user-defined links (`udlink`),
                                          // 12 the front file's CRC32C in the commit record
constexpr uint32_t kOldestVersion = 1;   // the oldest read
inline bool readable_version(uint32_t v) { return v >= kOldestVersion && v <= kVersion; }
constexpr char kLogMagic[8] = {'H', '5', 'L', 'O', 'O', 'M', 'L', 'G'};
constexpr char kCommitsMagic[8] = {'H', '5', 'L', 'O', 'O', 'M', 'C', 'M'};
constexpr char kIndexMagic[4] = {'L', 'I', 'D', 'X'};
constexpr char kCommitMagic[4] = {'L', 'C', 'M', 'T'};
constexpr uint64_t kLogHeaderSize = 4096;  // data starts page-aligned
constexpr uint64_t kCommitsHeaderSize = 64;
constexpr uint64_t kCommitRecordSize = 64;
constexpr uint64_t kIndexHeaderSize = 48;

std::string directory_of(const std::string& front);  // "<front>.loom"
std::string log_path(const std::string& front);      // "<front>.loom/log"
std::string commits_path(const std::string& front);  // "<front>.loom/commits"

// CRC32C (core/crc32c.hpp), shared with the other engines.
using h5loom::crc32c;

// Little-endian byte buffer helpers.
struct Writer {
  std::vector<unsigned char> bytes;
  // Room for a small record from the start: grown from empty, a 40-byte
  // header message took six allocations (the front file's objects, tens each).
  Writer() { bytes.reserve(64); }
  void raw(const void* p, std::size_t n) {  // (p must not point into `bytes`: grow may move them)
    if (n == 0) return;
    std::memcpy(grow(n), p, n);
  }
  void u8(uint8_t v) { bytes.push_back(v); }
  void u16(uint16_t v) { little_endian<2>(v); }
  void u32(uint32_t v) { little_endian<4>(v); }
  void u64(uint64_t v) { little_endian<8>(v); }

  // n more bytes at the end, to be filled by the caller (with store_le): for
  // long runs of fields, one resize instead of a growth check per field.
  unsigned char* grow(std::size_t n) {
    const std::size_t at = bytes.size();
    if (bytes.capacity() < at + n) bytes.reserve(std::max(at + n, 2 * bytes.capacity()));
    bytes.resize(at + n);
    return bytes.data() + at;
  }
  // v's low N bytes, little-endian, at `at`.
  template <int N>
  static void store_le(unsigned char* at, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    std::memcpy(at, &v, N);  // v's low N bytes are its first N in memory: one store
#else
    for (int i = 0; i < N; ++i) at[i] = uint8_t(v >> (8 * i));
#endif
  }

 private:
  template <int N>
  void little_endian(uint64_t v) { store_le<N>(grow(N), v); }
};

struct Reader {
  const unsigned char* p;
  std::size_t n, at = 0;
  std::string what;  // for errors
  void need(std::size_t k) const;
  void raw(void* out, std::size_t k) { need(k); std::memcpy(out, p + at, k); at += k; }
  uint8_t u8() { need(1); return p[at++]; }
  uint16_t u16() { need(2); uint16_t v = uint16_t(p[at] | (p[at + 1] << 8)); at += 2; return v; }
  uint32_t u32() { need(4); uint32_t v = 0; for (int i = 0; i < 4; ++i) v |= uint32_t(p[at + i]) << (8 * i); at += 4; return v; }
  uint64_t u64() { need(8); uint64_t v = 0; for (int i = 0; i < 8; ++i) v |= uint64_t(p[at + i]) << (8 * i); at += 8; return v; }
};

// The log file's first 4096 bytes (the rest of the page is zero).
struct LogHeader {
  uint32_t version = kVersion;
  uint64_t checksum_unit = 0;  // data blocks carry one CRC32C per this many bytes
  unsigned char file_id[16] = {};
  std::vector<unsigned char> encode() const;
  static LogHeader decode(const unsigned char* p, std::size_t n, const std::string& where);
};

// One commit record: epoch `epoch` is complete; its index record is at
// [index_offset, +index_size) of the log with CRC32C index_crc, and the log's
// valid length is log_end.
struct CommitRecord {
  uint64_t epoch = 0;
  uint64_t index_offset = 0, index_size = 0;
  uint32_t index_crc = 0;
  // Version 12: the CRC32C of the front file built with this epoch (0: none,
  // or a version before 12, whose index records carry a `front` operation).
  uint32_t front_crc = 0;
  uint64_t log_end = 0;
  uint64_t unix_time_ns = 0;
  std::vector<unsigned char> encode() const;
  // False if the bytes are not a valid record (a torn or never-written tail).
  static bool decode(const unsigned char* p, CommitRecord& out);
};

// One index record: an epoch's metadata operations (CBOR) and block entries,
// after a 48-byte header. Its CRC32C is in the epoch's commit record.
struct IndexRecord {
  uint64_t epoch = 0, entry_count = 0;
  const unsigned char* meta = nullptr;  // the CBOR array of operations
  uint64_t meta_size = 0;
  const unsigned char* entries = nullptr;  // the block entries, back to back
  uint64_t entries_size = 0;
  std::vector<unsigned char> encode() const;
  // The parts of the record at [p, p + n), which must be of `expected_epoch`;
  // CorruptionError naming `what` if its header does not fit.
  static IndexRecord parse(const unsigned char* p, std::size_t n, uint64_t expected_epoch, const std::string& what);
};

// One data block: the elements of a box of a dataset, row-major, at
// [offset, offset + nbytes) of the log, with one CRC32C per checksum unit.
struct BlockEntry {
  uint32_t dataset = 0;  // dataset id: creation order, from 0
  uint32_t epoch = 0, rank = 0;
  uint64_t counter = 0;  // per-rank write order
  // The visible flush round of the epoch it was written in (version 3; 0
  // before): writes separated by a visible flush keep their order across
  // ranks. (epoch, round, rank, counter) orders overlapping writes.
  uint32_t round = 0;
  uint64_t offset = 0, nbytes = 0;
  Dims start, count;
  std::vector<uint32_t> unit_crcs;
  void encode(Writer& w) const;
  static BlockEntry decode(Reader& r);
  // The bytes encode() writes for an entry of `dims` dimensions and `units`
  // checksum units: known before the block has its place in the log.
  static constexpr uint64_t encoded_size(std::size_t dims, uint64_t units) { return 48 + 16 * dims + 4 * units; }
};

}  // namespace h5loom::logfmt
