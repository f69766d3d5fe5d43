// The log engine's write paths, one rank (MPI initialised here, singleton):
// the visible flush (make_visible: a rank's writes become readable through the
// in-memory index without an index record, a commit record or a sync, and are
// committed with the epoch at the next flush), kept writes, and region writes
// that grow one block.
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

// An empty directory of this process for one test.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("h5loom-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
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
  const fs::path dir = fresh_dir("visible");
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
  const fs::path dir = fresh_dir("kept");
  const std::string path = (dir / "k.h5").string();
  // Without regions (a rank other than the last one whose region is full
  // takes the same way) a large write is kept, not written at once.
  auto eng = engine::make_engine(R"({"engine":"log","log":{"direct_threshold":128,"region_size":0}})");
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

TEST(LogRegionWrites, ConsecutiveWritesGrowOneBlockWhoseChecksumsCoverEveryByte) {
  ensure_mpi();
  const fs::path dir = fresh_dir("grow");
  const std::string path = (dir / "g.h5").string();
  // Rows of 1200 bytes go to the region at once; 1200 is not a multiple of the
  // 512-byte checksum unit, so a grown block continues a short unit's CRC32C.
  auto eng = engine::make_engine(
      R"({"engine":"log","log":{"direct_threshold":1000,"checksum_unit":512,"region_size":1048576}})");
  auto h = eng->open(path, engine::OpenMode::Create, MPI_COMM_SELF);
  auto& f = static_cast<logengine::LogFile&>(*h);
  DatasetSpec spec;
  spec.dtype = Datatype::Int32;
  spec.shape = {10, 300};
  eng->create_dataset(*h, "/d", spec);
  eng->create_dataset(*h, "/e", spec);
  auto value = [](int ds, int row, int col) { return ds * 100000 + row * 1000 + col; };
  std::vector<int32_t> row(300);
  auto put_row = [&](const std::string& ds, int r) {
    for (int c = 0; c < 300; ++c) row[std::size_t(c)] = value(ds == "/d" ? 0 : 1, r, c);
    engine::Write w;
    w.dataset = ds;
    w.selection = Selection::box({uint64_t(r), 0}, {1, 300});
    w.dtype = Datatype::Int32;
    w.elements = 300;
    w.buffer = engine::WriteBuffer::borrowed(row.data(), engine::Lifetime::DuringCall);
    eng->put(*h, w);
  };
  {  // The first round is sized by the last file this process wrote (maybe
     // small); a round that wanted 16 KiB sizes the next one to hold the rows.
    std::vector<int32_t> w(4096, 1);
    engine::Write big;
    big.dataset = "/w";
    big.selection = Selection::all();
    big.dtype = Datatype::Int32;
    big.elements = w.size();
    big.buffer = engine::WriteBuffer::borrowed(w.data(), engine::Lifetime::DuringCall);
    DatasetSpec ws;
    ws.dtype = Datatype::Int32;
    ws.shape = {4096};
    eng->create_dataset(*h, "/w", ws);
    eng->put(*h, big);
    logengine::make_visible(f);
  }
  for (int r = 0; r < 5; ++r) put_row("/d", r);   // one block
  put_row("/e", 0);                               // another dataset: a block of its own
  for (int r = 5; r < 10; ++r) put_row("/d", r);  // does not continue /e's: a third block
  const auto& pieces = f.writing->pipeline->pieces().pieces();
  ASSERT_EQ(pieces.size(), 3u);
  for (const auto& p : pieces) EXPECT_EQ(p.bytes, logengine::Piece::Bytes::InLog);  // written at once, not copied
  EXPECT_EQ(f.writing->pipeline->pieces().buffered_bytes(), 0u);
  EXPECT_EQ(pieces[0].block.count, (Dims{5, 300}));
  EXPECT_EQ(pieces[0].block.nbytes, 6000u);
  EXPECT_EQ(pieces[0].block.unit_crcs.size(), 12u);  // ceil(6000 / 512)
  const uint64_t second_row_at = pieces[0].block.offset + 1200;
  eng->close(*h);

  auto rep = logengine::verify_log(path);
  EXPECT_TRUE(rep.errors.empty()) << rep.errors.front();
  EXPECT_EQ(rep.blocks, 4u);  // and /w's
  {
    auto reader = engine::make_engine("log");
    auto r = reader->open(path, engine::OpenMode::Read, MPI_COMM_SELF);
    std::vector<int32_t> back(3000, -1);
    engine::wait(reader->read(*r, "/d", Selection::all(), Datatype::Int32, back.data()));
    for (int i = 0; i < 3000; ++i) ASSERT_EQ(back[std::size_t(i)], value(0, i / 300, i % 300)) << i;
    reader->close(*r);
  }
  // A byte of the second row (inside the grown part) is flipped: its read raises.
  {
    FILE* log = std::fopen(logfmt::log_path(path).c_str(), "r+b");
    ASSERT_NE(log, nullptr);
    std::fseek(log, long(second_row_at + 100), SEEK_SET);
    const int b = std::fgetc(log);
    std::fseek(log, long(second_row_at + 100), SEEK_SET);
    std::fputc(b ^ 0x5a, log);
    std::fclose(log);
  }
  auto reader = engine::make_engine("log");
  auto r = reader->open(path, engine::OpenMode::Read, MPI_COMM_SELF);
  std::vector<int32_t> back(300, -1);
  EXPECT_THROW(engine::wait(reader->read(*r, "/d", Selection::box({1, 0}, {1, 300}), Datatype::Int32, back.data())),
               CorruptionError);
  reader->close(*r);
  fs::remove_all(dir);
}
