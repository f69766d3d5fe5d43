#include "hdf5lib/types.hpp"
#include <cstring>

namespace h5loom::hdf5lib {

namespace {

// IEEE half precision, in this host's byte order (h5loom's Float16 in memory)
// or little-endian (in files). HDF5 has it from 1.14.4.
hid_t half_type(bool big_endian) {
#if H5_VERSION_GE(1, 14, 4)
  return big_endian ? H5T_IEEE_F16BE : H5T_IEEE_F16LE;
#else
  (void)big_endian;
  throw DatatypeError("float16 needs HDF5 1.14.4 or later (this is " H5_VERS_INFO ")");
#endif
}

hid_t native_scalar(Scalar s) {
  switch (s) {
    case Scalar::Int8: return H5T_NATIVE_INT8;
    case Scalar::Int16: return H5T_NATIVE_INT16;
    case Scalar::Int32: return H5T_NATIVE_INT32;
    case Scalar::Int64: return H5T_NATIVE_INT64;
    case Scalar::UInt8: return H5T_NATIVE_UINT8;
    case Scalar::UInt16: return H5T_NATIVE_UINT16;
    case Scalar::UInt32: return H5T_NATIVE_UINT32;
    case Scalar::UInt64: return H5T_NATIVE_UINT64;
    case Scalar::Float32: return H5T_NATIVE_FLOAT;
    case Scalar::Float64: return H5T_NATIVE_DOUBLE;
    case Scalar::Float16: return half_type(H5Tget_order(H5T_NATIVE_INT) == H5T_ORDER_BE);
  }
  return H5I_INVALID_HID;
}

// In files: little-endian unless the type says big-endian.
hid_t standard_scalar(Scalar s, ByteOrder order) {
  const bool be = order == ByteOrder::Big;
  switch (s) {
    case Scalar::Int8: return be ? H5T_STD_I8BE : H5T_STD_I8LE;
    case Scalar::Int16: return be ? H5T_STD_I16BE : H5T_STD_I16LE;
    case Scalar::Int32: return be ? H5T_STD_I32BE : H5T_STD_I32LE;
    case Scalar::Int64: return be ? H5T_STD_I64BE : H5T_STD_I64LE;
    case Scalar::UInt8: return be ? H5T_STD_U8BE : H5T_STD_U8LE;
    case Scalar::UInt16: return be ? H5T_STD_U16BE : H5T_STD_U16LE;
    case Scalar::UInt32: return be ? H5T_STD_U32BE : H5T_STD_U32LE;
    case Scalar::UInt64: return be ? H5T_STD_U64BE : H5T_STD_U64LE;
    case Scalar::Float32: return be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE;
    case Scalar::Float64: return be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE;
    case Scalar::Float16: return half_type(be);
  }
  return H5I_INVALID_HID;
}

// The HDF5 type of a scalar (or an enum's base) in memory or in files.
hid_t scalar_type(const Datatype& t, bool in_file) {
  return in_file ? standard_scalar(t.scalar(), t.byte_order()) : native_scalar(t.scalar());
}

// One builder for both: memory (native numbers) or files (standard ones, in the type's byte order).
Hid build(const Datatype& t, bool in_file) {
  const std::string what = "making the HDF5 type of " + t.name();
  switch (t.type_class()) {
    case Datatype::Class::Scalar: return checked(H5Tcopy(scalar_type(t, in_file)), H5Tclose, what);
    case Datatype::Class::String: {
      Hid s = checked(H5Tcopy(H5T_C_S1), H5Tclose, what);
      check(H5Tset_size(s.get(), t.size()), what);
      // The same padding in memory and in files: HDF5 copies the bytes as they are.
      static const H5T_str_t pads[] = {H5T_STR_NULLPAD, H5T_STR_NULLTERM, H5T_STR_SPACEPAD};  // by Padding
      check(H5Tset_strpad(s.get(), pads[static_cast<int>(t.padding())]), what);
      check(H5Tset_cset(s.get(), t.charset() == Datatype::Charset::Utf8 ? H5T_CSET_UTF8 : H5T_CSET_ASCII), what);
      return s;
    }
    case Datatype::Class::VarString: {
      // In memory the engine hands HDF5 `const char*` pointers (hdf5lib::VarStrings).
      Hid s = checked(H5Tcopy(H5T_C_S1), H5Tclose, what);
      check(H5Tset_size(s.get(), H5T_VARIABLE), what);
      check(H5Tset_cset(s.get(), t.charset() == Datatype::Charset::Utf8 ? H5T_CSET_UTF8 : H5T_CSET_ASCII), what);
      return s;
    }
    // HDF5's object references (hobj_ref_t): an ObjectRef's token is the object's address.
    case Datatype::Class::Reference: return checked(H5Tcopy(H5T_STD_REF_OBJ), H5Tclose, what);
    case Datatype::Class::Enum: {
      Hid e = checked(H5Tenum_create(scalar_type(t, in_file)), H5Tclose, what);
      for (const auto& [name, value] : t.enum_values()) {
        // The value in the base type's own representation.
        unsigned char bytes[8] = {};
        const int64_t number = value;  // (a structured binding cannot be captured in C++17)
        dispatch_scalar(t.scalar(), [&](auto v) {
          v = static_cast<decltype(v)>(number);
          std::memcpy(bytes, &v, sizeof v);
          return 0;
        });
        if (in_file) check(H5Tconvert(native_scalar(t.scalar()), scalar_type(t, true), 1, bytes, nullptr, H5P_DEFAULT),
                           what);
        check(H5Tenum_insert(e.get(), name.c_str(), bytes), what);
      }
      return e;
    }
    case Datatype::Class::Opaque: {
      Hid o = checked(H5Tcreate(H5T_OPAQUE, t.size()), H5Tclose, what);
      // HDF5 gives a type without a tag the tag "" as well.
      if (!t.opaque_tag().empty()) check(H5Tset_tag(o.get(), t.opaque_tag().c_str()), what);
      return o;
    }
    case Datatype::Class::Sequence: {
      Hid element = build(t.sequence_element(), in_file);
      return checked(H5Tvlen_create(element.get()), H5Tclose, what);
    }
    case Datatype::Class::Array: {
      Hid element = build(t.array_element(), in_file);
      std::vector<hsize_t> dims(t.array_dims().begin(), t.array_dims().end());
      return checked(H5Tarray_create2(element.get(), unsigned(dims.size()), dims.data()), H5Tclose, what);
    }
    case Datatype::Class::Compound: {
      Hid c = checked(H5Tcreate(H5T_COMPOUND, t.size()), H5Tclose, what);
      for (const auto& m : t.members()) {
        Hid mt = build(m.type, in_file);
        check(H5Tinsert(c.get(), m.name.c_str(), m.offset, mt.get()), what + ", member '" + m.name + "'");
      }
      return c;
    }
  }
  throw DatatypeError("no HDF5 type for " + t.name());
}

}  // namespace

bool is_ieee_half(hid_t type) {
  size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
  return H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) >= 0 && spos == 15 && epos == 10 &&
         esize == 5 && mpos == 0 && msize == 10 && H5Tget_ebias(type) == 15;
}

namespace {

Scalar scalar_of_hdf5(hid_t type, const std::string& object) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  if (cls == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
    switch (size) {
      case 1: return is_signed ? Scalar::Int8 : Scalar::UInt8;
      case 2: return is_signed ? Scalar::Int16 : Scalar::UInt16;
      case 4: return is_signed ? Scalar::Int32 : Scalar::UInt32;
      case 8: return is_signed ? Scalar::Int64 : Scalar::UInt64;
    }
  } else if (cls == H5T_FLOAT) {
    if (size == 4) return Scalar::Float32;
    if (size == 8) return Scalar::Float64;
    if (size == 2 && is_ieee_half(type)) return Scalar::Float16;
  }
  throw DatatypeError("'" + object + "' has an HDF5 datatype that h5loom does not support (class " +
                      std::to_string(static_cast<int>(cls)) + ", " + std::to_string(size) + " bytes)");
}

ByteOrder order_of(hid_t number) { return H5Tget_order(number) == H5T_ORDER_BE ? ByteOrder::Big : ByteOrder::Little; }

}  // namespace

// Scalars are HDF5's predefined types, used as they are (not copied and
// closed at every transfer: codes that write row by row make many).
Hid memory_type(const Datatype& t) {
  return t.is_scalar() ? Hid(native_scalar(t.scalar()), nullptr) : build(t, /*in_file=*/false);
}
Hid file_type(const Datatype& t) {
  return t.is_scalar() ? Hid(scalar_type(t, /*in_file=*/true), nullptr) : build(t, /*in_file=*/true);
}

Datatype datatype_of_hdf5(hid_t type, const std::string& object) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::string what = "reading the datatype of '" + object + "'";
  if (cls == H5T_STRING) {
    const auto charset = H5Tget_cset(type) == H5T_CSET_UTF8 ? Datatype::Charset::Utf8 : Datatype::Charset::Ascii;
    const htri_t variable = H5Tis_variable_str(type);
    if (variable < 0) fail(what);
    if (variable > 0) return Datatype::varstring(charset);
    const H5T_str_t pad = H5Tget_strpad(type);
    const auto padding = pad == H5T_STR_NULLTERM   ? Datatype::Padding::NullTerm
                         : pad == H5T_STR_SPACEPAD ? Datatype::Padding::SpacePad
                                                   : Datatype::Padding::NullPad;
    return Datatype::string(H5Tget_size(type), charset, padding);
  }
  if (cls == H5T_REFERENCE) {
    if (H5Tequal(type, H5T_STD_REF_OBJ) > 0) return Datatype::reference();
    throw DatatypeError("'" + object + "' holds HDF5 region references, which h5loom does not support "
                        "(object references it does)");
  }
  if (cls == H5T_ENUM) {
    Hid base = checked(H5Tget_super(type), H5Tclose, what);
    const Scalar s = scalar_of_hdf5(base.get(), object);
    const int n = H5Tget_nmembers(type);
    if (n < 0) fail(what);
    std::vector<std::pair<std::string, int64_t>> values;
    for (int i = 0; i < n; ++i) {
      char* name = H5Tget_member_name(type, unsigned(i));
      if (!name) fail(what);
      std::string member(name);
      H5free_memory(name);
      unsigned char bytes[8] = {};
      check(H5Tget_member_value(type, unsigned(i), bytes), what);
      // To the native representation, then to int64.
      check(H5Tconvert(base.get(), native_scalar(s), 1, bytes, nullptr, H5P_DEFAULT), what);
      const int64_t value = dispatch_scalar(s, [&](auto v) {
        std::memcpy(&v, bytes, sizeof v);
        return static_cast<int64_t>(v);
      });
      values.emplace_back(std::move(member), value);
    }
    return Datatype::enumeration(s, std::move(values)).with_byte_order(order_of(base.get()));
  }
  if (cls == H5T_OPAQUE) {
    char* tag = H5Tget_tag(type);
    if (!tag) fail(what);
    std::string text(tag);
    H5free_memory(tag);
    return Datatype::opaque(H5Tget_size(type), std::move(text));
  }
  if (cls == H5T_VLEN) {
    Hid element = checked(H5Tget_super(type), H5Tclose, what);
    return Datatype::sequence(datatype_of_hdf5(element.get(), object));
  }
  if (cls == H5T_ARRAY) {
    Hid element = checked(H5Tget_super(type), H5Tclose, what);
    const int rank = H5Tget_array_ndims(type);
    if (rank < 1) fail(what);
    std::vector<hsize_t> dims(std::size_t(rank), 0);
    if (H5Tget_array_dims2(type, dims.data()) != rank) fail(what);
    return Datatype::array(datatype_of_hdf5(element.get(), object), std::vector<uint64_t>(dims.begin(), dims.end()));
  }
  if (cls == H5T_COMPOUND) {
    const int n = H5Tget_nmembers(type);
    if (n < 0) fail(what);
    std::vector<Member> members;
    for (int i = 0; i < n; ++i) {
      char* name = H5Tget_member_name(type, unsigned(i));
      if (!name) fail(what);
      Member m;
      m.name = name;
      H5free_memory(name);
      m.offset = H5Tget_member_offset(type, unsigned(i));
      Hid mt = checked(H5Tget_member_type(type, unsigned(i)), H5Tclose, what);
      m.type = datatype_of_hdf5(mt.get(), object + "." + m.name);
      members.push_back(std::move(m));
    }
    return Datatype::compound(std::move(members), H5Tget_size(type));
  }
  return Datatype(scalar_of_hdf5(type, object)).with_byte_order(order_of(type));
}

std::vector<const char*> string_pointers(const std::string* strings, std::size_t n) {
  std::vector<const char*> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = strings[i].c_str();
  return out;
}

void take_strings(std::vector<char*>& from, std::string* out) {
  for (std::size_t i = 0; i < from.size(); ++i) {
    out[i] = from[i] ? from[i] : "";
    H5free_memory(from[i]);  // HDF5's allocator made them (H5Dvlen_reclaim would do the same)
    from[i] = nullptr;
  }
}

std::string committed_type_path(hid_t type, const std::string& what) {
  const htri_t committed = H5Tcommitted(type);
  if (committed < 0) throw IOError("cannot tell whether " + what + " is a committed datatype");
  if (committed == 0) return {};
  const ssize_t len = H5Iget_name(type, nullptr, 0);
  if (len <= 0) return {};  // its last link went: HDF5 keeps it for its users, nameless
  std::string path(std::size_t(len) + 1, '\0');
  if (H5Iget_name(type, path.data(), path.size()) < 0) throw IOError("cannot name the committed datatype of " + what);
  path.resize(std::size_t(len));
  return path;
}

}  // namespace h5loom::hdf5lib
