#include "core/crc32c.hpp"

#include <isa-l/crc.h>

#include <climits>

namespace h5loom {

uint32_t crc32c(const void* data, std::size_t n, uint32_t crc) {
  // ISA-L's crc32_iscsi takes and returns the raw register; the standard CRC32C
  // starts from ~0 and inverts the result.
  uint32_t reg = ~crc;
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  while (n > 0) {
    int piece = n > std::size_t(INT_MAX / 2) ? INT_MAX / 2 : int(n);
    reg = crc32_iscsi(p, piece, reg);
    p += piece;
    n -= std::size_t(piece);
  }
  return ~reg;
}

}  // namespace h5loom
