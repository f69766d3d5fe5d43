// Committed (named) datatypes on the engine route: H5Tcommit2, H5Tcommit_anon,
// H5Topen2, H5Tget_create_plist, H5Tflush/H5Trefresh and H5Tclose over the
// object model's named datatypes (engines declaring "named_types").
//
// HDF5 keeps the H5T_t of a committed type itself: after commit it marks the
// application's type as committed, and for an opened one it asks the connector
// for the type's H5Tencode bytes (GET_BINARY) and decodes them. So the
// connector stores only h5loom's Datatype and encodes it on demand.
#include <cstring>
#include <vector>

#include "hdf5lib/hid.hpp"
#include "hdf5lib/types.hpp"
#include "vol/vol.hpp"

namespace h5loom::vol {

using hdf5lib::Hid;

void require_named_types(const OpenFile& f) {
  if (f.named_types) return;
  if (f.file.supports("named_types"))
    unsupported("committed datatypes over the hdf5 engine on the engine route (a crash of HDF5 1.14.5, "
                "docs/vol.md#limits; the plain 'hdf5' configuration has them)");
  unsupported("committed datatypes with an engine without the conformance group 'named_types'");
}

std::string shared_named_type(const OpenFile& f, hid_t type) {
  if (!f.named_types) return {};
  const htri_t committed = H5Tcommitted(type);
  if (committed <= 0) {
    if (committed < 0) H5Eclear2(H5E_DEFAULT);
    return {};
  }
  // Committed through this connector (else its object is another's, and not
  // an h5loom Object), and one of this file's open objects.
  const hid_t conn = H5VLget_connector_id(type), ours = H5VLget_connector_id_by_name(kName);
  int cmp = 1;
  if (conn >= 0 && ours >= 0) H5VLcmp_connector_cls(&cmp, conn, ours);
  if (conn >= 0) H5VLclose(conn);
  if (ours >= 0) H5VLclose(ours);
  if (cmp != 0) {
    H5Eclear2(H5E_DEFAULT);
    return {};
  }
  const void* obj = H5VLobject(type);  // the connector's object of the committed datatype
  if (!obj) {
    H5Eclear2(H5E_DEFAULT);
    return {};
  }
  const Object* t = nullptr;
  for (const auto& [serial, live] : f.live)
    if (live == obj) t = live;
  if (!t || t->type != H5I_DATATYPE || t->path.empty() || t->unlinked) return {};
  return t->path;
}

namespace {

Object& as_object(void* obj) { return *static_cast<Object*>(obj); }

// A name whose last part is "." names the location itself, not a new link.
bool names_location(const std::string& name) {
  return name.empty() || name == "." || (name.size() >= 2 && name.compare(name.size() - 2, 2, "/.") == 0);
}

void* datatype_commit(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t type_id, hid_t lcpl,
                      hid_t tcpl, hid_t tapl, hid_t, void**) {
  return H5LOOM_VOL_GUARD((void*)nullptr, {
    Object& o = as_object(obj);
    check_plist(lcpl, H5P_LINK_CREATE, "link creation");
    check_plist(tcpl, H5P_DATATYPE_CREATE, "datatype creation");
    check_plist(tapl, H5P_DATATYPE_ACCESS, "datatype access");
    require_named_types(*o.file);
    if (o.h5().mode() == Mode::Read)
      throw ReadOnlyError("cannot commit a datatype: file '" + o.file->name + "' is open read-only");
    Object* t = nullptr;
    if (!name) {  // H5Tcommit_anon: no link until H5Olink gives it one (link.cpp); gone at close if none does
      t = new Object(H5I_DATATYPE, o, "");
      t->anonymous = Object::Anonymous{{}, hdf5lib::datatype_of_hdf5(type_id, "an anonymous committed datatype"), {}};
    } else {
      if (names_location(name))
        throw UsageError("cannot commit a datatype as '" + std::string(name) + "': the name is the location itself (file '" +
                         o.file->name + "')");
      const std::string path = join(locate(o, loc), name);
      const Datatype dtype = hdf5lib::datatype_of_hdf5(type_id, path);
      require_parent(*o.file, path, lcpl);
      o.h5().commit_datatype(path, dtype);
      t = new Object(H5I_DATATYPE, o, path);
    }
    t->keep_create(tcpl);
    t->keep_access(tapl);
    return (void*)t;
  });
}

void* datatype_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t tapl, hid_t, void**) {
  return H5LOOM_VOL_GUARD((void*)nullptr, {
    Object& o = as_object(obj);
    check_plist(tapl, H5P_DATATYPE_ACCESS, "datatype access");
    require_named_types(*o.file);
    if (!name || !*name) throw UsageError("cannot open a datatype without a name (file '" + o.file->name + "')");
    const Located at = follow_external_links(o.file, join(locate(o, loc), name));
    require_named_types(*at.file);
    at.file->file.named_datatype(at.path);  // NotFoundError unless a named datatype is there
    auto* t = opened_object(H5I_DATATYPE, o, at);
    t->keep_access(tapl);
    return (void*)t;
  });
}

// The H5Tencode bytes of the datatype, which HDF5 decodes into the H5T_t of an opened type.
std::vector<unsigned char> encoded(const Object& t) {
  const Datatype dtype = t.anonymous ? t.anonymous->dtype : t.h5().named_datatype(t.path).dtype();
  Hid type = hdf5lib::file_type(dtype);
  size_t n = 0;
  if (H5Tencode(type.get(), nullptr, &n) < 0) throw DatatypeError("cannot encode the datatype " + dtype.name());
  std::vector<unsigned char> bytes(n);
  if (H5Tencode(type.get(), bytes.data(), &n) < 0) throw DatatypeError("cannot encode the datatype " + dtype.name());
  return bytes;
}

herr_t datatype_get(void* obj, H5VL_datatype_get_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& t = as_object(obj);
    switch (args->op_type) {
      case H5VL_DATATYPE_GET_BINARY_SIZE: *args->args.get_binary_size.size = encoded(t).size(); return herr_t(0);
      case H5VL_DATATYPE_GET_BINARY: {
        auto& a = args->args.get_binary;
        const auto bytes = encoded(t);
        if (a.buf && a.buf_size < bytes.size())
          throw UsageError("a buffer of " + std::to_string(a.buf_size) + " bytes cannot hold the datatype's " +
                           std::to_string(bytes.size()));
        if (a.buf) std::memcpy(a.buf, bytes.data(), bytes.size());
        return herr_t(0);
      }
      case H5VL_DATATYPE_GET_TCPL: {
        // What it was committed with through this handle; else the defaults.
        hid_t tcpl = t.create_plist >= 0 ? H5Pcopy(t.create_plist) : H5Pcreate(H5P_DATATYPE_CREATE);
        if (tcpl < 0) throw UsageError("cannot make datatype creation properties");
        args->args.get_tcpl.tcpl_id = tcpl;
        return herr_t(0);
      }
    }
    unsupported("datatype get operation " + std::to_string(int(args->op_type)));
  });
}

herr_t datatype_specific(void* obj, H5VL_datatype_specific_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& t = as_object(obj);
    switch (args->op_type) {
      case H5VL_DATATYPE_FLUSH:
        if (t.file->intent & H5F_ACC_RDWR) t.h5().flush();
        return herr_t(0);
      case H5VL_DATATYPE_REFRESH: return herr_t(0);  // a named datatype never changes
    }
    unsupported("datatype operation " + std::to_string(int(args->op_type)));
  });
}

herr_t datatype_optional(void*, H5VL_optional_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    unsupported("native datatype operation " + std::to_string(args->op_type));
    return herr_t(0);
  });
}

herr_t datatype_close(void* obj, hid_t, void**) { return release(static_cast<Object*>(obj)); }

}  // namespace

const H5VL_datatype_class_t kDatatypeClass = {datatype_commit,   datatype_open,     datatype_get,
                                              datatype_specific, datatype_optional, datatype_close};

}  // namespace h5loom::vol
