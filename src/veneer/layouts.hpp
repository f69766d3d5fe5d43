// How each series layout names and describes things. The veneer (series.cpp)
// does the bookkeeping once; a layout only answers "where does this go and
// which attributes does the standard want". Adding a layout = one more class.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "h5loom/series.hpp"

namespace h5loom::detail {

struct FieldGeometry {
  std::vector<double> origin, spacing;
};

class LayoutRules {
 public:
  virtual ~LayoutRules() = default;
  virtual SeriesLayout kind() const = 0;

  // ---- file and steps ----
  virtual void init_file(File& f) const = 0;
  virtual std::string step_path(uint64_t n) const = 0;
  virtual std::vector<uint64_t> list_steps(const File& f) const = 0;
  // Throws unless step n may be written after `existing` (sorted).
  virtual void check_new_step(const std::vector<uint64_t>& existing, uint64_t n, const std::string& file) const = 0;
  virtual void init_step(Group& step, double time, double dt) const = 0;
  virtual double step_time(const Group& step) const = 0;
  virtual double step_dt(const Group& step) const = 0;
  // Step attributes the layout owns (hidden from attribute_names()).
  virtual bool is_layout_step_attribute(const std::string& name) const = 0;

  // ---- particles ----
  virtual std::string species_path(uint64_t step, const std::string& species) const = 0;
  virtual std::string array_path(const std::string& species_path, const std::string& array) const = 0;
  // Attributes (and companion records) of a newly created particle array.
  virtual void describe_array(File& f, const std::string& species_path, const std::string& array,
                              Dataset& ds, uint64_t global_count) const = 0;
  virtual std::vector<std::string> list_arrays(const File& f, const std::string& species_path) const = 0;
  virtual std::vector<std::string> list_species(const File& f, uint64_t step) const = 0;

  // ---- fields ----
  virtual std::string field_path(uint64_t step, const std::string& name) const = 0;
  virtual std::string component_path(const std::string& field_path, int component, int components) const = 0;
  virtual void describe_field(File& f, const std::string& field_path, const FieldSpec& spec) const = 0;
  // Number of components of an existing field (0 if there is none).
  virtual int count_components(const File& f, const std::string& field_path) const = 0;
  virtual FieldGeometry geometry(const File& f, const std::string& field_path, std::size_t ndim) const = 0;
  virtual std::vector<std::string> list_fields(const File& f, uint64_t step) const = 0;
};

std::unique_ptr<LayoutRules> make_layout(SeriesLayout layout);
// The layout of an existing file, from its root attributes and members.
SeriesLayout detect_layout(const File& f);

}  // namespace h5loom::detail
