#include "bench_iotest_io.hpp"

#include <hdf5.h>

#include <map>
#include <vector>

#include <h5loom/errors.hpp>
#include <h5loom/h5loom.hpp>
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "config_cmd.hpp"

namespace h5loom::bench {

namespace {

// ---- h5loom's object model ---------------------------------------------------

// The engine configuration of one case: the knobs apply to hdf5; other
// engines run with their own configuration.
std::string case_engine(const std::string& engine, const IotestCase& k) {
  if (base_engine(engine) != "hdf5") return engine;
  nlohmann::json cfg = engine.front() == '{' ? nlohmann::json::parse(engine) : nlohmann::json{{"engine", "hdf5"}};
  auto& h = cfg["hdf5"];
  h["alignment"] = k.align_inc;
  h["alignment_threshold"] = k.align_thr;
  h["meta_block_size"] = k.meta_block;
  h["libver_low"] = k.libver;
  h["fill_time"] = k.fill ? "alloc" : "never";
  h["transfer"] = k.io;
  return cfg.dump();
}

class ObjectModelIO final : public TileIO {
 public:
  ObjectModelIO(const std::string& engine, const IotestCase& k, MPI_Comm comm, bool lend)
      : chunked_(k.chunked), lend_(lend) {
    options_.engine = case_engine(engine, k);
    options_.comm = comm;
  }
  void create(const std::string& path) override { file_ = File::create(path, options_); }
  void create_dataset(const std::string& dataset, const Dims& shape, const Dims& chunk) override {
    DatasetSpec spec;
    spec.dtype = Datatype::Float64;
    spec.shape = shape;
    spec.layout = chunked_ ? Layout::Chunked : Layout::Contiguous;
    spec.layout_auto = false;
    if (chunked_) spec.chunks = chunk;
    datasets_.emplace(dataset, file_->create_dataset(dataset, spec));
  }
  void write(const std::string& dataset, const Dims& start, const Dims& count, const double* tile) override {
    // The tile buffer is reused: copied, unless lent till the step's flush.
    datasets_.at(dataset).write_raw(Selection::box(start, count), Datatype::Float64, tile, product(count), !lend_);
  }
  void open(const std::string& path) override { file_ = File::open(path, Mode::Read, options_); }
  void read(const std::string& dataset, const Dims& start, const Dims& count, double* tile) override {
    auto it = datasets_.find(dataset);
    if (it == datasets_.end()) it = datasets_.emplace(dataset, file_->dataset(dataset)).first;
    it->second.read(Selection::box(start, count), tile, product(count));
  }
  void close() override {
    datasets_.clear();
    if (file_) file_->close();
    file_.reset();
  }
  void end_step() override { file_->flush_async(); }  // dropped: the next collective call completes it

 private:
  FileOptions options_;
  bool chunked_, lend_;
  std::optional<File> file_;
  std::map<std::string, Dataset> datasets_;
};

// ---- HDF5's C API ------------------------------------------------------------

void check(herr_t status, const std::string& what) {
  if (status < 0) throw IOError("iotest --api hdf5: " + what + " failed (HDF5 error above)");
}
hid_t checked(hid_t id, const std::string& what) {
  check(id < 0 ? -1 : 0, what);
  return id;
}

// h5loom's VOL connector with an engine configuration, for a file access property list.
hid_t connector_for(const std::string& engine, void** info) {
  static bool path_added = false;
  if (!path_added) {
    const std::string dir = cli::vol_plugin_dir();
    if (dir.empty()) throw UsageError("iotest --api hdf5: the VOL connector (libh5loom_vol.so) is not built");
    check(H5PLprepend(dir.c_str()), "adding the connector's directory to HDF5's plugin path");
    path_added = true;
  }
  hid_t id = checked(H5VLregister_connector_by_name("h5loom", H5P_DEFAULT), "loading the h5loom VOL connector");
  check(H5VLconnector_str_to_info(engine.c_str(), id, info), "reading the connector configuration '" + engine + "'");
  return id;
}

class Hdf5ApiIO final : public TileIO {
 public:
  Hdf5ApiIO(const std::string& engine, const IotestCase& k, MPI_Comm comm) : k_(k) {
    fapl_ = checked(H5Pcreate(H5P_FILE_ACCESS), "creating file access properties");
    check(H5Pset_fapl_mpio(fapl_, comm, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    check(H5Pset_alignment(fapl_, k.align_thr, k.align_inc), "H5Pset_alignment");
    check(H5Pset_meta_block_size(fapl_, k.meta_block), "H5Pset_meta_block_size");
    check(H5Pset_libver_bounds(fapl_, k.libver == "latest" ? H5F_LIBVER_LATEST : H5F_LIBVER_EARLIEST,
                               H5F_LIBVER_LATEST), "H5Pset_libver_bounds");
    if (engine != "native") {
      void* info = nullptr;
      hid_t vol = connector_for(engine, &info);
      const herr_t st = H5Pset_vol(fapl_, vol, info);
      H5VLfree_connector_info(vol, info);
      H5VLclose(vol);
      check(st, "H5Pset_vol (h5loom " + engine + ")");
    }
    dxpl_ = checked(H5Pcreate(H5P_DATASET_XFER), "creating transfer properties");
    check(H5Pset_dxpl_mpio(dxpl_, k.io == "collective" ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT),
          "H5Pset_dxpl_mpio");
  }
  ~Hdf5ApiIO() override {
    try {
      close();
    } catch (...) {
    }
    H5Pclose(dxpl_);
    H5Pclose(fapl_);
  }
  void create(const std::string& path) override {
    file_ = checked(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl_), "H5Fcreate '" + path + "'");
  }
  void create_dataset(const std::string& dataset, const Dims& shape, const Dims& chunk) override {
    std::vector<hsize_t> dims(shape.begin(), shape.end());
    hid_t space = checked(H5Screate_simple(int(dims.size()), dims.data(), nullptr), "H5Screate_simple");
    hid_t dcpl = checked(H5Pcreate(H5P_DATASET_CREATE), "creating dataset properties");
    if (k_.chunked) {
      std::vector<hsize_t> c(chunk.begin(), chunk.end());
      check(H5Pset_chunk(dcpl, int(c.size()), c.data()), "H5Pset_chunk");
    }
    check(H5Pset_fill_time(dcpl, k_.fill ? H5D_FILL_TIME_ALLOC : H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
    // Groups along the path, as hdf5-iotest makes them.
    hid_t lcpl = checked(H5Pcreate(H5P_LINK_CREATE), "creating link properties");
    check(H5Pset_create_intermediate_group(lcpl, 1), "H5Pset_create_intermediate_group");
    hid_t d = H5Dcreate2(file_, dataset.c_str(), H5T_IEEE_F64LE, space, lcpl, dcpl, H5P_DEFAULT);
    H5Pclose(lcpl);
    H5Pclose(dcpl);
    H5Sclose(space);
    datasets_[dataset] = checked(d, "H5Dcreate2 '" + dataset + "'");
  }
  void write(const std::string& dataset, const Dims& start, const Dims& count, const double* tile) override {
    transfer(dataset, start, count, const_cast<double*>(tile), true);
  }
  void open(const std::string& path) override {
    file_ = checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl_), "H5Fopen '" + path + "'");
  }
  void read(const std::string& dataset, const Dims& start, const Dims& count, double* tile) override {
    if (!datasets_.count(dataset))
      datasets_[dataset] = checked(H5Dopen2(file_, dataset.c_str(), H5P_DEFAULT), "H5Dopen2 '" + dataset + "'");
    transfer(dataset, start, count, tile, false);
  }
  // H5Fflush_async into an event set waited at the close (native HDF5 flushes
  // in the call; h5loom's async wrapper completes the flush later).
  void end_step() override {
    if (steps_ < 0) steps_ = checked(H5EScreate(), "H5EScreate");
    check(H5Fflush_async(file_, H5F_SCOPE_GLOBAL, steps_), "H5Fflush_async");
  }
  void close() override {
    if (steps_ >= 0) {
      size_t in_progress = 0;
      hbool_t failed = false;
      hid_t es = steps_;
      steps_ = H5I_INVALID_HID;
      herr_t waited = H5ESwait(es, H5ES_WAIT_FOREVER, &in_progress, &failed);
      H5ESclose(es);
      check(waited < 0 || failed ? -1 : 0, "H5ESwait (a step's H5Fflush_async)");
    }
    for (auto& [name, d] : datasets_) H5Dclose(d);
    datasets_.clear();
    if (file_ >= 0) {
      hid_t f = file_;
      file_ = H5I_INVALID_HID;
      check(H5Fclose(f), "H5Fclose");
    }
  }

 private:
  void transfer(const std::string& dataset, const Dims& start, const Dims& count, double* tile, bool write) {
    hid_t d = datasets_.at(dataset);
    hid_t fspace = checked(H5Dget_space(d), "H5Dget_space");
    std::vector<hsize_t> s(start.begin(), start.end()), c(count.begin(), count.end());
    check(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, s.data(), nullptr, c.data(), nullptr), "H5Sselect_hyperslab");
    hsize_t n = product(count);
    hid_t mspace = checked(H5Screate_simple(1, &n, nullptr), "H5Screate_simple");
    const herr_t st = write ? H5Dwrite(d, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl_, tile)
                            : H5Dread(d, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl_, tile);
    H5Sclose(mspace);
    H5Sclose(fspace);
    check(st, std::string(write ? "H5Dwrite" : "H5Dread") + " '" + dataset + "'");
  }

  IotestCase k_;
  hid_t fapl_ = H5I_INVALID_HID, dxpl_ = H5I_INVALID_HID, file_ = H5I_INVALID_HID;
  hid_t steps_ = H5I_INVALID_HID;  // the event set of the steps' flushes (end_step)
  std::map<std::string, hid_t> datasets_;
};

}  // namespace

std::unique_ptr<TileIO> object_model_io(const std::string& engine, const IotestCase& k, MPI_Comm comm, bool lend) {
  return std::make_unique<ObjectModelIO>(engine, k, comm, lend);
}

std::unique_ptr<TileIO> hdf5_api_io(const std::string& engine, const IotestCase& k, MPI_Comm comm) {
  return std::make_unique<Hdf5ApiIO>(engine, k, comm);
}

}  // namespace h5loom::bench
