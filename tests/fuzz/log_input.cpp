// See log_input.hpp for the input layout; docs/formats/log.md for the files.
#include "log_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <isa-l/crc.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

namespace loomfuzz {

namespace {

const uint8_t kSepEpoch[4] = {0xFE, 'E', 'P', 0xFE};
const uint8_t kSepBlock[4] = {0xFE, 'B', 'K', 0xFE};

// Split [p, p+n) at every occurrence of a 4-byte separator.
std::vector<Bytes> split(const uint8_t* p, std::size_t n, const uint8_t* sep) {
  std::vector<Bytes> parts;
  std::size_t from = 0;
  for (std::size_t i = 0; i + 4 <= n;) {
    if (std::memcmp(p + i, sep, 4) == 0) {
      parts.emplace_back(p + from, p + i);
      i += 4;
      from = i;
    } else {
      ++i;
    }
  }
  parts.emplace_back(p + from, p + n);
  return parts;
}

// Reads little-endian numbers; past the end, zeros.
struct Cursor {
  const Bytes& b;
  std::size_t at = 0;
  uint64_t num(int width) {
    uint64_t v = 0;
    for (int i = 0; i < width; ++i, ++at)
      if (at < b.size()) v |= uint64_t(b[at]) << (8 * i);
    return v;
  }
  Bytes rest() const { return at < b.size() ? Bytes(b.begin() + long(at), b.end()) : Bytes(); }
};

struct Out {
  Bytes b;
  void num(uint64_t v, int width) {
    for (int i = 0; i < width; ++i) b.push_back(uint8_t(v >> (8 * i)));
  }
  void raw(const Bytes& x) { b.insert(b.end(), x.begin(), x.end()); }
  void raw(const void* p, std::size_t n) {
    auto* c = static_cast<const uint8_t*>(p);
    b.insert(b.end(), c, c + n);
  }
};

Entry decode_entry(const Bytes& chunk) {
  Cursor c{chunk};
  Entry e;
  e.flags = uint8_t(c.num(1));
  const bool wide = e.flags & 1;
  const int w32 = wide ? 4 : 1, w64 = wide ? 8 : 1, wpos = wide ? 8 : 2;
  e.dataset = uint32_t(c.num(w32));
  e.rank = uint32_t(c.num(w32));
  e.nd = uint8_t(c.num(1));
  e.counter = c.num(w64);
  if (e.flags & 0x40) e.epoch = uint32_t(c.num(w32));
  if (e.flags & 0x02) e.offset = c.num(wpos);
  if (e.flags & 0x04) e.nbytes = c.num(wpos);
  if (e.flags & 0x08) e.units = uint32_t(c.num(w32));
  for (unsigned d = 0; d < e.nd; ++d) {
    e.start.push_back(c.num(w64));
    e.count.push_back(c.num(w64));
  }
  e.data = c.rest();
  return e;
}

void encode_entry(Out& o, const Entry& e) {
  const bool wide = e.flags & 1;
  const int w32 = wide ? 4 : 1, w64 = wide ? 8 : 1, wpos = wide ? 8 : 2;
  o.num(e.flags, 1);
  o.num(e.dataset, w32);
  o.num(e.rank, w32);
  o.num(e.nd, 1);
  o.num(e.counter, w64);
  if (e.flags & 0x40) o.num(e.epoch, w32);
  if (e.flags & 0x02) o.num(e.offset, wpos);
  if (e.flags & 0x04) o.num(e.nbytes, wpos);
  if (e.flags & 0x08) o.num(e.units, w32);
  for (unsigned d = 0; d < e.nd; ++d) {
    o.num(d < e.start.size() ? e.start[d] : 0, w64);
    o.num(d < e.count.size() ? e.count[d] : 0, w64);
  }
  o.raw(e.data);
}

void put32(Bytes& b, std::size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + std::size_t(i)] = uint8_t(v >> (8 * i));
}

}  // namespace

uint32_t crc32c(const void* data, std::size_t n) {
  uint32_t reg = ~0u;
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  while (n > 0) {
    int piece = n > std::size_t(INT_MAX / 2) ? INT_MAX / 2 : int(n);
    reg = crc32_iscsi(p, piece, reg);
    p += piece;
    n -= std::size_t(piece);
  }
  return ~reg;
}

uint64_t Input::checksum_unit() const {
  if (unit == 0) return 65536;
  if (unit < 64) return uint64_t(1) << (unit % 20);
  if (unit < 255) return unit;
  return raw_unit;
}

Input decode(const uint8_t* data, std::size_t size) {
  Input in;
  auto parts = split(data, size, kSepEpoch);
  {
    Cursor c{parts[0]};
    in.flags = uint8_t(c.num(1));
    in.unit = uint8_t(c.num(1));
    in.front = uint8_t(c.num(1));
    if (in.unit == 255) in.raw_unit = c.num(8);
    in.tail = c.rest();
  }
  for (std::size_t i = 1; i < parts.size(); ++i) {
    auto pieces = split(parts[i].data(), parts[i].size(), kSepBlock);
    Epoch ep;
    Cursor c{pieces[0]};
    ep.flags = uint8_t(c.num(1));
    if (ep.flags & 1) ep.index_epoch = uint8_t(c.num(1));
    if (ep.flags & 2) ep.commit_epoch = uint8_t(c.num(1));
    if (ep.flags & 4) ep.log_end_delta = int16_t(uint16_t(c.num(2)));
    ep.meta = c.rest();
    for (std::size_t k = 1; k < pieces.size(); ++k) ep.entries.push_back(decode_entry(pieces[k]));
    in.epochs.push_back(std::move(ep));
  }
  return in;
}

Bytes encode(const Input& in) {
  Out o;
  o.num(in.flags, 1);
  o.num(in.unit, 1);
  o.num(in.front, 1);
  if (in.unit == 255) o.num(in.raw_unit, 8);
  o.raw(in.tail);
  for (const auto& ep : in.epochs) {
    o.raw(kSepEpoch, 4);
    o.num(ep.flags, 1);
    if (ep.flags & 1) o.num(ep.index_epoch, 1);
    if (ep.flags & 2) o.num(ep.commit_epoch, 1);
    if (ep.flags & 4) o.num(uint16_t(ep.log_end_delta), 2);
    o.raw(ep.meta);
    for (const auto& e : ep.entries) {
      o.raw(kSepBlock, 4);
      encode_entry(o, e);
    }
  }
  return o.b;
}

namespace {

constexpr uint64_t kMaxPadded = 4ull << 20;

void cbor_head(Bytes& b, uint8_t major, uint64_t v) {
  const uint8_t m = uint8_t(major << 5);
  if (v < 24) {
    b.push_back(uint8_t(m | v));
  } else {
    int n = v < 0x100 ? 1 : v < 0x10000 ? 2 : v < 0x100000000ull ? 4 : 8;
    b.push_back(uint8_t(m | (n == 1 ? 24 : n == 2 ? 25 : n == 4 ? 26 : 27)));
    for (int i = n - 1; i >= 0; --i) b.push_back(uint8_t(v >> (8 * i)));
  }
}
void cbor_text(Bytes& b, const char* s) {
  cbor_head(b, 3, std::strlen(s));
  b.insert(b.end(), s, s + std::strlen(s));
}

// Appends {op: front, epoch, size, crc} to a metadata array of fewer than 23
// elements (the format's binding of the front file, version 2).
void append_front_op(Bytes& meta, uint64_t epoch, const Bytes& front) {
  if (meta.empty()) meta.push_back(0x80);
  if (meta[0] < 0x80 || meta[0] >= 0x97) return;
  ++meta[0];
  cbor_head(meta, 5, 4);
  cbor_text(meta, "op");
  cbor_text(meta, "front");
  cbor_text(meta, "epoch");
  cbor_head(meta, 0, epoch);
  cbor_text(meta, "size");
  cbor_head(meta, 0, front.size());
  cbor_text(meta, "crc");
  cbor_head(meta, 0, crc32c(front.data(), front.size()));
}

}  // namespace

uint32_t Input::version() const {
  static const uint32_t versions[8] = {2, 2, 2, 2, 1, 1, 3, 0};
  return versions[(front >> 3) & 7];
}

Files build(const Input& in, const Bytes* front_with_marker, const Bytes* front_without_marker) {
  Files f;
  const uint64_t unit = in.checksum_unit();
  const uint8_t file_id[16] = {'f', 'u', 'z', 'z', 0x10, 0x0d, 0xfe, 0xed, 1, 2, 3, 4, 5, 6, 7, 8};

  // The log header (4096 bytes).
  Out log;
  log.raw("H5LOOMLG", 8);
  const uint32_t version = in.version();
  log.num(in.flags & 0x40 ? version + 1 : version, 4);
  log.num(4096, 4);
  log.num(unit, 8);
  log.raw(file_id, 16);
  log.num(crc32c(log.b.data(), 40) ^ (in.flags & 0x04 ? 1u : 0u), 4);
  log.b.resize(4096, 0);

  // The journal header (64 bytes).
  Out com;
  com.raw("H5LOOMCM", 8);
  com.num(version, 4);
  com.raw(file_id, 16);
  if (in.flags & 0x02) com.b[12] ^= 0xFF;
  com.num(crc32c(com.b.data(), 28) ^ (in.flags & 0x08 ? 1u : 0u), 4);
  com.b.resize(64, 0);

  // The front file, decided first: version 2 binds it by its checksum in the metadata.
  f.front = in.front % 4;
  if (f.front == 1 && front_with_marker) f.front_bytes = *front_with_marker;
  if (f.front == 2 && front_without_marker) f.front_bytes = *front_without_marker;
  if (f.front == 3) {
    f.front_bytes = in.tail;
    // Garbage, never HDF5: HDF5's own parser is not what this fuzzes.
    if (!f.front_bytes.empty()) f.front_bytes[0] = 'X';
  }
  uint64_t number = 0;
  for (const auto& ep0 : in.epochs) {
    ++number;
    Epoch bound;
    const bool bind = !(in.front & 0x04) && version >= 2 && f.front != 0 && number == in.epochs.size();
    if (bind) {
      bound.flags = ep0.flags, bound.index_epoch = ep0.index_epoch, bound.commit_epoch = ep0.commit_epoch;
      bound.log_end_delta = ep0.log_end_delta, bound.meta = ep0.meta;
      append_front_op(bound.meta, number, f.front_bytes);
    }
    const Epoch& ep = ep0;
    const Bytes& meta = bind ? bound.meta : ep0.meta;
    // The epoch's data blocks, then its index record.
    Out entries;
    for (const auto& e0 : ep.entries) {
      // "pad": the block's data is the input's bytes then zeros up to the raw
      // nbytes (at most kMaxPadded), so that large blocks cost no input bytes.
      Entry padded;
      const bool pad = (e0.flags & 0x80) && (e0.flags & 0x04) && e0.nbytes > e0.data.size() && e0.nbytes <= kMaxPadded;
      if (pad) {
        padded = e0;
        padded.data.resize(e0.nbytes, 0);
      }
      const Entry& e = pad ? padded : e0;
      const uint64_t placed = log.b.size();
      log.raw(e.data);
      const uint64_t nbytes = e.flags & 0x04 ? e.nbytes : e.data.size();
      const uint64_t needed = unit ? (e.data.size() + unit - 1) / unit : 0;
      const uint64_t units = e.flags & 0x08 ? e.units : needed;
      const std::size_t begin = entries.b.size();
      entries.num(e.dataset, 4);
      entries.num(e.flags & 0x40 ? e.epoch : uint32_t(number), 4);
      entries.num(e.rank, 4);
      entries.num(e.nd, 1);
      entries.num(0, 3);
      entries.num(e.counter, 8);
      entries.num(e.flags & 0x02 ? e.offset : placed, 8);
      entries.num(nbytes, 8);
      for (unsigned d = 0; d < e.nd; ++d) {
        entries.num(d < e.start.size() ? e.start[d] : 0, 8);
        entries.num(d < e.count.size() ? e.count[d] : 0, 8);
      }
      entries.num(units, 4);
      // A huge count is written as such, with a list no longer than the data
      // needs: the reader must notice that the record ends early.
      const uint64_t listed = std::min<uint64_t>(units, std::max<uint64_t>(needed, 1) + 4);
      for (uint64_t u = 0; u < listed; ++u) {
        uint32_t crc = 0;
        if (unit && u * unit < e.data.size()) {
          const uint64_t n = std::min<uint64_t>(unit, e.data.size() - u * unit);
          crc = crc32c(e.data.data() + u * unit, n);
        }
        if (u == 0 && (e.flags & 0x20)) crc ^= 1;
        entries.num(crc, 4);
      }
      uint32_t crc = crc32c(entries.b.data() + begin, entries.b.size() - begin);
      entries.num(crc ^ (e.flags & 0x10 ? 1u : 0u), 4);
    }
    Out idx;
    idx.raw("LIDX", 4);
    idx.num(ep.flags & 0x10 ? version + 1 : version, 4);
    idx.num(ep.flags & 0x01 ? ep.index_epoch : number, 8);
    idx.num(meta.size(), 8);
    idx.num(entries.b.size(), 8);
    idx.num(ep.entries.size() + (ep.flags & 0x20 ? 1 : 0), 8);
    idx.num(0, 8);
    idx.raw(meta);
    idx.raw(entries.b);
    const uint64_t index_offset = log.b.size();
    log.raw(idx.b);

    Out rec;
    rec.raw("LCMT", 4);
    rec.num(ep.flags & 0x40 ? version + 1 : version, 4);
    rec.num(ep.flags & 0x02 ? ep.commit_epoch : number, 8);
    rec.num(index_offset, 8);
    rec.num(idx.b.size(), 8);
    rec.num(crc32c(idx.b.data(), idx.b.size()) ^ (ep.flags & 0x08 ? 1u : 0u), 4);
    rec.num(0, 4);
    rec.num(uint64_t(int64_t(log.b.size()) + ep.log_end_delta), 8);
    rec.num(0, 8);
    rec.num(crc32c(rec.b.data(), 56) ^ (ep.flags & 0x80 ? 1u : 0u), 4);
    rec.num(0, 4);
    com.raw(rec.b);
  }
  if (in.flags & 0x10) log.raw(in.tail);
  if (in.flags & 0x20) com.raw(in.tail.data(), std::min<std::size_t>(in.tail.size(), 63));

  f.log = std::move(log.b);
  f.commits = std::move(com.b);
  f.has_commits = !(in.flags & 0x80);
  return f;
}

bool read_file(const std::string& path, Bytes& out) {
  out.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  uint8_t buf[65536];
  for (;;) {
    ssize_t k = ::read(fd, buf, sizeof buf);
    if (k < 0) {
      ::close(fd);
      return false;
    }
    if (k == 0) break;
    out.insert(out.end(), buf, buf + k);
  }
  ::close(fd);
  return true;
}

namespace {
bool put_file(const std::string& path, const Bytes& b) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  std::size_t at = 0;
  while (at < b.size()) {
    ssize_t k = ::write(fd, b.data() + at, b.size() - at);
    if (k <= 0) {
      ::close(fd);
      return false;
    }
    at += std::size_t(k);
  }
  return ::close(fd) == 0;
}
}  // namespace

bool write_files(const Files& files, const std::string& name, const Bytes& front_with_marker,
                 const Bytes& front_without_marker) {
  const std::string dir = name + ".loom";
  ::mkdir(dir.c_str(), 0755);
  ::unlink((dir + "/front.tmp").c_str());
  if (!put_file(dir + "/log", files.log)) return false;
  if (files.has_commits) {
    if (!put_file(dir + "/commits", files.commits)) return false;
  } else {
    ::unlink((dir + "/commits").c_str());
  }
  switch (files.front) {
    case 1: return put_file(name, files.front_bytes.empty() ? front_with_marker : files.front_bytes);
    case 2: return put_file(name, files.front_bytes.empty() ? front_without_marker : files.front_bytes);
    case 3: return put_file(name, files.front_bytes);
    default: ::unlink(name.c_str()); return true;
  }
}

}  // namespace loomfuzz
