// Conformance group "file", continued: closes that return at once
// (File::close_async) and complete at the request's wait(). Every engine
// passes them; with the async wrapper the file's data moves on its
// background thread between the two, while the test goes on.
#include "conformance.hpp"

using namespace h5loom;
H5LOOM_CONFORMANCE_GROUP(file, "file");

TEST_F(file, ACloseBegunAsynchronouslyStoresEveryWriteWhenWaitedFor) {
  auto path = file_path();
  const uint64_t n = 5000, r = uint64_t(rank()), R = uint64_t(nranks());
  const auto mine = Selection::box({r * n}, {n});
  Request closed;
  std::vector<double> lent = ramp(n, double(r * n) + 0.5);  // lent until the close completes
  {
    auto f = File::create(path, options());
    auto copied = f.create_dataset<double>("copied", {R * n});
    auto borrowed = f.create_dataset<double>("lent", {R * n});
    std::vector<double> values = ramp(n, double(r * n));
    copied.write_copy(mine, values);
    borrowed.write(mine, lent);
    closed = f.close_async();
    std::fill(values.begin(), values.end(), -1.0);  // copied: the program may reuse it at once
    EXPECT_FALSE(f.is_open());
    EXPECT_FALSE(closed.test());  // the close's last part is collective: it waits for wait()
    // Closing: every use of the file is refused, on every rank alike (no hang).
    EXPECT_THROW(f.create_group("late"), UsageError);
    EXPECT_THROW(copied.write_copy(mine, values), UsageError);
    EXPECT_THROW((void)copied.read<double>(), UsageError);
    EXPECT_THROW((void)f.close_async(), UsageError);  // begun already
  }  // the handles go: the request holds the file
  closed.wait();
  EXPECT_TRUE(closed.test());
  EXPECT_NO_THROW(closed.wait());  // later waits return at once
  lent.assign(n, -1.0);            // after the close: not stored
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.dataset("copied").read<double>(), ramp(R * n, 0.0));
  EXPECT_EQ(f.dataset("lent").read<double>(), ramp(R * n, 0.5));
}

TEST_F(file, ADroppedCloseRequestClosesTheFileWithItsLastHandle) {
  auto path = file_path();
  const uint64_t R = uint64_t(nranks());
  {
    auto f = File::create(path, options());
    auto ds = f.create_dataset<int32_t>("x", {R});
    ds.write_copy(Selection::box({uint64_t(rank())}, {1}), std::vector<int32_t>{rank() * 7});
    { Request dropped = f.close_async(); }  // f and ds still hold the file: it stays closing
    EXPECT_THROW((void)ds.read<int32_t>(), UsageError);
  }  // its last handle goes: the close completes here, on every rank
  std::vector<int32_t> want(R);
  for (uint64_t i = 0; i < R; ++i) want[i] = int32_t(i) * 7;
  EXPECT_EQ(File::open(path, Mode::Read, options()).dataset("x").read<int32_t>(), want);
}

TEST_F(file, CloseCompletesACloseBegunAsynchronously) {
  auto path = file_path();
  const uint64_t n = 100, r = uint64_t(rank()), R = uint64_t(nranks());
  auto f = File::create(path, options());
  f.create_dataset<double>("x", {R * n}).write_copy(Selection::box({r * n}, {n}), ramp(n, double(r * n)));
  Request closed = f.close_async();
  f.close();
  EXPECT_TRUE(closed.test());
  EXPECT_NO_THROW(closed.wait());
  Request again = f.close_async();  // closed: harmless, as closing twice
  EXPECT_TRUE(again.test());
  EXPECT_EQ(File::open(path, Mode::Read, options()).dataset("x").read<double>(), ramp(R * n, 0.0));
}

TEST_F(file, OtherFilesGoOnWhileOneCloses) {
  // A code that writes a file per checkpoint: the next file is made and
  // written while the last one's close is pending (with the async wrapper its
  // data is still moving), and each file stores its own values.
  const uint64_t n = 3000, r = uint64_t(rank()), R = uint64_t(nranks()), files = 3;
  const auto mine = Selection::box({r * n}, {n});
  std::vector<Request> closing;
  std::vector<double> values(n);
  for (uint64_t k = 0; k < files; ++k) {
    auto f = File::create(file_path("ckpt" + std::to_string(k)), options());
    values = ramp(n, double(k * 1000000 + r * n));
    f.create_dataset<double>("x", {R * n}).write_copy(mine, values);
    f.flush_async();  // dropped: the close completes it
    if (!closing.empty()) closing.back().wait();  // the one before, after this file's writes
    closing.push_back(f.close_async());
  }
  closing.back().wait();
  for (uint64_t k = 0; k < files; ++k)
    EXPECT_EQ(File::open(file_path("ckpt" + std::to_string(k)), Mode::Read, options()).dataset("x").read<double>(),
              ramp(R * n, double(k * 1000000)))
        << "file " << k;
}

TEST_F(file, AFlushPendingAtCloseAsyncCompletesWithTheClose) {
  // With the async wrapper a flush may still be pending when the close
  // begins: the close completes it, and its request cannot be waited until
  // then. Writes made after it (the second file) go after it.
  const uint64_t n = 2000, r = uint64_t(rank()), R = uint64_t(nranks());
  const auto mine = Selection::box({r * n}, {n});
  for (int later_writes = 0; later_writes < 2; ++later_writes) {
    auto path = file_path("pending" + std::to_string(later_writes));
    {
      auto f = File::create(path, options());
      auto a = f.create_dataset<double>("a", {R * n});
      a.write_copy(mine, ramp(n, double(r * n)));
      Request flushed = f.flush_async();
      if (later_writes) a.write_copy(mine, ramp(n, double(r * n) + 0.25));  // wins over the first
      Request closed = f.close_async();
      if (!flushed.test()) {
        EXPECT_THROW(flushed.wait(), UsageError);
        EXPECT_FALSE(flushed.test());  // still the flush's: its outcome comes with the close
      }
      closed.wait();
      EXPECT_TRUE(flushed.test());
      EXPECT_NO_THROW(flushed.wait());
    }
    EXPECT_EQ(File::open(path, Mode::Read, options()).dataset("a").read<double>(),
              ramp(R * n, later_writes ? 0.25 : 0.0))
        << "writes after the flush: " << later_writes;
  }
}
