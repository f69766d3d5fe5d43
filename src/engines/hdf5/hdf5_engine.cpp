// The native engine: parallel HDF5 over MPI-IO. Files are plain HDF5 that
// h5dump and h5py read. Knobs and their defaults: docs/engines/hdf5.md.
#include <hdf5.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/mpi_util.hpp"
#include "engine/registry.hpp"
#include "engines/hdf5/attributes.hpp"
#include "engines/hdf5/settings.hpp"
#include "engines/hdf5/write_runs.hpp"
#include "hdf5lib/chunking.hpp"
#include "hdf5lib/dataspace.hpp"
#include "hdf5lib/filters.hpp"
#include "hdf5lib/types.hpp"

namespace h5loom::hdf5 {

using engine::FileHandle;
using engine::OpenMode;

namespace {

using hdf5lib::check;
using hdf5lib::checked;
using hdf5lib::datatype_of_hdf5;
using hdf5lib::fail;
using hdf5lib::file_type;
using hdf5lib::from_hsize;
using hdf5lib::hdf5_error_text;
using hdf5lib::Hid;
using hdf5lib::memory_type;
using hdf5lib::select;
using hdf5lib::to_hsize;

// File access properties on HDF5's native connector, whatever HDF5_VOL_CONNECTOR
// says: this engine is what h5loom's VOL connector calls, so its own files
// must not go through that connector again.
hid_t native_fapl() {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
#if H5_VERSION_GE(1, 12, 0)
  if (fapl >= 0 && H5Pset_vol(fapl, H5VL_NATIVE, nullptr) < 0) {
    H5Pclose(fapl);
    return H5I_INVALID_HID;
  }
#endif
  return fapl;
}

// An external link traversal callback that refuses every traversal.
herr_t refuse_external_link(const char*, const char*, const char*, const char*, unsigned*, hid_t, void*) { return -1; }

// ---- the engine ---------------------------------------------------------------

struct Hdf5File : FileHandle {
  std::string name;
  Hid file;
  Hid dxpl;  // transfer properties (collective or independent)
  Hid independent_dxpl;  // for read_independent: always independent
  Hid no_external;       // link access properties on which an external link is not followed (it fails)
  bool collective = false;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  std::map<std::string, Hid> datasets;  // open datasets, kept until close
  std::map<std::string, bool> fill_never;  // per dataset read: written with fill time "never" (it never changes)
  std::map<std::string, bool> filtered;    // per dataset written: has filters (parallel HDF5 writes them collectively)
  std::map<std::string, Hid> transfer_types;  // per dataset of strings, compounds or arrays: its memory type
  Hid collective_dxpl;                     // more than one rank: collective transfers, for filtered datasets
  // This rank's writes since the last flush, in order (H5Dwrite happens at the
  // flush: collective transfers need every rank in every call).
  std::vector<engine::Write> queued;
};

// HDF5 1.12 reimplemented references: its MPI-IO path refuses to write
// datasets of them (as it does variable-length data).
#if H5_VERSION_GE(1, 12, 0)
constexpr bool kParallelRefsLimited = true;
#else
constexpr bool kParallelRefsLimited = false;
#endif

class Hdf5Engine final : public engine::Engine {
 public:
  explicit Hdf5Engine(Settings s) : settings_(std::move(s)) {
    // Errors become exceptions with HDF5's message in them; the stack is not printed.
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }

  std::string name() const override { return "hdf5"; }
  std::vector<std::string> conformance_groups() const override {
    std::vector<std::string> groups{"file",     "group",  "dataset", "attribute", "selection", "datatype",
                                    "extend",   "errors", "compound", "string",   "enum",      "links",
                                    "order",    "fill",   "external", "references", "attribute_edit", "arrays",
                                    "opaque",   "null_spaces", "filters", "reference_counts", "shrink",
                                    "named_types", "hard_links", "external_links", "user_defined_links"};
    // HDF5's MPI-IO path cannot write variable-length data ("Parallel IO does
    // not support writing VL or region reference datatypes"), and from HDF5
    // 1.12 on not datasets of object references either (attributes it can);
    // its one-process drivers can.
    if (settings_.driver != "mpio") groups.insert(groups.end(), {"vlen_strings", "variable_length"});
    if (settings_.driver != "mpio" || !kParallelRefsLimited) groups.push_back("reference_datasets");
    // With collective metadata reads, every rank must make every metadata
    // access (a chunk index lookup in H5Dread is one): a rank cannot read alone.
    if (!collective_metadata_reads()) groups.push_back("independent_read");
    return groups;
  }

  // Any HDF5 file is one this engine reads (a file it wrote carries no mark of its own).
  engine::Claim probe(const std::string& location) const noexcept override {
    htri_t is_hdf5 = -1;
#if H5_VERSION_GE(1, 12, 0)
    H5E_BEGIN_TRY {
      hid_t fapl = native_fapl();
      is_hdf5 = H5Fis_accessible(location.c_str(), fapl);
      if (fapl >= 0) H5Pclose(fapl);
    }
#else
    H5E_BEGIN_TRY { is_hdf5 = H5Fis_hdf5(location.c_str()); }
#endif
    H5E_END_TRY;
    return is_hdf5 > 0 ? engine::Claim::Readable : engine::Claim::No;
  }

  uint64_t userblock(FileHandle& fh) override {
    auto& f = cast(fh);
    Hid fcpl = checked(H5Fget_create_plist(f.file.get()), H5Pclose, "reading the creation properties of '" + f.name + "'");
    hsize_t size = 0;
    check(H5Pget_userblock(fcpl.get(), &size), "reading the user block of '" + f.name + "'");
    return size;
  }

  std::unique_ptr<FileHandle> open(const std::string& path, OpenMode mode, MPI_Comm comm) override {
    auto f = std::make_unique<Hdf5File>();
    f->name = path;
    f->comm = comm;
    MPI_Comm_rank(comm, &f->rank);
    MPI_Comm_size(comm, &f->size);
    f->collective = settings_.collective_transfer && f->size > 1;

    // One rank looks at the file system, so thousands of ranks do not stat at once.
    int exists = 0;
    if (f->rank == 0) {
      struct stat sb;
      exists = ::stat(path.c_str(), &sb) == 0 ? 1 : 0;
    }
    MPI_Bcast(&exists, 1, MPI_INT, 0, comm);
    bool creating = mode == OpenMode::Create || mode == OpenMode::CreateExclusive;
    if (!creating && !exists) throw NotFoundError("file '" + path + "' does not exist");
    if (mode == OpenMode::CreateExclusive && exists)
      throw ExistsError("cannot create file '" + path + "': it already exists (use create() to overwrite)");

    Hid fapl = checked(native_fapl(), H5Pclose, "creating file access properties");
    const bool sec2 = settings_.driver != "mpio";
    if (sec2) {
      // One process: POSIX I/O (sec2), or the file built in memory and written
      // out at close (core) - for files of one rank, like the log engine's front file.
      if (f->size != 1)
        throw ConfigError("configuration key 'hdf5.driver': '" + settings_.driver + "' serves one rank, not " +
                          std::to_string(f->size) + " (file '" + path + "')");
      // The core driver grows its image by this much, zeroing each new part: a
      // front file of a hundred datasets is about 40 KiB, and a 1 MiB step cost
      // a millisecond per file in memset, page faults and munmap.
      if (settings_.driver == "core")
        check(H5Pset_fapl_core(fapl.get(), 64 << 10, /*backing_store=*/1), "setting the core driver for '" + path + "'");
      else
        check(H5Pset_fapl_sec2(fapl.get()), "setting the sec2 driver for file '" + path + "'");
    } else {
      MPI_Info info = MPI_INFO_NULL;
      if (!settings_.mpi_info.empty()) {
        MPI_Info_create(&info);
        for (const auto& [k, v] : settings_.mpi_info) MPI_Info_set(info, k.c_str(), v.c_str());
      }
      herr_t st = H5Pset_fapl_mpio(fapl.get(), comm, info);
      if (info != MPI_INFO_NULL) MPI_Info_free(&info);
      check(st, "setting the MPI-IO driver for file '" + path + "'");
    }
    if (settings_.collective_metadata && !sec2) {
      check(H5Pset_all_coll_metadata_ops(fapl.get(), true), "enabling collective metadata reads");
      check(H5Pset_coll_metadata_write(fapl.get(), true), "enabling collective metadata writes");
    }
    // HDF5 refuses a user block smaller than the alignment: objects are then aligned to at most its size.
    const uint64_t alignment =
        creating && settings_.userblock ? std::min(settings_.alignment, settings_.userblock) : settings_.alignment;
    if (alignment > 1)
      check(H5Pset_alignment(fapl.get(), settings_.alignment_threshold, alignment), "setting alignment");
    check(H5Pset_meta_block_size(fapl.get(), settings_.meta_block_size), "setting the metadata block size");
    check(H5Pset_libver_bounds(fapl.get(), libver_of(settings_.libver_low), H5F_LIBVER_LATEST),
          "setting library version bounds");

    hid_t id;
    if (creating) {
      // The root group tracks the creation order of its links, as every group does.
      Hid fcpl = checked(H5Pcreate(H5P_FILE_CREATE), H5Pclose, "creating file properties");
      check(H5Pset_link_creation_order(fcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
            "tracking creation order");
      track_attribute_order(fcpl.get());
      if (settings_.userblock)
        check(H5Pset_userblock(fcpl.get(), settings_.userblock), "setting the user block of '" + path + "'");
      id = H5Fcreate(path.c_str(), mode == OpenMode::Create ? H5F_ACC_TRUNC : H5F_ACC_EXCL, fcpl.get(), fapl.get());
    } else {
      id = H5Fopen(path.c_str(), mode == OpenMode::Read ? H5F_ACC_RDONLY : H5F_ACC_RDWR, fapl.get());
    }
    if (id < 0) {
      std::string detail = hdf5_error_text();
      std::string msg = "cannot " + std::string(creating ? "create" : "open") + " file '" + path +
                        "' with engine hdf5 (HDF5: " + detail + ")";
      if (!creating && (detail.find("signature") != std::string::npos || detail.find("truncated") != std::string::npos ||
                        detail.find("superblock") != std::string::npos))
        throw CorruptionError(msg + "; the file is not HDF5 or is damaged/truncated");
      throw IOError(msg);
    }
    f->file = Hid(id, H5Fclose);
    f->dxpl = checked(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "creating transfer properties");
    if (f->collective) check(H5Pset_dxpl_mpio(f->dxpl.get(), H5FD_MPIO_COLLECTIVE), "enabling collective transfers");
    if (f->size > 1) {
      f->collective_dxpl = checked(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "creating transfer properties");
      check(H5Pset_dxpl_mpio(f->collective_dxpl.get(), H5FD_MPIO_COLLECTIVE), "enabling collective transfers");
    }
    f->independent_dxpl = checked(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "creating transfer properties");
    // The engine interface never follows external links (kind() is None through
    // them): HDF5 would open the other file natively, whatever engine wrote it.
    f->no_external = checked(H5Pcreate(H5P_LINK_ACCESS), H5Pclose, "creating link access properties");
    check(H5Pset_elink_cb(f->no_external.get(), refuse_external_link, nullptr), "creating link access properties");
    return f;
  }

  // Visible: the queued writes go out (H5Dwrite). Durable: and HDF5 flushes
  // its caches to the file (with MPI-IO, H5Fflush ends in MPI_File_sync).
  engine::RequestPtr flush(FileHandle& fh, engine::FlushLevel level) override {
    auto& f = cast(fh);
    std::vector<engine::Write> writes = std::move(f.queued);
    f.queued.clear();  // a failed write is not retried by a later flush
    write_all(f, writes);
    if (level == engine::FlushLevel::Durable)
      check(H5Fflush(f.file.get(), H5F_SCOPE_GLOBAL), "flushing file '" + f.name + "'");
    return nullptr;
  }

  // Kept until the flush; a buffer valid only now is copied.
  void put(FileHandle& fh, engine::Write w) override {
    auto& f = cast(fh);
    f.queued.push_back(w.buffer.lifetime() == engine::Lifetime::DuringCall ? w.kept() : std::move(w));
  }

  void close(FileHandle& fh) override {
    auto& f = cast(fh);
    // What was put and not flushed goes out first; the file is closed even if that fails.
    // (Collective on every rank, queue empty or not.)
    std::exception_ptr write_failed;
    try {
      std::vector<engine::Write> writes = std::move(f.queued);
      f.queued.clear();
      if (f.file.get() >= 0) write_all(f, writes);
    } catch (...) {
      write_failed = std::current_exception();
    }
    f.datasets.clear();
    // sync: with MPI-IO, H5Fflush ends in MPI_File_sync (collective, as the
    // close); the other drivers' files are fsync'ed once HDF5 has closed them.
    unsigned intent = 0;
    const bool sync = settings_.sync && f.file.get() >= 0 && H5Fget_intent(f.file.get(), &intent) >= 0 &&
                      (intent & H5F_ACC_RDWR);  // only files written to
    if (sync && settings_.driver == "mpio")
      check(H5Fflush(f.file.get(), H5F_SCOPE_GLOBAL), "syncing file '" + f.name + "'");
    hid_t id = f.file.release();  // a failed close must not be retried by ~Hid
    if (id >= 0 && H5Fclose(id) < 0) fail("closing file '" + f.name + "'");
    if (sync && settings_.driver != "mpio") {
      int fd = ::open(f.name.c_str(), O_RDONLY | O_CLOEXEC);
      const bool ok = fd >= 0 && ::fsync(fd) == 0;
      if (fd >= 0) ::close(fd);
      if (!ok) throw IOError("cannot sync file '" + f.name + "' to storage: " + std::strerror(errno));
    }
    if (write_failed) std::rethrow_exception(write_failed);
  }

  engine::Properties describe(FileHandle& fh) override {
    auto& f = cast(fh);
    unsigned maj, min, rel;
    H5get_libversion(&maj, &min, &rel);
    auto text = [](auto v) { return std::to_string(v); };
    engine::Properties p = {
        {"engine", "hdf5 (native parallel HDF5 " + text(maj) + "." + text(min) + "." + text(rel) + ", MPI-IO)"},
        {"ranks", text(f.size)},
        {"transfer", std::string(settings_.collective_transfer ? "collective" : "independent") +
                         (f.size == 1 ? " (independent at 1 rank)" : "")},
        {"collective_metadata", settings_.collective_metadata ? "true" : "false"},
        {"alignment", text(settings_.alignment) + " (threshold " + text(settings_.alignment_threshold) + ")"},
        {"meta_block_size", text(settings_.meta_block_size)},
        {"layout", std::string(settings_.chunked_by_default ? "chunked" : "contiguous") + " (chunk_target_bytes " +
                       text(settings_.chunk_target_bytes) + ")"},
        {"fill_time", settings_.fill_time},
        {"libver_low", settings_.libver_low},
        {"sync", settings_.sync ? "true" : "false"},
    };
    for (const auto& [k, v] : settings_.mpi_info) p.emplace_back("mpi_info." + k, v);
    return p;
  }

  ObjectKind kind(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    if (path == "/") return ObjectKind::Group;
    if (!links_exist(f, path)) return ObjectKind::None;
    hid_t obj = H5Oopen(f.file.get(), path.c_str(), f.no_external.get());
    if (obj < 0) {  // a dangling soft link, or a path through a dataset
      H5Eclear2(H5E_DEFAULT);
      return ObjectKind::None;
    }
    H5I_type_t t = H5Iget_type(obj);
    H5Oclose(obj);
    if (t == H5I_GROUP) return ObjectKind::Group;
    if (t == H5I_DATASET) return ObjectKind::Dataset;
    if (t == H5I_DATATYPE) return ObjectKind::Datatype;
    return ObjectKind::None;
  }

  // ---- named datatypes: HDF5's committed datatypes ----
  void commit_datatype(FileHandle& fh, const std::string& path, const Datatype& dtype) override {
    auto& f = cast(fh);
    const std::string what = "creating named datatype '" + path + "' in file '" + f.name + "'";
    Hid tcpl = checked(H5Pcreate(H5P_DATATYPE_CREATE), H5Pclose, what);
    track_attribute_order(tcpl.get());
    // A copy: committing changes the type it is given (and a scalar's is HDF5's predefined one).
    Hid type = checked(H5Tcopy(hdf5lib::file_type(dtype).get()), H5Tclose, what);
    check(H5Tcommit2(f.file.get(), path.c_str(), type.get(), H5P_DEFAULT, tcpl.get(), H5P_DEFAULT), what);
  }

  Datatype named_datatype(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    Hid type = checked(H5Topen2(f.file.get(), path.c_str(), H5P_DEFAULT), H5Tclose,
                       "opening named datatype '" + path + "' in file '" + f.name + "'");
    return hdf5lib::datatype_of_hdf5(type.get(), path);
  }

  void create_group(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    Hid gcpl = checked(H5Pcreate(H5P_GROUP_CREATE), H5Pclose, "creating group properties");
    check(H5Pset_link_creation_order(gcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
          "tracking creation order");
    track_attribute_order(gcpl.get());
    checked(H5Gcreate2(f.file.get(), path.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose,
            "creating group '" + path + "' in file '" + f.name + "'");
  }

  // ---- links ----
  // Open datasets and what was learnt of them by path: a link change may give a path another dataset.
  static void forget_datasets(Hdf5File& f) {
    f.datasets.clear();
    f.fill_never.clear();
    f.filtered.clear();
    f.transfer_types.clear();
  }
  void unlink(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    forget_datasets(f);  // open datasets below the link would keep old names
    // HDF5 1.14.5 corrupts a group (a crash at the next flush, reproduced with
    // HDF5 alone) when deleting a hard link of it inside itself takes its
    // reference count to 1 after another message left its header: the header
    // shrinks while the link's message is being removed from it. One more
    // reference held across the deletion keeps the count above 1 there; it is
    // released afterwards, outside the link's removal.
    Hid held = is_link_to_own_group(fh, path) ? open_object(f, path) : Hid();
    if (held.get() >= 0) check(H5Oincr_refcount(held.get()), "holding group '" + path + "' in file '" + f.name + "'");
    const herr_t deleted = H5Ldelete(f.file.get(), path.c_str(), H5P_DEFAULT);
    if (held.get() >= 0) check(H5Odecr_refcount(held.get()), "releasing group '" + path + "' in file '" + f.name + "'");
    check(deleted, "deleting '" + path + "' in file '" + f.name + "'");
  }
  void move(FileHandle& fh, const std::string& from, const std::string& to) override {
    auto& f = cast(fh);
    forget_datasets(f);
    check(H5Lmove(f.file.get(), from.c_str(), f.file.get(), to.c_str(), H5P_DEFAULT, H5P_DEFAULT),
          "moving '" + from + "' to '" + to + "' in file '" + f.name + "'");
  }
  void create_soft_link(FileHandle& fh, const std::string& path, const std::string& target) override {
    auto& f = cast(fh);
    check(H5Lcreate_soft(target.c_str(), f.file.get(), path.c_str(), H5P_DEFAULT, H5P_DEFAULT),
          "creating soft link '" + path + "' in file '" + f.name + "'");
  }
  void create_hard_link(FileHandle& fh, const std::string& path, const std::string& target) override {
    auto& f = cast(fh);
    check(H5Lcreate_hard(f.file.get(), target.c_str(), f.file.get(), path.c_str(), H5P_DEFAULT, H5P_DEFAULT),
          "creating hard link '" + path + "' to '" + target + "' in file '" + f.name + "'");
  }
  uint64_t link_count(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
#if H5_VERSION_GE(1, 12, 0)
    H5O_info2_t info;
    check(H5Oget_info_by_name3(f.file.get(), path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT),
          "reading object '" + path + "' in file '" + f.name + "'");
#else
    H5O_info_t info;
    check(H5Oget_info_by_name2(f.file.get(), path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT),
          "reading object '" + path + "' in file '" + f.name + "'");
#endif
    return info.rc;
  }
  // HDF5 counts the references with the names: a decrement is refused when
  // only one is left (HDF5 would delete the object at once, or leave links to nothing).
  uint64_t change_reference_count(FileHandle& fh, const std::string& path, int delta) override {
    auto& f = cast(fh);
    const uint64_t before = link_count(fh, path);
    if (delta < 0 && before <= 1)
      throw UsageError("cannot release a reference to '" + path + "' in file '" + f.name +
                       "': it holds none besides its name (H5Odecr_refcount would delete it)");
    Hid obj = open_object(f, path);
    check(delta > 0 ? H5Oincr_refcount(obj.get()) : H5Odecr_refcount(obj.get()),
          "changing the reference count of '" + path + "' in file '" + f.name + "'");
    return before + delta;
  }
  void create_external_link(FileHandle& fh, const std::string& path, const ExternalLink& link) override {
    auto& f = cast(fh);
    check(H5Lcreate_external(link.file.c_str(), link.path.c_str(), f.file.get(), path.c_str(), H5P_DEFAULT,
                             H5P_DEFAULT),
          "creating external link '" + path + "' in file '" + f.name + "'");
  }
  std::optional<ExternalLink> external_link(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    const auto li = described_link(f, path);
    if (!li || li->type != H5L_TYPE_EXTERNAL) return std::nullopt;
    std::vector<char> value(li->u.val_size);
    check(H5Lget_val(f.file.get(), path.c_str(), value.data(), value.size(), f.no_external.get()),
          "reading external link '" + path + "'");
    const char* file = nullptr;
    const char* target = nullptr;
    herr_t unpacked = -1;
    H5E_BEGIN_TRY { unpacked = H5Lunpack_elink_val(value.data(), value.size(), nullptr, &file, &target); }
    H5E_END_TRY
    if (unpacked < 0) return std::nullopt;  // a value HDF5 kept unchecked: user_defined_link() gives it
    return ExternalLink{file, target};
  }
  void create_user_defined_link(FileHandle& fh, const std::string& path, const UserDefinedLink& link) override {
    auto& f = cast(fh);
    const std::string what = "creating user-defined link '" + path + "' in file '" + f.name + "'";
    // Registered in this process or not: every rank refuses if one is not, so
    // that none is left alone in HDF5's collective link creation.
    int registered = H5Lis_registered(H5L_type_t(link.link_class)) > 0 ? 1 : 0;
    if (f.size > 1) MPI_Allreduce(MPI_IN_PLACE, &registered, 1, MPI_INT, MPI_MIN, f.comm);
    if (!registered)
      throw UsageError(what + ": its class " + std::to_string(link.link_class) +
                       " is not registered with HDF5 (H5Lregister) in every process of the file");
    const std::string& value = link.value.value();  // (the object model passes described links only)
    check(H5Lcreate_ud(f.file.get(), path.c_str(), H5L_type_t(link.link_class), value.data(), value.size(),
                       H5P_DEFAULT, H5P_DEFAULT),
          what);
  }
  // HDF5 describes a user-defined link through its class's query callback:
  // what that gives is the value here. A link it cannot describe (the callback
  // fails, as for an external-class value that is not an external link's) is
  // one of class 0 without a value - HDF5 programs get no more from it.
  std::optional<UserDefinedLink> user_defined_link(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    if (path == "/" || !links_exist(f, path)) return std::nullopt;
    const auto li = described_link(f, path);
    if (!li) return UserDefinedLink{};
    if (li->type < H5L_TYPE_UD_MIN) return std::nullopt;
    std::string value(li->u.val_size, '\0');
    check(H5Lget_val(f.file.get(), path.c_str(), value.data(), value.size(), f.no_external.get()),
          "reading user-defined link '" + path + "'");
    if (li->type == H5L_TYPE_EXTERNAL) {  // a well-formed one is an external link (external_link())
      herr_t unpacked = -1;
      H5E_BEGIN_TRY { unpacked = H5Lunpack_elink_val(value.data(), value.size(), nullptr, nullptr, nullptr); }
      H5E_END_TRY
      if (unpacked >= 0) return std::nullopt;
    }
    return UserDefinedLink{int(li->type), std::move(value)};
  }
  std::optional<std::string> soft_link(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    const auto li = described_link(f, path);
    if (!li || li->type != H5L_TYPE_SOFT) return std::nullopt;
    std::string target(li->u.val_size, '\0');
    check(H5Lget_val(f.file.get(), path.c_str(), target.data(), target.size(), H5P_DEFAULT),
          "reading soft link '" + path + "'");
    target.resize(std::strlen(target.c_str()));
    return target;
  }
  int64_t creation_order(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    H5L_info_t li;
    check(H5Lget_info(f.file.get(), path.c_str(), &li, f.no_external.get()), "reading link '" + path + "'");
    if (!li.corder_valid)
      throw UsageError("link '" + path + "' in file '" + f.name + "' has no creation order value (its group does not "
                       "track creation order)");
    return li.corder;
  }
  int64_t next_creation_order(FileHandle& fh, const std::string& group) override {
    auto& f = cast(fh);
    H5G_info_t gi;
    check(H5Gget_info_by_name(f.file.get(), group.c_str(), &gi, f.no_external.get()),
          "reading group '" + group + "' in file '" + f.name + "'");
    return gi.max_corder;
  }
  std::vector<std::string> list_in_creation_order(FileHandle& fh, const std::string& group) override {
    auto& f = cast(fh);
    Hid g = checked(H5Gopen2(f.file.get(), group.c_str(), H5P_DEFAULT), H5Gclose, "opening group '" + group + "'");
    Hid gcpl = checked(H5Gget_create_plist(g.get()), H5Pclose, "reading group properties");
    unsigned flags = 0;
    check(H5Pget_link_creation_order(gcpl.get(), &flags), "reading group properties");
    if (!(flags & H5P_CRT_ORDER_TRACKED))
      throw UsageError("group '" + group + "' in file '" + f.name +
                       "' does not record the order its members were created in (it was written without "
                       "creation-order tracking); list it by name");
    return link_names(g.get(), group, H5_INDEX_CRT_ORDER);
  }

  // ---- references: a token is the object's address, which is what HDF5
  // stores for an object reference (hobj_ref_t), so datasets and attributes
  // of references hold the tokens as they are.
  uint64_t object_token(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    hobj_ref_t ref = 0;
    check(H5Rcreate(&ref, f.file.get(), path.c_str(), H5R_OBJECT, -1),
          "making a reference to '" + path + "' in file '" + f.name + "'");
    static_assert(sizeof ref == sizeof(uint64_t), "hobj_ref_t is an 8-byte address");
    return uint64_t(ref);
  }
  std::string object_path(FileHandle& fh, uint64_t token) override {
    auto& f = cast(fh);
    const hobj_ref_t ref = token;
    hid_t obj = H5I_INVALID_HID;
    H5E_BEGIN_TRY { obj = H5Rdereference2(f.file.get(), H5P_DEFAULT, H5R_OBJECT, &ref); }
    H5E_END_TRY;
    if (obj < 0)
      throw NotFoundError("reference " + std::to_string(token) + " names no object of file '" + f.name +
                          "' (the object was removed, or the value is not a reference of this file)");
    Hid held(obj, H5Oclose);
    ssize_t len = H5Iget_name(obj, nullptr, 0);
    if (len <= 0)  // an object no link leads to any more
      throw NotFoundError("reference " + std::to_string(token) + " names an object of file '" + f.name +
                          "' that no path leads to (it was removed)");
    std::string path(std::size_t(len) + 1, '\0');
    H5Iget_name(obj, path.data(), path.size());
    path.resize(std::size_t(len));
    return path;
  }

  std::vector<std::string> list(FileHandle& fh, const std::string& group) override {
    auto& f = cast(fh);
    Hid g = checked(H5Gopen2(f.file.get(), group.c_str(), H5P_DEFAULT), H5Gclose, "opening group '" + group + "'");
    std::vector<std::string> names = link_names(g.get(), group, H5_INDEX_NAME);
    std::sort(names.begin(), names.end());
    return names;
  }

  void create_dataset(FileHandle& fh, const std::string& path, const DatasetSpec& spec) override {
    auto& f = cast(fh);
    Dims max_shape = spec.max_shape.empty() ? spec.shape : spec.max_shape;
    auto dims = to_hsize(spec.shape), maxdims = to_hsize(max_shape);
    Hid space = spec.null_space
                    ? checked(H5Screate(H5S_NULL), H5Sclose, "creating the null dataspace of '" + path + "'")
                    : checked(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxdims.data()), H5Sclose,
                              "creating the dataspace of '" + path + "'");
    Hid dcpl = checked(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "creating dataset properties");
    track_attribute_order(dcpl.get());
    if (!spec.external.empty() || !spec.virtual_map.empty()) return create_mapped_dataset(f, path, spec, space, dcpl);

    if (spec.dtype.has_references() && settings_.driver == "mpio" && kParallelRefsLimited)
      throw UsageError("cannot create dataset '" + path + "' of " + spec.dtype.name() + " in file '" + f.name +
                       "': parallel HDF5 " H5_VERS_INFO " (the hdf5 engine's MPI-IO driver) cannot write datasets of "
                       "object references (attributes of them it can). Use the log engine, or the hdf5 engine's "
                       "driver \"sec2\" or \"core\" on one rank");
    if ((spec.dtype.is_varstring() || spec.dtype.has_variable_length_parts()) && settings_.driver == "mpio")
      throw UsageError("cannot create dataset '" + path + "' of " + spec.dtype.name() + " in file '" + f.name +
                       "': parallel HDF5 (the hdf5 engine's MPI-IO driver) cannot write variable-length data. "
                       "Use fixed-length strings (Datatype::string(N)) or arrays, the log engine, or the hdf5 "
                       "engine's driver \"sec2\" or \"core\" on one rank");
    Dims chunks = hdf5lib::resolve_chunks(path, spec, settings_.chunked_by_default, settings_.chunk_target_bytes);
    if (!chunks.empty()) {
      auto c = to_hsize(chunks);
      check(H5Pset_chunk(dcpl.get(), static_cast<int>(c.size()), c.data()), "setting chunks of '" + path + "'");
    }
    if (!spec.filters.empty()) {
      const std::string where = "dataset '" + path + "' in file '" + f.name + "'";
      hdf5lib::require_applicable(spec.filters, chunks, spec.shape, where);
      hdf5lib::set_filters(dcpl.get(), spec.filters, where);
    }
    // A fill value is written where nothing else is, whatever the knob says.
    H5D_fill_time_t ft = !spec.fill.empty()                ? H5D_FILL_TIME_IFSET
                         : settings_.fill_time == "never"   ? H5D_FILL_TIME_NEVER
                         : settings_.fill_time == "alloc" ? H5D_FILL_TIME_ALLOC
                                                          : H5D_FILL_TIME_IFSET;
    check(H5Pset_fill_time(dcpl.get(), ft), "setting fill time");
    if (!spec.fill.empty())
      check(H5Pset_fill_value(dcpl.get(), memory_type(spec.dtype).get(), spec.fill.data()),
            "setting the fill value of '" + path + "'");
    hid_t id = H5Dcreate2(f.file.get(), path.c_str(), type_to_create(f, spec.dtype, spec.named_type).get(), space.get(),
                          H5P_DEFAULT, dcpl.get(), H5P_DEFAULT);
    if (id < 0) fail("creating dataset '" + path + "' in file '" + f.name + "'");
    f.datasets[path] = Hid(id, H5Dclose);
  }

  // A dataset whose bytes are elsewhere: external storage or a virtual dataset.
  void create_mapped_dataset(Hdf5File& f, const std::string& path, const DatasetSpec& spec, const Hid& space,
                             const Hid& dcpl) {
    const std::string what = "creating dataset '" + path + "' in file '" + f.name + "'";
    if (!spec.external.empty() && !spec.virtual_map.empty())
      throw UsageError(what + ": external storage and a virtual mapping exclude each other");
    if (!spec.max_shape.empty() && spec.max_shape != spec.shape)
      throw UsageError(what + ": a dataset with external storage or a virtual mapping is fixed in size");
    for (const auto& seg : spec.external)
      check(H5Pset_external(dcpl.get(), seg.file.c_str(), static_cast<off_t>(seg.offset), static_cast<hsize_t>(seg.size)),
            what + ": adding external storage in '" + seg.file + "'");
    for (const auto& m : spec.virtual_map) {
      const std::string box = "the box of '" + m.dataset + "'";
      // A box, or `count` blocks `stride` apart (a regular hyperslab); its number of elements.
      auto select = [&](hid_t sp, const Dims& start, const Dims& count, const Dims& stride, const Dims& block,
                        const std::string& which) -> uint64_t {
        const std::size_t rank = std::size_t(H5Sget_simple_extent_ndims(sp));
        if (start.size() != rank || count.size() != rank)
          throw UsageError(what + ": " + box + " " + which + " has a start of rank " + std::to_string(start.size()) +
                           " and a count of rank " + std::to_string(count.size()) + " in a space of rank " +
                           std::to_string(rank));
        if (block.empty() != stride.empty() || (!block.empty() && (block.size() != rank || stride.size() != rank)))
          throw UsageError(what + ": " + box + " " + which + " needs a stride and a block of the rank of its count");
        auto s = to_hsize(start), c = to_hsize(count), t = to_hsize(stride), b = to_hsize(block);
        check(H5Sselect_hyperslab(sp, H5S_SELECT_SET, s.data(), t.empty() ? nullptr : t.data(), c.data(),
                                  b.empty() ? nullptr : b.data()),
              what + ": selecting " + box + " " + which);
        return product(count) * (block.empty() ? 1 : product(block));
      };
      const uint64_t elements = select(space.get(), m.start, m.count, m.stride, m.block, "in the virtual dataset");
      Hid source;
      if (m.source_shape.empty()) {
        if (!m.source_start.empty() || !m.source_count.empty() || !m.block.empty() || !m.source_block.empty() ||
            !m.source_stride.empty())
          throw UsageError(what + ": " + box + " in its source needs the source's shape");
        auto count = to_hsize(m.count);
        source = checked(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose,
                         what + ": the dataspace of '" + m.dataset + "'");
      } else {
        const std::size_t rank = m.source_shape.size();
        const bool blocks = !m.source_block.empty();
        if (m.source_start.size() != rank || m.source_count.size() != rank)
          throw UsageError(what + ": " + box + " in its source has a start or count not of the source's rank " +
                           std::to_string(rank));
        for (std::size_t d = 0; d < rank; ++d) {
          // Where the selection ends in dimension d (the last block's end).
          const uint64_t step = blocks && d < m.source_stride.size() ? m.source_stride[d] : 1;
          const uint64_t width = blocks && d < m.source_block.size() ? m.source_block[d] : 1;
          const uint64_t end = m.source_count[d] == 0 ? m.source_start[d]
                                                      : m.source_start[d] + (m.source_count[d] - 1) * step + width;
          if (end > m.source_shape[d])
            throw UsageError(what + ": " + box + " ends at " + std::to_string(end) + " in dimension " +
                             std::to_string(d) + " of its source, whose extent there is " +
                             std::to_string(m.source_shape[d]));
        }
        auto shape = to_hsize(m.source_shape);
        source = checked(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr), H5Sclose,
                         what + ": the dataspace of '" + m.dataset + "'");
        const uint64_t from =
            select(source.get(), m.source_start, m.source_count, m.source_stride, m.source_block, "in its source");
        if (from != elements)
          throw UsageError(what + ": " + box + " has " + std::to_string(from) + " elements in its source for " +
                           std::to_string(elements) + " of the virtual dataset (same number needed)");
      }
      check(H5Pset_virtual(dcpl.get(), space.get(), m.file.c_str(), m.dataset.c_str(), source.get()),
            what + ": mapping '" + m.dataset + "'");
    }
    H5Sselect_all(space.get());
    if (!spec.fill.empty())
      check(H5Pset_fill_value(dcpl.get(), memory_type(spec.dtype).get(), spec.fill.data()), what + ": fill value");
    hid_t id = H5Dcreate2(f.file.get(), path.c_str(), type_to_create(f, spec.dtype, spec.named_type).get(), space.get(),
                          H5P_DEFAULT, dcpl.get(), H5P_DEFAULT);
    if (id < 0) fail(what);
    f.datasets[path] = Hid(id, H5Dclose);
  }

  // The file type of a new dataset or attribute: the committed datatype
  // `named_type` if given (HDF5 then counts the user in its reference count),
  // else `dtype`'s.
  static Hid type_to_create(Hdf5File& f, const Datatype& dtype, const std::string& named_type) {
    if (named_type.empty()) return file_type(dtype);
    return checked(H5Topen2(f.file.get(), named_type.c_str(), H5P_DEFAULT), H5Tclose,
                   "opening named datatype '" + named_type + "' in file '" + f.name + "'");
  }

  DatasetInfo dataset_info(FileHandle& fh, const std::string& path) override {
    auto& f = cast(fh);
    hid_t ds = dataset(f, path);
    DatasetInfo info;
    Hid type = checked(H5Dget_type(ds), H5Tclose, "reading the type of '" + path + "'");
    info.dtype = datatype_of_hdf5(type.get(), path);
    info.named_type = hdf5lib::committed_type_path(type.get(), "the type of '" + path + "'");
    Hid space = checked(H5Dget_space(ds), H5Sclose, "reading the shape of '" + path + "'");
    Hid dcpl = checked(H5Dget_create_plist(ds), H5Pclose, "reading the properties of '" + path + "'");
    if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) {  // no elements: h5loom's shape {0}, fixed
      info.null_space = true;
      info.shape = info.max_shape = {0};
      read_fill_value(dcpl.get(), path, info);
      return info;
    }
    int n = H5Sget_simple_extent_ndims(space.get());
    if (n < 1)
      throw DatatypeError("dataset '" + path + "' in file '" + f.name +
                          "' is scalar or null; h5loom datasets have at least one dimension");
    std::vector<hsize_t> dims(n), maxdims(n);
    H5Sget_simple_extent_dims(space.get(), dims.data(), maxdims.data());
    info.shape = from_hsize(dims.data(), n);
    info.max_shape = from_hsize(maxdims.data(), n);
    if (H5Pget_layout(dcpl.get()) == H5D_CHUNKED) {
      info.layout = Layout::Chunked;
      std::vector<hsize_t> c(n);
      H5Pget_chunk(dcpl.get(), n, c.data());
      info.chunks = from_hsize(c.data(), n);
      info.filters = hdf5lib::filters_of(dcpl.get(), "dataset '" + path + "'");
    }
    read_fill_value(dcpl.get(), path, info);
    return info;
  }

  static void read_fill_value(hid_t dcpl, const std::string& path, DatasetInfo& info) {
    H5D_fill_value_t defined = H5D_FILL_VALUE_UNDEFINED;
    if (H5Pfill_value_defined(dcpl, &defined) >= 0 && defined == H5D_FILL_VALUE_USER_DEFINED) {
      info.fill.resize(datatype_size(info.dtype));
      check(H5Pget_fill_value(dcpl, memory_type(info.dtype).get(), info.fill.data()),
            "reading the fill value of '" + path + "'");
      if (std::all_of(info.fill.begin(), info.fill.end(), [](unsigned char b) { return b == 0; })) info.fill.clear();
    }
  }

  void extend(FileHandle& fh, const std::string& path, const Dims& new_shape) override {
    auto& f = cast(fh);
    auto dims = to_hsize(new_shape);
    const hid_t d = dataset(f, path);
    const bool shrinks = shrinks_any(d, dims);
    check(H5Dset_extent(d, dims.data()), "extending dataset '" + path + "' in file '" + f.name + "'");
    // HDF5 1.14.5 over MPI-IO leaves the handle's chunk cache stale when a
    // shrink cuts a chunk: reads through it see the discarded values and later
    // writes to that chunk are lost (tests/conformance/test_shrink.cpp). A
    // handle opened after the shrink is right: drop this one.
    if (shrinks) f.datasets.erase(path);
  }

  // Whether `dims` is smaller than dataset `d`'s extent in some dimension.
  static bool shrinks_any(hid_t d, const std::vector<hsize_t>& dims) {
    Hid space(H5Dget_space(d), H5Sclose);
    std::vector<hsize_t> cur(dims.size());
    if (space.get() < 0 || H5Sget_simple_extent_dims(space.get(), cur.data(), nullptr) != int(dims.size())) return true;
    for (std::size_t k = 0; k < dims.size(); ++k)
      if (dims[k] < cur[k]) return true;
    return false;
  }

  // Collective: every rank's queued writes.
  void write_all(Hdf5File& f, const std::vector<engine::Write>& requests) {
    std::vector<const engine::Write*> all;
    for (const auto& r : requests) all.push_back(&r);
    if (f.collective) return write_collectively(f, all, f.dxpl.get());
    // Parallel HDF5 writes filtered (compressed) chunks only with collective
    // transfers: those datasets' writes go that way, the others' independently.
    std::vector<const engine::Write*> filtered, independent;
    for (const auto* r : all) (f.size > 1 && is_filtered(f, r->dataset) ? filtered : independent).push_back(r);
    // write() is a collective flush point: no rank may read what another rank
    // wrote independently before that rank has finished writing it - and a
    // write that failed on one rank fails on all (the agreement is the barrier).
    auto write_mine = [&] { write_independently(f, independent); };
    if (f.size == 1) return write_mine();
    mpi::agree(f.comm, write_mine);
    int any_filtered = filtered.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &any_filtered, 1, MPI_INT, MPI_MAX, f.comm);
    if (any_filtered) write_collectively(f, filtered, f.collective_dxpl.get());
  }

  // This rank's independent writes, in order within each dataset. A dataset's
  // writes that are all runs of its row-major order, of one fixed-size type and
  // none overlapping another, go out as one H5Dwrite (write_runs.hpp).
  void write_independently(Hdf5File& f, const std::vector<const engine::Write*>& writes) {
    std::vector<std::string> order;
    std::map<std::string, std::vector<const engine::Write*>> by_dataset;
    for (const auto* w : writes) {
      auto& list = by_dataset[w->dataset];
      if (list.empty()) order.push_back(w->dataset);
      list.push_back(w);
    }
    for (const auto& name : order) {
      const auto& list = by_dataset[name];
      if (auto runs = gather_runs(f, name, list)) {
        write_gathered(f, name, *runs, f.dxpl.get());
        continue;
      }
      for (const auto* w : list) transfer_write(f, w->dataset, w->selection, w->dtype, w->data(), f.dxpl.get());
    }
  }

  // A rank's writes to one dataset as one transfer: the union of their runs
  // selected in `space`, their data in file order (the union's row-major order).
  struct GatheredRuns {
    Hid space;
    Datatype dtype;
    std::size_t writes = 0;
    std::vector<unsigned char> data;
  };

  // The writes of `list` gathered, if there are several and they allow it (see
  // write_independently); none otherwise.
  std::optional<GatheredRuns> gather_runs(Hdf5File& f, const std::string& path,
                                          const std::vector<const engine::Write*>& list) {
    if (list.size() < 2) return std::nullopt;
    const Datatype dtype = list.front()->dtype;
    if (dtype.is_varstring() || dtype.has_variable_length_parts()) return std::nullopt;
    const hid_t ds = dataset(f, path);
    Hid fspace = checked(H5Dget_space(ds), H5Sclose, "reading the dataspace of '" + path + "'");
    const Dims shape = current_shape(fspace.get());
    struct Piece {
      Run run;
      const unsigned char* data;
    };
    std::vector<Piece> pieces;
    pieces.reserve(list.size());
    for (const auto* w : list) {
      Run run;
      if (!(w->dtype == dtype) || !run_of(w->selection, shape, run)) return std::nullopt;
      if (run.end > run.begin) pieces.push_back({run, w->data()});
    }
    std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.run.begin < b.run.begin; });
    for (std::size_t k = 1; k < pieces.size(); ++k)
      if (pieces[k].run.begin < pieces[k - 1].run.end) return std::nullopt;  // overlapping: the later must win, in order
    GatheredRuns out{Hid(), dtype, list.size(), {}};
    const std::size_t esize = datatype_size(dtype);
    std::vector<Run> runs;  // adjacent ones joined
    for (const auto& p : pieces) {
      out.data.insert(out.data.end(), p.data, p.data + (p.run.end - p.run.begin) * esize);
      if (!runs.empty() && runs.back().end == p.run.begin) runs.back().end = p.run.end;
      else runs.push_back(p.run);
    }
    if (H5Sselect_none(fspace.get()) < 0) fail("clearing a selection of dataset '" + path + "'");
    for (const Run& run : runs)
      for (const auto& [start, count] : boxes_of(run, shape)) {
        const auto s = to_hsize(start), c = to_hsize(count);
        if (H5Sselect_hyperslab(fspace.get(), H5S_SELECT_OR, s.data(), nullptr, c.data(), nullptr) < 0)
          fail("selecting the runs written to dataset '" + path + "' in file '" + f.name + "'");
      }
    out.space = std::move(fspace);
    return out;
  }

  void write_gathered(Hdf5File& f, const std::string& path, const GatheredRuns& g, hid_t dxpl) {
    const hid_t ds = dataset(f, path);
    const hsize_t n = g.data.size() / datatype_size(g.dtype);
    static const char dummy = 0;
    Hid mspace = checked(H5Screate_simple(1, n ? &n : &kOne, nullptr), H5Sclose, "creating a memory space");
    if (n == 0) H5Sselect_none(mspace.get());
    if (H5Dwrite(ds, transfer_type(f, ds, g.dtype, path).get(), mspace.get(), g.space.get(), dxpl,
                 n ? static_cast<const void*>(g.data.data()) : &dummy) < 0)
      fail("writing " + std::to_string(g.writes) + " runs of dataset '" + path + "' in file '" + f.name + "'");
  }
  static constexpr hsize_t kOne = 1;

  bool is_filtered(Hdf5File& f, const std::string& path) {
    auto it = f.filtered.find(path);
    if (it != f.filtered.end()) return it->second;
    Hid dcpl = checked(H5Dget_create_plist(dataset(f, path)), H5Pclose, "reading the properties of '" + path + "'");
    return f.filtered[path] = H5Pget_nfilters(dcpl.get()) > 0;
  }

  // Collective transfers need every rank in every H5Dwrite call, but ranks queue
  // different numbers of writes. Agree on the datasets and on the largest
  // number of writes per dataset; a rank with fewer joins with an empty selection.
  void write_collectively(Hdf5File& f, const std::vector<const engine::Write*>& requests, hid_t dxpl) {
    std::map<std::string, std::vector<const engine::Write*>> mine;
    for (const auto* r : requests) mine[r->dataset].push_back(r);
    std::vector<std::string> names = union_of_names(f, mine);
    std::vector<long long> counts(names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
      auto it = mine.find(names[i]);
      counts[i] = it == mine.end() ? 0 : static_cast<long long>(it->second.size());
    }
    // A rank's runs of a dataset go out as one transfer (write_independently says
    // when); gathering them may fail on one rank (memory, HDF5): then on every rank.
    std::map<std::string, GatheredRuns> gathered;
    mpi::agree(f.comm, [&] {
      for (std::size_t i = 0; i < names.size(); ++i) {
        auto it = mine.find(names[i]);
        if (it == mine.end()) continue;
        if (auto runs = gather_runs(f, names[i], it->second)) {
          gathered.emplace(names[i], std::move(*runs));
          counts[i] = 1;
        }
      }
    });
    MPI_Allreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(counts.size()), MPI_LONG_LONG, MPI_MAX, f.comm);
    for (std::size_t i = 0; i < names.size(); ++i) {
      auto it = mine.find(names[i]);
      auto g = gathered.find(names[i]);
      std::size_t have = it == mine.end() ? 0 : g != gathered.end() ? 1 : it->second.size();
      for (long long k = 0; k < counts[i]; ++k) {
        if (k == 0 && g != gathered.end()) {
          write_gathered(f, names[i], g->second, dxpl);
        } else if (static_cast<std::size_t>(k) < have) {
          const engine::Write* r = it->second[k];
          transfer_write(f, r->dataset, r->selection, r->dtype, r->data(), dxpl);
        } else {
          transfer_write(f, names[i], Selection::none(), Datatype::UInt8, nullptr, dxpl);
        }
      }
    }
  }

  engine::RequestPtr read(FileHandle& fh, const std::string& path, const Selection& sel, Datatype dtype,
                          void* out) override {
    auto& f = cast(fh);
    // Independent reads may fail on one rank only (a damaged chunk): every rank raises it.
    if (!f.collective && f.size > 1) mpi::agree(f.comm, [&] { read_selection(f, path, sel, dtype, out, f.dxpl.get()); });
    else read_selection(f, path, sel, dtype, out, f.dxpl.get());
    return nullptr;
  }

  // This rank alone, with independent transfers (the dataset is open: its
  // metadata was read collectively when the object model first asked for it).
  engine::RequestPtr read_independent(FileHandle& fh, const std::string& path, const Selection& sel, Datatype dtype,
                                      void* out) override {
    auto& f = cast(fh);
    if (collective_metadata_reads() && f.size > 1)  // (one rank: it is every rank)
      throw UsageError("cannot read dataset '" + path + "' of file '" + f.name + "' on one rank alone: the hdf5 " +
                       "engine reads metadata collectively (knob collective_metadata, on by default), so every " +
                       "rank must take part; set {\"hdf5\": {\"collective_metadata\": false}} or read collectively");
    read_selection(f, path, sel, dtype, out, f.independent_dxpl.get());
    return nullptr;
  }

  void read_selection(Hdf5File& f, const std::string& path, const Selection& sel, Datatype dtype, void* out,
                      hid_t dxpl) {
    hid_t ds = dataset(f, path);
    Hid fspace = checked(H5Dget_space(ds), H5Sclose, "reading the dataspace of '" + path + "'");
    Dims shape = current_shape(fspace.get());
    // An empty dataset has no storage address; collective H5Dread would trip over it.
    // Every rank sees the same shape, so all skip together.
    if (product(shape) == 0) return;
    Hid mspace = select(fspace.get(), sel, shape);
    static char dummy;
    // A dataset written with fill time "never" (by anyone) leaves the elements
    // of storage never allocated untouched in the buffer: h5loom reads them as 0.
    if (out && !dtype.is_varstring() && fill_time_is_never(f, path, ds))
      std::memset(out, 0, sel.num_elements(shape) * datatype_size(dtype));
    // Variable-length strings arrive as pointers HDF5 allocates; moved into the caller's strings.
    std::vector<char*> strings(dtype.is_varstring() && out ? sel.num_elements(shape) : 0, nullptr);
    void* into = dtype.is_varstring() && out ? static_cast<void*>(strings.data()) : out;
    // Variable-length parts: allocated with malloc, as the engine interface says (not HDF5's own allocator).
    Hid malloc_dxpl;
    if (dtype.has_variable_length_parts()) {
      malloc_dxpl = checked(dxpl == H5P_DEFAULT ? H5Pcreate(H5P_DATASET_XFER) : H5Pcopy(dxpl), H5Pclose,
                            "copying a transfer property list");
      check(H5Pset_vlen_mem_manager(malloc_dxpl.get(), allocate_part, nullptr, release_part, nullptr),
            "setting the allocator of variable-length data");
      dxpl = malloc_dxpl.get();
    }
    check(H5Dread(ds, transfer_type(f, ds, dtype, path).get(), mspace.get(), fspace.get(), dxpl, into ? into : &dummy),
          "reading " + sel.to_string() + " of dataset '" + path + "' in file '" + f.name + "'");
    if (!strings.empty()) hdf5lib::take_strings(strings, static_cast<std::string*>(out));
  }

  bool has_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    auto& f = cast(fh);
    Hid obj = open_object(f, object);
    htri_t e = H5Aexists(obj.get(), name.c_str());
    if (e < 0) fail("looking up attribute '" + name + "' on '" + object + "'");
    return e > 0;
  }

  void write_attribute(FileHandle& fh, const std::string& object, const std::string& name,
                       const AttributeValue& value) override {
    auto& f = cast(fh);
    Hid obj = open_object(f, object);
    const Hid type = value.named_type().empty() ? Hid() : type_to_create(f, value.dtype(), value.named_type());
    write_attribute_value(obj.get(), name, value, "attribute '" + name + "' on '" + object + "' in file '" + f.name + "'",
                          type.get());
  }

  AttributeValue read_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    auto& f = cast(fh);
    Hid obj = open_object(f, object);
    return read_attribute_value(obj.get(), name, object + "@" + name,
                                "attribute '" + name + "' on '" + object + "' in file '" + f.name + "'");
  }

  std::vector<std::string> list_attributes(FileHandle& fh, const std::string& object) override {
    auto& f = cast(fh);
    Hid obj = open_object(f, object);
    std::vector<std::string> names = attribute_names(obj.get(), H5_INDEX_NAME, "listing attributes of '" + object + "'");
    std::sort(names.begin(), names.end());
    return names;
  }

  void remove_attribute(FileHandle& fh, const std::string& object, const std::string& name) override {
    auto& f = cast(fh);
    Hid obj = open_object(f, object);
    check(H5Adelete(obj.get(), name.c_str()),
          "deleting attribute '" + name + "' of '" + object + "' in file '" + f.name + "'");
  }

  void rename_attribute(FileHandle& fh, const std::string& object, const std::string& from,
                        const std::string& to) override {
    auto& f = cast(fh);
    Hid obj = open_object(f, object);
    check(H5Arename(obj.get(), from.c_str(), to.c_str()),
          "renaming attribute '" + from + "' of '" + object + "' to '" + to + "' in file '" + f.name + "'");
  }

  std::vector<std::string> list_attributes_in_creation_order(FileHandle& fh, const std::string& object) override {
    auto& f = cast(fh);
    Hid obj = open_object(f, object);
    const H5I_type_t type = H5Iget_type(obj.get());
    Hid cpl = checked(type == H5I_DATASET    ? H5Dget_create_plist(obj.get())
                      : type == H5I_DATATYPE ? H5Tget_create_plist(obj.get())
                                             : H5Gget_create_plist(obj.get()),
                      H5Pclose, "reading the creation properties of '" + object + "'");
    unsigned flags = 0;
    check(H5Pget_attr_creation_order(cpl.get(), &flags), "reading the creation properties of '" + object + "'");
    if (!(flags & H5P_CRT_ORDER_TRACKED))
      throw UsageError("'" + object + "' in file '" + f.name +
                       "' does not record the order its attributes were created in (it was written without "
                       "creation-order tracking); list them by name");
    return attribute_names(obj.get(), H5_INDEX_CRT_ORDER,
                           "listing attributes of '" + object + "' in creation order");
  }

 private:
  // The names of an object's attributes in the order of `index`.
  static std::vector<std::string> attribute_names(hid_t obj, H5_index_t index, const std::string& what) {
    std::vector<std::string> names;
    hsize_t idx = 0;
    check(H5Aiterate2(
              obj, index, H5_ITER_INC, &idx,
              [](hid_t, const char* n, const H5A_info_t*, void* data) -> herr_t {
                static_cast<std::vector<std::string>*>(data)->emplace_back(n);
                return 0;
              },
              &names),
          what);
    return names;
  }

  bool collective_metadata_reads() const { return settings_.collective_metadata && settings_.driver == "mpio"; }

  // Objects the engine creates (the root group too) record their attributes'
  // creation order, as they do their links'.
  void track_attribute_order(hid_t ocpl) {
    check(H5Pset_attr_creation_order(ocpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
          "tracking attribute creation order");
  }

  static Hdf5File& cast(FileHandle& fh) { return static_cast<Hdf5File&>(fh); }

  static hid_t dataset(Hdf5File& f, const std::string& path) {
    auto it = f.datasets.find(path);
    if (it != f.datasets.end()) return it->second.get();
    hid_t id = H5Dopen2(f.file.get(), path.c_str(), H5P_DEFAULT);
    if (id < 0) fail("opening dataset '" + path + "' in file '" + f.name + "'");
    return (f.datasets[path] = Hid(id, H5Dclose)).get();
  }

  // The names of a group's links, in the order of `index`.
  static std::vector<std::string> link_names(hid_t g, const std::string& group, H5_index_t index) {
    H5G_info_t gi;
    check(H5Gget_info(g, &gi), "listing group '" + group + "'");
    std::vector<std::string> names;
    for (hsize_t i = 0; i < gi.nlinks; ++i) {
      ssize_t len = H5Lget_name_by_idx(g, ".", index, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
      if (len < 0) fail("listing group '" + group + "'");
      std::string name(static_cast<std::size_t>(len) + 1, '\0');
      H5Lget_name_by_idx(g, ".", index, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT);
      name.resize(static_cast<std::size_t>(len));
      names.push_back(std::move(name));
    }
    return names;
  }

  // Whether every link along `path` exists (H5Lexists needs the intermediate ones).
  static bool links_exist(Hdf5File& f, const std::string& path) {
    for (std::size_t pos = path.find('/', 1);; pos = path.find('/', pos + 1)) {
      std::string prefix = path.substr(0, pos);
      if (H5Lexists(f.file.get(), prefix.c_str(), f.no_external.get()) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return false;
      }
      if (pos == std::string::npos) return true;
    }
  }

  // The information of the link `path`; nullopt if there is none, or if HDF5
  // cannot describe it (a user-defined link whose class's query fails).
  static std::optional<H5L_info_t> described_link(Hdf5File& f, const std::string& path) {
    if (path == "/" || !links_exist(f, path)) return std::nullopt;
    H5L_info_t li;
    herr_t st = -1;
    H5E_BEGIN_TRY { st = H5Lget_info(f.file.get(), path.c_str(), &li, f.no_external.get()); }
    H5E_END_TRY;
    if (st < 0) return std::nullopt;
    return li;
  }

  // Whether `path` is a hard link in a group to that group itself.
  bool is_link_to_own_group(FileHandle& fh, const std::string& path) {
    auto& f = cast(fh);
    const auto slash = path.rfind('/');
    if (path == "/" || slash == std::string::npos) return false;
    H5L_info_t li;
    herr_t st = -1;
    H5E_BEGIN_TRY { st = H5Lget_info(f.file.get(), path.c_str(), &li, f.no_external.get()); }
    H5E_END_TRY;
    if (st < 0 || li.type != H5L_TYPE_HARD) return false;
    const std::string group = slash == 0 ? "/" : path.substr(0, slash);
    return object_token(fh, path) == object_token(fh, group);
  }

  static Hid open_object(Hdf5File& f, const std::string& path) {
    return checked(H5Oopen(f.file.get(), path.c_str(), H5P_DEFAULT), H5Oclose,
                   "opening '" + path + "' in file '" + f.name + "'");
  }

  static bool fill_time_is_never(Hdf5File& f, const std::string& path, hid_t ds) {
    auto it = f.fill_never.find(path);
    if (it != f.fill_never.end()) return it->second;  // reads come in loops: ask HDF5 once
    Hid dcpl = checked(H5Dget_create_plist(ds), H5Pclose, "reading dataset properties");
    H5D_fill_time_t ft = H5D_FILL_TIME_IFSET;
    return f.fill_never[path] = H5Pget_fill_time(dcpl.get(), &ft) >= 0 && ft == H5D_FILL_TIME_NEVER;
  }

  static Dims current_shape(hid_t space) {
    if (H5Sget_simple_extent_type(space) == H5S_NULL) return {0};  // no elements
    int n = H5Sget_simple_extent_ndims(space);
    std::vector<hsize_t> dims(std::max(n, 0));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    return from_hsize(dims.data(), n);
  }

  static void* allocate_part(std::size_t size, void*) { return std::malloc(size); }
  static void release_part(void* p, void*) { std::free(p); }

  // The memory type of a transfer of `dtype` (the object model has checked it
  // is the dataset's in memory): numbers in the host's order, and strings -
  // members and array elements too - padded as the dataset's, so that HDF5
  // copies their bytes as they are (as every engine does) instead of re-padding them.
  // (Asked once per dataset: reads and writes come in loops.)
  static Hid transfer_type(Hdf5File& f, hid_t ds, const Datatype& dtype, const std::string& path) {
    if (dtype.is_scalar() || dtype.is_varstring() || dtype.is_reference() || dtype.is_enum()) return memory_type(dtype);
    auto it = f.transfer_types.find(path);
    if (it == f.transfer_types.end()) {
      Hid stored = checked(H5Dget_type(ds), H5Tclose, "reading the type of '" + path + "'");
      it = f.transfer_types.emplace(path, memory_type(datatype_of_hdf5(stored.get(), path))).first;
    }
    return Hid(it->second.get(), nullptr);  // (the file's cache keeps it)
  }

  void transfer_write(Hdf5File& f, const std::string& path, const Selection& sel, Datatype dtype, const void* data,
                      hid_t dxpl) {
    hid_t ds = dataset(f, path);
    Hid fspace = checked(H5Dget_space(ds), H5Sclose, "reading the dataspace of '" + path + "'");
    Dims shape = current_shape(fspace.get());
    if (product(shape) == 0) return;  // as in read(): nothing to write, no storage
    Hid mspace = select(fspace.get(), sel, shape);
    static const char dummy = 0;
    // A rank with nothing to write joins with the dataset's own type: no
    // conversion that could fail on it alone (a string dataset has none from numbers).
    Hid type = data ? transfer_type(f, ds, dtype, path) : checked(H5Dget_type(ds), H5Tclose, "reading the type of '" + path + "'");
    std::vector<const char*> strings;  // variable-length strings: HDF5 takes pointers
    if (data && dtype.is_varstring()) {
      strings = hdf5lib::string_pointers(static_cast<const std::string*>(data), sel.num_elements(shape));
      data = strings.data();
    }
    // (the message only on failure: a rank may make thousands of these calls per flush)
    if (H5Dwrite(ds, type.get(), mspace.get(), fspace.get(), dxpl, data ? data : &dummy) < 0)
      fail("writing " + sel.to_string() + " of dataset '" + path + "' in file '" + f.name + "'");
  }

  // Every dataset name that any rank has writes for, in one agreed (sorted) order.
  static std::vector<std::string> union_of_names(Hdf5File& f,
                                                 const std::map<std::string, std::vector<const engine::Write*>>& mine) {
    std::string packed;
    for (const auto& [name, _] : mine) packed += name + '\0';
    std::set<std::string> names;
    for (const auto& theirs : mpi::allgather_strings(f.comm, packed))
      for (std::size_t i = 0; i < theirs.size();) {
        std::size_t end = theirs.find('\0', i);
        names.insert(theirs.substr(i, end - i));
        i = end + 1;
      }
    return {names.begin(), names.end()};
  }

  Settings settings_;
};

}  // namespace

}  // namespace h5loom::hdf5

namespace h5loom::engine {
std::unique_ptr<Engine> make_hdf5_engine(Knobs& knobs) {
  return std::make_unique<hdf5::Hdf5Engine>(hdf5::Settings::from(knobs));
}
}  // namespace h5loom::engine
