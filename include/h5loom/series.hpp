// The H5Part-style veneer: a series of steps, each holding particle species and
// block fields, written in the openPMD 1.1 layout or the H5Part/H5hut layout
// (chosen at creation, detected when reading). See docs/series.md.
//
// The collective rules of h5loom.hpp apply: every call is collective except the
// data writes (ParticleSpecies::write, Field::write), which each rank makes for
// its own data. Step::close() (or the next write_step, or closing the series)
// ends a step: it is a flush point, and buffers given to deferred writes must
// stay valid until then.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "h5loom/h5loom.hpp"

namespace h5loom {

enum class SeriesLayout {
  OpenPMD,  // /data/<n>/particles/<species>/<record>/<component>, /data/<n>/meshes/<field>
  H5Part,   // /Step#<n>/<array>, /Step#<n>/Block/<field>/0..2
};

std::string layout_name(SeriesLayout layout);  // "openpmd" / "h5part"
SeriesLayout layout_from_name(const std::string& name);

struct SeriesOptions {
  FileOptions file;
  SeriesLayout layout = SeriesLayout::OpenPMD;  // for new files; read from existing ones
};

namespace detail {
struct SeriesState;
}

// One particle species of one step. Writing: set_local_count() (collective: the
// global size and this rank's offset come from an exclusive scan), then write()
// each array, in the same order on every rank. Reading: any of the read_* calls.
class ParticleSpecies {
 public:
  const std::string& name() const { return name_; }

  // ---- writing ----
  void set_local_count(uint64_t n);
  uint64_t local_count() const { return local_count_; }
  uint64_t offset() const { return offset_; }  // this rank's first global index
  uint64_t global_count() const;
  // `local_count()` elements; deferred until the step ends (keep the buffer).
  template <class T>
  void write(const std::string& array, const T* data) {
    write_raw(array, datatype_of<T>(), data, nullptr);
  }
  template <class T>
  void write(const std::string& array, const std::vector<T>& data) {
    check_local_size(array, data.size());
    write(array, data.data());
  }
  void write_raw(const std::string& array, Datatype dtype, const void* data, std::shared_ptr<const void> keep_alive);

  // ---- reading (collective; every rank may ask for a different part) ----
  std::vector<std::string> arrays() const;  // e.g. x, y, z, px, id
  Datatype dtype(const std::string& array) const;
  template <class T>
  std::vector<T> read(const std::string& array) const {
    return read_range<T>(array, 0, global_count());
  }
  template <class T>
  std::vector<T> read_range(const std::string& array, uint64_t begin, uint64_t end) const {
    std::vector<T> out(end > begin ? end - begin : 0);
    read_range_raw(array, begin, end, datatype_of<T>(), out.data());
    return out;
  }
  // Any indices, in any order, repeats allowed; the result follows `indices`.
  template <class T>
  std::vector<T> read_indices(const std::string& array, const std::vector<uint64_t>& indices) const {
    std::vector<T> out(indices.size());
    read_indices_raw(array, indices, datatype_of<T>(), out.data());
    return out;
  }
  // An even split over the reading ranks, whatever the number of writers was.
  std::pair<uint64_t, uint64_t> my_share() const;
  template <class T>
  std::vector<T> read_my_share(const std::string& array) const {
    auto [b, e] = my_share();
    return read_range<T>(array, b, e);
  }
  void read_range_raw(const std::string& array, uint64_t begin, uint64_t end, Datatype dtype, void* out) const;
  void read_indices_raw(const std::string& array, const std::vector<uint64_t>& indices, Datatype dtype,
                        void* out) const;

 private:
  friend class Step;
  ParticleSpecies(std::shared_ptr<detail::SeriesState> s, uint64_t step, std::string name)
      : series_(std::move(s)), step_(step), name_(std::move(name)) {}
  void check_local_size(const std::string& array, std::size_t n) const;
  Dataset dataset(const std::string& array) const;
  std::shared_ptr<detail::SeriesState> series_;
  uint64_t step_;
  std::string name_;
  uint64_t local_count_ = 0, offset_ = 0, global_count_ = 0;
  bool counted_ = false;
};

// What a new field looks like. Arrays are C-ordered (last index fastest): a 3-D
// field is [z][y][x] (H5hut's k, j, i). origin/spacing/axis_labels follow the
// array's dimension order.
struct FieldSpec {
  Dims global_shape;
  int components = 1;  // 1 (scalar) or 3 (vector)
  Datatype dtype = Datatype::Float64;
  std::vector<double> origin;         // default zeros
  std::vector<double> spacing;        // default ones
  std::vector<std::string> axis_labels;  // default z, y, x (the last ones for fewer dimensions)
  double unit_si = 1.0;
  std::array<double, 7> unit_dimension{};  // openPMD's L, M, T, I, theta, N, J powers
};

class Field {
 public:
  const std::string& name() const { return name_; }
  const Dims& global_shape() const { return shape_; }
  int components() const { return components_; }
  Datatype dtype() const { return dtype_; }
  std::vector<double> origin() const;
  std::vector<double> spacing() const;

  // Writes this rank's box. `local` holds local_shape elements: the box plus
  // `ghost` cells on every side, which are dropped. `offset` is where the box
  // (without ghosts) starts in the global grid. Boxes may differ in size.
  template <class T>
  void write(const T* local, const Dims& local_shape, const Dims& offset, uint64_t ghost = 0, int component = 0) {
    write_raw(datatype_of<T>(), local, local_shape, offset, ghost, component);
  }
  void write_raw(Datatype dtype, const void* local, const Dims& local_shape, const Dims& offset, uint64_t ghost,
                 int component);

  // Collective: each rank reads the box [lo, lo+count) plus `halo` cells on every
  // side (its neighbours' data), padded with `fill` outside the domain. The result
  // has shape count + 2*halo. A rank that needs nothing passes count zeros.
  template <class T>
  std::vector<T> read(const Dims& lo, const Dims& count, uint64_t halo = 0, T fill = T{}, int component = 0) const {
    Dims padded = count;
    for (auto& c : padded) c += 2 * halo;
    std::vector<T> out(product(count) ? product(padded) : 0);
    read_raw(datatype_of<T>(), out.data(), lo, count, halo, &fill, component);
    return out;
  }
  void read_raw(Datatype dtype, void* out, const Dims& lo, const Dims& count, uint64_t halo, const void* fill,
                int component) const;

 private:
  friend class Step;
  Field(std::shared_ptr<detail::SeriesState> s, uint64_t step, std::string name)
      : series_(std::move(s)), step_(step), name_(std::move(name)) {}
  Dataset component_dataset(int component) const;
  std::shared_ptr<detail::SeriesState> series_;
  uint64_t step_;
  std::string name_;
  Dims shape_;
  int components_ = 1;
  Datatype dtype_ = Datatype::Float64;
};

class Step {
 public:
  uint64_t index() const { return index_; }
  double time() const;
  double dt() const;
  // Step attributes (beyond time and dt).
  void set_attribute(const std::string& name, const AttributeValue& value);
  AttributeValue attribute(const std::string& name) const;
  std::vector<std::string> attribute_names() const;
  // True for the attributes the layout owns (time, dt, TimeValue, ...).
  bool is_layout_attribute(const std::string& name) const;

  ParticleSpecies particles(const std::string& species);
  std::vector<std::string> particle_species() const;
  // Creates a field (writing) ...
  Field field(const std::string& name, const FieldSpec& spec);
  // ... or opens one (reading).
  Field field(const std::string& name) const;
  std::vector<std::string> fields() const;

  // Ends the step: a collective flush point. Idempotent.
  void close();

  // The step's group in the file (/data/<n> or /Step#<n>), for extra data.
  Group group() const;

 private:
  friend class Series;
  Step(std::shared_ptr<detail::SeriesState> s, uint64_t index) : series_(std::move(s)), index_(index) {}
  std::shared_ptr<detail::SeriesState> series_;
  uint64_t index_;
};

class Series {
 public:
  // A new file in options.layout (an existing file is truncated).
  static Series create(const std::string& filename, const SeriesOptions& options = {});
  // An existing file, read-write: new steps continue after the last one.
  static Series append(const std::string& filename, const FileOptions& options = {});
  // An existing file, read-only; the layout is detected.
  static Series open(const std::string& filename, const FileOptions& options = {});

  SeriesLayout layout() const;
  File& file();

  // File attributes (user metadata; the layout's own attributes are written for you).
  void set_attribute(const std::string& name, const AttributeValue& value);
  AttributeValue attribute(const std::string& name) const;

  // Starts step n (ending any open step). openPMD: n must exceed every existing
  // step; h5part: n must be the number of existing steps (0, 1, 2, ... without gaps).
  Step write_step(uint64_t n, double time, double dt = 0.0);
  std::vector<uint64_t> steps() const;  // sorted
  Step step(uint64_t n) const;          // NotFoundError if absent

  void close();  // ends any open step, closes the file

 private:
  explicit Series(std::shared_ptr<detail::SeriesState> s) : state_(std::move(s)) {}
  std::shared_ptr<detail::SeriesState> state_;
};

}  // namespace h5loom
