#include "core/memory_copy.hpp"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

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

void copy_bytes_uncached(void* dst, const void* src, std::size_t n) {
#if defined(__x86_64__)
  // SSE2 is part of x86-64 itself: no dispatch on the CPU is needed. The
  // stores need a 16-byte aligned destination; the loads take any source.
  auto* d = static_cast<unsigned char*>(dst);
  auto* s = static_cast<const unsigned char*>(src);
  const std::size_t head = std::min(n, (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & 15);
  copy_bytes(d, s, head);
  d += head, s += head, n -= head;
  const std::size_t body = n & ~std::size_t(63);
  for (std::size_t i = 0; i < body; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  // Streaming stores are not ordered with later ones: without the fence a
  // thread that sees the copy handed over might still read old bytes.
  _mm_sfence();
  copy_bytes(d + body, s + body, n - body);
#else
  copy_bytes(dst, src, n);
#endif
}

}  // namespace h5loom
