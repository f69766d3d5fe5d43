#include "engines/async/copy_pool.hpp"

#include <cstdlib>
#include <new>

#include "core/memory_copy.hpp"

namespace h5loom::async {

CopyPool& CopyPool::instance() {
  static CopyPool* pool = new CopyPool;
  return *pool;
}

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
  if (!p && !(p = std::malloc(capacity))) throw std::bad_alloc();
  copy_bytes(p, data, n);
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
  std::free(p);
}

void CopyPool::trim() {
  std::map<std::size_t, std::vector<void*>> all;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    all.swap(free_);
    free_bytes_ = 0;
  }
  for (auto& [_, buffers] : all)
    for (void* p : buffers) std::free(p);
}

}  // namespace h5loom::async
