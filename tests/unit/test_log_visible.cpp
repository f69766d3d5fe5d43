// The log engine's visible flush (make_visible): a rank's writes become
// readable through the in-memory index without an index record, a commit
// record or a sync, and are committed with the epoch at the next flush.
// One rank, MPI initialised here (singleton).
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <filesystem>

#include "engines/log/commit.hpp"
#include "engines/log/read_planner.hpp"
#include "engines/log/verify.hpp"
#include "h5loom/engine.hpp"

using namespace h5loom;
namespace fs = std::filesystem;

namespace {

struct FinalizeMpi : ::testing::Environment {
  void TearDown() override {
    int on = 0, off = 0;
    MPI_Initialized(&on);
    MPI_Finalized(&off);
    if (on && !off) MPI_Finalize();
  }
};
const auto* finalize_mpi = ::testing::AddGlobalTestEnvironment(new FinalizeMpi);

void ensure_mpi() {
  int on = 0;
  MPI_Initialized(&on);
  if (!on) MPI_Init(nullptr, nullptr);
}

std::vector<int32_t> read_all(logengine::LogFile& f, uint64_t n) {
  std::vector<int32_t> out(n, -1);
  logengine::ReadPlanner(f.catalog.tree, *f.catalog.index, *f.log, f.committed.header.checksum_unit, f.where())
      .read("/d", Selection::all(), out.data());
  return out;
}

}  // namespace

TEST(LogVisible, BlocksAreReadableBeforeTheCommitAndCommittedWithTheEpoch) {
  ensure_mpi();
  const fs::path dir = fs::temp_directory_path() / ("h5loom-visible-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "v.h5").string();
  // Writes of 128 bytes or more go to the rank's region at once, smaller ones to the buffer.
  auto eng = engine::make_engine(R"({"engine":"log","log":{"direct_threshold":128,"region_size":8192}})");
  auto h = eng->open(path, engine::OpenMode::Create, MPI_COMM_SELF);
  auto& f = static_cast<logengine::LogFile&>(*h);
  DatasetSpec spec;
  spec.dtype = Datatype::Int32;
  spec.shape = {100};
  eng->create_dataset(*h, "/d", spec);
  std::vector<int32_t> big(50, 1), small(10, 2), late(40, 3);
  auto put = [&](const Selection& sel, const std::vector<int32_t>& v) {
    engine::Write w;
    w.dataset = "/d";
    w.selection = sel;
    w.dtype = Datatype::Int32;
    w.elements = v.size();
    w.buffer = engine::WriteBuffer::borrowed(v.data(), engine::Lifetime::DuringCall);
    eng->put(*h, w);
  };
  put(Selection::box({0}, {50}), big);     // to the region
  put(Selection::box({50}, {10}), small);  // to the buffer

  logengine::make_visible(f);
  auto got = read_all(f, 100);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(got[std::size_t(i)], i < 50 ? 1 : i < 60 ? 2 : 0) << i;
  EXPECT_EQ(f.committed.epoch, 0u);  // nothing committed: no commit record, no index record
  EXPECT_EQ(fs::file_size(logfmt::commits_path(path)), logfmt::kCommitsHeaderSize);
  {  // another reader sees no epoch yet (not even the dataset)
    auto reader = engine::make_engine("log");
    auto r = reader->open(path, engine::OpenMode::Read, MPI_COMM_SELF);
    EXPECT_EQ(reader->kind(*r, "/d"), ObjectKind::None);
    reader->close(*r);
  }

  put(Selection::box({60}, {40}), late);
  engine::wait(eng->flush(*h, engine::FlushLevel::Durable));  // one epoch: the visible blocks and the later one
  EXPECT_EQ(f.committed.epoch, 1u);
  eng->close(*h);

  auto rep = logengine::verify_log(path);
  EXPECT_TRUE(rep.errors.empty()) << rep.errors.front();
  EXPECT_EQ(rep.epochs, 2u);  // and the close's, which records the front file's checksum
  EXPECT_EQ(rep.blocks, 3u);
  auto reader = engine::make_engine("log");
  auto r = reader->open(path, engine::OpenMode::Read, MPI_COMM_SELF);
  std::vector<int32_t> back(100, -1);
  engine::wait(reader->read(*r, "/d", Selection::all(), Datatype::Int32, back.data()));
  for (int i = 0; i < 100; ++i) ASSERT_EQ(back[std::size_t(i)], i < 50 ? 1 : i < 60 ? 2 : 3) << i;
  reader->close(*r);
  fs::remove_all(dir);
}

TEST(LogVisible, AKeptWriteWaitsForTheNextWriteOutWithoutCopy) {
  ensure_mpi();
  const fs::path dir = fs::temp_directory_path() / ("h5loom-kept-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "k.h5").string();
  // 16 000 bytes do not fit a region of 8 KiB: the write is kept, not written at once.
  auto eng = engine::make_engine(R"({"engine":"log","log":{"direct_threshold":128,"region_size":8192}})");
  auto h = eng->open(path, engine::OpenMode::Create, MPI_COMM_SELF);
  auto& f = static_cast<logengine::LogFile&>(*h);
  DatasetSpec spec;
  spec.dtype = Datatype::Int32;
  spec.shape = {4000};
  eng->create_dataset(*h, "/d", spec);
  auto values = std::make_shared<std::vector<int32_t>>(4000, 7);
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(values->data());
  logengine::WritePipeline& pipe = *f.writing->pipeline;
  ASSERT_TRUE(pipe.put(0, "/d", f.catalog.tree.datasets[0], Selection::all(), bytes,
                       logengine::WritePipeline::Hold::Shared, values));
  ASSERT_EQ(pipe.pieces().pieces().size(), 1u);
  EXPECT_EQ(pipe.pieces().pieces()[0].bytes, logengine::Piece::Bytes::Kept);
  EXPECT_EQ(pipe.pieces().buffered_bytes(), 0u);  // not copied
  EXPECT_FALSE(pipe.wants_write_out());           // kept memory need not go out soon
  std::weak_ptr<std::vector<int32_t>> watch = values;
  values.reset();
  EXPECT_FALSE(watch.expired());  // the pipeline keeps it alive

  logengine::make_visible(f);
  EXPECT_TRUE(watch.expired());  // written: let go
  EXPECT_EQ(read_all(f, 4000), std::vector<int32_t>(4000, 7));
  eng->close(*h);
  auto rep = logengine::verify_log(path);
  EXPECT_TRUE(rep.errors.empty()) << rep.errors.front();
  EXPECT_EQ(rep.blocks, 1u);
  fs::remove_all(dir);
}
