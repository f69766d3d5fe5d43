// Value types shared by the object model and the engine interface:
// shapes, dataset creation specs and attribute values (datatypes: datatype.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "h5loom/datatype.hpp"
#include "h5loom/errors.hpp"

namespace h5loom {

using Dims = std::vector<uint64_t>;
// The most dimensions a dataset may have (HDF5's H5S_MAX_RANK; every engine's limit).
constexpr std::size_t kMaxRank = 32;
// A maximum extent that can grow without bound (HDF5's H5S_UNLIMITED).
constexpr uint64_t kUnlimited = ~uint64_t{0};

std::string dims_to_string(const Dims& d);  // "[4, 5]"; unlimited prints as "inf"
uint64_t product(const Dims& d);
// The row-major (C order) linear index of element `at` in an array of `shape`.
uint64_t row_major_index(const Dims& at, const Dims& shape);

// What a path names. Datatype: a named (committed) datatype, in engines
// declaring the conformance group "named_types".
enum class ObjectKind { None, Group, Dataset, Datatype };

// An external link (engines declaring the conformance group "external_links"):
// a name for the object at `path` of another file, `file` as the link was
// made (HDF5 finds a relative name beside the linking file, then in the
// working directory). h5loom never opens that file itself: the name is
// nothing to kind() and visit(), and readers follow it (HDF5 and the VOL
// connector do).
struct ExternalLink {
  std::string file;
  std::string path;  // absolute, in that file
  bool operator==(const ExternalLink& o) const { return file == o.file && path == o.path; }
};

// A link of a user-defined class (engines declaring the conformance group
// "user_defined_links"): HDF5's H5Lcreate_ud, class 64 (the external class) to
// 255, whose value h5loom keeps as the bytes given and never follows or reads.
// An external link whose value is a well-formed external-link value is an
// ExternalLink; this holds the rest - a value HDF5 keeps without checking it
// (and fails to follow) and the links of classes an application registered.
struct UserDefinedLink {
  int link_class = 0;                // 64..255; 0 for a link the engine holds but cannot describe
  std::optional<std::string> value;  // the link's value, as given; none for a link the engine cannot describe
  // (The hdf5 engine reads a link through its class's HDF5 query callback,
  // which fails for an external-class value that is not an external link's:
  // HDF5 itself cannot tell that link's class or value, only that it exists.)
  bool described() const { return link_class != 0 && value.has_value(); }
  bool operator==(const UserDefinedLink& o) const { return link_class == o.link_class && value == o.value; }
};
constexpr int kUserDefinedLinkClassMin = 64;   // HDF5's H5L_TYPE_UD_MIN (= H5L_TYPE_EXTERNAL)
constexpr int kUserDefinedLinkClassMax = 255;  // HDF5's H5L_TYPE_MAX
// Why an HDF5 reader could not hold `link` safely, or empty. HDF5 follows an
// external-class value whose first byte is 0 (version 0, no flags) as an
// external link, reading its file name and path up to their NULs - past the
// value's end if they are not there (and an empty value has no first byte).
// A well-formed one is an ExternalLink; h5loom keeps no other such value.
inline std::string unsafe_user_defined_link(const UserDefinedLink& link) {
  if (link.link_class != kUserDefinedLinkClassMin || !link.value) return {};
  if (link.value->empty()) return "an external-class link value cannot be empty";
  if (link.value->front() == '\0')
    return "an external-class link value starting with a 0 byte (version 0) must be a packed external link "
           "(a file name and an object path, each NUL-terminated): HDF5 would read past it";
  return {};
}

enum class Layout { Contiguous, Chunked };

// A dataset's bytes kept in another file (HDF5's external storage): `size`
// bytes at `offset` of `file`; a relative name resolves against
// HDF5_EXTFILE_PREFIX or the working directory of the reader.
struct ExternalSegment {
  std::string file;
  uint64_t offset = 0, size = 0;
};

// One box of a virtual dataset (HDF5's VDS): the elements [start, start+count)
// are the whole of dataset `dataset` (of shape `count`) in `file` ("." : this file)
// - or, if `source_shape` is given, the box [source_start, source_start +
// source_count) of that dataset of shape `source_shape`, which may differ from
// the box in rank and shape but not in its number of elements (taken row-major).
// Repeated boxes, as HDF5's regular hyperslabs (H5Sselect_hyperslab's stride
// and block): with `block` given, the virtual selection is `count` blocks of
// shape `block`, `stride` apart, from `start`; with `source_block` given, so is
// the source's (`source_count` blocks, `source_stride` apart). Both sides
// have the same number of elements, taken row-major.
struct VirtualMapping {
  Dims start, count;
  std::string file = ".";
  std::string dataset;
  Dims source_shape, source_start, source_count;
  Dims stride, block, source_stride, source_block;
};

// What create_dataset asks for. Empty max_shape: fixed size (= shape).
// Empty chunks with Layout::Chunked: the engine picks ("auto", about 1 MiB).
// layout_auto: the engine decides contiguous or chunked (chunked if extendable).
// One filter of HDF5's pipeline (H5Pset_filter): what is applied to each chunk
// on its way to the file - compression, byte shuffling, checksums - and undone
// on the way back. Engines declaring the conformance group "filters" keep a
// dataset's filters: the hdf5 engine applies them (HDF5's built-in filters and
// any registered or plugin filter); the log engine records them and keeps its
// log uncompressed - `h5loom convert` applies them in the native file.
struct Filter {
  static constexpr uint32_t kDeflate = 1, kShuffle = 2, kFletcher32 = 3, kSzip = 4, kNbit = 5, kScaleOffset = 6;
  uint32_t id = 0;               // HDF5's filter id (above, or a registered filter's: zstd is 32015)
  std::vector<uint32_t> params;  // the filter's client data (deflate: the level, 0-9)
  bool optional = false;         // H5Z_FLAG_OPTIONAL: skipped for a chunk it cannot apply to
  std::string name;              // as HDF5 names it, for messages (not compared)
  bool operator==(const Filter& o) const { return id == o.id && params == o.params && optional == o.optional; }
  bool operator!=(const Filter& o) const { return !(*this == o); }
};

struct DatasetSpec {
  Datatype dtype = Datatype::Float64;
  Dims shape;
  Dims max_shape;
  Layout layout = Layout::Contiguous;
  bool layout_auto = true;
  Dims chunks;
  // The value of elements never written: one element of dtype (empty: zero).
  // Engines declaring the conformance group "fill" keep it.
  std::vector<unsigned char> fill;

  // Storage outside the engine's own (conformance group "external"): the
  // dataset's bytes, row-major, are the concatenation of `external` (then it
  // is contiguous and fixed in size); or its boxes map other datasets
  // (`virtual_map`; elements no box covers read as the fill value).
  std::vector<ExternalSegment> external;
  std::vector<VirtualMapping> virtual_map;

  // HDF5's null dataspace (H5S_NULL, h5py's Empty): a dataset of a type and
  // no elements, not even a shape - leave shape, max_shape and chunks empty.
  // It cannot grow; reads and writes select nothing. Engines declaring the
  // conformance group "null_spaces" keep it; to them it comes with shape {0}.
  bool null_space = false;

  // Filters, in the order they apply on writing (chunked datasets: with
  // layout_auto the dataset is chunked; a contiguous layout is refused).
  std::vector<Filter> filters;

  // A name for each dimension ("z", "y", "x"; "" leaves one unnamed), or none
  // at all: what Zarr v3 calls dimension_names and xarray shows as the
  // dimensions of a variable. Engines declaring the conformance group
  // "dimension_names" keep them (the zarr engine); others refuse them.
  std::vector<std::string> dim_names;

  // The named datatype (absolute path, engines declaring "named_types") whose
  // type dtype is, shared as HDF5 shares a committed datatype: its reference
  // count (link_count) counts the dataset while it exists. Empty: its own type.
  std::string named_type;

  template <class T>
  void fill_with(T value) {
    fill.resize(sizeof(T));
    std::memcpy(fill.data(), &value, sizeof(T));
  }
};

struct DatasetInfo {
  Datatype dtype = Datatype::Float64;
  Dims shape;
  Dims max_shape;
  Layout layout = Layout::Contiguous;
  Dims chunks;  // empty unless chunked
  std::vector<unsigned char> fill;  // one element of dtype; empty: zero
  bool null_space = false;  // HDF5's null dataspace (DatasetSpec::null_space): shape {0}, fixed
  std::vector<Filter> filters;  // DatasetSpec::filters
  std::vector<std::string> dim_names;  // DatasetSpec::dim_names (empty: none)
  std::string named_type;  // DatasetSpec::named_type; empty if its own, or if the named datatype is gone
};

// A scalar, a 1-D array of one numeric type, a string, or a 1-D array of strings
// (openPMD's axisLabels). Scalars and arrays may also be of any fixed-size
// datatype (compounds, enums, references: netCDF's REFERENCE_LIST is an array
// of {dataset: reference, dim: int32}), built with from_raw. Or no value at
// all, only a type: AttributeValue::empty(dtype) (HDF5's null dataspace,
// h5py's Empty; engines declaring the conformance group "null_spaces").
class AttributeValue {
 public:
  enum class Kind { Scalar, Array, String, StringArray, Empty };

  AttributeValue() = default;
  template <class T, class = std::enable_if_t<(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) ||
                                              std::is_same_v<T, Float16>>>
  AttributeValue(T v) : kind_(Kind::Scalar), dtype_(datatype_of<T>()), count_(1) {
    bytes_.resize(sizeof(T));
    std::memcpy(bytes_.data(), &v, sizeof(T));
  }
  template <class T>
  AttributeValue(const std::vector<T>& v) : kind_(Kind::Array), dtype_(datatype_of<T>()), count_(v.size()) {
    bytes_.resize(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(bytes_.data(), v.data(), bytes_.size());
  }
  AttributeValue(std::string s) : kind_(Kind::String), text_(std::move(s)) {}
  AttributeValue(const char* s) : AttributeValue(std::string(s)) {}
  AttributeValue(std::vector<std::string> strings) : kind_(Kind::StringArray), strings_(std::move(strings)) {}
  // Object references (Group::reference) as an attribute: one, or a 1-D array.
  AttributeValue(ObjectRef r) : AttributeValue(from_raw(Kind::Scalar, Datatype::reference(), 1, &r)) {}
  AttributeValue(const std::vector<ObjectRef>& refs)
      : AttributeValue(from_raw(Kind::Array, Datatype::reference(), refs.size(), refs.data())) {}

  // Raw constructor used by engines: `count` elements of `dtype` at `data`
  // (any fixed-size datatype; strings are Kind::String with `count` bytes).
  // Elements with variable-length parts (variable_length.hpp) are in HDF5's
  // memory layout; the value keeps its own packed copy of them.
  static AttributeValue from_raw(Kind kind, Datatype dtype, std::size_t count, const void* data);
  // The value again from what data() and byte_size() gave (an engine's stored
  // bytes: packed for types with variable-length parts; CorruptionError if
  // those are damaged).
  static AttributeValue from_stored(Kind kind, Datatype dtype, std::size_t count, const void* data, std::size_t size);
  // An attribute of type `dtype` (any, variable-length strings too) and no value.
  static AttributeValue empty(Datatype dtype);

  Kind kind() const { return kind_; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_string_array() const { return kind_ == Kind::StringArray; }
  bool is_numeric() const { return kind_ == Kind::Scalar || kind_ == Kind::Array; }
  bool is_empty() const { return kind_ == Kind::Empty; }
  Datatype dtype() const { return dtype_; }      // meaningless for strings
  // Elements for numbers and string arrays, bytes for a string.
  std::size_t size() const { return is_string() ? text_.size() : is_string_array() ? strings_.size() : count_; }
  // The elements' bytes - for types with variable-length parts their packed
  // form (variable_length.hpp), byte_size() of them: use copy_elements.
  const void* data() const { return bytes_.data(); }
  std::size_t byte_size() const { return bytes_.size(); }
  // The size() elements of a Scalar or Array value into `out`, in memory
  // layout; variable-length parts allocated with malloc (release them with
  // reclaim_variable_length).
  void copy_elements(void* out) const;

  // Numeric values convert to the requested type (attributes are metadata; a
  // `time` stored as float32 reads as double). Strings never convert.
  template <class T>
  T as() const {
    auto v = as_vector<T>();
    if (kind_ != Kind::Scalar && v.size() != 1)
      throw DatatypeError("attribute holds an array of " + std::to_string(v.size()) +
                          " values, not a scalar");
    return v.at(0);
  }
  template <class T>
  std::vector<T> as_vector() const {
    require_numeric();
    std::vector<T> out(count_);
    for (std::size_t i = 0; i < count_; ++i) out[i] = static_cast<T>(element_as_double_or_int<T>(i));
    return out;
  }
  // A string, or a scalar of a fixed-length string type (its text up to a NUL).
  const std::string& as_string() const;
  // A list of strings, or an array of a fixed-length string type.
  const std::vector<std::string>& as_strings() const;
  // The references of a reference attribute (a scalar gives one).
  std::vector<ObjectRef> as_references() const;
  // The value with each object reference it holds - anywhere: in members,
  // inside variable-length sequences (netCDF's DIMENSION_LIST) - passed
  // through fn (copies between files translate them); itself if it holds none.
  AttributeValue with_references_translated(const std::function<void(ObjectRef&)>& fn) const;

  // The named datatype (absolute path) this value's type is shared from, as
  // DatasetSpec::named_type: its reference count counts the attribute. Empty:
  // its own type. Not part of the value: == ignores it.
  const std::string& named_type() const { return named_type_; }
  AttributeValue& set_named_type(std::string path) {
    named_type_ = std::move(path);
    return *this;
  }

  std::string to_string() const;  // human-readable, for tools and error messages
  bool operator==(const AttributeValue& o) const {
    return kind_ == o.kind_ && dtype_ == o.dtype_ && count_ == o.count_ && bytes_ == o.bytes_ &&
           text_ == o.text_ && strings_ == o.strings_;
  }
  bool operator!=(const AttributeValue& o) const { return !(*this == o); }

 private:
  void require_numeric() const;
  template <class T>
  T element_as_double_or_int(std::size_t i) const;

  Kind kind_ = Kind::Scalar;
  Datatype dtype_ = Datatype::Int32;
  std::size_t count_ = 0;
  std::vector<unsigned char> bytes_;
  std::string text_;
  std::vector<std::string> strings_;
  std::string named_type_;
};

namespace detail {

// Whether the number v is a value of T, so that static_cast<T>(v) is
// defined and keeps it: an integer in T's range; a floating value whose
// integer part is (T an integer type: converting truncates toward zero) -
// never a NaN or an infinity; any value for a floating T but a finite one
// beyond its largest (a double past float's range).
template <class T, class From>
bool is_value_of(From v) {
  if constexpr (std::is_same_v<From, Float16>) {
    return is_value_of<T>(v.to_float());
  } else if constexpr (!std::is_arithmetic_v<T>) {
    return true;  // Float16: too large a value becomes an infinity, as numpy's
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_floating_point_v<From> && sizeof(From) > sizeof(T))
      return !(std::isfinite(v) && (v > std::numeric_limits<T>::max() || v < std::numeric_limits<T>::lowest()));
    return true;
  } else if constexpr (std::is_floating_point_v<From>) {
    const From whole = std::trunc(v);
    const From past = std::ldexp(From(1), std::numeric_limits<T>::digits);  // T's largest + 1
    return whole < past && whole >= (std::is_signed_v<T> ? -past : From(0));  // false for a NaN
  } else if constexpr (std::is_signed_v<From> == std::is_signed_v<T>) {
    if constexpr (sizeof(From) <= sizeof(T)) return true;
    else return v >= From(std::numeric_limits<T>::min()) && v <= From(std::numeric_limits<T>::max());
  } else if constexpr (std::is_signed_v<From>) {  // to an unsigned T
    return v >= 0 && std::make_unsigned_t<From>(v) <= std::numeric_limits<T>::max();
  } else {  // unsigned to a signed T
    return v <= std::make_unsigned_t<T>(std::numeric_limits<T>::max());
  }
}

// "attribute value -1.93428e+26 (element 3 of its float32 values) is not a value of int64".
[[noreturn]] void throw_not_a_value_of(const std::string& value, std::size_t element, const Datatype& stored,
                                       const std::string& wanted);
// The shortest text that reads back as v ("-1.93428e+26", "nan"); `single`:
// as the float v holds.
std::string number_text(double v, bool single = false);
// A number of any scalar type as text, at its own precision (for errors).
template <class From>
std::string value_text(From v) {
  if constexpr (std::is_same_v<From, Float16>) return number_text(v.to_float(), true);
  else if constexpr (std::is_floating_point_v<From>) return number_text(v, sizeof v == 4);
  else return std::to_string(v);
}
template <class T>
std::string type_name_of() {
  if constexpr (std::is_same_v<T, Float16>) return "float16";
  else if constexpr (std::is_floating_point_v<T>) return sizeof(T) == 4 ? "float32" : "float64";
  else return (std::is_signed_v<T> ? "int" : "uint") + std::to_string(8 * sizeof(T));
}

}  // namespace detail

template <class T>
T AttributeValue::element_as_double_or_int(std::size_t i) const {
  const unsigned char* p = bytes_.data() + i * datatype_size(dtype_);
  return dispatch_scalar(dtype_.scalar(), [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p, sizeof v);
    if (!detail::is_value_of<T>(v))
      detail::throw_not_a_value_of(detail::value_text(v), i, dtype_, detail::type_name_of<T>());
    return static_cast<T>(v);
  });
}

}  // namespace h5loom
