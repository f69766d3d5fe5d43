// The fuzz input of the log-engine reader fuzzer, and how it becomes the files
// of a log-engine file (docs/formats/log.md, docs/testing.md).
//
// The fuzzer does not mutate the files themselves: every record of the format
// carries a CRC32C, so a mutated file almost never gets past the first check.
// Instead the input describes the file's contents and this code builds the
// headers, index records, block entries and commit records around them,
// computing every checksum (unless the input asks for one to be wrong).
//
// Layout of an input (every field that is missing reads as 0):
//
//   head  SEP_EPOCH epoch  SEP_EPOCH epoch ...
//
//   head   = flags:u8 unit:u8 front:u8 [raw unit:u64 if unit == 255] tail bytes...
//     flags bit 0: open without naming the engine (detection by the front file / journal)
//           bit 1: the journal's file id differs from the log's
//           bit 2: wrong CRC in the log header       bit 3: wrong CRC in the journal header
//           bit 4: append the tail bytes to the log (an uncommitted, torn log tail)
//           bit 5: append up to 63 tail bytes to the journal (a torn commit record)
//           bit 6: log header version one higher       bit 7: no journal at all
//     unit  0: checksum unit 65536; 1..63: 2^(unit % 20); 64..254: that many bytes; 255: raw
//     front bits 0-1: 0 no front file; 1 an HDF5 front file with the log marker attribute;
//           2 an HDF5 file without the marker; 3 the tail bytes (never an HDF5 signature)
//           bit 2: do not bind the front file. Else (version >= 2, a front file) the last
//                  epoch's metadata gets a `front` operation with the size and CRC32C of
//                  the front file written, as the engine binds it
//           bits 3-5: format version of every header and record: 0-3: 2, 4-5: 1, 6: 3
//                  (unknown), 7: 0 (unknown)
//
//   epoch  = eflags:u8 [index epoch:u8 if bit 0] [commit epoch:u8 if bit 1]
//            [log_end delta:i16 if bit 2] metadata CBOR...  (SEP_BLOCK entry)*
//     eflags bit 3: wrong index CRC in the commit record   bit 4: index record version + 1
//            bit 5: the index header counts one entry more   bit 6: commit record version + 1
//            bit 7: wrong CRC of the commit record
//
//   entry  = bflags:u8 dataset rank nd:u8 counter [epoch if bit 6] [offset if bit 1]
//            [nbytes if bit 2] [units:K if bit 3] (start count)*nd  block data...
//     numbers are u8 (u32/u64 in the format) unless bit 0 ("wide"): then dataset, rank,
//     epoch and K are u32, the others u64; offset and nbytes are u16 when not wide.
//     bflags bit 1: raw offset (else: where the harness put the block data)
//            bit 2: raw nbytes (else: the data's length)
//            bit 3: raw number of checksum units (else: what the data needs)
//            bit 4: wrong CRC of the entry              bit 5: wrong CRC of the first unit
//            bit 6: raw epoch (else: the epoch's number)
//            bit 7: with bit 2, the block data is padded with zeros up to nbytes (<= 4 MiB):
//                   large blocks (the reader's direct path) for a few input bytes
//
// SEP_EPOCH = FE 45 50 FE ("\xfeEP\xfe"), SEP_BLOCK = FE 42 4B FE ("\xfeBK\xfe").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace loomfuzz {

using Bytes = std::vector<uint8_t>;

struct Entry {
  uint8_t flags = 0;
  uint32_t dataset = 0, rank = 0, epoch = 0, units = 0;
  uint8_t nd = 0;
  uint64_t counter = 0, offset = 0, nbytes = 0;
  std::vector<uint64_t> start, count;  // nd each
  Bytes data;
};

struct Epoch {
  uint8_t flags = 0;
  uint8_t index_epoch = 0, commit_epoch = 0;
  int16_t log_end_delta = 0;
  Bytes meta;  // CBOR
  std::vector<Entry> entries;
};

struct Input {
  uint8_t flags = 0, unit = 0, front = 0;
  uint64_t raw_unit = 0;
  Bytes tail;
  std::vector<Epoch> epochs;
  uint64_t checksum_unit() const;
  uint32_t version() const;
};

Input decode(const uint8_t* data, std::size_t size);
Bytes encode(const Input& in);  // decode(encode(x)) == x unless a byte string holds a separator

// The files of a log-engine file NAME.
struct Files {
  Bytes log;          // NAME.loom/log
  Bytes commits;      // NAME.loom/commits
  bool has_commits = true;
  int front = 0;      // 0 none, 1 HDF5 with marker, 2 HDF5 without marker, 3 garbage
  Bytes front_bytes;  // front == 3
};
// The HDF5 front files (front forms 1 and 2) are copied from the templates
// given (else write_files supplies them, unbound).
Files build(const Input& in, const Bytes* front_with_marker = nullptr, const Bytes* front_without_marker = nullptr);

// Writes `files` as `name`, `name`.loom/log and `name`.loom/commits; the
// HDF5 front files (front 1 and 2) are taken from `front_with_marker` /
// `front_without_marker`. Removes what a front or journal that is absent
// would otherwise leave from a previous call. Returns false on an I/O error.
bool write_files(const Files& files, const std::string& name, const Bytes& front_with_marker,
                 const Bytes& front_without_marker);

// CRC32C as the format defines it (ISA-L's crc32_iscsi, with the standard
// initial value and final inversion).
uint32_t crc32c(const void* data, std::size_t n);

bool read_file(const std::string& path, Bytes& out);

}  // namespace loomfuzz
