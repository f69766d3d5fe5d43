// The copies of core/memory_copy.hpp: exact whatever the placement of their
// two buffers, including the page-aliased case and the uncached copy's
// unaligned head and short tail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/memory_copy.hpp"

using namespace h5loom;

TEST(MemoryCopy, CopiesExactlyWhateverThePlacement) {
  std::vector<unsigned char> a(64 * 1024 + 8192), b(64 * 1024 + 8192);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i * 13 + 1);
  for (std::size_t shift : {0, 1, 16, 31, 63, 64, 4095})
    for (std::size_t n : {0, 1, 2047, 2048, 2049, 40000}) {
      std::fill(b.begin(), b.end(), 0);
      copy_bytes(b.data() + shift, a.data(), n);
      ASSERT_EQ(std::memcmp(b.data() + shift, a.data(), n), 0) << "shift " << shift << ", " << n << " bytes";
      ASSERT_EQ(b[shift + n], 0) << "wrote past the end";
    }
  EXPECT_TRUE(page_aliased(4096 + 16, 0));
  EXPECT_FALSE(page_aliased(4096, 0));
  EXPECT_FALSE(page_aliased(0, 16));  // 16 bytes before: 4080 past
}

TEST(MemoryCopy, UncachedCopiesExactlyWhateverThePlacement) {
  std::vector<unsigned char> a(300 * 1024 + 8192), b(300 * 1024 + 8192);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i * 13 + 1);
  for (std::size_t from : {0, 3, 16})
    for (std::size_t shift : {0, 1, 15, 16, 17, 63, 4095})
      for (std::size_t n : {0, 1, 15, 16, 63, 64, 65, 127, 4096 + 7, 300 * 1024 + 5}) {
        std::fill(b.begin(), b.end(), 0);
        copy_bytes_uncached(b.data() + shift, a.data() + from, n);
        ASSERT_EQ(std::memcmp(b.data() + shift, a.data() + from, n), 0)
            << "source at +" << from << ", destination at +" << shift << ", " << n << " bytes";
        ASSERT_EQ(b[shift + n], 0) << "wrote past the end";
        if (shift > 0) ASSERT_EQ(b[shift - 1], 0) << "wrote before the start";
      }
}
