#include "core/crc32c.hpp"

#include <isa-l/crc.h>

#include <climits>

namespace h5loom {

namespace {

// ISA-L's crc32_iscsi runs AVX-512 code where the CPU has it and returns
// with the vector registers' upper halves in use (no `vzeroupper`). Until
// something clears them, every SSE instruction of the thread - the
// program's own arithmetic, compiled for baseline x86-64, and this
// library's - pays for them: on the test machine's AMD EPYC a loop making
// float values ran 3.7x slower after one checksum (15.4 ms against 4.2),
// and the async wrapper's writes on the program's thread slowed the
// program's next computation by that much (docs/benchmarks.md, session 33).
void clear_upper_vector_state() {
#if defined(__x86_64__) && defined(__GNUC__)
  // (libgcc's check includes the OS's: XCR0 enables the YMM state, so vzeroupper cannot fault.)
  static const bool has_avx = (__builtin_cpu_init(), __builtin_cpu_supports("avx"));
  if (has_avx) asm volatile("vzeroupper" ::: "memory");
#endif
}

}  // namespace

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
  clear_upper_vector_state();
  return ~reg;
}

}  // namespace h5loom
