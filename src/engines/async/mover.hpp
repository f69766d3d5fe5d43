// The async wrapper's background thread (the "mover"): one per process,
// shared by every file the wrapper has open, running one task at a time in
// the order they were submitted. Tasks are the engine calls that make no MPI
// or HDF5 call (put, prepare_flush): the program's thread keeps every
// collective step, so the mover needs no more than MPI_THREAD_FUNNELED.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace h5loom::async {

class Mover {
 public:
  // The process's mover (never destroyed: a program may exit with files open).
  static Mover& instance();

  // A file starts using the mover / stops using it: the thread runs while
  // some file uses it.
  void attach();
  void detach();

  // Queues `task`, which holds `bytes` of memory until it has run (the copies
  // of the program's writes). If other queued tasks hold memory and `bytes`
  // more would pass `limit`, waits until they have run far enough first
  // (back-pressure). Returns the nanoseconds the caller waited. `task` must
  // not throw (the wrapper's tasks keep their errors for the next flush).
  int64_t submit(std::function<void()> task, uint64_t bytes, uint64_t limit);
  // Waits until every task submitted so far has run. Returns the nanoseconds waited.
  int64_t drain();
  // Bytes held by tasks that have not run yet.
  uint64_t queued_bytes();

 private:
  struct Task {
    std::function<void()> run;
    uint64_t bytes;
  };
  void loop();

  std::mutex mutex_;
  std::condition_variable work_;  // the thread waits for tasks (or to stop)
  std::condition_variable done_;  // callers wait for tasks to finish
  std::deque<Task> queue_;
  bool running_task_ = false;
  bool stop_ = false;
  uint64_t queued_bytes_ = 0;
  int users_ = 0;
  std::thread thread_;
};

}  // namespace h5loom::async
