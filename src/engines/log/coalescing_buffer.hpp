// A rank's coalescing buffer for the log engine: small writes are appended
// here until the buffer is spilled to the log.
#pragma once

#include <cstdint>

namespace h5loom::logengine {

// Bytes are appended and never moved while the buffer stays within its
// reservation: the whole reservation (the engine's buffer_size) is mapped up
// front as virtual memory, so pages are only touched as they are written,
// and transparent huge pages are asked for, so filling it takes few page
// faults. (A std::vector grown write by write copied its contents at every
// doubling and zero-filled every byte before the copy: a third of the cost of
// many small writes.) Outgrowing the reservation moves the contents once.
// A released mapping whose touched part is small is kept for the process's
// next buffer: a file per step would otherwise pay, at every file, for
// zeroing a fresh huge page and for unmapping it (2.5 ms of a 100-dataset
// file's close here).
class CoalescingBuffer {
 public:
  CoalescingBuffer() = default;
  CoalescingBuffer(const CoalescingBuffer&) = delete;
  CoalescingBuffer& operator=(const CoalescingBuffer&) = delete;
  ~CoalescingBuffer();

  // n uninitialised bytes at the end; the first call reserves `reservation` bytes.
  unsigned char* append(uint64_t n, uint64_t reservation);
  unsigned char* data() const { return data_; }
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Keeps the memory (the next epoch reuses the touched pages) unless it grew
  // past `keep_at_most`.
  void clear(uint64_t keep_at_most);

 private:
  void release();
  unsigned char* data_ = nullptr;
  uint64_t size_ = 0, capacity_ = 0;
  uint64_t touched_ = 0;  // the most bytes ever used: the pages the mapping holds
  uint64_t asked_ = 0;    // the size asked for when the mapping was taken (a spare's capacity may exceed it)
};

}  // namespace h5loom::logengine
