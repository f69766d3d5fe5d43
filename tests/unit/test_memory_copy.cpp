// The copies of core/memory_copy.hpp: exact whatever the placement of their
// two buffers, including the page-aliased case and the uncached copy's
// unaligned head and short tail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "core/memory_copy.hpp"

using namespace h5loom;

using Copy = void (*)(void*, const void*, std::size_t);

// Every copy of `n` bytes from `a` + each of `froms` to `b` + each of
// `shifts` moves exactly those bytes and writes nothing around them.
void expect_exact_copies(Copy copy, std::initializer_list<std::size_t> froms,
                         std::initializer_list<std::size_t> shifts, std::initializer_list<std::size_t> sizes) {
  const std::size_t most = std::max(sizes) + std::max(froms) + std::max(shifts) + 1;
  std::vector<unsigned char> a(most), b(most);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i * 13 + 1);
  for (std::size_t from : froms)
    for (std::size_t shift : shifts)
      for (std::size_t n : sizes) {
        std::fill(b.begin(), b.end(), 0);
        copy(b.data() + shift, a.data() + from, n);
        ASSERT_EQ(std::memcmp(b.data() + shift, a.data() + from, n), 0)
            << "source at +" << from << ", destination at +" << shift << ", " << n << " bytes";
        ASSERT_EQ(b[shift + n], 0) << "wrote past the end";
        if (shift > 0) ASSERT_EQ(b[shift - 1], 0) << "wrote before the start";
      }
}

TEST(MemoryCopy, CopiesExactlyWhateverThePlacement) {
  expect_exact_copies(copy_bytes, {0}, {0, 1, 16, 31, 63, 64, 4095}, {0, 1, 2047, 2048, 2049, 40000});
  EXPECT_TRUE(page_aliased(4096 + 16, 0));
  EXPECT_FALSE(page_aliased(4096, 0));
  EXPECT_FALSE(page_aliased(0, 16));  // 16 bytes before: 4080 past
}

// Its unaligned heads, its 64-byte body and its short tails.
TEST(MemoryCopy, UncachedCopiesExactlyWhateverThePlacement) {
  expect_exact_copies(copy_bytes_uncached, {0, 3, 16}, {0, 1, 15, 16, 17, 63, 4095},
                      {0, 1, 15, 16, 63, 64, 65, 127, 4096 + 7, 300 * 1024 + 5});
}
