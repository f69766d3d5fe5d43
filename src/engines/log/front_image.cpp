#include "engines/log/front_image.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "engines/log/format.hpp"

namespace h5loom::logengine {

namespace {

using logfmt::Writer;

constexpr uint64_t kUndefined = ~uint64_t(0);  // HDF5's "no address"
constexpr std::size_t kSuperblockSize = 48;     // version 2, 8-byte addresses and lengths
constexpr std::size_t kHeapPrefixSize = 32;     // a local heap's header
// HDF5 keeps up to 8 links or attributes in an object header by default; an
// object with more records larger limits (max compact, min dense) so that
// its header is what HDF5 would expect of it. 6 is HDF5's min dense.
constexpr std::size_t kDefaultMaxCompact = 8;
constexpr uint16_t kDefaultMinDense = 6;
// An attribute message, like every header message, has a 16-bit size.
constexpr std::size_t kMaxMessage = 65535;

// Header message types and flags (HDF5 file format specification, IV.A.2).
enum : uint8_t {
  kDataspace = 0x01,
  kLinkInfo = 0x02,
  kDatatype = 0x03,
  kFillValue = 0x05,
  kLink = 0x06,
  kExternalFiles = 0x07,
  kLayout = 0x08,
  kGroupInfo = 0x0A,
  kAttribute = 0x0C,
  kAttributeInfo = 0x15,
};
constexpr uint8_t kConstant = 0x01, kDontShare = 0x04;

// Bob Jenkins' lookup3 hash (hashlittle, byte by byte): the checksum of
// HDF5's metadata since format version 2.
uint32_t rotate(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }
uint32_t lookup3(const unsigned char* k, std::size_t length) {
  uint32_t a, b, c;
  a = b = c = 0xdeadbeef + uint32_t(length);
  auto word = [](const unsigned char* p, std::size_t n) {
    uint32_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= uint32_t(p[i]) << (8 * i);
    return v;
  };
  // A whole little-endian word (one load, where the loop above is four).
  auto word4 = [](const unsigned char* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  };
  while (length > 12) {
    a += word4(k), b += word4(k + 4), c += word4(k + 8);
    a -= c, a ^= rotate(c, 4), c += b;
    b -= a, b ^= rotate(a, 6), a += c;
    c -= b, c ^= rotate(b, 8), b += a;
    a -= c, a ^= rotate(c, 16), c += b;
    b -= a, b ^= rotate(a, 19), a += c;
    c -= b, c ^= rotate(b, 4), b += a;
    length -= 12, k += 12;
  }
  if (length == 0) return c;
  a += word(k, std::min<std::size_t>(length, 4));
  if (length > 4) b += word(k + 4, std::min<std::size_t>(length - 4, 4));
  if (length > 8) c += word(k + 8, length - 8);
  c ^= b, c -= rotate(b, 14);
  a ^= c, a -= rotate(c, 11);
  b ^= a, b -= rotate(a, 25);
  c ^= b, c -= rotate(b, 16);
  a ^= c, a -= rotate(c, 4);
  b ^= a, b -= rotate(a, 14);
  c ^= b, c -= rotate(b, 24);
  return c;
}

// The width of fixed-length strings that hold each of `strings` with a NUL after it.
std::size_t string_width(const std::vector<std::string>& strings) {
  std::size_t width = 1;
  for (const auto& x : strings) width = std::max(width, x.size() + 1);
  return width;
}

bool little_endian_host() {
  const uint16_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

// Datatype message (IV.A.2.d): integers and IEEE floats little-endian, fixed-length strings.
void datatype_body(Writer& w, const Datatype& t) {
  if (t.is_string()) {
    const uint8_t padding = t.padding() == Datatype::Padding::NullTerm   ? 0
                            : t.padding() == Datatype::Padding::NullPad ? 1
                                                                        : 2;
    w.u8(0x13);  // version 1, class 3 (string)
    w.u8(uint8_t(padding | (t.charset() == Datatype::Charset::Utf8 ? 0x10 : 0)));
    w.u8(0), w.u8(0);
    w.u32(uint32_t(t.size()));
    return;
  }
  const Scalar s = t.scalar();
  const uint32_t size = uint32_t(scalar_size(s));
  if (is_integer(s)) {
    const bool is_signed = s == Scalar::Int8 || s == Scalar::Int16 || s == Scalar::Int32 || s == Scalar::Int64;
    w.u8(0x10);  // version 1, class 0 (fixed-point)
    w.u8(is_signed ? 0x08 : 0x00), w.u8(0), w.u8(0);
    w.u32(size);
    w.u16(0), w.u16(uint16_t(8 * size));  // bit offset, precision
    return;
  }
  struct Ieee {
    uint8_t exponent_at, exponent_bits, mantissa_bits;
    uint32_t bias;
  };
  const Ieee f = size == 2 ? Ieee{10, 5, 10, 15} : size == 4 ? Ieee{23, 8, 23, 127} : Ieee{52, 11, 52, 1023};
  w.u8(0x11);  // version 1, class 1 (floating-point)
  w.u8(0x20);  // little-endian, no padding, mantissa normalised with an implied leading 1
  w.u8(uint8_t(8 * size - 1)), w.u8(0);  // sign bit
  w.u32(size);
  w.u16(0), w.u16(uint16_t(8 * size));
  w.u8(f.exponent_at), w.u8(f.exponent_bits), w.u8(0), w.u8(f.mantissa_bits);
  w.u32(f.bias);
}

std::vector<unsigned char> datatype_message(const Datatype& t) {
  Writer w;
  datatype_body(w, t);
  return std::move(w.bytes);
}

// Dataspace message version 2 (IV.A.2.b): scalar (no dims), or simple with its
// maximum dimensions equal to its dimensions (the hdf5 engine's fixed-size datasets).
void dataspace_body(Writer& w, const Dims& dims, bool scalar) {
  w.u8(2), w.u8(uint8_t(dims.size()));
  w.u8(scalar ? 0 : 1);  // maximum dimensions present
  w.u8(scalar ? 0 : 1);  // scalar / simple
  for (int pass = 0; pass < 2 && !scalar; ++pass)
    for (uint64_t d : dims) w.u64(d);
}

std::vector<unsigned char> dataspace_message(const Dims& dims, bool scalar) {
  Writer w;
  dataspace_body(w, dims, scalar);
  return std::move(w.bytes);
}

// One header message with its prefix (type, size, flags, creation order).
void message(Writer& w, uint8_t type, const std::vector<unsigned char>& data, uint8_t flags = 0,
             uint16_t creation_order = 0) {
  w.u8(type), w.u16(uint16_t(data.size())), w.u8(flags), w.u16(creation_order);
  w.raw(data.data(), data.size());
}

// The same with its body written in place by `body(w)`, its size filled in
// after: no buffer per message. A front file has a few messages per object
// and hundreds of objects, and the last rank builds it during the close
// while the others wait (2 ranks, 100 datasets: 0.6 ms of a 1.8 ms close;
// allocations were a third of its instructions).
template <class Body>
void message(Writer& w, uint8_t type, uint8_t flags, uint16_t creation_order, Body&& body) {
  w.u8(type);
  const std::size_t size_at = w.bytes.size();
  w.u16(0), w.u8(flags), w.u16(creation_order);
  const std::size_t start = w.bytes.size();
  body(w);
  Writer::store_le<2>(w.bytes.data() + size_at, w.bytes.size() - start);
}

// A selection as HDF5 serializes it in a virtual dataset's mappings (the
// version HDF5 1.10 reads): hyperslab version 1, the list of its blocks,
// each its first and last coordinates in 32 bits; `count` blocks of `block`
// `stride` apart in each dimension (no stride: one block of `count`).
// The blocks of such a selection in each dimension, and their size there:
// blocks that touch (stride = block) are one, as HDF5 merges them.
void blocks_of(const Dims& count, const Dims& stride, const Dims& block, Dims& blocks, Dims& size) {
  const std::size_t rank = count.size();
  blocks = stride.empty() ? Dims(rank, 1) : count, size = stride.empty() ? count : block;
  for (std::size_t d = 0; d < rank && !stride.empty(); ++d)
    if (stride[d] == block[d]) size[d] = count[d] * block[d], blocks[d] = 1;
}

void selection(Writer& w, const Dims& start, const Dims& count, const Dims& stride, const Dims& block) {
  const std::size_t rank = start.size();
  Dims blocks, size;
  blocks_of(count, stride, block, blocks, size);
  const uint64_t n = product(blocks);
  w.u32(2), w.u32(1), w.u32(0);  // hyperslabs, version 1, reserved
  w.u32(uint32_t(4 + 4 + n * rank * 8));
  w.u32(uint32_t(rank)), w.u32(uint32_t(n));
  Dims at(rank, 0);  // the block's index in each dimension, row-major
  for (uint64_t k = 0; k < n; ++k) {
    for (std::size_t d = 0; d < rank; ++d) w.u32(uint32_t(start[d] + at[d] * (stride.empty() ? 0 : stride[d])));
    for (std::size_t d = 0; d < rank; ++d)
      w.u32(uint32_t(start[d] + at[d] * (stride.empty() ? 0 : stride[d]) + size[d] - 1));
    for (std::size_t d = rank; d-- > 0;) {
      if (++at[d] < blocks[d]) break;
      at[d] = 0;
    }
  }
}

// The last coordinate a selection reaches in any dimension, +1.
uint64_t reach(const Dims& start, const Dims& count, const Dims& stride, const Dims& block) {
  uint64_t end = 0;
  for (std::size_t d = 0; d < start.size(); ++d)
    end = std::max(end, stride.empty() ? start[d] + count[d]
                                       : start[d] + (count[d] ? (count[d] - 1) * stride[d] + block[d] : 0));
  return end;
}

}  // namespace

FrontImage::FrontImage() {
  Object root;
  root.group = true;
  objects_.push_back(std::move(root));
}

bool FrontImage::can_hold(const Datatype& t) {
  if (!little_endian_host()) return false;
  if (t.is_string()) return t.size() > 0;
  return t.is_scalar() && t.byte_order() == ByteOrder::Little;
}

bool FrontImage::can_hold_name(const std::string& name) {
  // HDF5 keeps names NUL-terminated: one with a NUL inside would read as its first part.
  return !name.empty() && name.size() <= kMaxName && name.find('\0') == std::string::npos;
}

bool FrontImage::can_hold(const std::string& name, const AttributeValue& v) {
  if (!can_hold_name(name)) return false;
  if (v.is_string_array()) {
    if (v.size() == 0) return false;
  } else if (v.is_numeric()) {
    if (!v.dtype().is_scalar() || !can_hold(v.dtype()) || v.size() == 0) return false;
  } else if (!v.is_string()) {
    return false;  // no value (a null dataspace)
  }
  // Like every header message, an attribute message has a 16-bit size (the
  // value's size first: a huge one is not encoded to find that out).
  const std::size_t bytes = v.is_numeric()  ? v.byte_size()
                            : v.is_string() ? v.as_string().size() + 1
                                            : string_width(v.as_strings()) * v.size();
  return bytes <= kMaxMessage && attribute_message(name, v).size() <= kMaxMessage;
}

int FrontImage::add_group(int parent, const std::string& name) {
  const int k = int(objects_.size());
  Object g;
  g.group = true;
  objects_.push_back(std::move(g));
  objects_[std::size_t(parent)].links.emplace_back(name, k);
  return k;
}

// A dataset's first messages: its dataspace, datatype and fill value
// (version 3: allocated late, written if set; the value if there is one).
void FrontImage::dataset_messages(Writer& w, const Datatype& dtype, const Dims& shape,
                                  const std::vector<unsigned char>& fill) {
  message(w, kDataspace, 0, 0, [&](Writer& b) { dataspace_body(b, shape, false); });
  message(w, kDatatype, kConstant, 0, [&](Writer& b) { datatype_body(b, dtype); });
  message(w, kFillValue, kConstant, 0, [&](Writer& b) {
    b.u8(3);
    if (fill.empty()) {
      b.u8(0x0a);
    } else {
      b.u8(0x2a), b.u32(uint32_t(fill.size()));
      b.raw(fill.data(), fill.size());
    }
  });
}

int FrontImage::add_dataset(int parent, const std::string& name, const Datatype& dtype, const Dims& shape,
                            const std::string& file, const std::vector<LogBytes>& external,
                            const std::vector<unsigned char>& fill) {
  Object d;
  const uint64_t nbytes = product(shape) * dtype.size();
  Writer w;
  // Dataspace, datatype and fill value, external file list, layout.
  w.bytes.reserve(6 + 4 + 16 * shape.size() + 6 + 20 + 6 + 6 + fill.size() + 6 + 16 + 24 * external.size() + 6 + 18);
  dataset_messages(w, dtype, shape, fill);
  if (!external.empty()) {
    // External file list version 1, its names in a local heap after the header:
    // offset 0 the empty string (HDF5 wants it), offset 8 the log's name.
    message(w, kExternalFiles, kConstant, 0, [&](Writer& efl) {
      efl.u8(1), efl.u8(0), efl.u8(0), efl.u8(0);
      efl.u16(uint16_t(external.size())), efl.u16(uint16_t(external.size()));
      d.heap_address_at = efl.bytes.size();
      efl.u64(0);  // the heap's address, set by encode_object
      unsigned char* at = efl.grow(24 * external.size());  // each: the name's heap offset, the log offset, the size
      for (const auto& seg : external) {
        Writer::store_le<8>(at, 8), Writer::store_le<8>(at + 8, seg.offset), Writer::store_le<8>(at + 16, seg.size);
        at += 24;
      }
    });
    d.heap.assign(8 + (file.size() + 1 + 7) / 8 * 8, 0);
    std::memcpy(d.heap.data() + 8, file.data(), file.size());
  }
  // Contiguous layout version 3: no address (the bytes are external, or unwritten).
  message(w, kLayout, 0, 0, [&](Writer& layout) {
    layout.u8(3), layout.u8(1), layout.u64(kUndefined), layout.u64(nbytes);
  });
  d.dataset_messages = std::move(w.bytes);
  const int k = int(objects_.size());
  objects_.push_back(std::move(d));
  objects_[std::size_t(parent)].links.emplace_back(name, k);
  return k;
}

bool FrontImage::can_hold_mappings(const std::vector<VirtualMapping>& mappings) {
  uint64_t blocks = 0;
  for (const auto& m : mappings) {
    if (m.file != "." || m.dataset.empty() || m.dataset.size() > 1000) return false;
    // Coordinates in 32 bits; a bounded number of listed blocks.
    if (reach(m.start, m.count, m.stride, m.block) >= (uint64_t(1) << 32)) return false;
    if (reach(m.source_start, m.source_count, m.source_stride, m.source_block) >= (uint64_t(1) << 32)) return false;
    Dims b, size;
    blocks_of(m.count, m.stride, m.block, b, size);
    blocks += product(b);
    blocks_of(m.source_count, m.source_stride, m.source_block, b, size);
    blocks += product(b);
  }
  return blocks <= kMaxMappedBlocks;
}

int FrontImage::add_virtual_dataset(int parent, const std::string& name, const Datatype& dtype, const Dims& shape,
                                    const std::vector<VirtualMapping>& mappings,
                                    const std::vector<unsigned char>& fill) {
  Object d;
  Writer w;
  dataset_messages(w, dtype, shape, fill);
  // Layout version 4, virtual: the global heap object holding the mappings (set by encode_object).
  message(w, kLayout, 0, 0, [&](Writer& layout) {
    layout.u8(4), layout.u8(3);
    d.mappings_at = layout.bytes.size();
    layout.u64(0), layout.u32(0);
  });
  d.dataset_messages = std::move(w.bytes);
  // The mappings (H5Dvirtual.c's encoding, version 0): their number, then for
  // each the source's file and dataset, the source selection and the virtual
  // one; a lookup3 checksum.
  Writer v;
  v.u8(0), v.u64(mappings.size());
  for (const auto& m : mappings) {
    v.raw(m.file.c_str(), m.file.size() + 1);
    v.raw(m.dataset.c_str(), m.dataset.size() + 1);
    if (m.source_shape.empty()) {  // the whole source: HDF5's "all" selection
      v.u32(3), v.u32(1), v.u32(0), v.u32(0);
    } else {
      selection(v, m.source_start, m.source_count, m.source_stride, m.source_block);
    }
    selection(v, m.start, m.count, m.stride, m.block);
  }
  v.u32(lookup3(v.bytes.data(), v.bytes.size()));
  d.mappings = std::move(v.bytes);
  const int k = int(objects_.size());
  objects_.push_back(std::move(d));
  objects_[std::size_t(parent)].links.emplace_back(name, k);
  return k;
}

void FrontImage::add_attribute(int object, const std::string& name, const AttributeValue& value) {
  objects_[std::size_t(object)].attributes.push_back(attribute_message(name, value));
}

std::vector<unsigned char> FrontImage::attribute_message(const std::string& name, const AttributeValue& value) {
  std::vector<unsigned char> type, space, data;
  if (value.is_string() || value.is_string_array()) {
    // Fixed-length, NUL-terminated UTF-8, as the hdf5 engine writes them.
    const std::vector<std::string> strings =
        value.is_string() ? std::vector<std::string>{value.as_string()} : value.as_strings();
    const std::size_t width = string_width(strings);
    type = datatype_message(Datatype::string(width, Datatype::Charset::Utf8, Datatype::Padding::NullTerm));
    space = dataspace_message(value.is_string() ? Dims{} : Dims{strings.size()}, value.is_string());
    data.assign(strings.size() * width, 0);
    for (std::size_t i = 0; i < strings.size(); ++i) std::memcpy(&data[i * width], strings[i].data(), strings[i].size());
  } else {
    type = datatype_message(value.dtype());
    const bool scalar = value.kind() == AttributeValue::Kind::Scalar;
    space = dataspace_message(scalar ? Dims{} : Dims{value.size()}, scalar);
    const auto* p = static_cast<const unsigned char*>(value.data());
    data.assign(p, p + value.byte_size());
  }
  // Attribute message version 3 (IV.A.2.m).
  Writer w;
  w.u8(3), w.u8(0);
  w.u16(uint16_t(name.size() + 1)), w.u16(uint16_t(type.size())), w.u16(uint16_t(space.size()));
  w.u8(0);  // the name is ASCII
  w.raw(name.c_str(), name.size() + 1);
  w.raw(type.data(), type.size());
  w.raw(space.data(), space.size());
  w.raw(data.data(), data.size());
  return std::move(w.bytes);
}

// Object header version 2 (IV.A.1.b): signature, version, flags (attribute
// creation order tracked and indexed; non-default attribute storage limits
// if there are many; the width of chunk 0's size), chunk 0 with every
// message, checksum. A dataset's local heap follows its header. Written in
// place at the end of `out` (chunk_size tells the size first).
void FrontImage::encode_object(std::size_t k, const std::vector<uint64_t>& address,
                               const std::vector<HeapObject>& mapped, Writer& out) const {
  const Object& o = objects_[k];
  const std::size_t begin = out.bytes.size();
  const std::size_t chunk = chunk_size(k);
  const uint8_t width_code = chunk < 256 ? 0 : chunk < 65536 ? 1 : 2;
  const bool many_attributes = o.attributes.size() > kDefaultMaxCompact;
  out.raw("OHDR", 4);
  out.u8(2), out.u8(uint8_t(width_code | 0x04 | 0x08 | (many_attributes ? 0x10 : 0)));
  if (many_attributes) out.u16(uint16_t(o.attributes.size())), out.u16(kDefaultMinDense);
  if (width_code == 0) out.u8(uint8_t(chunk));
  else if (width_code == 1) out.u16(uint16_t(chunk));
  else out.u32(uint32_t(chunk));
  if (o.group) {
    // Link info: creation order tracked and indexed, no dense storage.
    message(out, kLinkInfo, 0, 0, [&](Writer& linfo) {
      linfo.u8(0), linfo.u8(3), linfo.u64(o.links.size());
      linfo.u64(kUndefined), linfo.u64(kUndefined), linfo.u64(kUndefined);
    });
    message(out, kGroupInfo, kConstant, 0, [&](Writer& ginfo) {
      ginfo.u8(0);
      if (o.links.size() > kDefaultMaxCompact) {
        ginfo.u8(1), ginfo.u16(uint16_t(o.links.size())), ginfo.u16(kDefaultMinDense);
      } else {
        ginfo.u8(0);
      }
    });
    for (std::size_t i = 0; i < o.links.size(); ++i) {
      const std::string& name = o.links[i].first;
      const bool long_name = name.size() > 255;
      message(out, kLink, 0, 0, [&](Writer& link) {  // version 1, a hard link with its creation order
        link.u8(1), link.u8(uint8_t(0x04 | (long_name ? 1 : 0)));
        link.u64(i);
        if (long_name) link.u16(uint16_t(name.size()));
        else link.u8(uint8_t(name.size()));
        link.raw(name.data(), name.size());
        link.u64(address[std::size_t(o.links[i].second)]);
      });
    }
  } else {
    const std::size_t at = out.bytes.size();
    out.raw(o.dataset_messages.data(), o.dataset_messages.size());
    if (!o.heap.empty())
      Writer::store_le<8>(out.bytes.data() + at + o.heap_address_at, address[k] + header_size(k));
    if (!o.mappings.empty()) {
      Writer::store_le<8>(out.bytes.data() + at + o.mappings_at, mapped[k].collection);
      Writer::store_le<4>(out.bytes.data() + at + o.mappings_at + 8, mapped[k].index);
    }
  }
  if (!o.attributes.empty()) {
    message(out, kAttributeInfo, kDontShare, 0, [&](Writer& ainfo) {  // creation order tracked and indexed, no dense storage
      ainfo.u8(0), ainfo.u8(3), ainfo.u16(uint16_t(o.attributes.size()));
      ainfo.u64(kUndefined), ainfo.u64(kUndefined), ainfo.u64(kUndefined);
    });
    for (std::size_t i = 0; i < o.attributes.size(); ++i) message(out, kAttribute, o.attributes[i], 0, uint16_t(i));
  }
  out.u32(lookup3(out.bytes.data() + begin, out.bytes.size() - begin));
  if (!o.heap.empty()) {
    // Local heap (III.D): its data right after the 32-byte prefix, no free block.
    const uint64_t header_end = address[k] + (out.bytes.size() - begin);
    out.raw("HEAP", 4);
    out.u8(0), out.u8(0), out.u8(0), out.u8(0);
    out.u64(o.heap.size());
    out.u64(1);  // HDF5's "no free block"
    out.u64(header_end + kHeapPrefixSize);
    out.raw(o.heap.data(), o.heap.size());
  }
}

std::size_t FrontImage::chunk_size(std::size_t k) const {
  const Object& o = objects_[k];
  std::size_t chunk = 0;
  if (o.group) {
    chunk += 6 + 34 + 6 + (o.links.size() > kDefaultMaxCompact ? 6 : 2);
    for (const auto& [name, child] : o.links) chunk += 6 + 1 + 1 + 8 + (name.size() > 255 ? 2 : 1) + name.size() + 8;
  } else {
    chunk += o.dataset_messages.size();
  }
  if (!o.attributes.empty()) {
    chunk += 6 + 28;
    for (const auto& a : o.attributes) chunk += 6 + a.size();
  }
  return chunk;
}

uint64_t FrontImage::header_size(std::size_t k) const {
  const std::size_t chunk = chunk_size(k);
  const std::size_t width = chunk < 256 ? 1 : chunk < 65536 ? 2 : 4;
  return 4 + 1 + 1 + (objects_[k].attributes.size() > kDefaultMaxCompact ? 4 : 0) + width + chunk + 4;
}

std::vector<unsigned char> FrontImage::encode() const {
  // Every object's address first (a group's links name its members'): the
  // superblock, then the objects in the order they were added, each
  // dataset's heap after its header.
  std::vector<uint64_t> address(objects_.size());
  uint64_t at = kSuperblockSize;
  for (std::size_t k = 0; k < objects_.size(); ++k) {
    address[k] = at;
    at += header_size(k);
    if (!objects_[k].heap.empty()) at += kHeapPrefixSize + objects_[k].heap.size();
  }
  // Then the virtual datasets' mappings, in global heap collections (III.E)
  // after the objects: each at least 4096 bytes (HDF5's smallest), objects
  // added while the collection stays under 64 KiB (or it holds just one), the
  // rest of it one free-space object.
  std::vector<HeapObject> mapped(objects_.size());
  std::vector<std::size_t> in_collection(objects_.size());
  std::vector<std::vector<unsigned char>> collections;
  auto pad8 = [](std::size_t n) { return (n + 7) / 8 * 8; };
  uint16_t index = 0;
  for (std::size_t k = 0; k < objects_.size(); ++k) {
    const auto& blob = objects_[k].mappings;
    if (blob.empty()) continue;
    const std::size_t need = 16 + pad8(blob.size());
    if (collections.empty() || collections.back().size() + need + 16 > kCollectionTarget || index == 65535) {
      Writer c;
      c.raw("GCOL", 4), c.u8(1), c.u8(0), c.u8(0), c.u8(0);
      c.u64(0);  // its size, set below
      collections.push_back(std::move(c.bytes));
      index = 0;
    }
    Writer object;  // index, reference count, reserved, size, the bytes padded to 8
    object.u16(++index), object.u16(0), object.u32(0), object.u64(blob.size());
    object.raw(blob.data(), blob.size());
    object.bytes.resize(need, 0);
    collections.back().insert(collections.back().end(), object.bytes.begin(), object.bytes.end());
    mapped[k].index = index;
    in_collection[k] = collections.size() - 1;
  }
  // Each collection closed by a free-space object (index 0: what is left, its header included).
  std::vector<uint64_t> collection_at;
  for (auto& c : collections) {
    const std::size_t size = std::max<std::size_t>(4096, pad8(c.size() + 16));
    Writer free_space;
    free_space.u16(0), free_space.u16(0), free_space.u32(0), free_space.u64(size - c.size());
    c.insert(c.end(), free_space.bytes.begin(), free_space.bytes.end());
    c.resize(size, 0);
    for (int i = 0; i < 8; ++i) c[8 + std::size_t(i)] = uint8_t(uint64_t(size) >> (8 * i));
    collection_at.push_back(at);
    at += size;
  }
  for (std::size_t k = 0; k < objects_.size(); ++k)
    if (!objects_[k].mappings.empty()) mapped[k].collection = collection_at[in_collection[k]];
  // Superblock version 2 (II.A): offsets and lengths of 8 bytes, no extension.
  Writer sb;
  sb.raw("\x89HDF\r\n\x1a\n", 8);
  sb.u8(2), sb.u8(8), sb.u8(8), sb.u8(0);
  sb.u64(0), sb.u64(kUndefined), sb.u64(at), sb.u64(address[kRoot]);
  sb.u32(lookup3(sb.bytes.data(), sb.bytes.size()));
  Writer out;
  out.bytes = std::move(sb.bytes);
  out.bytes.reserve(at);
  for (std::size_t k = 0; k < objects_.size(); ++k) {
    encode_object(k, address, mapped, out);
    if (out.bytes.size() != address[k] + header_size(k) + (objects_[k].heap.empty() ? 0 : kHeapPrefixSize + objects_[k].heap.size()))
      throw std::logic_error("front file encoding: object " + std::to_string(k) + " is not the size planned");
  }
  for (const auto& c : collections) out.raw(c.data(), c.size());
  if (out.bytes.size() != at) throw std::logic_error("front file encoding: the file is not the size planned");
  return std::move(out.bytes);
}

}  // namespace h5loom::logengine
