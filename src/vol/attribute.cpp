// Attributes: H5Acreate/H5Aopen/H5Awrite/H5Aread/H5Aexists/H5Aiterate over
// the object model's attributes. An h5loom attribute is a value: a scalar or
// 1-D array of any fixed-size datatype, a string, or a list of strings. So
// H5Acreate writes a zero value of the declared type and shape, H5Awrite
// replaces the whole value, and an N-D dataspace is kept as its element count
// (1-D). Strings of any HDF5 string type are stored as strings.
#include <algorithm>
#include <cstring>
#include <optional>

#include "hdf5lib/hid.hpp"
#include "hdf5lib/types.hpp"
#include "vol/transfer.hpp"

namespace h5loom::vol {

using hdf5lib::Hid;

namespace {

Object& as_object(void* obj) { return *static_cast<Object*>(obj); }

// Runs fn(h5loom::Object&) on the group, dataset or named datatype at `path`.
template <class Fn>
auto on_object(OpenFile& f, const std::string& path, Fn&& fn) {
  if (path.empty()) unsupported("attributes of a datatype committed anonymously and not linked (H5Olink it first)");
  const ObjectKind kind = f.file.kind(path);
  if (kind == ObjectKind::Dataset) {
    Dataset d = f.file.dataset(path);
    return fn(static_cast<h5loom::Object&>(d));
  }
  if (kind == ObjectKind::Datatype) {
    NamedDatatype t = f.file.named_datatype(path);
    return fn(static_cast<h5loom::Object&>(t));
  }
  Group g = f.file.group(path);
  return fn(static_cast<h5loom::Object&>(g));
}

AttributeValue read_value(OpenFile& f, const std::string& path, const std::string& name) {
  return on_object(f, path, [&](h5loom::Object& o) { return o.attribute(name); });
}

void write_value(OpenFile& f, const std::string& path, const std::string& name, const AttributeValue& v) {
  on_object(f, path, [&](h5loom::Object& o) {
    o.set_attribute(name, v);
    return 0;
  });
}

// Names by HDF5's index: by name (sorted) or in creation order (engines with
// "attribute_edit"; the object model raises for the others).
std::vector<std::string> attribute_names(OpenFile& f, const std::string& path, H5_index_t index, H5_iter_order_t order) {
  if (index != H5_INDEX_NAME && index != H5_INDEX_CRT_ORDER)
    throw UsageError("invalid index type " + std::to_string(int(index)));
  if (order != H5_ITER_INC && order != H5_ITER_DEC && order != H5_ITER_NATIVE)
    throw UsageError("invalid iteration order " + std::to_string(int(order)));
  auto names = on_object(f, path, [&](h5loom::Object& o) {
    if (index == H5_INDEX_CRT_ORDER) return o.attribute_names_in_creation_order();
    auto sorted = o.attribute_names();
    std::sort(sorted.begin(), sorted.end());
    return sorted;
  });
  if (order == H5_ITER_DEC) std::reverse(names.begin(), names.end());
  return names;
}

// The place of attribute `name` in creation order; nullopt if the engine keeps none.
std::optional<int64_t> creation_order_of(OpenFile& f, const std::string& path, const std::string& name) {
  if (!f.attribute_edit) return std::nullopt;
  const auto names = attribute_names(f, path, H5_INDEX_CRT_ORDER, H5_ITER_INC);
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return int64_t(it - names.begin());
}

// The object an attribute call names (`loc` is about the object; by index: the
// object is loc_by_idx.name and the index is of its attributes).
std::string object_path(const Object& o, const H5VL_loc_params_t* loc) {
  if (loc && loc->type == H5VL_OBJECT_BY_IDX) {
    check_plist(loc->loc_data.loc_by_idx.lapl_id, H5P_LINK_ACCESS, "link access");
    return join(o.path, loc->loc_data.loc_by_idx.name);
  }
  return locate(o, loc);
}

std::string attribute_by_index(OpenFile& f, const std::string& path, const H5VL_loc_by_idx_t& by) {
  const auto names = attribute_names(f, path, by.idx_type, by.order);
  if (by.n >= names.size())
    throw NotFoundError("attribute index " + std::to_string(by.n) + " is out of range: '" + path + "' has " +
                        std::to_string(names.size()) + " attributes");
  return names[by.n];
}

// A value of the declared type and dataspace, all zero (empty strings).
AttributeValue zero_value(hid_t type, hid_t space, const std::string& what) {
  AttributeValue::Kind kind;
  std::size_t count = 1;
  switch (H5Sget_simple_extent_type(space)) {
    case H5S_SCALAR: kind = AttributeValue::Kind::Scalar; break;
    case H5S_SIMPLE: {
      kind = AttributeValue::Kind::Array;
      const hssize_t n = H5Sget_simple_extent_npoints(space);
      if (n < 0) throw SelectionError("invalid dataspace for " + what);
      count = std::size_t(n);
      break;
    }
    case H5S_NULL: return AttributeValue::empty(model_type(type, what));  // no value, for good
    default: throw SelectionError("invalid dataspace for " + what);
  }
  // Variable-length strings are h5loom's strings; fixed-length ones keep their
  // type (H5Aget_type gives it back), their text read as strings all the same.
  if (H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0) {
    if (kind == AttributeValue::Kind::Scalar) return AttributeValue(std::string());
    return AttributeValue(std::vector<std::string>(count));
  }
  const Datatype dtype = model_type(type, what);
  if (references_with_parts(dtype))  // (the application's HDF5 references inside sequences are not translated yet)
    throw DatatypeError("cannot create " + what + " of type " + dtype.name() +
                        ": the connector does not pass object references inside variable-length data yet");
  std::vector<unsigned char> zeros(count * datatype_size(dtype), 0);  // (empty sequences, null strings)
  return AttributeValue::from_raw(kind, dtype, count, zeros.data());
}

std::vector<std::string> strings_of(const AttributeValue& v) {
  return v.is_string() ? std::vector<std::string>{v.as_string()} : v.as_strings();
}

// The HDF5 type of a stored value: strings as the hdf5 engine stores them
// (fixed-length, NUL-terminated UTF-8, as long as the longest and its NUL).
hid_t type_of(const AttributeValue& v) {
  if (v.is_string() || v.is_string_array()) {
    std::size_t width = 1;
    for (const auto& s : strings_of(v)) width = std::max(width, s.size() + 1);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, width);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
  }
  Hid t = hdf5lib::file_type(v.dtype());
  return H5Tcopy(t.get());
}

hid_t space_of(const AttributeValue& v) {
  if (v.is_empty()) return H5Screate(H5S_NULL);
  if (v.kind() == AttributeValue::Kind::Scalar || v.is_string()) return H5Screate(H5S_SCALAR);
  hsize_t n = v.size();
  return H5Screate_simple(1, &n, nullptr);
}

std::size_t data_size(const AttributeValue& v) {
  if (v.is_string() || v.is_string_array()) {
    std::size_t width = 1;
    const auto s = strings_of(v);
    for (const auto& x : s) width = std::max(width, x.size() + 1);
    return width * s.size();
  }
  return v.size() * datatype_size(v.dtype());
}

void* attr_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t type, hid_t space, hid_t acpl,
                  hid_t aapl, hid_t, void**) {
  return H5LOOM_VOL_GUARD((void*)nullptr, {
    Object& o = as_object(obj);
    check_plist(acpl, H5P_ATTRIBUTE_CREATE, "attribute creation");
    check_plist(aapl, H5P_ATTRIBUTE_ACCESS, "attribute access");
    const std::string path = object_path(o, loc);
    const std::string what = "attribute '" + std::string(name) + "' of '" + path + "' in file '" + o.file->name + "'";
    AttributeValue zero = zero_value(type, space, what);
    if (!zero.is_string() && !zero.is_string_array()) zero.set_named_type(shared_named_type(*o.file, type));
    if (on_object(*o.file, path, [&](h5loom::Object& x) { return x.has_attribute(name); }))
      throw ExistsError("cannot create " + what + ": it exists");
    write_value(*o.file, path, name, zero);
    auto* a = new Object(H5I_ATTR, o, path);
    a->attr = name;
    a->keep_create(acpl);
    return (void*)a;
  });
}

void* attr_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t aapl, hid_t, void**) {
  return H5LOOM_VOL_GUARD((void*)nullptr, {
    Object& o = as_object(obj);
    check_plist(aapl, H5P_ATTRIBUTE_ACCESS, "attribute access");
    const std::string path = object_path(o, loc);
    std::string attr = name ? name : "";
    if (loc && loc->type == H5VL_OBJECT_BY_IDX) attr = attribute_by_index(*o.file, path, loc->loc_data.loc_by_idx);
    if (!on_object(*o.file, path, [&](h5loom::Object& x) { return x.has_attribute(attr); }))
      throw NotFoundError("attribute '" + attr + "' not found on '" + path + "' in file '" + o.file->name + "'");
    auto* a = new Object(H5I_ATTR, o, path);
    a->attr = attr;
    return (void*)a;
  });
}

herr_t attr_read(void* obj, hid_t mem_type, void* buf, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& a = as_object(obj);
    const AttributeValue v = read_value(*a.file, a.path, a.attr);
    if (v.is_empty()) return herr_t(0);  // a null dataspace: nothing to read
    if (v.is_string() || v.is_string_array()) {
      strings_to(strings_of(v), mem_type, buf);
      return herr_t(0);
    }
    Elements e(v.dtype(), v.size());
    if (e.n) v.copy_elements(e.data());
    from_model(e, mem_type, buf);  // (H5Aread has no transfer properties: parts from malloc)
    return herr_t(0);
  });
}

herr_t attr_write(void* obj, hid_t mem_type, const void* buf, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& a = as_object(obj);
    const AttributeValue cur = read_value(*a.file, a.path, a.attr);
    if (cur.is_empty()) return herr_t(0);  // a null dataspace: nothing to write, as in HDF5
    if (cur.is_string() || cur.is_string_array()) {
      auto s = strings_from(mem_type, buf, cur.is_string() ? 1 : cur.size());
      write_value(*a.file, a.path, a.attr, cur.is_string() ? AttributeValue(s.at(0)) : AttributeValue(std::move(s)));
      return herr_t(0);
    }
    const Datatype dtype = cur.dtype();
    Elements e = to_model(mem_type, buf, cur.size(), dtype, [&] {
      Elements b(dtype, cur.size());
      if (b.n) cur.copy_elements(b.data());
      return b;
    });
    AttributeValue value = AttributeValue::from_raw(cur.kind(), dtype, e.n, e.data());
    write_value(*a.file, a.path, a.attr, value.set_named_type(cur.named_type()));  // (still shared)
    return herr_t(0);
  });
}

size_t copy_name(const std::string& s, char* buf, size_t size) {
  if (buf && size > 0) {
    const size_t n = std::min(s.size(), size - 1);
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  return s.size();
}

herr_t attr_get(void* obj, H5VL_attr_get_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& o = as_object(obj);
    switch (args->op_type) {
      case H5VL_ATTR_GET_SPACE:
        args->args.get_space.space_id = space_of(read_value(*o.file, o.path, o.attr));
        return herr_t(0);
      case H5VL_ATTR_GET_TYPE:
        args->args.get_type.type_id = type_of(read_value(*o.file, o.path, o.attr));
        return herr_t(0);
      case H5VL_ATTR_GET_ACPL:
        args->args.get_acpl.acpl_id = o.create_plist >= 0 ? H5Pcopy(o.create_plist) : H5Pcreate(H5P_ATTRIBUTE_CREATE);
        return herr_t(0);
      case H5VL_ATTR_GET_STORAGE_SIZE:
        *args->args.get_storage_size.data_size = data_size(read_value(*o.file, o.path, o.attr));
        return herr_t(0);
      case H5VL_ATTR_GET_NAME: {
        auto& a = args->args.get_name;
        std::string name = o.attr;
        if (a.loc_params.type == H5VL_OBJECT_BY_IDX)
          name = attribute_by_index(*o.file, object_path(o, &a.loc_params), a.loc_params.loc_data.loc_by_idx);
        const size_t n = copy_name(name, a.buf, a.buf_size);
        if (a.attr_name_len) *a.attr_name_len = n;
        return herr_t(0);
      }
      case H5VL_ATTR_GET_INFO: {
        auto& a = args->args.get_info;
        std::string path = o.path, name = o.attr;
        if (a.loc_params.type == H5VL_OBJECT_BY_NAME) {
          path = object_path(o, &a.loc_params);
          name = a.attr_name;
        } else if (a.loc_params.type == H5VL_OBJECT_BY_IDX) {
          path = object_path(o, &a.loc_params);
          name = attribute_by_index(*o.file, path, a.loc_params.loc_data.loc_by_idx);
        }
        const AttributeValue v = read_value(*o.file, path, name);
        std::memset(a.ainfo, 0, sizeof *a.ainfo);
        const auto corder = creation_order_of(*o.file, path, name);
        a.ainfo->corder_valid = corder.has_value();
        a.ainfo->corder = corder.value_or(0);
        a.ainfo->cset = H5T_CSET_ASCII;
        a.ainfo->data_size = data_size(v);
        return herr_t(0);
      }
    }
    unsupported("attribute get operation " + std::to_string(int(args->op_type)));
  });
}

herr_t attr_specific(void* obj, const H5VL_loc_params_t* loc, H5VL_attr_specific_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& o = as_object(obj);
    switch (args->op_type) {
      case H5VL_ATTR_EXISTS: {
        const std::string path = object_path(o, loc), name = args->args.exists.name;
        *args->args.exists.exists = on_object(*o.file, path, [&](h5loom::Object& x) { return x.has_attribute(name); });
        return herr_t(0);
      }
      case H5VL_ATTR_ITER: {
        auto& it = args->args.iterate;
        const std::string path = object_path(o, loc);
        const auto names = attribute_names(*o.file, path, it.idx_type, it.order);
        const H5I_type_t type = id_type_of(o.h5().kind(path));
        hid_t id = register_object(o, type, path);
        if (id < 0) throw UsageError("cannot register an identifier for '" + path + "'");
        struct Release {
          hid_t id;
          ~Release() { H5Idec_ref(id); }
        } release{id};
        hsize_t i = it.idx ? *it.idx : 0;
        herr_t r = 0;
        const auto in_order = o.file->attribute_edit ? attribute_names(*o.file, path, H5_INDEX_CRT_ORDER, H5_ITER_INC)
                                                     : std::vector<std::string>{};
        for (; i < names.size() && r == 0; ++i) {
          H5A_info_t info;
          std::memset(&info, 0, sizeof info);
          if (auto at = std::find(in_order.begin(), in_order.end(), names[i]); at != in_order.end()) {
            info.corder_valid = true;
            info.corder = int64_t(at - in_order.begin());
          }
          info.cset = H5T_CSET_ASCII;
          info.data_size = data_size(read_value(*o.file, path, names[i]));
          r = it.op(id, names[i].c_str(), &info, it.op_data);
        }
        if (it.idx) *it.idx = i;
        return r;
      }
      case H5VL_ATTR_DELETE: {
        const std::string path = object_path(o, loc), name = args->args.del.name;
        on_object(*o.file, path, [&](h5loom::Object& x) {
          x.remove_attribute(name);
          return 0;
        });
        return herr_t(0);
      }
      case H5VL_ATTR_DELETE_BY_IDX: {
        const auto& by = args->args.delete_by_idx;
        const std::string path = object_path(o, loc);
        const auto names = attribute_names(*o.file, path, by.idx_type, by.order);
        if (by.n >= names.size())
          throw NotFoundError("attribute index " + std::to_string(by.n) + " is out of range: '" + path + "' has " +
                              std::to_string(names.size()) + " attributes");
        on_object(*o.file, path, [&](h5loom::Object& x) {
          x.remove_attribute(names[by.n]);
          return 0;
        });
        return herr_t(0);
      }
      case H5VL_ATTR_RENAME: {
        const std::string path = object_path(o, loc);
        const std::string from = args->args.rename.old_name, to = args->args.rename.new_name;
        on_object(*o.file, path, [&](h5loom::Object& x) {
          x.rename_attribute(from, to);
          return 0;
        });
        // Open handles of the attribute follow it, as HDF5's do.
        for (auto& [serial, live] : o.file->live)
          if (live->type == H5I_ATTR && live->path == path && live->attr == from) live->attr = to;
        return herr_t(0);
      }
    }
    unsupported("attribute operation " + std::to_string(int(args->op_type)));
  });
}

herr_t attr_optional(void*, H5VL_optional_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    unsupported("native attribute operation " + std::to_string(args->op_type));
    return herr_t(0);
  });
}

herr_t attr_close(void* obj, hid_t, void**) { return release(static_cast<Object*>(obj)); }

}  // namespace

const H5VL_attr_class_t kAttrClass = {attr_create, attr_open,     attr_read,     attr_write,
                                      attr_get,    attr_specific, attr_optional, attr_close};

}  // namespace h5loom::vol
