// Encoding and decoding of the log format's fixed records (docs/formats/log.md).
#include "engines/log/format.hpp"

#include <climits>

namespace h5loom::logfmt {

std::string directory_of(const std::string& front) { return front + ".loom"; }
std::string log_path(const std::string& front) { return directory_of(front) + "/log"; }
std::string commits_path(const std::string& front) { return directory_of(front) + "/commits"; }

void Reader::need(std::size_t k) const {
  if (at + k > n) throw IOError(what + ": record ends early (needs " + std::to_string(at + k) + " bytes, has " +
                                std::to_string(n) + ")");
}

std::vector<unsigned char> LogHeader::encode() const {
  Writer w;
  w.raw(kLogMagic, 8);
  w.u32(version);
  w.u32(uint32_t(kLogHeaderSize));
  w.u64(checksum_unit);
  w.raw(file_id, 16);
  w.u32(crc32c(w.bytes.data(), w.bytes.size()));
  w.bytes.resize(kLogHeaderSize, 0);
  return w.bytes;
}

LogHeader LogHeader::decode(const unsigned char* p, std::size_t n, const std::string& where) {
  if (n < 44 || std::memcmp(p, kLogMagic, 8) != 0)
    throw IOError(where + " is not an h5loom log (bad magic number)");
  Reader r{p, n, 8, where};
  LogHeader h;
  h.version = r.u32();
  if (!readable_version(h.version))
    throw IOError(where + " has log format version " + std::to_string(h.version) + "; this h5loom reads versions " +
                  std::to_string(kOldestVersion) + " to " + std::to_string(kVersion));
  if (r.u32() != kLogHeaderSize) throw IOError(where + ": unexpected log header size");
  h.checksum_unit = r.u64();
  r.raw(h.file_id, 16);
  uint32_t crc = r.u32();
  if (crc != crc32c(p, 40)) throw IOError(where + ": checksum mismatch in the log header");
  if (h.checksum_unit == 0) throw IOError(where + ": log header has a zero checksum unit");
  return h;
}

std::vector<unsigned char> CommitRecord::encode() const {
  Writer w;
  w.raw(kCommitMagic, 4);
  w.u32(kVersion);
  w.u64(epoch);
  w.u64(index_offset);
  w.u64(index_size);
  w.u32(index_crc);
  w.u32(front_crc);
  w.u64(log_end);
  w.u64(unix_time_ns);
  w.u32(crc32c(w.bytes.data(), w.bytes.size()));  // at byte 56, over bytes [0, 56)
  w.u32(0);
  return w.bytes;
}

bool CommitRecord::decode(const unsigned char* p, CommitRecord& out) {
  if (std::memcmp(p, kCommitMagic, 4) != 0) return false;
  Reader r{p, kCommitRecordSize, 4, "commit record"};
  const uint32_t version = r.u32();
  if (!readable_version(version)) return false;
  out.epoch = r.u64();
  out.index_offset = r.u64();
  out.index_size = r.u64();
  out.index_crc = r.u32();
  out.front_crc = r.u32();
  if (version < 12) out.front_crc = 0;  // reserved before version 12
  out.log_end = r.u64();
  out.unix_time_ns = r.u64();
  return r.u32() == crc32c(p, 56);
}

std::vector<unsigned char> IndexRecord::encode() const {
  Writer w;
  w.bytes.reserve(kIndexHeaderSize + meta_size + entries_size);
  w.raw(kIndexMagic, 4);
  w.u32(kVersion);
  w.u64(epoch);
  w.u64(meta_size);
  w.u64(entries_size);
  w.u64(entry_count);
  w.u64(0);
  w.raw(meta, meta_size);
  w.raw(entries, entries_size);
  return std::move(w.bytes);
}

IndexRecord IndexRecord::parse(const unsigned char* p, std::size_t n, uint64_t expected_epoch,
                               const std::string& what) {
  if (n < kIndexHeaderSize || std::memcmp(p, kIndexMagic, 4) != 0) throw CorruptionError(what + " is damaged");
  Reader r{p, n, 4, what};
  if (!readable_version(r.u32())) throw CorruptionError(what + " has an unknown format version");
  IndexRecord rec;
  rec.epoch = r.u64(), rec.meta_size = r.u64(), rec.entries_size = r.u64(), rec.entry_count = r.u64();
  if (rec.epoch != expected_epoch || rec.meta_size > n || rec.entries_size > n ||
      kIndexHeaderSize + rec.meta_size + rec.entries_size != n)
    throw CorruptionError(what + " has inconsistent sizes");
  rec.meta = p + kIndexHeaderSize;
  rec.entries = rec.meta + rec.meta_size;
  return rec;
}

void BlockEntry::encode(Writer& w) const {
  std::size_t begin = w.bytes.size();
  w.u32(dataset);
  w.u32(epoch);
  w.u32(rank);
  w.u8(uint8_t(start.size()));
  w.u8(uint8_t(round & 0xff));  // the round: 24 bits, low byte first (reserved, 0, before version 3)
  w.u16(uint16_t(round >> 8));
  w.u64(counter);
  w.u64(offset);
  w.u64(nbytes);
  for (std::size_t d = 0; d < start.size(); ++d) {
    w.u64(start[d]);
    w.u64(count[d]);
  }
  w.u32(uint32_t(unit_crcs.size()));
  for (uint32_t c : unit_crcs) w.u32(c);
  w.u32(crc32c(w.bytes.data() + begin, w.bytes.size() - begin));
}

BlockEntry BlockEntry::decode(Reader& r) {
  std::size_t begin = r.at;
  BlockEntry e;
  e.dataset = r.u32();
  e.epoch = r.u32();
  e.rank = r.u32();
  unsigned nd = r.u8();
  if (nd == 0 || nd > kMaxRank) throw IOError(r.what + ": a block entry has " + std::to_string(nd) + " dimensions");
  e.round = r.u8();
  e.round |= uint32_t(r.u16()) << 8;
  e.counter = r.u64();
  e.offset = r.u64();
  e.nbytes = r.u64();
  e.start.resize(nd);
  e.count.resize(nd);
  for (unsigned d = 0; d < nd; ++d) {
    e.start[d] = r.u64();
    e.count[d] = r.u64();
  }
  uint32_t units = r.u32();
  r.need(std::size_t(units) * 4);
  e.unit_crcs.resize(units);
  for (auto& c : e.unit_crcs) c = r.u32();
  uint32_t stored = r.u32();
  if (stored != crc32c(r.p + begin, r.at - 4 - begin))
    throw IOError(r.what + ": checksum mismatch in a block entry (dataset id " + std::to_string(e.dataset) + ")");
  return e;
}

}  // namespace h5loom::logfmt
