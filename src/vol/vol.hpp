// h5loom as an HDF5 VOL connector: the state every part of the connector
// shares. See docs/vol.md for the design.
//
// A file takes one of two routes, chosen when it is created or opened
// (route.cpp):
//  * the engine route (this header, most of src/vol/): the connector is
//    terminal, every HDF5 call on the file becomes calls of h5loom's object
//    model (h5loom::File, Group, Dataset), which checks arguments, agrees
//    across ranks and drives whatever engine and wrapper stack the
//    configuration names. An HDF5 object handle (what HDF5 keeps behind a
//    hid_t) is an Object: the shared open file and the object's absolute path.
//  * the native route (native_route.hpp): the configuration is the plain
//    hdf5 engine, whose files are native HDF5, so every call passes through to
//    HDF5's own native connector.
#pragma once

#include <hdf5.h>
#include <H5VLconnector.h>
#include <H5VLconnector_passthru.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "h5loom/h5loom.hpp"

namespace h5loom::vol {

// The connector's name, registered with HDF5 and used in HDF5_VOL_CONNECTOR.
inline constexpr const char* kName = "h5loom";
// Its value: in the range HDF5 leaves to connectors nobody registered with The
// HDF Group (256-511 are for testing and private use).
inline constexpr H5VL_class_value_t kValue = 539;
inline constexpr unsigned kVersion = 1;

// The connector's info: the engine configuration after the connector's name in
// HDF5_VOL_CONNECTOR ("hdf5", or JSON). Empty: $H5LOOM_ENGINE, else for an
// existing file the engine that wrote it, else hdf5 (as for h5loom::File).
struct Info {
  std::string config;
};

struct Object;

// What every handle the connector gives HDF5 starts with: the route that
// serves it. Callbacks look at it first (route.cpp) and hand the call on.
enum class Route : uint32_t { Engine = 0x6c6f6f6d, Native = 0x6e617476 };
struct Handle {
  // Zeros where HDF5 looks for a native object's location and name. HDF5
  // 1.14.5 reads the object of every open group, dataset and attribute
  // identifier as its own native structure in some native operations -
  // H5Ldelete and H5Lmove update the names of open objects
  // (H5G__name_replace_cb), H5Fget_obj_count compares their files - whatever
  // connector made them, so a native-route file's link deletion would follow
  // an engine-route handle's bytes as pointers. Those structures keep the
  // object's file and name in their first 48 bytes: zeros make a handle look
  // like a native object of no file and no name, which they skip.
  const std::array<uint64_t, 8> native_inert{};
  const Route route;
  explicit Handle(Route r) : route(r) {}
};
// The handle behind a connector object (HDF5 gives them back as void*).
inline const Handle& handle_of(const void* obj) { return *static_cast<const Handle*>(obj); }
inline bool on_native_route(const void* obj) { return obj && handle_of(obj).route == Route::Native; }

// One open h5loom file, shared by every HDF5 object of it (and by every
// H5Fopen of the same file in this process, as native HDF5 shares them).
struct OpenFile {
  File file;
  std::string name;       // as the application gave it
  std::string key;        // the canonical path: the registry's key
  unsigned intent = 0;    // H5F_ACC_RDWR or H5F_ACC_RDONLY
  hid_t fapl = H5I_INVALID_HID, fcpl = H5I_INVALID_HID;  // copies, for H5Fget_access_plist / create_plist
  bool created = false;   // by this process (fcpl is then what the file was created with)
  unsigned long fileno = 0;
  // What the engine declares (its conformance groups).
  bool links = false, order = false, fill = false, references = false, attribute_edit = false,
       independent_read = false, named_types = false, hard_links = false, external_links = false,
       user_defined_links = false, filters = false,
       reference_counts = false;
  // The creation properties groups were created with in this session, by
  // path (h5loom keeps none in the file; H5Gget_create_plist returns them).
  std::map<std::string, hid_t> group_plists;
  // Tokens handed out for objects when the engine has no references: token -> path.
  std::map<uint64_t, std::string> path_tokens;
  // Every Object of this file that HDF5 holds, in the order they were made
  // (the same on every rank: objects are opened collectively), so that a move
  // renames them and handles of datasets are renewed after links change.
  std::map<uint64_t, Object*> live;
  uint64_t next_serial = 1;
  uint64_t next_parked = 1;  // names of anonymous datasets kept until H5Olink (Object::Anonymous)

  explicit OpenFile(File f) : file(std::move(f)) {}
  ~OpenFile();  // closes the file (collective), reporting errors on stderr
  // Closes now; errors become exceptions. Later calls of the destructor do nothing.
  // With `req` (an H5Fclose_async) the close begins now and completes at the
  // event set's wait (File::close_async).
  void close(void** req = nullptr);
};

// What the connector hands HDF5 for a file, group, dataset or attribute on
// the engine route. (Handle is its only base, at offset 0: the void* HDF5
// holds is both.)
struct Object : Handle {
  H5I_type_t type = H5I_BADID;
  std::shared_ptr<OpenFile> file;
  std::string path;                  // absolute; for an attribute: of the object that carries it
                                     // (empty for an anonymous object not linked yet)
  std::string attr;                  // attribute name (type H5I_ATTR)
  std::optional<Dataset> dataset;    // type H5I_DATASET: the object model's handle (writes need it)
  // An object made anonymously (H5Gcreate_anon, H5Dcreate_anon,
  // H5Tcommit_anon): what to create when H5Olink first names it (link.cpp);
  // then this is reset. Until then its path is empty and it holds nothing.
  struct Anonymous {
    DatasetSpec dataset;  // H5I_DATASET
    Datatype dtype;       // H5I_DATATYPE
    // A dataset of an engine with links is made at once under this hidden
    // path, so that it holds data before H5Olink names it (h5py's f[name] =
    // array writes first): H5Olink moves it, closing it unnamed deletes it.
    std::string parked;
  };
  std::optional<Anonymous> anonymous;
  // Its last link was deleted while it was open: it has no name (H5Iget_name
  // gives none). With hard links it is kept under kParkedGroup until linked
  // again or the file closes (delete_link); without, it went with the link.
  bool unlinked = false;
  uint64_t serial = 0;
  // The file handle (its serial) this object was opened through: H5Fget_obj_count's H5F_OBJ_LOCAL.
  uint64_t opener = 0;
  // Access properties this handle was opened with, creation properties of an
  // attribute or dataset this handle created (HDF5 returns them; h5loom keeps
  // none in the file). H5I_INVALID_HID: defaults.
  hid_t access_plist = H5I_INVALID_HID, create_plist = H5I_INVALID_HID;

  // Registers itself with the file (and opens the dataset handle for
  // H5I_DATASET). A file object is its own opener.
  Object(H5I_type_t t, std::shared_ptr<OpenFile> f, std::string p);
  // An object reached from `from` (same file, same opener).
  Object(H5I_type_t t, const Object& from, std::string p);
  ~Object();
  // Keeps a copy of `plist` (unless it is H5P_DEFAULT) as this handle's access / creation properties.
  void keep_access(hid_t plist);
  void keep_create(hid_t plist);
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  File& h5() const { return file->file; }
  // The dataset handle of an H5I_DATASET object; UsageError for an anonymous one not linked yet.
  Dataset& ds();
  // H5Olink of an anonymous object: creates it at `path` (collective).
  void name_anonymous(const std::string& path);
};
// Before a link at `path` moves or goes (collective): the tokens of the open
// objects at or below it (by serial; "/": every open object), with which
// links_changed finds them again - at another name, or where the move took
// them through another name. Empty for engines without hard links.
std::map<uint64_t, uint64_t> open_objects_below(OpenFile& f, const std::string& path);
// Where anonymous datasets wait for H5Olink (Object::Anonymous::parked), and
// objects whose last link was deleted while open wait for a new one (delete_link).
inline constexpr const char* kParkedGroup = "/_h5loom_anonymous";
// An anonymous dataset released unnamed: its parked object goes (collective).
void drop_parked(Object& o);
// Deletes the link `path` (collective). An object that loses its last name
// while it (or something below it) is open on some rank is kept, as HDF5
// keeps it until closed: the link moves under kParkedGroup, where its handles
// stay usable without a name (H5Iget_name gives none) until relink_parked
// names it again or the file closes (drop_parking).
void delete_link(OpenFile& f, const std::string& path);
// H5Lcreate_hard/H5Olink of an open object delete_link kept: it gets `path` (collective).
void relink_parked(Object& o, const std::string& path);
// At close (collective): what is still parked goes.
void drop_parking(OpenFile& f);
// After links moved or went (collective): objects below `from` now live below
// `to` (empty: they went); an object `kept` (from open_objects_below) names
// whose path no longer leads to it is found by its token, else has no name;
// and every dataset handle is opened again.
void links_changed(OpenFile& f, const std::string& from, const std::string& to,
                   const std::map<uint64_t, uint64_t>& kept = {});

// ---- errors (errors.cpp) ----------------------------------------------------
// Registers the connector's error class with HDF5 (initialize) / releases it.
void register_errors();
void unregister_errors();
// Pushes `message` onto HDF5's error stack under the connector's class, so the
// application sees it when the HDF5 call fails.
void push_error(const char* function, const std::string& message);
// Runs `fn`; an exception becomes an HDF5 error (pushed) and `failure` is
// returned. Every callback goes through this: no exception reaches HDF5.
template <class R, class Fn>
R guard(const char* function, R failure, Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& e) {
    push_error(function, e.what());
  } catch (...) {
    push_error(function, "unknown error");
  }
  return failure;
}
#define H5LOOM_VOL_GUARD(failure, ...) ::h5loom::vol::guard(__func__, failure, [&]() __VA_ARGS__)
// An error the connector raises itself (an HDF5 feature h5loom does not have).
[[noreturn]] void unsupported(const std::string& what);
// Keeps HDF5's automatic error printing as the application set it across code
// that may change it (the hdf5 engine turns it off for its own calls).
class KeepErrorPrinting {
 public:
  KeepErrorPrinting();
  ~KeepErrorPrinting();

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// ---- names and locations (objects.cpp) ----------------------------------------
// The absolute path of `name` relative to the object at `base` ("." is base).
std::string join(const std::string& base, const std::string& name);
std::string parent_of(const std::string& path);
std::string last_name(const std::string& path);  // "/" for the root
// The absolute path that `loc` designates from `obj` (by self, name, index or token).
std::string locate(const Object& obj, const H5VL_loc_params_t* loc);
// Where `path` of `f` leads with the external links on it followed (as HDF5
// follows them when opening an object): the file - opened through the
// connector, as `f` is - and the path there. `path` itself where none is on it.
struct Located {
  std::shared_ptr<OpenFile> file;
  std::string path;
};
Located follow_external_links(const std::shared_ptr<OpenFile>& f, const std::string& path);
// A new object opened from `from` at `at`: in from's file, opened through the
// same file identifier as `from` (H5F_OBJ_LOCAL); in a linked file, its own.
Object* opened_object(H5I_type_t type, const Object& from, const Located& at);
// The file an external link of `from` names (file.cpp): open already, or
// opened as `from` was (its access properties, read-write if it is). A
// relative name is found beside `from`, else in the working directory.
std::shared_ptr<OpenFile> open_linked_file(const OpenFile& from, const std::string& name);
// The members of group `path` in the order and index HDF5 asked for.
std::vector<std::string> members(OpenFile& f, const std::string& path, H5_index_t index, H5_iter_order_t order);
// The `n`-th member of group `path` in that index and order (HDF5's "by index").
std::string member_by_index(OpenFile& f, const std::string& path, H5_index_t index, H5_iter_order_t order,
                            hsize_t n);
// Tokens: what HDF5 calls an object's address (H5O_token_t), 8 bytes of it used.
H5O_token_t token_of(OpenFile& f, const std::string& path);
std::string path_of_token(OpenFile& f, const H5O_token_t& token);
// Fails unless the parent group of `path` exists, or creates it if the link
// creation properties ask for intermediate groups (HDF5's rule, stricter than h5loom's).
void require_parent(OpenFile& f, const std::string& path, hid_t lcpl);
// A new HDF5 identifier for a new Object of the same file (for iteration
// callbacks, which get identifiers); H5I_INVALID_HID on failure.
hid_t register_object(const Object& like, H5I_type_t type, const std::string& path);
// UsageError unless `plist` is H5P_DEFAULT or a property list of class `cls`
// (HDF5 passes some property lists to connectors unchecked).
void check_plist(hid_t plist, hid_t cls, const char* what);
// What HDF5 calls an object of kind `k` (H5I_BADID / H5O_TYPE_UNKNOWN for None).
H5I_type_t id_type_of(ObjectKind k);
H5O_type_t object_type_of(ObjectKind k);
// Object info (H5Oget_info) of `path`.
void object_info(OpenFile& f, const std::string& path, unsigned fields, H5O_info2_t* info);

// ---- the callback tables (one file each) ---------------------------------------
extern const H5VL_file_class_t kFileClass;
extern const H5VL_group_class_t kGroupClass;
extern const H5VL_dataset_class_t kDatasetClass;
extern const H5VL_datatype_class_t kDatatypeClass;
extern const H5VL_attr_class_t kAttrClass;
extern const H5VL_link_class_t kLinkClass;
extern const H5VL_object_class_t kObjectClass;
// The engine route's file callbacks by name (the route chooser calls them).
void* file_create(const char* name, unsigned flags, hid_t fcpl, hid_t fapl, hid_t dxpl, void** req);
void* file_open(const char* name, unsigned flags, hid_t fapl, hid_t dxpl, void** req);
// The engine configuration of the connector info on `fapl` (empty if none).
std::string config_of(hid_t fapl);
// Whether the engine route offers committed datatypes over the engine stack
// `engine_name` ("trace>hdf5") that declares them. Not over the hdf5 engine:
// HDF5 1.14.5 crashes when a native H5Ldelete or H5Lmove (which that engine
// makes) updates the names of open committed datatypes another connector made
// (H5G__name_replace_cb takes them for native ones: docs/vol.md#limits).
bool offers_named_types(const std::string& engine_name);
// UsageError unless the file offers committed datatypes (datatype.cpp).
void require_named_types(const OpenFile& f);
// The path of the committed datatype `type` if it is a named one of file `f`:
// HDF5 shares it with a dataset or attribute created with it, and its
// reference count counts them. Empty for any other type (HDF5 copies another
// file's committed datatype; an anonymous one h5loom copies too).
std::string shared_named_type(const OpenFile& f, hid_t type);
// The engine route's capability flags for an engine configuration (plugin.cpp).
uint64_t capability_flags(const std::string& config);
// Closes every file still open (at exit, before MPI is finalised).
void close_all_files();
// Every close callback: deletes the object; if it was the last of its file,
// closes the file (collective) and reports its errors (file.cpp).
// `req` (H5Fclose_async's event-set slot): the file's close, if this is its
// last object, completes at the event set's wait.
herr_t release(Object* o, void** req = nullptr);

}  // namespace h5loom::vol
