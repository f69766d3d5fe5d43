#include "core/memory_copy.hpp"

#include <algorithm>
#include <cstring>

namespace h5loom {

void copy_bytes(void* dst, const void* src, std::size_t n) {
  if (!page_aliased(reinterpret_cast<std::uintptr_t>(dst), reinterpret_cast<std::uintptr_t>(src))) {
    std::memcpy(dst, src, n);
    return;
  }
  // glibc switches to `rep movsb` above 2 KiB on these CPUs (its
  // rep_movsb_threshold); 2 KiB pieces keep to its vector loop.
  constexpr std::size_t kPiece = 2048;
  auto* d = static_cast<unsigned char*>(dst);
  auto* s = static_cast<const unsigned char*>(src);
  while (n > 0) {
    const std::size_t k = std::min(n, kPiece);
    std::memcpy(d, s, k);
    d += k, s += k, n -= k;
  }
}

}  // namespace h5loom
