#include "engines/log/coalescing_buffer.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>

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
}  // namespace

CoalescingBuffer::~CoalescingBuffer() { release(); }

void CoalescingBuffer::release() {
  if (data_) ::munmap(data_, capacity_);
  data_ = nullptr;
  size_ = capacity_ = 0;
}

unsigned char* CoalescingBuffer::append(uint64_t n, uint64_t reservation) {
  if (size_ + n > capacity_) {
    const uint64_t cap = std::max({reservation, size_ + n, 2 * capacity_});
    unsigned char* bigger = map_bytes(cap);
    if (size_) std::memcpy(bigger, data_, size_);
    const uint64_t keep = size_;
    release();
    data_ = bigger, size_ = keep, capacity_ = cap;
  }
  unsigned char* at = data_ + size_;
  size_ += n;
  return at;
}

void CoalescingBuffer::clear(uint64_t keep_at_most) {
  if (capacity_ > keep_at_most) release();
  size_ = 0;
}

}  // namespace h5loom::logengine
