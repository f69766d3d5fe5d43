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
#include <vector>

namespace h5loom::async {

// One queued engine call.
struct Task {
  std::function<void()> run;  // must not throw: the wrapper keeps errors for the next flush
  uint64_t bytes = 0;         // memory it holds until it has run (a copy of a write)
};

class Mover {
 public:
  // The process's mover (never destroyed: a program may exit with files open).
  static Mover& instance();

  // A file starts using the mover / stops using it. The thread starts with
  // the first file and then stays (idle, waiting for work): stopping it when
  // the last file closes would race with a file opened meanwhile by another
  // thread. The copies' memory kept for reuse goes when no file is left.
  void attach();
  void detach();

  // Queues `tasks`, in order, as work of the file whose counter is
  // `in_flight` (incremented now, decremented as each task ends). If tasks
  // queued earlier hold memory and these would pass `limit` bytes, waits
  // until the mover has run far enough first (back-pressure). Returns the
  // nanoseconds the caller waited.
  int64_t submit(std::vector<Task>& tasks, int& in_flight, uint64_t limit);
  // Waits until every task counted by `in_flight` has run. Returns the nanoseconds waited.
  int64_t wait(const int& in_flight);
  // Whether every task counted by `in_flight` has run (does not wait).
  bool idle(const int& in_flight);

 private:
  struct Queued {
    Task task;
    int* in_flight;
  };
  void loop();

  std::mutex mutex_;
  std::condition_variable work_;  // the thread waits for tasks (or to stop)
  std::condition_variable done_;  // callers wait for tasks to finish
  std::deque<Queued> queue_;
  uint64_t queued_bytes_ = 0;
  int users_ = 0;
  std::thread thread_;
};

}  // namespace h5loom::async
