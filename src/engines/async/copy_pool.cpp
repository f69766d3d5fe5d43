#include "engines/async/copy_pool.hpp"

#include <sys/mman.h>

#include <new>

#include "core/memory_copy.hpp"

namespace h5loom::async {

CopyPool& CopyPool::instance() {
  static CopyPool* pool = new CopyPool;
  return *pool;
}

// Buffers are mappings of their own (not malloc's), so that lend_to_kernel
// covers whole pages that nothing else uses.
std::shared_ptr<const void> CopyPool::copy(const void* data, std::size_t n) {
  std::size_t capacity = kSmallest;
  while (capacity < n) capacity *= 2;
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(capacity);
    if (it != free_.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      free_bytes_ -= capacity;
    }
  }
  if (!p) {
    p = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
  }
  // The mover reads the copy only after the step's other writes, by when a
  // step of a few MiB has left the caches anyway: stores that bypass them
  // make the program's part of the copy about 1.5x shorter here.
  copy_bytes_uncached(p, data, n);
  return std::shared_ptr<const void>(p, [this, capacity](const void* q) { give_back(const_cast<void*>(q), capacity); });
}

void CopyPool::give_back(void* p, std::size_t capacity) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_bytes_ + capacity <= kKeepAtMost) {
      free_[capacity].push_back(p);
      free_bytes_ += capacity;
      return;
    }
  }
  munmap(p, capacity);
}

void CopyPool::lend_to_kernel() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [capacity, buffers] : free_)
    for (auto it = buffers.begin(); it != buffers.end();) {
      // A kernel without MADV_FREE (before Linux 4.5): unmap it, as a
      // pool without reuse across files would.
      if (madvise(*it, capacity, MADV_FREE) == 0) {
        ++it;
        continue;
      }
      munmap(*it, capacity);
      free_bytes_ -= capacity;
      it = buffers.erase(it);
    }
}

}  // namespace h5loom::async
