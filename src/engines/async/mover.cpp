#include "engines/async/mover.hpp"

#include <chrono>

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
  if (users_++ == 0) {
    if (thread_.joinable()) thread_.join();  // a thread told to stop by the last detach
    stop_ = false;
    thread_ = std::thread([this] { loop(); });
  }
}

void Mover::detach() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (--users_ > 0) return;
  // The last file is closed: its tasks ran (close drains), so the thread is
  // idle; it ends after whatever is still queued.
  stop_ = true;
  work_.notify_all();
  std::thread t = std::move(thread_);
  lock.unlock();
  if (t.joinable()) t.join();
}

int64_t Mover::submit(std::function<void()> task, uint64_t bytes, uint64_t limit) {
  std::unique_lock<std::mutex> lock(mutex_);
  int64_t waited = 0;
  if (queued_bytes_ > 0 && queued_bytes_ + bytes > limit) {
    const int64_t t0 = now_ns();
    done_.wait(lock, [&] { return queued_bytes_ == 0 || queued_bytes_ + bytes <= limit; });
    waited = now_ns() - t0;
  }
  queue_.push_back(Task{std::move(task), bytes});
  queued_bytes_ += bytes;
  work_.notify_one();
  return waited;
}

int64_t Mover::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (queue_.empty() && !running_task_) return 0;
  const int64_t t0 = now_ns();
  done_.wait(lock, [&] { return queue_.empty() && !running_task_; });
  return now_ns() - t0;
}

uint64_t Mover::queued_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_bytes_;
}

void Mover::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopped, nothing left
    Task task = std::move(queue_.front());
    queue_.pop_front();
    running_task_ = true;
    lock.unlock();
    task.run();
    task.run = nullptr;  // what the task holds (a copy of a write) goes before it counts as done
    lock.lock();
    running_task_ = false;
    queued_bytes_ -= task.bytes;
    done_.notify_all();
  }
}

}  // namespace h5loom::async
