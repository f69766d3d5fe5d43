// CRC32C through ISA-L: the standard check value, chaining, and the vector
// registers left clean for the code that runs after a checksum.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "core/crc32c.hpp"

using h5loom::crc32c;

TEST(Crc32c, MatchesTheStandardCheckValue) {
  const char* check = "123456789";
  EXPECT_EQ(crc32c(check, 9), 0xE3069283u);  // RFC 3720's CRC32C of "123456789"
  EXPECT_EQ(crc32c(check, 0), 0u);
}

TEST(Crc32c, ChainedCallsGiveTheChecksumOfTheWhole) {
  std::vector<unsigned char> bytes(100000);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 131 + 7);
  const uint32_t whole = crc32c(bytes.data(), bytes.size());
  EXPECT_EQ(crc32c(bytes.data() + 777, bytes.size() - 777, crc32c(bytes.data(), 777)), whole);
  bytes[50000] ^= 1;
  EXPECT_NE(crc32c(bytes.data(), bytes.size()), whole);
}

// ISA-L's AVX-512 code returns with the upper halves of the vector registers
// in use; until they are cleared, the SSE instructions of the program's own
// code ran 3.7x slower on the test machine. XGETBV(1) tells which register
// state is in use: bit 2 the upper halves of ymm0-15, bit 6 those of zmm0-15.
TEST(Crc32c, LeavesTheUpperHalvesOfTheVectorRegistersUnused) {
#if defined(__x86_64__) && defined(__GNUC__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__builtin_cpu_supports("avx") || !__get_cpuid_count(0xD, 1, &a, &b, &c, &d) || !(a & 4))
    GTEST_SKIP() << "this CPU has no AVX or cannot tell which register state is in use";
  std::vector<unsigned char> bytes(std::size_t(1) << 20, 3);
  const uint32_t sum = crc32c(bytes.data(), bytes.size());
  uint32_t lo = 0, hi = 0;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  EXPECT_EQ(lo & ((1u << 2) | (1u << 6)), 0u) << "state in use after a checksum: 0x" << std::hex << lo;
  EXPECT_NE(sum, 0u);
#else
  GTEST_SKIP() << "x86-64 only";
#endif
}
