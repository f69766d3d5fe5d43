// The log engine's coalescing buffer: bytes stay where they were appended, and
// a small released mapping serves the next buffer of the process.
#include <gtest/gtest.h>

#include <cstring>

#include "engines/log/coalescing_buffer.hpp"

using h5loom::logengine::CoalescingBuffer;

TEST(LogCoalescingBuffer, BytesStayPutAndTheNextBufferReusesASmallMapping) {
  const uint64_t reservation = uint64_t(4) << 20;
  const unsigned char* first_mapping = nullptr;
  {
    CoalescingBuffer a;  // takes the process's spare if one is large enough, else maps
    unsigned char* p = a.append(3, reservation);
    std::memcpy(p, "abc", 3);
    unsigned char* q = a.append(2, reservation);
    EXPECT_EQ(q, p + 3);  // appended after, nothing moved
    std::memcpy(q, "de", 2);
    EXPECT_EQ(std::memcmp(a.data(), "abcde", 5), 0);
    EXPECT_EQ(a.size(), 5u);
    first_mapping = a.data();
  }  // released: the spare now (the larger one is kept)
  CoalescingBuffer b, c;  // two buffers alive at once never share memory
  b.append(8, reservation);
  c.append(8, reservation);
  EXPECT_EQ(b.data(), first_mapping);  // the spare mapping, not a fresh one
  EXPECT_NE(c.data(), b.data());
  EXPECT_EQ(b.size(), 8u);  // a reused mapping starts empty

  // Outgrowing the reservation moves the contents once, whole.
  std::memset(b.data(), 7, 8);
  unsigned char* big = b.append(reservation, reservation);
  EXPECT_EQ(big, b.data() + 8);
  EXPECT_EQ(b.data()[0], 7);
  EXPECT_EQ(b.data()[7], 7);
  EXPECT_EQ(b.size(), reservation + 8);
  b.clear(/*keep_at_most=*/reservation);  // grew past it: released
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.data(), nullptr);

  // A spare larger than a later, smaller reservation is kept across clears.
  CoalescingBuffer d;
  d.append(8, reservation / 4);
  const unsigned char* kept = d.data();
  d.clear(/*keep_at_most=*/reservation / 4);
  EXPECT_EQ(d.data(), kept);
}
