// The C API of object references (loom_ref: h5loom::ObjectRef's 8 bytes),
// variable-length strings (char* in C, std::string in C++), attributes of
// any fixed-size loom_type, and the engines' conformance groups.
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "capi/capi_internal.hpp"

using namespace h5loom::capi;

static_assert(sizeof(loom_ref) == sizeof(h5loom::ObjectRef) && alignof(loom_ref) == alignof(h5loom::ObjectRef),
              "loom_ref must have h5loom::ObjectRef's layout: arrays of it are stored as they are");

namespace {

h5loom::ObjectRef to_ref(loom_ref r) { return h5loom::ObjectRef{r.token}; }

// The dataset of a string transfer: variable-length strings, either charset
// (checked after the arguments).
void need_strings(const h5loom::Dataset& ds) {
  const auto type = ds.dtype();
  if (!type.is_varstring())
    throw h5loom::DatatypeError(in_call("dataset '" + ds.path() + "' is of type " + type.name() +
                                        ", not variable-length strings" +
                                        (type.is_string() ? " (fixed-length strings: loom_dataset_write_typed / "
                                                            "_read_typed with loom_type_string)"
                                                          : "")));
}

// "attribute 'name' on '/path'"
std::string attribute_of(const h5loom::Object& obj, const char* name) {
  return "attribute '" + std::string(name) + "' on '" + obj.path() + "'";
}

// An attribute of numbers, compounds, enums or references (not strings), checked against `count`.
h5loom::AttributeValue typed_attribute(h5loom::Object& obj, const char* name, size_t count) {
  auto v = obj.attribute(name);
  if (!v.is_numeric())
    throw h5loom::DatatypeError(attribute_of(obj, name) + " holds " + v.to_string() +
                                "; read it with loom_attr_read_string(_element)");
  if (count != v.size())
    throw h5loom::SelectionError(attribute_of(obj, name) + " holds " + std::to_string(v.size()) +
                                 " values, not " + std::to_string(count));
  return v;
}

loom_status write_attribute(const char* function, loom_object* o, const char* name,
                            const std::function<h5loom::AttributeValue()>& make) {
  h5loom::AttributeValue v;
  return collective(
      function, comm_of(o),
      [&] {
        as_object(o);
        text(name, "name");
        v = make();
      },
      [&] { as_object(o).set_attribute(name, v); });
}

}  // namespace

extern "C" {

// ---- engines ----

loom_status loom_engine_supports(const char* engine, const char* group, int* out) {
  return guarded(__func__, [&] {
    text(group, "group");
    need_out(out, "out");
    std::string config = engine ? engine : "";
    if (config.find_first_not_of(" \t\r\n") == std::string::npos) {
      const char* env = std::getenv("H5LOOM_ENGINE");
      config = env && *env ? env : h5loom::engine::kDefaultEngine;
    }
    const auto groups = h5loom::engine::make_engine(config)->conformance_groups();
    *out = 0;
    for (const auto& g : groups)
      if (g == group) *out = 1;
  });
}

// ---- references ----

loom_status loom_group_reference(loom_group* g, const char* path, loom_ref* out) {
  return collective(
      __func__, comm_of(g),
      [&] {
        as_group(g, "g");
        text(path, "path");
        need_out(out, "out");
      },
      [&] { out->token = g->group->reference(path).token; });
}

loom_status loom_group_dereference(loom_group* g, loom_ref ref, char* buf, size_t bufsize, size_t* needed) {
  return collective(
      __func__, comm_of(g),
      [&] {
        as_group(g, "g");
        check_string_out(buf, bufsize);
      },
      [&] { copy_out(g->group->dereference(to_ref(ref)), buf, bufsize, needed); });
}

// ---- variable-length strings ----

loom_status loom_dataset_write_strings(loom_dataset* d, const loom_selection* sel, size_t n,
                                       const char* const* strings) {
  return guarded(__func__, [&] {
    auto& ds = as_dataset(d);
    auto selection = to_selection(sel);
    fits_in_memory(n, sizeof(char*), "n");
    need_buffer(strings, n, "strings");
    for (size_t i = 0; i < n; ++i)
      if (!strings[i]) throw h5loom::UsageError(in_call("null string 'strings[" + std::to_string(i) + "]'"));
    need_strings(ds);
    std::vector<std::string> copies(strings, strings + n);
    ds.write(selection, std::move(copies));  // h5loom keeps the copies until the flush point
  });
}

loom_status loom_dataset_read_strings(loom_dataset* d, const loom_selection* sel, size_t n, char** out) {
  std::optional<h5loom::Selection> selection;
  if (out && n && n <= SIZE_MAX / sizeof(char*)) std::memset(out, 0, n * sizeof(char*));  // NULL until read
  return collective(
      __func__, comm_of(d),
      [&] {
        auto& ds = as_dataset(d);
        selection = to_selection(sel);
        fits_in_memory(n, sizeof(char*), "n");
        need_buffer(out, n, "out");
        need_strings(ds);
      },
      [&] {
        std::vector<std::string> got(n);
        d->dataset->read_raw(*selection, h5loom::Datatype::varstring(), got.data(), n);
        for (size_t i = 0; i < n; ++i) {
          out[i] = static_cast<char*>(std::malloc(got[i].size() + 1));
          if (!out[i]) {
            loom_strings_free(out, i);
            throw std::bad_alloc();
          }
          std::memcpy(out[i], got[i].c_str(), got[i].size() + 1);
        }
      });
}

loom_status loom_strings_free(char** strings, size_t n) {
  return guarded(__func__, [&] {
    if (!strings) return;
    for (size_t i = 0; i < n; ++i) {
      std::free(strings[i]);
      strings[i] = nullptr;
    }
  });
}

// ---- attributes of references and of any loom_type ----

loom_status loom_attr_write_ref(loom_object* o, const char* name, loom_ref ref) {
  return write_attribute(__func__, o, name, [&] { return h5loom::AttributeValue(to_ref(ref)); });
}

loom_status loom_attr_write_refs(loom_object* o, const char* name, size_t count, const loom_ref* refs) {
  return write_attribute(__func__, o, name, [&] {
    fits_in_memory(count, sizeof(loom_ref), "count");
    need_buffer(refs, count, "refs");
    return h5loom::AttributeValue::from_raw(h5loom::AttributeValue::Kind::Array, h5loom::Datatype::reference(), count,
                                            refs);
  });
}

loom_status loom_attr_read_refs(loom_object* o, const char* name, size_t count, loom_ref* out) {
  return guarded(__func__, [&] {
    auto& obj = as_object(o);
    text(name, "name");
    auto v = typed_attribute(obj, name, count);
    if (!v.dtype().is_reference())
      throw h5loom::DatatypeError(attribute_of(obj, name) + " holds " + v.dtype().name() +
                                  " values, not references" +
                                  (v.dtype().is_scalar() || v.dtype().is_enum() ? "; read it with loom_attr_read"
                                                                                 : "; read it with loom_attr_read_typed"));
    need_buffer(out, count, "out");
    const auto refs = v.as_references();
    for (size_t i = 0; i < count; ++i) out[i].token = refs[i].token;
  });
}

loom_status loom_attr_write_typed(loom_object* o, const char* name, const loom_type* type, loom_attr_kind kind,
                                  size_t count, const void* values) {
  return write_attribute(__func__, o, name, [&] {
    const auto& t = usable(type, "type");
    if (kind == LOOM_ATTR_EMPTY) {
      if (count != 0) throw h5loom::SelectionError(in_call("an empty attribute holds no value, not 'count' = " +
                                                           std::to_string(count)));
      return h5loom::AttributeValue::empty(t);
    }
    if (kind != LOOM_ATTR_SCALAR && kind != LOOM_ATTR_ARRAY)
      throw h5loom::UsageError(in_call("invalid loom_attr_kind value " + std::to_string(static_cast<int>(kind)) +
                                       " for 'kind' (LOOM_ATTR_SCALAR, LOOM_ATTR_ARRAY or LOOM_ATTR_EMPTY; strings: "
                                       "loom_attr_write_string(s))"));
    if (t.is_varstring())
      throw h5loom::DatatypeError(in_call("an attribute of variable-length strings is written with "
                                          "loom_attr_write_string or loom_attr_write_strings"));
    if (kind == LOOM_ATTR_SCALAR && count != 1)
      throw h5loom::SelectionError(in_call("a scalar attribute holds 1 value, not 'count' = " + std::to_string(count)));
    fits_in_memory(count, t.size(), "count");
    need_buffer(values, count, "values");
    return h5loom::AttributeValue::from_raw(static_cast<h5loom::AttributeValue::Kind>(kind), t, count, values);
  });
}

loom_status loom_attr_read_typed(loom_object* o, const char* name, const loom_type* mem_type, size_t count,
                                 void* out) {
  return guarded(__func__, [&] {
    auto& obj = as_object(o);
    text(name, "name");
    const auto& t = usable(mem_type, "mem_type");
    auto v = typed_attribute(obj, name, count);
    if (v.dtype().in_memory() != t.in_memory())
      throw h5loom::DatatypeError(attribute_of(obj, name) + " is of type " + v.dtype().name() + ", not " + t.name() +
                                  " (loom_attr_type gives its type)");
    fits_in_memory(count, t.size(), "count");
    need_buffer(out, count, "out");
    if (count) v.copy_elements(out);  // (variable-length parts malloc'd: loom_reclaim)
  });
}

loom_status loom_attr_type(loom_object* o, const char* name, loom_type** out) {
  return guarded(__func__, [&] {
    auto& obj = as_object(o);
    text(name, "name");
    need_out(out, "out");
    auto v = obj.attribute(name);
    if (!v.is_numeric() && !v.is_empty())
      throw h5loom::DatatypeError(attribute_of(obj, name) + " holds " + v.to_string() +
                                  ", a string attribute: it has no loom_type (loom_attr_read_string(_element))");
    auto t = std::make_unique<loom_type>();
    t->type = v.dtype();
    *out = t.release();
  });
}

}  // extern "C"
