// Files: H5Fcreate/H5Fopen become h5loom::File::create/open over the
// communicator of the file access properties; one h5loom file per file and
// process, shared by every HDF5 handle of it (as native HDF5 shares them).
#include <limits.h>
#include <unistd.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "core/mpi_util.hpp"
#include "h5loom/engine.hpp"
#include "vol/request.hpp"
#include "vol/vol.hpp"

namespace h5loom::vol {

namespace {

// Open files by canonical path: a second H5Fopen of an open file shares it.
std::map<std::string, std::weak_ptr<OpenFile>>& registry() {
  static std::map<std::string, std::weak_ptr<OpenFile>> files;
  return files;
}

unsigned long next_fileno = 1;

// The absolute path with symbolic links resolved (of the directory if the file does not exist yet).
std::string canonical(const std::string& name) {
  char buf[PATH_MAX];
  if (::realpath(name.c_str(), buf)) return buf;
  const auto slash = name.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : name.substr(0, slash);
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  if (::realpath(dir.c_str(), buf)) return std::string(buf) + (std::strcmp(buf, "/") == 0 ? "" : "/") + base;
  return name;
}

// The communicator of the file access properties: the MPI-IO driver's, else
// this process alone. MPI is initialised first if the program did not (a
// serial program, h5dump), as h5loom::File does.
struct Communicator {
  MPI_Comm comm = MPI_COMM_SELF;
  bool owned = false;
  explicit Communicator(hid_t fapl) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    ensure_mpi();
    static bool at_exit = false;
    if (!initialized && !at_exit) {
      // h5loom finalises MPI at exit; files still open must close before
      // (handlers run in reverse order of registration).
      std::atexit(close_all_files);
      at_exit = true;
    }
    if (fapl >= 0 && H5Pget_driver(fapl) == H5FD_MPIO) {
      MPI_Info info = MPI_INFO_NULL;
      if (H5Pget_fapl_mpio(fapl, &comm, &info) < 0) throw UsageError("cannot read the MPI-IO properties of the file access property list");
      if (info != MPI_INFO_NULL) MPI_Info_free(&info);
      owned = true;
    }
  }
  ~Communicator() {
    if (owned) MPI_Comm_free(&comm);
  }
};

// The engine configuration for a file: the connector's, where the hdf5
// engine takes native HDF5's defaults unless the configuration chose otherwise:
//  * an application without MPI-IO (a serial program: sec2, core, ... on its
//    file access properties) gets the one-process driver "sec2" - as native
//    HDF5 would write it (and variable-length data, which HDF5's MPI-IO path
//    cannot write, works);
//  * over MPI-IO, metadata is read independently ("collective_metadata":
//    false, HDF5's default), so that a rank can read alone (H5Dread with
//    independent transfers, the default), as HDF5 applications do.
std::string config_for(const std::string& config, bool mpio) {
  if (config.empty()) return config;
  nlohmann::json j;
  if (config.find('{') == std::string::npos) {
    if (config != "hdf5") return config;
    j = {{"engine", "hdf5"}};
  } else {
    j = nlohmann::json::parse(config, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || j.value("engine", std::string("hdf5")) != "hdf5") return config;
  }
  if (j.contains("hdf5") && !j["hdf5"].is_object()) return config;  // the engine names the mistake
  auto& knobs = j["hdf5"];
  if (!mpio && !knobs.contains("driver")) knobs["driver"] = "sec2";
  if (mpio && !knobs.contains("collective_metadata")) knobs["collective_metadata"] = false;
  return j.dump();
}

// `config` with the knob "userblock" of its engine set to `size` (HDF5's user
// block, from the application's file creation properties).
std::string with_userblock(const std::string& config, uint64_t size) {
  std::string c = config;
  if (c.empty())
    if (const char* env = std::getenv("H5LOOM_ENGINE")) c = env;
  if (c.empty()) c = engine::kDefaultEngine;
  nlohmann::json j;
  if (c.find('{') == std::string::npos) {
    j = {{"engine", c}};
  } else {
    j = nlohmann::json::parse(c, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return config;  // the engine names the mistake
  }
  const std::string engine = j.value("engine", std::string(engine::kDefaultEngine));
  if (j.contains(engine) && !j[engine].is_object()) return config;
  j[engine]["userblock"] = size;
  return j.dump();
}

// What the engine stack of an open file declares (with its knobs).
void learn_engine(OpenFile& f) {
  auto has = [&](const char* g) { return f.file.supports(g); };
  f.links = has("links");
  f.order = has("order");
  f.fill = has("fill");
  f.references = has("references");
  f.attribute_edit = has("attribute_edit");
  f.independent_read = has("independent_read");
  f.named_types = has("named_types") && offers_named_types(f.file.engine_name());
  f.hard_links = f.links && f.references && has("hard_links");
  f.external_links = f.links && has("external_links");
  f.user_defined_links = f.links && has("user_defined_links");
  f.filters = has("filters");
  f.reference_counts = has("reference_counts");
}

void* make_file(File file, const std::string& name, const std::string& key, unsigned intent, hid_t fcpl, hid_t fapl) {
  auto f = std::make_shared<OpenFile>(std::move(file));
  f->name = name;
  f->key = key;
  f->intent = intent;
  f->fileno = next_fileno++;
  f->fapl = H5Pcopy(fapl >= 0 && fapl != H5P_DEFAULT ? fapl : H5P_FILE_ACCESS_DEFAULT);
  f->fcpl = H5Pcopy(fcpl >= 0 && fcpl != H5P_DEFAULT ? fcpl : H5P_FILE_CREATE_DEFAULT);
  learn_engine(*f);
  registry()[key] = f;
  return new Object(H5I_FILE, f, "/");
}

}  // namespace

std::string config_of(hid_t fapl) {
  void* info = nullptr;
  if (fapl < 0 || H5Pget_vol_info(fapl, &info) < 0 || !info) {
    H5Eclear2(H5E_DEFAULT);
    return {};
  }
  std::string config = static_cast<Info*>(info)->config;
  delete static_cast<Info*>(info);  // a copy made by the info class's copy callback (plugin.cpp)
  return config;
}

void* file_create(const char* name, unsigned flags, hid_t fcpl, hid_t fapl, hid_t, void**) {
  return H5LOOM_VOL_GUARD((void*)nullptr, {
    const std::string key = canonical(name);
    if (auto it = registry().find(key); it != registry().end() && !it->second.expired())
      throw UsageError(std::string("cannot create file '") + name + "': it is open (close it first)");
    if (flags & H5F_ACC_SWMR_WRITE) unsupported("SWMR writing (H5F_ACC_SWMR_WRITE)");
    Communicator comm(fapl);
    FileOptions options;
    options.comm = comm.comm;
    options.engine = config_for(config_of(fapl), comm.owned);
    hsize_t userblock = 0;
    if (fcpl != H5P_DEFAULT && fcpl >= 0 && H5Pget_userblock(fcpl, &userblock) < 0) userblock = 0;
    if (userblock) options.engine = with_userblock(options.engine, userblock);
    KeepErrorPrinting keep;
    File file = (flags & H5F_ACC_EXCL) ? File::create_exclusive(name, options) : File::create(name, options);
    void* root = make_file(std::move(file), name, key, H5F_ACC_RDWR, fcpl, fapl);
    static_cast<Object*>(root)->file->created = true;
    return root;
  });
}

void* file_open(const char* name, unsigned flags, hid_t fapl, hid_t, void**) {
  return H5LOOM_VOL_GUARD((void*)nullptr, {
    const std::string key = canonical(name);
    const bool write = flags & H5F_ACC_RDWR;
    if (flags & H5F_ACC_SWMR_WRITE) unsupported("SWMR writing (H5F_ACC_SWMR_WRITE)");
    if (auto it = registry().find(key); it != registry().end()) {
      if (auto open = it->second.lock()) {
        if (write && !(open->intent & H5F_ACC_RDWR))
          throw UsageError(std::string("cannot open file '") + name + "' for writing: it is open read-only");
        return (void*)new Object(H5I_FILE, open, "/");
      }
    }
    Communicator comm(fapl);
    FileOptions options;
    options.comm = comm.comm;
    options.engine = config_for(config_of(fapl), comm.owned);
    KeepErrorPrinting keep;
    File file = File::open(name, write ? Mode::ReadWrite : Mode::Read, options);
    const uint64_t userblock = file.userblock();
    void* root = make_file(std::move(file), name, key, write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT, fapl);
    // (h5loom keeps no other creation property of a file)
    if (userblock) H5Pset_userblock(static_cast<Object*>(root)->file->fcpl, userblock);
    return root;
  });
}

std::shared_ptr<OpenFile> open_linked_file(const OpenFile& from, const std::string& name) {
  std::string path = name;
  if (!name.empty() && name[0] != '/') {
    const auto slash = from.name.rfind('/');
    const std::string beside = slash == std::string::npos ? name : from.name.substr(0, slash + 1) + name;
    if (::access(beside.c_str(), F_OK) == 0) path = beside;
  }
  std::unique_ptr<Object> root(static_cast<Object*>(file_open(path.c_str(), from.intent, from.fapl, H5P_DEFAULT, nullptr)));
  if (!root)
    throw NotFoundError("cannot open file '" + path + "', which an external link of file '" + from.name + "' names");
  return root->file;
}

namespace {

Object& as_object(void* obj) { return *static_cast<Object*>(obj); }

// H5Fget_obj_count / H5Fget_obj_ids: HDF5's identifiers whose objects are of this file.
struct Census {
  const OpenFile* file;
  uint64_t opener;  // 0: any (else H5F_OBJ_LOCAL: opened through this file handle)
  hid_t connector;
  std::vector<hid_t> ids;
  // The engine route's live objects: identifiers of native-route files have
  // the same connector, and their objects are HDF5's own.
  std::set<const void*> ours;
};

herr_t census_one(hid_t id, void* data) {
  auto& c = *static_cast<Census*>(data);
  hid_t conn = H5VLget_connector_id(id);
  if (conn < 0) {
    H5Eclear2(H5E_DEFAULT);
    return 0;
  }
  int cmp = 1;
  H5VLcmp_connector_cls(&cmp, conn, c.connector);
  H5VLclose(conn);
  if (cmp != 0) return 0;
  auto* obj = static_cast<Object*>(H5VLobject(id));
  if (obj && c.ours.count(obj) && (!c.file || obj->file.get() == c.file) && (!c.opener || obj->opener == c.opener))
    c.ids.push_back(id);
  return 0;
}

std::vector<hid_t> census(const Object* o, unsigned types) {
  Census c{o ? o->file.get() : nullptr, o && (types & H5F_OBJ_LOCAL) ? o->opener : 0,
           H5VLget_connector_id_by_name(kName), {}, {}};
  if (c.connector < 0) throw UsageError("the h5loom connector is not registered");
  for (auto& [key, weak] : registry())
    if (auto f = weak.lock())
      for (auto& [serial, live] : f->live) c.ours.insert(live);
  const std::pair<unsigned, H5I_type_t> kinds[] = {{H5F_OBJ_FILE, H5I_FILE},
                                                   {H5F_OBJ_DATASET, H5I_DATASET},
                                                   {H5F_OBJ_GROUP, H5I_GROUP},
                                                   {H5F_OBJ_DATATYPE, H5I_DATATYPE},
                                                   {H5F_OBJ_ATTR, H5I_ATTR}};
  for (const auto& [bit, type] : kinds)
    if (types & bit) H5Iiterate(type, census_one, &c);
  H5VLclose(c.connector);
  return c.ids;
}

herr_t file_get(void* obj, H5VL_file_get_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& o = as_object(obj);
    OpenFile& f = *o.file;
    switch (args->op_type) {
      case H5VL_FILE_GET_CONT_INFO: {
        auto* info = args->args.get_cont_info.info;
        if (info->version != H5VL_CONTAINER_INFO_VERSION) throw UsageError("unknown container info version");
        info->feature_flags = 0;
        info->token_size = sizeof(uint64_t);
        info->blob_id_size = 0;
        return herr_t(0);
      }
      case H5VL_FILE_GET_FAPL:
        if ((args->args.get_fapl.fapl_id = H5Pcopy(f.fapl)) < 0) throw UsageError("cannot copy the file access properties");
        return herr_t(0);
      case H5VL_FILE_GET_FCPL:
        if ((args->args.get_fcpl.fcpl_id = H5Pcopy(f.fcpl)) < 0) throw UsageError("cannot copy the file creation properties");
        return herr_t(0);
      case H5VL_FILE_GET_FILENO: *args->args.get_fileno.fileno = f.fileno; return herr_t(0);
      case H5VL_FILE_GET_INTENT: *args->args.get_intent.flags = f.intent; return herr_t(0);
      case H5VL_FILE_GET_NAME: {
        auto& a = args->args.get_name;
        if (a.buf && a.buf_size > 0) {
          const size_t n = std::min(f.name.size(), a.buf_size - 1);
          std::memcpy(a.buf, f.name.data(), n);
          a.buf[n] = '\0';
        }
        if (a.file_name_len) *a.file_name_len = f.name.size();
        return herr_t(0);
      }
      case H5VL_FILE_GET_OBJ_COUNT:
        *args->args.get_obj_count.count = census(&o, args->args.get_obj_count.types).size();
        return herr_t(0);
      case H5VL_FILE_GET_OBJ_IDS: {
        auto& a = args->args.get_obj_ids;
        auto ids = census(&o, a.types);
        const size_t n = std::min(ids.size(), a.max_objs);
        std::copy(ids.begin(), ids.begin() + n, a.oid_list);
        *a.count = n;
        return herr_t(0);
      }
    }
    unsupported("file get operation " + std::to_string(int(args->op_type)));
  });
}

herr_t file_specific(void* obj, H5VL_file_specific_args_t* args, hid_t, void** req) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    switch (args->op_type) {
      case H5VL_FILE_FLUSH: {
        // H5Fflush_async (req set): an event-set request if the flush completes later.
        Object& o = as_object(obj);
        if (o.file->intent & H5F_ACC_RDWR) hand_over(o.h5().flush_async(), req, "H5Fflush_async");
        return herr_t(0);
      }
      case H5VL_FILE_REOPEN:
        *args->args.reopen.file = new Object(H5I_FILE, as_object(obj).file, "/");
        return herr_t(0);
      case H5VL_FILE_IS_ACCESSIBLE: {
        // Asked of every plugin when a native open fails: cheap, never an error.
        bool yes = false;
        try {
          KeepErrorPrinting keep;
          yes = !engine::detect_engine(args->args.is_accessible.filename).empty();
        } catch (...) {
        }
        *args->args.is_accessible.accessible = yes;
        return herr_t(0);
      }
      case H5VL_FILE_DELETE: {
        // Collective over the file access properties' communicator (as native
        // HDF5's H5Fdelete with MPI-IO): rank 0 removes, every rank reports.
        const std::string name = args->args.del.filename;
        Communicator comm(args->args.del.fapl_id);
        int rank = 0;
        MPI_Comm_rank(comm.comm, &rank);
        KeepErrorPrinting keep;
        mpi::agree(comm.comm, [&] {
          if (rank != 0) return;
          const std::string engine_name = engine::detect_engine(name);
          if (engine_name.empty()) throw NotFoundError("cannot delete file '" + name + "': no engine's file is there");
          engine::storage_engine(engine_name)->remove(name);
        });
        return herr_t(0);
      }
      case H5VL_FILE_IS_EQUAL:
        *args->args.is_equal.same_file =
            as_object(obj).file.get() == static_cast<Object*>(args->args.is_equal.obj2)->file.get();
        return herr_t(0);
    }
    unsupported("file operation " + std::to_string(int(args->op_type)));
  });
}

herr_t file_optional(void*, H5VL_optional_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    unsupported("native file operation " + std::to_string(args->op_type) + " (H5Fget_filesize, H5Fget_info, ...)");
    return herr_t(0);
  });
}

herr_t file_close(void* obj, hid_t, void** req) { return release(static_cast<Object*>(obj), req); }

}  // namespace

herr_t release(Object* o, void** req) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    // The file's last object: closing now (collective) reports errors to the
    // caller. If that fails, HDF5 keeps the identifier and may close it again
    // (at exit): the object stays until then, and the file, closed either way
    // (File::close), closes quietly the second time.
    drop_parked(*o);  // an anonymous dataset never named
    if (o->file.use_count() == 1) o->file->close(req);
    delete o;
    return herr_t(0);
  });
}

OpenFile::~OpenFile() {
  try {
    close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "h5loom VOL connector: closing file '%s': %s\n", name.c_str(), e.what());
  }
}

void OpenFile::close(void** req) {
  if (auto it = registry().find(key); it != registry().end() && (it->second.expired() || it->second.lock().get() == this))
    registry().erase(it);
  if (fapl >= 0) H5Pclose(fapl);
  if (fcpl >= 0) H5Pclose(fcpl);
  fapl = fcpl = H5I_INVALID_HID;
  for (auto& [path, gcpl] : group_plists) H5Pclose(gcpl);
  group_plists.clear();
  if (!file.is_open()) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    std::fprintf(stderr, "h5loom VOL connector: file '%s' was still open when MPI was finalised; it is not closed\n",
                 name.c_str());
    return;
  }
  KeepErrorPrinting keep;
  try {
    drop_parking(*this);  // objects deleted while open, never linked again
  } catch (...) {
    file.close();  // the file closes either way; the first error is reported
    throw;
  }
  if (req) hand_over(file.close_async(), req, "H5Fclose_async");  // the request holds the file
  else file.close();
}

void close_all_files() {
  complete_pending();
  std::vector<std::shared_ptr<OpenFile>> open;
  for (auto& [key, weak] : registry())
    if (auto f = weak.lock()) open.push_back(f);
  for (auto& f : open) {
    try {
      f->close();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "h5loom VOL connector: closing file '%s' at exit: %s\n", f->name.c_str(), e.what());
    }
  }
}

const H5VL_file_class_t kFileClass = {file_create, file_open, file_get, file_specific, file_optional, file_close};

}  // namespace h5loom::vol
