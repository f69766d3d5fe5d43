// netCDF-4 files through h5loom (docs/netcdf.md): netCDF's data model -
// dimensions (fixed, and one unlimited record dimension), variables over them,
// attributes, fill values, define mode and data mode - written by any engine
// that yields an HDF5 file, following netCDF-4's HDF5 conventions so that
// ncdump, netCDF-C, python netCDF4 and xarray (netcdf4 and h5netcdf engines)
// read the files with their dimension names, and netCDF-C can append to them.
//
// What lands in the file, per netCDF-4's conventions (docs/formats/netcdf4.md):
//  * a dimension is an HDF5 dimension scale (CLASS = "DIMENSION_SCALE",
//    _Netcdf4Dimid = its id): its coordinate variable when there is one (a
//    1-D variable named after it), else a never-written dataset whose NAME
//    says "This is a netCDF dimension but not a netCDF variable.";
//  * a variable is a dataset whose DIMENSION_LIST holds a reference to each
//    axis' scale; each scale's REFERENCE_LIST names the variables using it.
//    Both are written whole, once per define mode, identically on every rank
//    (never H5DSattach_scale, whose per-call rewrite hangs parallel runs);
//  * _FillValue is an attribute of the variable's type and the dataset's fill
//    value; with none given, netCDF's default fill for the type;
//  * groups track link and attribute creation order; _NCProperties says who wrote it.
//
// Collective contract: every call is collective over the file's ranks (same
// order, same arguments) except Variable::write, which each rank calls with its
// own part as often as it likes; Variable::read is collective with per-rank
// boxes. Only the root group is a netCDF group here (no subgroups, no user types).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "h5loom/h5loom.hpp"
#include "h5loom/pio.hpp"

namespace h5loom::netcdf {

// define_dimension(name, kUnlimited): the record dimension (netCDF's NC_UNLIMITED).
constexpr uint64_t kUnlimitedLength = 0;

struct Dimension {
  std::string name;
  uint64_t length = 0;  // the unlimited one: the records so far
  bool unlimited = false;
  int id = 0;  // netCDF's dimid (_Netcdf4Dimid): definition order from 0
};

// netCDF's default fill value (NC_FILL_INT, NC_FILL_FLOAT, ...) for one of its
// numeric types: int8..uint64, float32, float64. DatatypeError otherwise.
std::vector<unsigned char> default_fill_value(const Datatype& dtype);

// Storage of one variable. Empty chunks: netCDF's defaults - a variable over
// the record dimension is chunked one record at a time (the rest of each
// record whole, halved along the slowest dimensions until a chunk is at most
// 4 MiB); other variables are contiguous unless compressed.
struct VariableOptions {
  Dims chunks;
  int deflate_level = 0;  // 1-9: HDF5's deflate filter (chunked)
  bool shuffle = false;   // byte shuffle before deflate
};

namespace detail {
struct NcState;
}

class Variable {
 public:
  const std::string& name() const;
  // One of netCDF's numeric types: int8 (NC_BYTE) ... uint64, float32, float64.
  Datatype dtype() const;
  // Its dimensions' names, slowest first; empty for a scalar variable.
  std::vector<std::string> dimensions() const;
  Dims shape() const;  // the record dimension's current length included
  bool is_record() const;  // its first dimension is the unlimited one
  bool is_coordinate() const;  // a 1-D variable named after its dimension

  // Attributes: numbers (a scalar is stored as netCDF's 1-element array),
  // text (a std::string: NC_CHAR) and lists of strings (NC_STRING). In define
  // and in data mode. "_FillValue" must have the variable's type and can only
  // be set before the variable is first defined in the file (end_define).
  void set_attribute(const std::string& name, const AttributeValue& value);
  AttributeValue attribute(const std::string& name) const;
  bool has_attribute(const std::string& name) const;
  // In the order they were set, without netCDF-4's bookkeeping attributes.
  std::vector<std::string> attribute_names() const;

  // The fill value, as netCDF's nc_def_var_fill: writes _FillValue.
  template <class T>
  void set_fill_value(T value) {
    set_attribute("_FillValue", AttributeValue(std::vector<T>{value}));
  }
  // One element of dtype(): _FillValue, or netCDF's default fill for the type.
  std::vector<unsigned char> fill_value() const;
  // Chunks and compression (nc_def_var_chunking / nc_def_var_deflate): before
  // the variable is first written to the file (end_define).
  void set_storage(const VariableOptions& options);
  VariableOptions storage() const;  // as asked for (empty chunks: the defaults)

  // ---- data mode ----
  // Writes the box of `count` elements from `start` (empty start and count:
  // the whole variable) from `n` elements at `data` (row-major). The buffer
  // may be reused at once (nc_put_vara semantics: the data is copied). A box
  // past the records written so far is refused: grow them with
  // File::set_records (collective) first.
  template <class T>
  void write(const Dims& start, const Dims& count, const std::vector<T>& data) {
    write_raw(start, count, datatype_of<T>(), data.data(), data.size());
  }
  void write_raw(const Dims& start, const Dims& count, Datatype dtype, const void* data, std::size_t n);
  // Collective: every rank reads its own box (count with a 0: nothing).
  template <class T>
  std::vector<T> read(const Dims& start = {}, const Dims& count = {}) const {
    std::vector<T> out(read_size(start, count));
    read_raw(start, count, datatype_of<T>(), out.data(), out.size());
    return out;
  }
  void read_raw(const Dims& start, const Dims& count, Datatype dtype, void* out, std::size_t n) const;
  // Collective: the elements of this rank's box (SelectionError on every rank if any box is bad).
  std::size_t read_size(const Dims& start, const Dims& count) const;

  // The HDF5 dataset underneath (data mode): what pio::Rearrangement writes
  // with its frame, and what tools read.
  Dataset dataset() const;

 private:
  friend class File;
  Variable(std::shared_ptr<detail::NcState> file, std::size_t index) : file_(std::move(file)), index_(index) {}
  Selection selection(const Dims& start, const Dims& count) const;
  std::shared_ptr<detail::NcState> file_;
  std::size_t index_;
};

class File {
 public:
  // A new netCDF-4 file (an existing one is replaced), in define mode.
  static File create(const std::string& path, const FileOptions& options = {});
  // An existing netCDF-4 file (h5loom's or netCDF-C's), in data mode. Its
  // dimensions come from the scales; each variable's from its DIMENSION_LIST
  // (else _Netcdf4Coordinates). ConfigError naming the variable if neither says.
  static File open(const std::string& path, Mode mode = Mode::Read, const FileOptions& options = {});

  // ---- define mode ----
  // length kUnlimitedLength: the unlimited (record) dimension; at most one.
  Dimension define_dimension(const std::string& name, uint64_t length);
  // dims: names of defined dimensions, slowest first; the unlimited one may
  // only come first. A 1-D variable named after its dimension is that
  // dimension's coordinate variable (define it in the same define mode as the dimension).
  Variable define_variable(const std::string& name, const Datatype& dtype, const std::vector<std::string>& dims,
                           const VariableOptions& options = {});
  // Writes what was defined (collective) and enters data mode.
  void end_define();
  // Back to define mode (nc_redef): new dimensions, variables and fill values.
  void redefine();
  bool in_define_mode() const;

  // Global attributes (any mode), as Variable's.
  void set_attribute(const std::string& name, const AttributeValue& value);
  AttributeValue attribute(const std::string& name) const;
  bool has_attribute(const std::string& name) const;
  std::vector<std::string> attribute_names() const;

  std::vector<Dimension> dimensions() const;  // by id
  Dimension dimension(const std::string& name) const;  // NotFoundError naming it
  std::vector<Variable> variables() const;  // in definition order (netCDF's varids)
  Variable variable(const std::string& name) const;  // NotFoundError naming it
  bool has_variable(const std::string& name) const;

  // ---- PIO's distributed arrays (data mode; collective) ----
  // PIO's write_darray: this rank's n elements (its decomposition's
  // local_size, in map order) of `dtype` - converted to the variable's type as
  // netCDF converts - into record `frame` of `var` (the records grow to frame+1
  // if needed), or for a variable without the record dimension into the whole
  // variable (frame 0). The rearrangement moves them at once; the engine writes
  // them at the next flush point, which comes when the darray data buffered
  // since the last one passes darray_buffer_limit() (PIO's buffer limit).
  void write_darray(Variable& var, pio::Rearrangement& r, uint64_t frame, Datatype dtype, const void* local,
                    std::size_t n);
  template <class T>
  void write_darray(Variable& var, pio::Rearrangement& r, uint64_t frame, const std::vector<T>& local) {
    write_darray(var, r, frame, datatype_of<T>(), local.data(), local.size());
  }
  // PIO's read_darray: this rank's elements of record `frame` (holes: the fill value).
  void read_darray(Variable& var, pio::Rearrangement& r, uint64_t frame, Datatype dtype, void* local, std::size_t n);
  template <class T>
  std::vector<T> read_darray(Variable& var, pio::Rearrangement& r, uint64_t frame = 0) {
    std::vector<T> out(r.local_size());
    read_darray(var, r, frame, datatype_of<T>(), out.data(), out.size());
    return out;
  }
  // Bytes of darray data - the variables' whole records, as the I/O tasks
  // hold them, over all ranks - written between flush points (default 256 MiB).
  void set_darray_buffer_limit(uint64_t bytes);
  uint64_t darray_buffer_limit() const;

  // ---- data mode; collective ----
  // The unlimited dimension's length (0 without one).
  uint64_t records() const;
  // Grows every record variable and the record dimension to `n` records (never shrinks).
  void set_records(uint64_t n);
  void sync();   // a flush point: every write so far is durable
  void close();  // leaves define mode first, as nc_close does
  bool is_open() const;

  // The h5loom file underneath.
  h5loom::File& storage();

 private:
  explicit File(std::shared_ptr<detail::NcState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::NcState> state_;
};

}  // namespace h5loom::netcdf
