#include "engines/async/mover.hpp"

#include <sched.h>

#include <chrono>

#include "engines/async/copy_pool.hpp"

namespace h5loom::async {

namespace {
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

Mover& Mover::instance() {
  static Mover* m = new Mover;  // never destroyed: joining at exit could wait on a task forever
  return *m;
}

void Mover::attach() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++users_;
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
}

void Mover::detach() {
  bool last = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    last = --users_ == 0;
  }
  if (last) CopyPool::instance().lend_to_kernel();  // no file needs the copies now; the next may
}

int64_t Mover::submit(std::vector<Task>& tasks, int& in_flight, uint64_t limit) {
  uint64_t bytes = 0;
  for (const Task& t : tasks) bytes += t.bytes;
  std::unique_lock<std::mutex> lock(mutex_);
  int64_t waited = 0;
  if (queued_bytes_ > 0 && queued_bytes_ + bytes > limit) {
    const int64_t t0 = now_ns();
    done_.wait(lock, [&] { return queued_bytes_ == 0 || queued_bytes_ + bytes <= limit; });
    waited = now_ns() - t0;
  }
  for (Task& t : tasks) queue_.push_back(Queued{std::move(t), &in_flight});
  in_flight += int(tasks.size());
  queued_bytes_ += bytes;
  tasks.clear();
  work_.notify_one();
  return waited;
}

int64_t Mover::wait(const int& in_flight) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (in_flight == 0) return 0;
  const int64_t t0 = now_ns();
  done_.wait(lock, [&] { return in_flight == 0; });
  return now_ns() - t0;
}

bool Mover::idle(const int& in_flight) {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight == 0;
}

void Mover::loop() {
  // A batch thread: woken with work, it does not take the CPU from the
  // program's thread at once (no wakeup preemption), which would stall the
  // flush that woke it - measured up to 5.8 ms per flush with 2 ranks, their
  // movers and helpers on 2 cores. It still gets its fair share of the CPU.
  // (Without permission for it the thread stays as it was.)
  sched_param normal{};
  ::sched_setscheduler(0, SCHED_BATCH, &normal);
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait(lock, [&] { return !queue_.empty(); });
    Queued q = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    // Between two tasks the CPU goes first to a program thread that can run
    // on it: a rank still in its time step's last collective call, say,
    // whose ranks that left it gave their movers the step's writes. Without
    // this a mover wakes at a flush and keeps the core for its whole slice
    // (CFS: a woken thread is ahead of one that waited running), and that rank
    // - and every rank waiting for it at the next collective call - waits:
    // 3.6 ms at the last dataset of a step, 4 ranks on 2 cores (profile,
    // docs/benchmarks.md "Async"). With nothing else to run it returns at once.
    sched_yield();
    try {
      q.task.run();
    } catch (...) {
      // Tasks keep their own errors (the wrapper's run_queued); nothing may end the thread.
    }
    q.task.run = nullptr;  // what the task holds (a copy of a write) goes before it counts as done
    lock.lock();
    queued_bytes_ -= q.task.bytes;
    --*q.in_flight;
    done_.notify_all();
  }
}

}  // namespace h5loom::async
