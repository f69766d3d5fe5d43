// The C API of datatypes beyond numbers (compounds, fixed-length and
// variable-length strings, enums, references) and of the datasets that hold them: loom_type wraps an
// h5loom::Datatype; a compound or enum grows by one member per call, checked
// as it is added, so an error names the member.
#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "capi/capi_internal.hpp"

using namespace h5loom::capi;

namespace {

const loom_type& need_type(const loom_type* t, const char* arg) {
  if (!t) throw h5loom::UsageError(in_call(std::string("null loom_type '") + arg + "'"));
  return *t;
}

loom_type& need_type(loom_type* t, const char* arg) {
  return const_cast<loom_type&>(need_type(static_cast<const loom_type*>(t), arg));
}

void add_member(loom_type* compound, const char* name, size_t offset, const h5loom::Datatype& member) {
  auto& t = need_type(compound, "compound");
  if (!t.type.is_compound()) throw h5loom::DatatypeError(in_call("loom_type '" + t.type.name() + "' is not a compound"));
  auto members = t.members;
  members.push_back({text(name, "name"), offset, member});
  t.type = h5loom::Datatype::compound(members, t.compound_size);  // checks names, bounds, overlaps
  t.members = std::move(members);
}

}  // namespace

namespace h5loom::capi {

const h5loom::Datatype& transferable(const loom_type* t, const char* arg) {
  const auto& type = usable(t, arg);
  if (type.is_varstring())
    throw h5loom::DatatypeError(in_call(std::string("loom_type '") + arg + "' is " + type.name() +
                                        " (variable-length strings): use loom_dataset_write_strings / "
                                        "loom_dataset_read_strings"));
  return type;
}

const h5loom::Datatype& usable(const loom_type* t, const char* arg) {
  const auto& type = need_type(t, arg);
  if ((type.compound_size && type.members.empty()) || (type.enumeration && type.values.empty()))
    throw h5loom::DatatypeError(in_call(std::string("loom_type '") + arg + "' has no " +
                                        (type.enumeration ? "names" : "members") + " yet"));
  return type.type;
}

}  // namespace h5loom::capi

extern "C" {

loom_status loom_type_compound(size_t size, loom_type** out) {
  return guarded(__func__, [&] {
    need_out(out, "out");
    if (size == 0) throw h5loom::DatatypeError(in_call("a compound needs a size of at least 1 byte"));
    auto t = std::make_unique<loom_type>();
    // A placeholder member makes a valid compound until the first real one.
    t->type = h5loom::Datatype::compound({{"_", 0, h5loom::Datatype::UInt8}}, size);
    t->compound_size = size;
    *out = t.release();
  });
}

loom_status loom_type_insert(loom_type* compound, const char* name, size_t offset, loom_datatype member) {
  return guarded(__func__, [&] { add_member(compound, name, offset, to_datatype(member, "member")); });
}

loom_status loom_type_insert_type(loom_type* compound, const char* name, size_t offset, const loom_type* member) {
  return guarded(__func__, [&] {
    add_member(compound, name, offset, usable(member, "member"));
  });
}

loom_status loom_type_string(size_t length, int utf8, loom_type** out) {
  return guarded(__func__, [&] {
    need_out(out, "out");
    auto t = std::make_unique<loom_type>();
    t->type = h5loom::Datatype::string(length, utf8 ? h5loom::Datatype::Charset::Utf8 : h5loom::Datatype::Charset::Ascii);
    *out = t.release();
  });
}

loom_status loom_type_reference(loom_type** out) {
  return guarded(__func__, [&] {
    need_out(out, "out");
    auto t = std::make_unique<loom_type>();
    t->type = h5loom::Datatype::reference();
    *out = t.release();
  });
}

loom_status loom_type_varstring(int utf8, loom_type** out) {
  return guarded(__func__, [&] {
    need_out(out, "out");
    auto t = std::make_unique<loom_type>();
    t->type = h5loom::Datatype::varstring(utf8 ? h5loom::Datatype::Charset::Utf8 : h5loom::Datatype::Charset::Ascii);
    *out = t.release();
  });
}

loom_status loom_type_scalar(loom_datatype scalar, loom_type** out) {
  return guarded(__func__, [&] {
    need_out(out, "out");
    auto t = std::make_unique<loom_type>();
    t->type = to_datatype(scalar, "scalar");
    *out = t.release();
  });
}

loom_status loom_type_set_byte_order(loom_type* t, loom_byte_order order) {
  return guarded(__func__, [&] {
    auto& type = need_type(t, "t");
    if (order != LOOM_LITTLE_ENDIAN && order != LOOM_BIG_ENDIAN)
      throw h5loom::UsageError(in_call("invalid loom_byte_order value " + std::to_string(static_cast<int>(order))));
    type.type = type.type.with_byte_order(order == LOOM_BIG_ENDIAN ? h5loom::ByteOrder::Big : h5loom::ByteOrder::Little);
  });
}

loom_status loom_type_string_padded(size_t length, int utf8, loom_string_padding padding, loom_type** out) {
  return guarded(__func__, [&] {
    need_out(out, "out");
    if (padding != LOOM_STR_NULLPAD && padding != LOOM_STR_NULLTERM && padding != LOOM_STR_SPACEPAD)
      throw h5loom::UsageError(in_call("invalid loom_string_padding value " + std::to_string(static_cast<int>(padding))));
    auto t = std::make_unique<loom_type>();
    t->type = h5loom::Datatype::string(length, utf8 ? h5loom::Datatype::Charset::Utf8 : h5loom::Datatype::Charset::Ascii,
                                       static_cast<h5loom::Datatype::Padding>(padding));
    *out = t.release();
  });
}

loom_status loom_type_opaque(size_t size, const char* tag, loom_type** out) {
  return guarded(__func__, [&] {
    need_out(out, "out");
    auto t = std::make_unique<loom_type>();
    t->type = h5loom::Datatype::opaque(size, tag ? tag : "");
    *out = t.release();
  });
}

loom_status loom_type_sequence(const loom_type* element, loom_type** out) {
  return guarded(__func__, [&] {
    need_out(out, "out");
    const auto& e = usable(element, "element");
    auto t = std::make_unique<loom_type>();
    t->type = h5loom::Datatype::sequence(e);
    *out = t.release();
  });
}

loom_status loom_reclaim(const loom_type* type, void* data, size_t n) {
  return guarded(__func__, [&] {
    const auto& t = usable(type, "type");
    if (n > 0 && !data) throw h5loom::UsageError(in_call("data is NULL"));
    if (t.has_variable_length_parts()) h5loom::reclaim_variable_length(t, data, n);
  });
}

namespace {
loom_status make_array(const char* function, const h5loom::Datatype* element_or_null, loom_datatype scalar,
                       int ndim, const uint64_t* dims, loom_type** out) {
  return guarded(function, [&] {
    need_out(out, "out");
    if (ndim < 1 || ndim > 32) throw h5loom::UsageError(in_call("ndim " + std::to_string(ndim) + " is not 1 to 32"));
    if (!dims) throw h5loom::UsageError(in_call("dims is NULL"));
    const h5loom::Datatype element = element_or_null ? *element_or_null : to_datatype(scalar, "element");
    auto t = std::make_unique<loom_type>();
    t->type = h5loom::Datatype::array(element, std::vector<uint64_t>(dims, dims + ndim));
    *out = t.release();
  });
}
}  // namespace

loom_status loom_type_array(const loom_type* element, int ndim, const uint64_t* dims, loom_type** out) {
  const h5loom::Datatype* e = nullptr;
  loom_status st = guarded(__func__, [&] { e = &usable(element, "element"); });
  if (st != LOOM_OK) return st;
  return make_array(__func__, e, LOOM_FLOAT64, ndim, dims, out);
}

loom_status loom_type_array_of(loom_datatype element, int ndim, const uint64_t* dims, loom_type** out) {
  return make_array(__func__, nullptr, element, ndim, dims, out);
}

loom_status loom_type_enum(loom_datatype base, loom_type** out) {
  return guarded(__func__, [&] {
    need_out(out, "out");
    const h5loom::Scalar s = to_datatype(base, "base").scalar();
    if (!h5loom::is_integer(s))
      throw h5loom::DatatypeError(in_call("an enum's base must be an integer type, not " + h5loom::scalar_name(s)));
    auto t = std::make_unique<loom_type>();
    t->type = h5loom::Datatype(s);  // an enum from its first name on
    t->enumeration = true;
    *out = t.release();
  });
}

loom_status loom_type_enum_insert(loom_type* e, const char* name, int64_t value) {
  return guarded(__func__, [&] {
    auto& t = need_type(e, "e");
    if (!t.enumeration)
      throw h5loom::DatatypeError(in_call("loom_type '" + t.type.name() + "' is not an enum"));
    auto values = t.values;
    values.emplace_back(text(name, "name"), value);
    // (checks names, values, range; keeps the byte order set before)
    t.type = h5loom::Datatype::enumeration(t.type.scalar(), values).with_byte_order(t.type.byte_order());
    t.values = std::move(values);
  });
}

loom_status loom_type_size(const loom_type* t, size_t* out) {
  return guarded(__func__, [&] {
    need_out(out, "out");
    const auto& type = need_type(t, "t").type;
    *out = type.is_varstring() ? sizeof(char*) : type.size();  // a C element of variable-length strings: char*
  });
}

loom_status loom_type_name(const loom_type* t, char* buf, size_t bufsize, size_t* needed) {
  return guarded(__func__, [&] {
    const auto& type = need_type(t, "t");
    check_string_out(buf, bufsize);
    copy_out(type.type.name(), buf, bufsize, needed);
  });
}

loom_status loom_type_free(loom_type* t) {
  return guarded(__func__, [&] { delete t; });
}

namespace {
// The typed dataset creations: collective; `describe` checks the arguments and
// fills the spec on every rank (agreed before any rank creates anything).
loom_status create_typed_dataset(const char* function, loom_group* parent, const char* path, const loom_type* type,
                                 loom_dataset** out, const std::function<void(h5loom::DatasetSpec&)>& describe) {
  h5loom::DatasetSpec spec;
  return collective(
      function, comm_of(parent),
      [&] {
        as_group(parent);
        text(path, "path");
        need_out(out, "out");
        spec.dtype = usable(type, "type");
        describe(spec);
      },
      [&] { *out = new_object(parent->group->create_dataset(path, spec), parent->agree); });
}
}  // namespace

loom_status loom_group_create_dataset_typed(loom_group* parent, const char* path, const loom_type* type, int ndim,
                                            const uint64_t* shape, const uint64_t* max_shape, const void* fill,
                                            loom_dataset** out) {
  return create_typed_dataset(__func__, parent, path, type, out, [&](h5loom::DatasetSpec& spec) {
    dataset_shape(ndim, shape, max_shape, path, spec);
    if (fill && (spec.dtype.is_varstring() || spec.dtype.has_references()))
      throw h5loom::DatatypeError(in_call("a dataset of " + spec.dtype.name() + " has no fill value (unwritten "
                                          "elements read as empty strings and null references): pass NULL "
                                          "for 'fill' (dataset '" + std::string(path) + "')"));
    if (fill) {
      const auto* p = static_cast<const unsigned char*>(fill);
      spec.fill.assign(p, p + spec.dtype.size());
    }
  });
}

loom_status loom_group_create_dataset_null(loom_group* parent, const char* path, const loom_type* type,
                                           loom_dataset** out) {
  return create_typed_dataset(__func__, parent, path, type, out,
                              [](h5loom::DatasetSpec& spec) { spec.null_space = true; });
}

loom_status loom_group_create_dataset_filtered(loom_group* parent, const char* path, const loom_type* type, int ndim,
                                               const uint64_t* shape, const uint64_t* max_shape,
                                               const uint64_t* chunks, size_t nfilters, const loom_filter* filters,
                                               loom_dataset** out) {
  return create_typed_dataset(__func__, parent, path, type, out, [&](h5loom::DatasetSpec& spec) {
    dataset_shape(ndim, shape, max_shape, path, spec);
    spec.layout = h5loom::Layout::Chunked;
    spec.layout_auto = false;
    if (chunks) spec.chunks = dims(ndim, chunks, "chunks");
    if (nfilters && !filters)
      throw h5loom::UsageError(in_call("null array 'filters' with nfilters " + std::to_string(nfilters)));
    for (size_t i = 0; i < nfilters; ++i) {
      if (filters[i].nparams && !filters[i].params)
        throw h5loom::UsageError(in_call("filter " + std::to_string(i) + " has nparams " +
                                         std::to_string(filters[i].nparams) + " and null 'params'"));
      h5loom::Filter f;
      f.id = filters[i].id;
      f.params.assign(filters[i].params, filters[i].params + filters[i].nparams);
      f.optional = filters[i].optional != 0;
      spec.filters.push_back(std::move(f));
    }
  });
}

loom_status loom_group_create_dataset_named_dims(loom_group* parent, const char* path, const loom_type* type,
                                                 int ndim, const uint64_t* shape, const uint64_t* max_shape,
                                                 const char* const* dim_names, loom_dataset** out) {
  return create_typed_dataset(__func__, parent, path, type, out, [&](h5loom::DatasetSpec& spec) {
    dataset_shape(ndim, shape, max_shape, path, spec);
    if (!dim_names) throw h5loom::UsageError(in_call("null array 'dim_names'"));
    for (int i = 0; i < ndim; ++i) spec.dim_names.emplace_back(dim_names[i] ? dim_names[i] : "");
  });
}

loom_status loom_dataset_dim_name(loom_dataset* d, int dim, char* buf, size_t bufsize, size_t* needed) {
  return guarded(__func__, [&] {
    auto& ds = as_dataset(d);
    check_string_out(buf, bufsize);
    const auto rank = ds.shape().size();
    if (dim < 0 || std::size_t(dim) >= rank)
      throw h5loom::SelectionError(in_call("dimension " + std::to_string(dim) + " out of range: dataset '" +
                                           ds.path() + "' has " + std::to_string(rank)));
    const auto names = ds.dim_names();
    copy_out(names.empty() ? std::string() : names[std::size_t(dim)], buf, bufsize, needed);
  });
}

loom_status loom_dataset_filter_count(loom_dataset* d, size_t* count) {
  return guarded(__func__, [&] {
    auto& ds = as_dataset(d);
    need_out(count, "count");
    *count = ds.filters().size();
  });
}

loom_status loom_dataset_filter(loom_dataset* d, size_t index, unsigned* id, int* optional, unsigned* params,
                                size_t* nparams) {
  return guarded(__func__, [&] {
    auto& ds = as_dataset(d);
    const auto filters = ds.filters();
    if (index >= filters.size())
      throw h5loom::SelectionError(in_call("filter index " + std::to_string(index) + " out of range: dataset '" +
                                           ds.path() + "' has " + std::to_string(filters.size()) + " filters"));
    const auto& f = filters[index];
    if (id) *id = f.id;
    if (optional) *optional = f.optional ? 1 : 0;
    if (nparams) {
      if (params) std::copy_n(f.params.begin(), std::min(*nparams, f.params.size()), params);
      *nparams = f.params.size();
    }
  });
}

loom_status loom_dataset_is_null(loom_dataset* d, int* out) {
  return guarded(__func__, [&] {
    auto& ds = as_dataset(d);
    need_out(out, "out");
    *out = ds.null_space() ? 1 : 0;
  });
}

loom_status loom_dataset_type(loom_dataset* d, loom_type** out) {
  return guarded(__func__, [&] {
    need_out(out, "out");
    auto t = std::make_unique<loom_type>();
    t->type = as_dataset(d).dtype();
    *out = t.release();
  });
}

loom_status loom_group_commit_type(loom_group* parent, const char* path, const loom_type* type) {
  h5loom::Datatype dtype;
  return collective(
      __func__, comm_of(parent),
      [&] {
        as_group(parent);
        text(path, "path");
        dtype = usable(type, "type");
      },
      [&] { parent->group->commit_datatype(path, dtype); });
}

loom_status loom_group_named_type(loom_group* parent, const char* path, loom_type** out) {
  return guarded(__func__, [&] {
    auto& g = as_group(parent);
    text(path, "path");
    need_out(out, "out");
    auto t = std::make_unique<loom_type>();
    t->type = g.named_datatype(path).dtype();
    *out = t.release();
  });
}

loom_status loom_dataset_write_typed(loom_dataset* d, const loom_selection* sel, const loom_type* mem_type, size_t n,
                                     const void* data, loom_write_mode mode) {
  return guarded(__func__, [&] {
    auto& ds = as_dataset(d);
    auto selection = to_selection(sel);
    const auto& type = transferable(mem_type, "mem_type");
    const bool copy = write_copies(n, type.size(), data, mode);
    ds.write_raw(selection, type, data, n, copy);
  });
}

loom_status loom_dataset_read_typed(loom_dataset* d, const loom_selection* sel, const loom_type* mem_type, size_t n,
                                    void* out) {
  std::optional<h5loom::Selection> selection;
  h5loom::Datatype type;
  return collective(
      __func__, comm_of(d),
      [&] {
        as_dataset(d);
        selection = to_selection(sel);
        type = transferable(mem_type, "mem_type");
        fits_in_memory(n, type.size(), "n");
        need_buffer(out, n, "out");
      },
      [&] { d->dataset->read_raw(*selection, type, out, n); });
}

}  // extern "C"
