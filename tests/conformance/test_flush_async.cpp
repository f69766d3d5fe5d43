// Conformance group "file", continued: flush points that return at once
// (File::flush_async) and buffers reused right after a write. Every engine
// passes them; with the async wrapper they exercise its background thread:
// the writes move while the test goes on, and the flush completes at wait()
// or at the next collective call.
#include "conformance.hpp"

using namespace h5loom;
H5LOOM_CONFORMANCE_GROUP(file, "file");

TEST_F(file, BuffersReusedOrFreedRightAfterAWriteDoNotChangeWhatIsStored) {
  auto path = file_path();
  const uint64_t n = 1000, steps = 5;
  const uint64_t r = uint64_t(rank()), R = uint64_t(nranks());
  {
    auto f = File::create(path, options());
    auto ds = f.create_dataset<double>("x", {steps, R * n});
    auto owned = f.create_dataset<double>("owned", {steps, R * n});
    std::vector<double> reused(n);
    for (uint64_t s = 0; s < steps; ++s) {
      const auto sel = Selection::box({s, r * n}, {1, n});
      reused = ramp(n, double(s * 10000 + r * n));
      ds.write_copy(sel, reused);
      std::fill(reused.begin(), reused.end(), -1.0);  // overwritten at once
      {
        auto gone = std::make_unique<std::vector<double>>(ramp(n, double(s * 10000 + r * n + 0.5)));
        owned.write_copy(sel, *gone);
      }  // freed at once
      Request flushed = f.flush_async();
      reused = ramp(n, -5.0);  // while the flush may be pending
      flushed.wait();
      EXPECT_TRUE(flushed.test());
    }
  }
  auto f = File::open(path, Mode::Read, options());
  const auto x = f.dataset("x").read<double>(), o = f.dataset("owned").read<double>();
  ASSERT_EQ(x.size(), steps * R * n);
  ASSERT_EQ(o.size(), steps * R * n);
  std::size_t wrong = 0;
  for (uint64_t s = 0; s < steps; ++s)
    for (uint64_t i = 0; i < R * n; ++i) {
      wrong += x[s * R * n + i] != double(s * 10000 + i);
      wrong += o[s * R * n + i] != double(s * 10000 + i) + 0.5;
    }
  EXPECT_EQ(wrong, 0u);
}

// Large copies (the async wrapper keeps their memory for reuse, from one step
// to the next and from one file to the next): each file stores its own
// values, though the second file's copies go where the first's were, and a
// copy smaller than its reused buffer reads nothing past its own bytes.
TEST_F(file, LargeCopiesAreRightInEveryFileOfASequence) {
  const uint64_t r = uint64_t(rank()), R = uint64_t(nranks()), steps = 3;
  for (int which = 0; which < 2; ++which) {
    const uint64_t n = which == 0 ? 12000 : 9000;  // 96 and 72 KB: one 128 KiB buffer each
    auto path = file_path("seq" + std::to_string(which));
    {
      auto f = File::create(path, options());
      auto ds = f.create_dataset<double>("x", {steps, R * n});
      std::vector<double> values(n);
      for (uint64_t s = 0; s < steps; ++s) {
        values = ramp(n, double(which * 1000000 + s * 100000 + r * n));
        ds.write_copy(Selection::box({s, r * n}, {1, n}), values);
        std::fill(values.begin(), values.end(), -1.0);  // overwritten at once
        f.flush_async();
      }
    }
    auto f = File::open(path, Mode::Read, options());
    const auto x = f.dataset("x").read<double>();
    ASSERT_EQ(x.size(), steps * R * n);
    std::size_t wrong = 0;
    for (uint64_t s = 0; s < steps; ++s)
      for (uint64_t i = 0; i < R * n; ++i) wrong += x[s * R * n + i] != double(which * 1000000 + s * 100000 + i);
    EXPECT_EQ(wrong, 0u) << "file " << which;
  }
}

TEST_F(file, AWriteMadeWhileAFlushIsPendingWinsOverEveryEarlierOne) {
  auto path = file_path();
  auto f = File::create(path, options());
  auto ds = f.create_dataset<double>("x", {4});
  ds.write_copy(Selection::all(), std::vector<double>(4, double(rank() + 1)));  // every rank: the same elements
  Request flushed = f.flush_async(FlushLevel::Visible);
  if (rank() == nranks() - 1) ds.write_copy(Selection::all(), std::vector<double>(4, 100.0));
  flushed.wait();
  EXPECT_EQ(ds.read<double>(), std::vector<double>(4, 100.0));
}

TEST_F(file, AFlushRequestDroppedCompletesAtTheNextCollectiveCall) {
  auto path = file_path();
  auto f = File::create(path, options());
  auto ds = f.create_dataset<int32_t>("x", {uint64_t(nranks())});
  ds.write_copy(Selection::box({uint64_t(rank())}, {1}), std::vector<int32_t>{rank() * 7});
  { Request dropped = f.flush_async(); }
  f.create_group("after");
  std::vector<int32_t> want(static_cast<std::size_t>(nranks()));
  for (int i = 0; i < nranks(); ++i) want[std::size_t(i)] = i * 7;
  EXPECT_EQ(ds.read<int32_t>(), want);
}

TEST_F(file, AFlushCompletedByCloseStillReportsItsOutcome) {
  auto path = file_path();
  Request flushed;
  {
    auto f = File::create(path, options());
    auto ds = f.create_dataset<double>("x", {uint64_t(nranks())});
    ds.write_copy(Selection::box({uint64_t(rank())}, {1}), std::vector<double>{0.25 * rank()});
    flushed = f.flush_async();
    f.close();
  }
  EXPECT_TRUE(flushed.test());
  EXPECT_NO_THROW(flushed.wait());
  auto f = File::open(path, Mode::Read, options());
  const auto x = f.dataset("x").read<double>();
  for (int i = 0; i < nranks(); ++i) EXPECT_EQ(x[std::size_t(i)], 0.25 * i);
}

TEST_F(file, ALentBufferIsReadWhenTheFlushCompletes) {
  // write() lends the buffer until the flush point completes: the value it
  // has then is what is stored, even when the flush returned a request first.
  auto path = file_path();
  auto f = File::create(path, options());
  auto ds = f.create_dataset<double>("x", {uint64_t(nranks()) * 8});
  std::vector<double> lent(8, 1.0);
  ds.write(Selection::box({uint64_t(rank()) * 8}, {8}), lent);
  Request flushed = f.flush_async();
  flushed.wait();
  lent.assign(8, -1.0);  // after the flush completed: not stored
  EXPECT_EQ(ds.read<double>(), std::vector<double>(std::size_t(nranks()) * 8, 1.0));
}

TEST_F(file, AFlushWithNothingNewCompletesNoEarlierThanTheOneBeforeIt) {
  // The second flush has nothing of its own to commit; it promises what the
  // first one does, so it may not complete before it (with async+log the
  // first one's commit record may still be syncing when the second one's
  // collective part has run).
  auto path = file_path();
  const uint64_t n = 64, r = uint64_t(rank()), R = uint64_t(nranks());
  auto f = File::create(path, options());
  f.create_dataset<double>("a", {R * n}).write_copy(Selection::box({r * n}, {n}), ramp(n, double(r * n)));
  Request first = f.flush_async();
  Request second = f.flush_async();  // the first one's collective part runs here
  Request third = f.flush_async();   // and the second one's here
  EXPECT_TRUE(!second.test() || first.test());
  EXPECT_TRUE(!third.test() || second.test());
  EXPECT_NO_THROW(third.wait());
  EXPECT_TRUE(first.test());
  EXPECT_TRUE(second.test());
  EXPECT_NO_THROW(first.wait());
  EXPECT_NO_THROW(second.wait());
  EXPECT_EQ(f.dataset("a").read<double>(), ramp(R * n, 0.0));
}

TEST_F(file, FlushesCompleteInOrderAndAReadCompletesTheLast) {
  // With async+log a durable flush completes in stages: its commit record is
  // written at the next flush's collective part (and synced meanwhile), and
  // confirmed on every rank at the one after - or at a call that needs the
  // flush complete. Calls that make objects and writes may come in between.
  auto path = file_path();
  const uint64_t n = 64, r = uint64_t(rank()), R = uint64_t(nranks());
  const auto mine = Selection::box({r * n}, {n});
  {
    auto f = File::create(path, options());
    f.create_dataset<double>("a", {R * n}).write_copy(mine, ramp(n, double(r * n)));
    Request a = f.flush_async();
    auto b = f.create_dataset<double>("b", {R * n});  // may start a's collective part
    b.write_copy(mine, ramp(n, double(r * n) + 0.5));
    Request second = f.flush_async();
    f.create_group("c");  // second's collective part: a's commit record goes out
    Request third = f.flush_async();
    f.create_group("d");  // third's collective part: a's record is confirmed
    EXPECT_TRUE(a.test());
    EXPECT_EQ(f.dataset("b").read<double>(), ramp(R * n, 0.5));  // a read needs b's flush complete
    EXPECT_TRUE(second.test());
    EXPECT_TRUE(third.test());
    EXPECT_NO_THROW(a.wait());
    EXPECT_NO_THROW(second.wait());
    EXPECT_NO_THROW(third.wait());
  }
  auto f = File::open(path, Mode::Read, options());
  EXPECT_EQ(f.dataset("a").read<double>(), ramp(R * n, 0.0));
  EXPECT_EQ(f.dataset("b").read<double>(), ramp(R * n, 0.5));
}
