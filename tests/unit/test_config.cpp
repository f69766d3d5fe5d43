// Engine configuration: names, JSON, wrappers, knob validation.
#include <gtest/gtest.h>

#include <cstdlib>

#include "h5loom/engine.hpp"

using namespace h5loom;

static std::string config_error(const std::string& cfg) {
  try {
    engine::make_engine(cfg);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Config, NamesJsonAndWrappers) {
  EXPECT_EQ(engine::make_engine("hdf5")->name(), "hdf5");
  EXPECT_EQ(engine::make_engine(R"({"engine": "hdf5"})")->name(), "hdf5");
  EXPECT_EQ(engine::make_engine(R"({"engine": "hdf5", "wrappers": ["collcheck"]})")->name(), "collcheck>hdf5");
  EXPECT_EQ(engine::make_engine(R"({"hdf5": {"transfer": "independent", "alignment": 1,
      "meta_block_size": 4096, "layout": "chunked", "chunk_target_bytes": 65536,
      "fill_time": "alloc", "libver_low": "v110", "collective_metadata": false,
      "mpi_info": {"romio_cb_write": "enable"}, "sync": true}})")->name(), "hdf5");
  auto names = engine::engine_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "hdf5"), names.end());
}

TEST(Config, EnvironmentAddsTheCollectiveCheck) {
  setenv("H5LOOM_CHECK_COLLECTIVE", "1", 1);
  EXPECT_EQ(engine::make_engine("hdf5")->name(), "collcheck>hdf5");
  setenv("H5LOOM_CHECK_COLLECTIVE", "0", 1);
  EXPECT_EQ(engine::make_engine("hdf5")->name(), "hdf5");
  unsetenv("H5LOOM_CHECK_COLLECTIVE");
}

TEST(Config, ErrorsNameTheKeyAndValue) {
  EXPECT_NE(config_error("hdf6").find("unknown engine 'hdf6'"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"transfer": "sometimes"}})").find("hdf5.transfer"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"transfer": "sometimes"}})").find("'sometimes'"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"alignment": "big"}})").find("hdf5.alignment"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"alignment": 0}})").find("hdf5.alignment"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"sync": "yes"}})").find("hdf5.sync"), std::string::npos);
  EXPECT_NE(config_error(R"({"engine": "log", "log": {"region_alignment": 1000}})").find("log.region_alignment"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"engine": "log", "log": {"region_alignment": 1000}})").find("1000"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"mpi_info": {"cb_nodes": 4}}})").find("mpi_info.cb_nodes"), std::string::npos);
  EXPECT_NE(config_error(R"({"hdf5": {"colective": true}})").find("'hdf5.colective'"), std::string::npos);
  EXPECT_NE(config_error(R"({"wrappers": "collcheck"})").find("wrappers"), std::string::npos);
  EXPECT_NE(config_error(R"({"collcheck": {"timeout": -1}, "wrappers": ["collcheck"]})").find("collcheck.timeout"),
            std::string::npos);
  EXPECT_NE(config_error(R"([1, 2])").find("unknown engine"), std::string::npos);
}

// An engine that implements only the required operations: the optional ones
// (links, creation order) raise UsageError naming the conformance group.
namespace {
class MinimalEngine : public h5loom::engine::Engine {
 public:
  std::string name() const override { return "minimal"; }
  std::vector<std::string> conformance_groups() const override { return {}; }
  h5loom::engine::Claim probe(const std::string&) const noexcept override { return h5loom::engine::Claim::No; }
  std::unique_ptr<h5loom::engine::FileHandle> open(const std::string&, h5loom::engine::OpenMode, MPI_Comm) override {
    return std::make_unique<h5loom::engine::FileHandle>();
  }
  h5loom::engine::RequestPtr flush(h5loom::engine::FileHandle&, h5loom::engine::FlushLevel) override { return nullptr; }
  void close(h5loom::engine::FileHandle&) override {}
  h5loom::engine::Properties describe(h5loom::engine::FileHandle&) override { return {}; }
  h5loom::ObjectKind kind(h5loom::engine::FileHandle&, const std::string&) override { return h5loom::ObjectKind::None; }
  void create_group(h5loom::engine::FileHandle&, const std::string&) override {}
  std::vector<std::string> list(h5loom::engine::FileHandle&, const std::string&) override { return {}; }
  void create_dataset(h5loom::engine::FileHandle&, const std::string&, const h5loom::DatasetSpec&) override {}
  h5loom::DatasetInfo dataset_info(h5loom::engine::FileHandle&, const std::string&) override { return {}; }
  void extend(h5loom::engine::FileHandle&, const std::string&, const h5loom::Dims&) override {}
  void put(h5loom::engine::FileHandle&, h5loom::engine::Write) override {}
  h5loom::engine::RequestPtr read(h5loom::engine::FileHandle&, const std::string&, const h5loom::Selection&,
                                  h5loom::Datatype, void*) override {
    return nullptr;
  }
  bool has_attribute(h5loom::engine::FileHandle&, const std::string&, const std::string&) override { return false; }
  void write_attribute(h5loom::engine::FileHandle&, const std::string&, const std::string&,
                       const h5loom::AttributeValue&) override {}
  h5loom::AttributeValue read_attribute(h5loom::engine::FileHandle&, const std::string&, const std::string&) override {
    return {};
  }
  std::vector<std::string> list_attributes(h5loom::engine::FileHandle&, const std::string&) override { return {}; }
};
}  // namespace

TEST(EngineInterface, OptionalOperationsRaiseNamingTheirGroup) {
  MinimalEngine e;
  h5loom::engine::FileHandle h;
  try {
    e.move(h, "/a", "/b");
    FAIL() << "no error";
  } catch (const h5loom::UsageError& err) {
    EXPECT_NE(std::string(err.what()).find("'links'"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find("'minimal'"), std::string::npos) << err.what();
  }
  EXPECT_THROW(e.list_in_creation_order(h, "/"), h5loom::UsageError);
  EXPECT_FALSE(e.soft_link(h, "/a").has_value());
  EXPECT_FALSE(e.verify("/nowhere").has_value());
  EXPECT_TRUE(e.storage("/nonexistent/file").empty());
  EXPECT_THROW(e.remove("/nonexistent/file"), h5loom::NotFoundError);
  // A write buffer made owned shares its owner or copies, never aliases a borrowed one.
  int32_t v = 7;
  auto borrowed = h5loom::engine::WriteBuffer::borrowed(&v, h5loom::engine::Lifetime::DuringCall);
  auto kept = borrowed.keep(sizeof v);
  EXPECT_EQ(kept.lifetime(), h5loom::engine::Lifetime::Owned);
  EXPECT_NE(kept.data(), static_cast<const void*>(&v));
  v = 8;
  EXPECT_EQ(*static_cast<const int32_t*>(kept.data()), 7);
  EXPECT_EQ(kept.keep(4).data(), kept.data());
}
