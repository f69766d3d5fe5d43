// Where the async wrapper copies the program's writes: memory reused from one
// write to the next, and from one file to the next. Fresh memory costs a page
// fault per 4 KiB (the kernel zeroes every page): on this project's test
// machine, copying 64 MiB into it takes about 37 ms, into reused memory 7 ms.
// A time step's writes come back at the next step with the same sizes, and a
// code that writes a checkpoint file every few steps comes back with them at
// the next checkpoint.
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
  // Free memory kept for reuse at most; beyond it, released buffers are unmapped.
  static constexpr std::size_t kKeepAtMost = std::size_t(256) << 20;

  // An owned copy of the `n` bytes at `data` (n >= kSmallest), which goes
  // back to the pool when the last owner drops it, on any thread.
  std::shared_ptr<const void> copy(const void* data, std::size_t n);
  // No file uses the async wrapper now: the kernel may take the kept
  // buffers' pages back whenever it needs memory (MADV_FREE), without a
  // write to disk. Until it does they stay mapped, and the next file's
  // copies reuse them without page faults (64 MiB: 8-10 ms, against 37 ms
  // into fresh memory, here); a page it took comes back zeroed at the next
  // copy, which writes it in full before anything reads it.
  void lend_to_kernel();

 private:
  void give_back(void* p, std::size_t capacity);

  std::mutex mutex_;
  std::map<std::size_t, std::vector<void*>> free_;  // by capacity (a power of two, whole pages)
  std::size_t free_bytes_ = 0;
};

}  // namespace h5loom::async
