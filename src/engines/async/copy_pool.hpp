// Where the async wrapper copies the program's writes: memory reused from one
// write to the next. A fresh allocation of a few MiB costs a page fault per
// 4 KiB (the kernel zeroes every page) - on this project's test machine more
// than the copy itself - and a time step's writes come back at the next step
// with the same sizes.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace h5loom::async {

class CopyPool {
 public:
  // The process's pool (never destroyed: buffers may be released at exit).
  static CopyPool& instance();

  // Writes smaller than this are copied with a plain allocation (cheap).
  static constexpr std::size_t kSmallest = std::size_t(64) << 10;
  // Free memory kept for reuse at most; beyond it, released buffers are freed.
  static constexpr std::size_t kKeepAtMost = std::size_t(256) << 20;

  // An owned copy of the `n` bytes at `data` (n >= kSmallest), which goes
  // back to the pool when the last owner drops it, on any thread.
  std::shared_ptr<const void> copy(const void* data, std::size_t n);
  // Frees every buffer kept (no file uses the async wrapper any more).
  void trim();

 private:
  void give_back(void* p, std::size_t capacity);

  std::mutex mutex_;
  std::map<std::size_t, std::vector<void*>> free_;  // by capacity (a power of two)
  std::size_t free_bytes_ = 0;
};

}  // namespace h5loom::async
