// Element conversion and selections between HDF5 applications and the object model.
#include "vol/transfer.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "hdf5lib/hid.hpp"
#include "hdf5lib/types.hpp"
#include "h5loom/variable_length.hpp"

namespace h5loom::vol {

using hdf5lib::Hid;

// ---- elements -----------------------------------------------------------------------

Elements::Elements(Datatype t, std::size_t count) : dtype(std::move(t)), n(count) {
  if (dtype.is_varstring()) {
    strings = std::make_shared<std::vector<std::string>>(count);
  } else if (dtype.has_variable_length_parts()) {
    // The parts its elements point to are the Elements' own: released with them.
    bytes = std::shared_ptr<std::vector<unsigned char>>(
        new std::vector<unsigned char>(count * datatype_size(dtype)), [t = dtype](std::vector<unsigned char>* v) {
          reclaim_variable_length(t, v->data(), v->size() / t.size());
          delete v;
        });
  } else {
    bytes = std::make_shared<std::vector<unsigned char>>(count * datatype_size(dtype));
  }
}

void Elements::copy_from(const Elements& src, std::size_t from, std::size_t to, std::size_t count) {
  if (strings) {
    std::copy(src.strings->begin() + from, src.strings->begin() + from + count, strings->begin() + to);
  } else if (dtype.has_variable_length_parts()) {
    const std::size_t size = datatype_size(dtype);
    reclaim_variable_length(dtype, bytes->data() + to * size, count);
    copy_variable_length(dtype, src.bytes->data() + from * size, bytes->data() + to * size, count);
  } else {
    const std::size_t size = datatype_size(dtype);
    std::memcpy(bytes->data() + to * size, src.bytes->data() + from * size, count * size);
  }
}

namespace {

bool is_string_type(hid_t t) { return H5Tget_class(t) == H5T_STRING; }
bool is_vlen_string(hid_t t) { return is_string_type(t) && H5Tis_variable_str(t) > 0; }

[[noreturn]] void no_conversion(hid_t mem_type, const Datatype& dtype) {
  H5Eclear2(H5E_DEFAULT);
  throw DatatypeError("no conversion between the memory type (HDF5 class " + std::to_string(int(H5Tget_class(mem_type))) +
                      ", " + std::to_string(H5Tget_size(mem_type)) + " bytes) and the stored type " + dtype.name());
}

// H5Tconvert of `n` elements from `src_type` at `src` to `dst_type` at `dst`;
// `bkg` (n elements of dst_type, or null) holds what the destination keeps.
// Variable-length parts HDF5 makes are allocated as `dxpl` says (by default malloc).
void convert(hid_t src_type, const void* src, hid_t dst_type, void* dst, std::size_t n,
             const std::function<std::vector<unsigned char>()>& background, const Datatype& dtype, hid_t mem_type,
             hid_t dxpl = H5P_DEFAULT) {
  if (n == 0) return;
  H5T_cdata_t* cdata = nullptr;
  if (!H5Tfind(src_type, dst_type, &cdata)) no_conversion(mem_type, dtype);
  const std::size_t ssize = H5Tget_size(src_type), dsize = H5Tget_size(dst_type);
  std::vector<unsigned char> buf(n * std::max(ssize, dsize));
  std::memcpy(buf.data(), src, n * ssize);
  std::vector<unsigned char> bkg;
  if (cdata && cdata->need_bkg == H5T_BKG_YES) {
    if (!background)
      throw DatatypeError("the memory type has fewer compound members than " + dtype.name() +
                          ": writing part of a compound's members is refused (the other members would be lost)");
    bkg = background();
  } else if (cdata && cdata->need_bkg == H5T_BKG_TEMP) {
    bkg.assign(n * dsize, 0);
  }
  if (H5Tconvert(src_type, dst_type, n, buf.data(), bkg.empty() ? nullptr : bkg.data(), dxpl) < 0)
    no_conversion(mem_type, dtype);
  std::memcpy(dst, buf.data(), n * dsize);
}

}  // namespace

namespace {
// A 16-bit float that is not IEEE half precision, anywhere in the type.
bool has_half_float(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  if (cls == H5T_FLOAT) return H5Tget_size(type) == 2 && !hdf5lib::is_ieee_half(type);
  if (cls == H5T_ARRAY) {
    Hid element(H5Tget_super(type), H5Tclose);
    return has_half_float(element.get());
  }
  if (cls != H5T_COMPOUND) return false;
  const int n = H5Tget_nmembers(type);
  for (int i = 0; i < n; ++i) {
    Hid m(H5Tget_member_type(type, unsigned(i)), H5Tclose);
    if (has_half_float(m.get())) return true;
  }
  return false;
}
}  // namespace

Datatype model_type(hid_t type, const std::string& what) {
  if (!has_half_float(type)) return hdf5lib::datatype_of_hdf5(type, what);
  if (H5Tget_class(type) == H5T_FLOAT) return Datatype::Float32;
  if (H5Tget_class(type) == H5T_ARRAY) {
    Hid element(H5Tget_super(type), H5Tclose);
    std::vector<hsize_t> dims(std::size_t(std::max(H5Tget_array_ndims(type), 0)));
    H5Tget_array_dims2(type, dims.data());
    return Datatype::array(model_type(element.get(), what), std::vector<uint64_t>(dims.begin(), dims.end()));
  }
  // A compound with such floats: members in order, packed after widening.
  const int n = H5Tget_nmembers(type);
  std::vector<std::pair<std::size_t, int>> order;  // (offset, index): members in the order of their offsets
  for (int i = 0; i < n; ++i) order.emplace_back(H5Tget_member_offset(type, unsigned(i)), i);
  std::sort(order.begin(), order.end());
  std::vector<Member> members;
  std::size_t at = 0;
  for (const auto& [offset, i] : order) {
    char* name = H5Tget_member_name(type, unsigned(i));
    Member m;
    m.name = name ? name : "";
    H5free_memory(name);
    Hid mt(H5Tget_member_type(type, unsigned(i)), H5Tclose);
    m.type = model_type(mt.get(), what + "." + m.name);
    m.offset = at;
    at += datatype_size(m.type);
    members.push_back(std::move(m));
  }
  return Datatype::compound(std::move(members));
}

bool same_type(hid_t mem_type, const Datatype& dtype) {
  if (dtype.is_varstring()) return false;  // char* in HDF5's memory, std::string in h5loom's
  // Fixed-length strings of the same length are the same bytes: padding and
  // character set are how HDF5 reads them, not what they are.
  if (dtype.is_string()) return is_string_type(mem_type) && !is_vlen_string(mem_type) && H5Tget_size(mem_type) == dtype.size();
  Hid t = hdf5lib::memory_type(dtype);
  return H5Tequal(mem_type, t.get()) > 0;
}

namespace {
// HDF5's variable-length C strings in memory (char*), UTF-8.
Hid vlen_c_strings() {
  Hid t(H5Tcopy(H5T_C_S1), H5Tclose);
  if (t.get() < 0 || H5Tset_size(t.get(), H5T_VARIABLE) < 0 || H5Tset_cset(t.get(), H5T_CSET_UTF8) < 0)
    throw DatatypeError("cannot make a variable-length string type");
  return t;
}

// `n` elements of `mem_type` (not a string type) converted by HDF5 into char*
// pointers (which the caller frees): applications may hand strings in a type
// of their own with a conversion they registered - h5py's Python objects (an
// opaque "PYTHON:OBJECT" type) convert to and from variable-length strings.
std::vector<char*> pointers_from(hid_t mem_type, const void* src, std::size_t n) {
  Hid vlen = vlen_c_strings();
  const std::size_t size = std::max(H5Tget_size(mem_type), sizeof(char*));
  std::vector<unsigned char> buf(n * size);
  std::memcpy(buf.data(), src, n * H5Tget_size(mem_type));
  if (H5Tconvert(mem_type, vlen.get(), n, buf.data(), nullptr, H5P_DEFAULT) < 0) {
    H5Eclear2(H5E_DEFAULT);
    throw DatatypeError("the memory type (HDF5 class " + std::to_string(int(H5Tget_class(mem_type))) +
                        ") is not a string type and HDF5 has no conversion of it to strings");
  }
  std::vector<char*> out(n);
  std::memcpy(out.data(), buf.data(), n * sizeof(char*));
  return out;
}
}  // namespace

std::vector<std::string> strings_from(hid_t mem_type, const void* src, std::size_t n) {
  if (!is_string_type(mem_type)) {
    std::vector<char*> p = pointers_from(mem_type, src, n);
    std::vector<std::string> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = p[i] ? p[i] : "";
      H5free_memory(p[i]);
    }
    return out;
  }
  std::vector<std::string> out(n);
  if (is_vlen_string(mem_type)) {
    auto* p = static_cast<char* const*>(src);
    for (std::size_t i = 0; i < n; ++i) out[i] = p[i] ? p[i] : "";
    return out;
  }
  const std::size_t width = H5Tget_size(mem_type);
  const bool spaces = H5Tget_strpad(mem_type) == H5T_STR_SPACEPAD;
  auto* p = static_cast<const char*>(src);
  for (std::size_t i = 0; i < n; ++i) {
    std::string s(p + i * width, width);
    s.resize(std::strlen(s.c_str()));
    if (spaces) s.erase(s.find_last_not_of(' ') == std::string::npos ? 0 : s.find_last_not_of(' ') + 1);
    out[i] = std::move(s);
  }
  return out;
}

void strings_to(const std::vector<std::string>& s, hid_t mem_type, void* dst) {
  if (!is_string_type(mem_type)) {
    // Through HDF5's conversion from variable-length strings (h5py's to Python objects).
    Hid vlen = vlen_c_strings();
    const std::size_t size = std::max(H5Tget_size(mem_type), sizeof(char*));
    std::vector<unsigned char> buf(s.size() * size);
    std::vector<const char*> p(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) p[i] = s[i].c_str();
    std::memcpy(buf.data(), p.data(), p.size() * sizeof(char*));
    if (H5Tconvert(vlen.get(), mem_type, s.size(), buf.data(), nullptr, H5P_DEFAULT) < 0) {
      H5Eclear2(H5E_DEFAULT);
      throw DatatypeError("strings cannot be read into a memory type of HDF5 class " +
                          std::to_string(int(H5Tget_class(mem_type))) + " (no conversion from strings)");
    }
    std::memcpy(dst, buf.data(), s.size() * H5Tget_size(mem_type));
    return;
  }
  if (is_vlen_string(mem_type)) {
    // Allocated as HDF5 allocates variable-length data: released with H5free_memory or H5Treclaim.
    auto* p = static_cast<char**>(dst);
    for (std::size_t i = 0; i < s.size(); ++i) {
      p[i] = static_cast<char*>(H5allocate_memory(s[i].size() + 1, false));
      if (!p[i]) throw IOError("out of memory for a string of " + std::to_string(s[i].size()) + " bytes");
      std::memcpy(p[i], s[i].c_str(), s[i].size() + 1);
    }
    return;
  }
  const std::size_t width = H5Tget_size(mem_type);
  const H5T_str_t pad = H5Tget_strpad(mem_type);
  auto* p = static_cast<char*>(dst);
  for (std::size_t i = 0; i < s.size(); ++i) {
    char* e = p + i * width;
    std::memset(e, pad == H5T_STR_SPACEPAD ? ' ' : '\0', width);
    // As HDF5 copies strings of one type: a string as long as the type keeps
    // no terminating NUL, even with NUL-terminated padding.
    std::memcpy(e, s[i].data(), std::min(width, s[i].size()));
  }
}

Elements to_model(hid_t mem_type, const void* src, std::size_t n, const Datatype& dtype,
                  const std::function<Elements()>& background) {
  Elements out(dtype, n);
  if (n == 0) return out;
  if (dtype.is_varstring()) {
    *out.strings = strings_from(mem_type, src, n);
  } else if (same_type(mem_type, dtype) && dtype.has_variable_length_parts()) {
    copy_variable_length(dtype, src, out.data(), n);  // the application keeps its parts
  } else if (same_type(mem_type, dtype)) {
    std::memcpy(out.data(), src, n * datatype_size(dtype));
  } else if (dtype.is_string() && is_vlen_string(mem_type)) {
    Hid t = hdf5lib::memory_type(dtype);
    strings_to(strings_from(mem_type, src, n), t.get(), out.data());
  } else {
    Hid t = hdf5lib::memory_type(dtype);
    std::function<std::vector<unsigned char>()> bkg;
    // (Not for variable-length parts: the stored elements' parts would have
    // to outlive the conversion and be copied again; such writes are refused.)
    if (background && !dtype.has_variable_length_parts()) bkg = [&] { return *background().bytes; };
    convert(mem_type, src, t.get(), out.data(), n, bkg, dtype, mem_type);
  }
  return out;
}

void from_model(const Elements& src, hid_t mem_type, void* dst, hid_t dxpl) {
  if (src.n == 0) return;
  const Datatype& dtype = src.dtype;
  if (dtype.is_varstring()) {
    strings_to(*src.strings, mem_type, dst);
  } else if (same_type(mem_type, dtype) && dtype.has_variable_length_parts()) {
    // The application's own parts, from its allocator (H5Pset_vlen_mem_manager;
    // by default malloc, which H5Treclaim frees).
    PartMemory memory;
    if (dxpl != H5P_DEFAULT &&
        H5Pget_vlen_mem_manager(dxpl, &memory.allocate, &memory.allocate_info, &memory.release, &memory.release_info) < 0)
      throw UsageError("cannot read the variable-length memory manager of the transfer properties");
    copy_variable_length(dtype, src.data(), dst, src.n, memory);
  } else if (same_type(mem_type, dtype)) {
    std::memcpy(dst, src.data(), src.n * datatype_size(dtype));
  } else if (dtype.is_string() && is_vlen_string(mem_type)) {
    Hid t = hdf5lib::memory_type(dtype);
    strings_to(strings_from(t.get(), src.data(), src.n), mem_type, dst);
  } else {
    Hid t = hdf5lib::memory_type(dtype);
    const std::size_t msize = H5Tget_size(mem_type);
    convert(t.get(), src.data(), mem_type, dst, src.n,
            [&] { return std::vector<unsigned char>(static_cast<unsigned char*>(dst),
                                                    static_cast<unsigned char*>(dst) + src.n * msize); },
            dtype, mem_type, dxpl);
  }
}

// ---- selections ----------------------------------------------------------------

FileSelection file_selection(hid_t file_space, const Dims& shape, const std::string& what) {
  FileSelection f;
  if (file_space == H5S_ALL) {
    f.sel = Selection::all();
    f.n = product(shape);
    return f;
  }
  if (H5Sget_simple_extent_type(file_space) == H5S_NULL) return f;  // no elements (sel stays none)
  const int rank = H5Sget_simple_extent_ndims(file_space);
  if (rank < 0) throw SelectionError("invalid file dataspace for " + what);
  if (rank == 0 && shape == Dims{1} && H5Sget_simple_extent_type(file_space) == H5S_SCALAR) {
    // A scalar, stored as shape [1] (dataset.cpp).
    f.n = H5Sget_select_npoints(file_space) > 0 ? 1 : 0;
    f.sel = f.n ? Selection::all() : Selection::none();
    return f;
  }
  if (std::size_t(rank) != shape.size())
    throw SelectionError("the file dataspace of " + what + " has " + std::to_string(rank) +
                         " dimensions, the dataset " + std::to_string(shape.size()));
  const hssize_t npoints = H5Sget_select_npoints(file_space);
  if (npoints < 0) throw SelectionError("invalid selection in the file dataspace of " + what);
  f.n = uint64_t(npoints);
  const H5S_sel_type type = H5Sget_select_type(file_space);
  if (type == H5S_SEL_NONE || npoints == 0) return f;  // sel stays none
  if (type == H5S_SEL_ALL) {
    f.sel = Selection::all();
    return f;
  }
  std::vector<hsize_t> start(rank), stride(rank), count(rank), block(rank);
  if (type == H5S_SEL_HYPERSLABS && H5Sis_regular_hyperslab(file_space) > 0 &&
      H5Sget_regular_hyperslab(file_space, start.data(), stride.data(), count.data(), block.data()) >= 0) {
    f.sel = Selection::hyperslab(hdf5lib::from_hsize(start.data(), rank), hdf5lib::from_hsize(count.data(), rank),
                                 hdf5lib::from_hsize(stride.data(), rank), hdf5lib::from_hsize(block.data(), rank));
    return f;
  }
  // Points, or a union of hyperslabs: pieces along the last dimension, in
  // HDF5's element order, within the bounding box.
  std::vector<hsize_t> lo(rank), hi(rank), extent(rank);
  if (H5Sget_select_bounds(file_space, lo.data(), hi.data()) < 0 ||
      H5Sget_simple_extent_dims(file_space, extent.data(), nullptr) < 0)
    throw SelectionError("cannot read the selection of " + what);
  Dims box_start(rank), box_count(rank);
  for (int d = 0; d < rank; ++d) {
    if (hi[d] >= shape[d])
      throw SelectionError("the selection of " + what + " reaches index " + std::to_string(hi[d]) + " in dimension " +
                           std::to_string(d) + ", outside the dataset's shape " + dims_to_string(shape));
    box_start[d] = lo[d];
    box_count[d] = hi[d] - lo[d] + 1;
  }
  f.irregular = true;
  f.sel = Selection::box(box_start, box_count);
  hid_t iter = H5Ssel_iter_create(file_space, 1, 0);
  if (iter < 0) throw SelectionError("cannot iterate over the selection of " + what);
  struct Close {
    hid_t id;
    ~Close() { H5Ssel_iter_close(id); }
  } close{iter};
  constexpr std::size_t kMax = 1024;
  std::vector<hsize_t> off(kMax);
  std::vector<size_t> len(kMax);
  const uint64_t row = extent[rank - 1];
  for (;;) {
    size_t nseq = 0, nbytes = 0;
    if (H5Ssel_iter_get_seq_list(iter, kMax, SIZE_MAX, &nseq, &nbytes, off.data(), len.data()) < 0)
      throw SelectionError("cannot iterate over the selection of " + what);
    if (nseq == 0) break;
    for (size_t s = 0; s < nseq; ++s) {
      uint64_t at = off[s], left = len[s];
      while (left > 0) {
        Dims coord(rank);
        uint64_t rest = at;
        for (int d = rank - 1; d >= 0; --d) {
          coord[d] = rest % extent[d];
          rest /= extent[d];
        }
        const uint64_t take = std::min<uint64_t>(left, row - coord[rank - 1]);
        f.piece_start.push_back(std::move(coord));
        f.piece_len.push_back(take);
        at += take;
        left -= take;
      }
    }
  }
  return f;
}

MemorySelection memory_selection(hid_t mem_space, hid_t file_space, const FileSelection& file) {
  MemorySelection m;
  m.n = file.n;
  if (mem_space == H5S_ALL) {
    if (file_space == H5S_ALL) return m;
    mem_space = file_space;  // the buffer is shaped like the file dataspace, with the same selection
  }
#ifdef H5S_BLOCK
  if (mem_space == H5S_BLOCK) return m;
  if (mem_space == H5S_PLIST) unsupported("memory selections from the transfer properties (H5S_PLIST)");
#endif
  const hssize_t npoints = H5Sget_select_npoints(mem_space);
  if (npoints < 0) throw SelectionError("invalid memory dataspace");
  if (uint64_t(npoints) != file.n)
    throw SelectionError("the memory selection has " + std::to_string(npoints) + " elements, the file selection " +
                         std::to_string(file.n));
  if (H5Sget_select_type(mem_space) != H5S_SEL_ALL) m.space = mem_space;
  return m;
}

std::vector<unsigned char> gather(const MemorySelection& m, hid_t type, const void* buf) {
  const std::size_t size = H5Tget_size(type);
  std::vector<unsigned char> out(m.n * size);
  if (m.n == 0) return out;
  if (H5Dgather(m.space, buf, type, out.size(), out.data(), nullptr, nullptr) < 0)
    throw SelectionError("cannot gather the memory selection");
  return out;
}

namespace {
struct ScatterSource {
  const void* data;
  std::size_t bytes;
  bool given = false;
};
herr_t scatter_source(const void** buf, size_t* bytes, void* op_data) {
  auto* s = static_cast<ScatterSource*>(op_data);
  if (s->given) return -1;
  *buf = s->data;
  *bytes = s->bytes;
  s->given = true;
  return 0;
}
}  // namespace

void scatter(const MemorySelection& m, hid_t type, const void* src, void* buf) {
  if (m.n == 0) return;
  ScatterSource s{src, m.n * H5Tget_size(type)};
  if (H5Dscatter(scatter_source, &s, type, m.space, buf) < 0) throw SelectionError("cannot scatter into the memory selection");
}

}  // namespace h5loom::vol
