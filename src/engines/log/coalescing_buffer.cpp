#include "engines/log/coalescing_buffer.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>

namespace h5loom::logengine {

namespace {
unsigned char* map_bytes(uint64_t n) {
  void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  ::madvise(p, n, MADV_HUGEPAGE);  // a hint; without it the buffer still works
#endif
  return static_cast<unsigned char*>(p);
}

// The one mapping kept for the next buffer, if its touched pages are at most
// kSpareResident (more would keep that much memory of a finished file).
constexpr uint64_t kSpareResident = uint64_t(32) << 20;
struct Spare {
  std::mutex mutex;
  unsigned char* data = nullptr;
  uint64_t capacity = 0;
};
Spare& spare() {
  static Spare s;
  return s;
}

// A mapping of at least n bytes: the spare one if it is large enough.
std::pair<unsigned char*, uint64_t> take_mapping(uint64_t n) {
  Spare& s = spare();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.data && s.capacity >= n) {
      auto got = std::make_pair(s.data, s.capacity);
      s.data = nullptr, s.capacity = 0;
      return got;
    }
  }
  return {map_bytes(n), n};
}

// Keeps the larger of the spare and this mapping (a small spare would never
// serve a larger reservation again), unmapping the other.
void give_back(unsigned char* data, uint64_t capacity, uint64_t touched) {
  Spare& s = spare();
  if (touched <= kSpareResident) {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.data || s.capacity < capacity) {
      std::swap(s.data, data);
      std::swap(s.capacity, capacity);
    }
  }
  if (data) ::munmap(data, capacity);
}
}  // namespace

CoalescingBuffer::~CoalescingBuffer() { release(); }

void CoalescingBuffer::release() {
  if (data_) give_back(data_, capacity_, touched_);
  data_ = nullptr;
  size_ = capacity_ = touched_ = asked_ = 0;
}

unsigned char* CoalescingBuffer::append(uint64_t n, uint64_t reservation) {
  if (size_ + n > capacity_) {
    const uint64_t asked = std::max({reservation, size_ + n, 2 * capacity_});
    const auto [bigger, cap] = take_mapping(asked);
    if (size_) std::memcpy(bigger, data_, size_);
    const uint64_t keep = size_;
    release();
    data_ = bigger, size_ = keep, capacity_ = cap, asked_ = asked;
    touched_ = keep;  // (the pages a spare brought along were at most kSpareResident)
  }
  unsigned char* at = data_ + size_;
  size_ += n;
  touched_ = std::max(touched_, size_);
  return at;
}

void CoalescingBuffer::clear(uint64_t keep_at_most) {
  if (asked_ > keep_at_most) release();  // (a spare taken may be larger than asked for: kept)
  size_ = 0;
}

}  // namespace h5loom::logengine
