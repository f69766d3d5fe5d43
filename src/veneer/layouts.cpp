// The two series layouts: openPMD 1.1 (group-based iteration encoding) and
// H5Part/H5hut. docs/series.md shows the HDF5 tree each one produces.
#include "veneer/layouts.hpp"

#include <algorithm>
#include <ctime>

namespace h5loom::detail {

namespace {

std::optional<uint64_t> parse_index(const std::string& s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoull(s);
}

std::vector<double> reversed(std::vector<double> v) {
  std::reverse(v.begin(), v.end());
  return v;
}

std::vector<double> or_default(const std::vector<double>& v, std::size_t n, double value) {
  return v.empty() ? std::vector<double>(n, value) : v;
}

// ---------------------------------------------------------------------------
// openPMD 1.1: /data/<n>/particles/<species>/<record>[/<component>],
//              /data/<n>/meshes/<field>[/<component>]
// ---------------------------------------------------------------------------
class OpenPmdLayout final : public LayoutRules {
 public:
  SeriesLayout kind() const override { return SeriesLayout::OpenPMD; }

  void init_file(File& f) const override {
    f.set_attribute("openPMD", "1.1.0");
    f.set_attribute("openPMDextension", uint32_t(0));
    f.set_attribute("basePath", "/data/%T/");
    f.set_attribute("meshesPath", "meshes/");
    f.set_attribute("particlesPath", "particles/");
    f.set_attribute("iterationEncoding", "groupBased");
    f.set_attribute("iterationFormat", "/data/%T/");
    f.set_attribute("software", "h5loom");
    f.set_attribute("softwareVersion", "0.1.0");
  }

  std::string step_path(uint64_t n) const override { return "/data/" + std::to_string(n); }

  std::vector<uint64_t> list_steps(const File& f) const override {
    std::vector<uint64_t> out;
    if (f.kind("/data") != ObjectKind::Group) return out;
    for (const auto& name : f.group("/data").list())
      if (auto n = parse_index(name)) out.push_back(*n);
    std::sort(out.begin(), out.end());
    return out;
  }

  void check_new_step(const std::vector<uint64_t>& existing, uint64_t n, const std::string& file) const override {
    if (!existing.empty() && n <= existing.back())
      throw UsageError("cannot write step " + std::to_string(n) + " to series '" + file +
                       "': steps are written in increasing order and step " + std::to_string(existing.back()) +
                       " exists");
  }

  void init_step(Group& step, double time, double dt) const override {
    step.set_attribute("time", time);
    step.set_attribute("dt", dt);
    step.set_attribute("timeUnitSI", 1.0);
  }
  double step_time(const Group& step) const override { return step.attribute("time").as<double>(); }
  double step_dt(const Group& step) const override { return step.attribute("dt").as<double>(); }
  bool is_layout_step_attribute(const std::string& name) const override {
    return name == "time" || name == "dt" || name == "timeUnitSI";
  }

  std::string species_path(uint64_t step, const std::string& species) const override {
    return step_path(step) + "/particles/" + species;
  }

  // x, y, z -> position/x..; px, py, pz -> momentum/x..; "rec/comp" -> as given; else a scalar record.
  static std::pair<std::string, std::string> record_of(const std::string& array) {
    if (array == "x" || array == "y" || array == "z") return {"position", array};
    if (array == "px" || array == "py" || array == "pz") return {"momentum", array.substr(1)};
    auto slash = array.find('/');
    if (slash != std::string::npos) return {array.substr(0, slash), array.substr(slash + 1)};
    return {array, ""};
  }

  static std::vector<double> unit_dimension_of(const std::string& record) {
    std::vector<double> u(7, 0.0);  // L, M, T, I, theta, N, J
    if (record == "position" || record == "positionOffset") u[0] = 1;
    if (record == "momentum") u = {1, 1, -1, 0, 0, 0, 0};
    return u;
  }

  std::string array_path(const std::string& species_path, const std::string& array) const override {
    auto [record, component] = record_of(array);
    return species_path + "/" + record + (component.empty() ? "" : "/" + component);
  }

  void describe_array(File& f, const std::string& species_path, const std::string& array, Dataset& ds,
                      uint64_t global_count) const override {
    auto [record, component] = record_of(array);
    ds.set_attribute("unitSI", 1.0);
    Object* record_object = &ds;
    std::optional<Group> record_group;
    if (!component.empty()) {
      record_group = f.group(species_path + "/" + record);
      record_object = &*record_group;
    }
    if (!record_object->has_attribute("unitDimension")) {
      record_object->set_attribute("unitDimension", unit_dimension_of(record));
      record_object->set_attribute("timeOffset", 0.0f);
    }
    // openPMD requires positionOffset next to position: a constant record of zeros.
    if (record == "position") {
      Group offset = f.create_group(species_path + "/positionOffset/" + component);
      offset.set_attribute("value", 0.0);
      offset.set_attribute("shape", std::vector<uint64_t>{global_count});
      offset.set_attribute("unitSI", 1.0);
      Group offset_record = f.group(species_path + "/positionOffset");
      if (!offset_record.has_attribute("unitDimension")) {
        offset_record.set_attribute("unitDimension", unit_dimension_of("positionOffset"));
        offset_record.set_attribute("timeOffset", 0.0f);
      }
    }
  }

  std::vector<std::string> list_arrays(const File& f, const std::string& species_path) const override {
    std::vector<std::string> out;
    Group species = f.group(species_path);
    for (const auto& record : species.list()) {
      if (record == "positionOffset") continue;
      if (species.kind(record) == ObjectKind::Dataset) {
        out.push_back(record);
        continue;
      }
      Group rec = species.group(record);
      for (const auto& component : rec.list()) {
        if (rec.kind(component) != ObjectKind::Dataset) continue;  // constant components
        if (record == "position") out.push_back(component);
        else if (record == "momentum") out.push_back("p" + component);
        else out.push_back(record + "/" + component);
      }
    }
    return out;
  }

  std::vector<std::string> list_species(const File& f, uint64_t step) const override {
    std::string p = step_path(step) + "/particles";
    return f.kind(p) == ObjectKind::Group ? f.group(p).list() : std::vector<std::string>{};
  }

  std::string field_path(uint64_t step, const std::string& name) const override {
    return step_path(step) + "/meshes/" + name;
  }

  std::string component_path(const std::string& field_path, int component, int components) const override {
    static const char* names[] = {"x", "y", "z"};
    return components == 1 ? field_path : field_path + "/" + names[component];
  }

  void describe_field(File& f, const std::string& field_path, const FieldSpec& spec) const override {
    const std::size_t nd = spec.global_shape.size();
    Object* record = nullptr;
    std::optional<Group> group;
    std::optional<Dataset> scalar;
    if (spec.components == 1) {
      scalar = f.dataset(field_path);
      record = &*scalar;
    } else {
      group = f.group(field_path);
      record = &*group;
    }
    record->set_attribute("geometry", "cartesian");
    record->set_attribute("dataOrder", "C");
    record->set_attribute("axisLabels", spec.axis_labels);
    record->set_attribute("gridSpacing", or_default(spec.spacing, nd, 1.0));
    record->set_attribute("gridGlobalOffset", or_default(spec.origin, nd, 0.0));
    record->set_attribute("gridUnitSI", 1.0);
    record->set_attribute("unitDimension", std::vector<double>(spec.unit_dimension.begin(), spec.unit_dimension.end()));
    record->set_attribute("timeOffset", 0.0f);
    for (int c = 0; c < spec.components; ++c) {
      Dataset ds = f.dataset(component_path(field_path, c, spec.components));
      ds.set_attribute("unitSI", spec.unit_si);
      ds.set_attribute("position", std::vector<double>(nd, 0.0));  // values sit on the nodes
    }
  }

  int count_components(const File& f, const std::string& field_path) const override {
    auto k = f.kind(field_path);
    if (k == ObjectKind::Dataset) return 1;
    if (k == ObjectKind::Group) return static_cast<int>(f.group(field_path).list().size());
    return 0;
  }

  FieldGeometry geometry(const File& f, const std::string& field_path, std::size_t ndim) const override {
    (void)ndim;
    auto read = [](const Object& record) {
      return FieldGeometry{record.attribute("gridGlobalOffset").as_vector<double>(),
                           record.attribute("gridSpacing").as_vector<double>()};
    };
    if (f.kind(field_path) == ObjectKind::Dataset) return read(f.dataset(field_path));
    return read(f.group(field_path));
  }

  std::vector<std::string> list_fields(const File& f, uint64_t step) const override {
    std::string p = step_path(step) + "/meshes";
    return f.kind(p) == ObjectKind::Group ? f.group(p).list() : std::vector<std::string>{};
  }
};

// ---------------------------------------------------------------------------
// H5Part / H5hut: /Step#<n>/<array>, /Step#<n>/Block/<field>/{0,1,2}
// ---------------------------------------------------------------------------
class H5PartLayout final : public LayoutRules {
 public:
  SeriesLayout kind() const override { return SeriesLayout::H5Part; }

  void init_file(File&) const override {}  // H5Part files carry no required root attributes

  std::string step_path(uint64_t n) const override { return "/Step#" + std::to_string(n); }

  std::vector<uint64_t> list_steps(const File& f) const override {
    std::vector<uint64_t> out;
    for (const auto& name : f.list())
      if (name.rfind("Step#", 0) == 0)
        if (auto n = parse_index(name.substr(5))) out.push_back(*n);
    std::sort(out.begin(), out.end());
    return out;
  }

  void check_new_step(const std::vector<uint64_t>& existing, uint64_t n, const std::string& file) const override {
    if (n != existing.size())
      throw UsageError("cannot write step " + std::to_string(n) + " to h5part series '" + file +
                       "': h5part steps are numbered from 0 without gaps, so the next step is " +
                       std::to_string(existing.size()));
  }

  void init_step(Group& step, double time, double dt) const override {
    step.set_attribute("TimeValue", time);
    step.set_attribute("dt", dt);
  }
  double step_time(const Group& step) const override { return step.attribute("TimeValue").as<double>(); }
  double step_dt(const Group& step) const override {
    return step.has_attribute("dt") ? step.attribute("dt").as<double>() : 0.0;
  }
  bool is_layout_step_attribute(const std::string& name) const override { return name == "TimeValue" || name == "dt"; }

  // One (unnamed) particle set per step: the arrays sit directly in the step group.
  std::string species_path(uint64_t step, const std::string&) const override { return step_path(step); }

  std::string array_path(const std::string& species_path, const std::string& array) const override {
    if (array.find('/') != std::string::npos || array == "Block")
      throw UsageError("particle array name '" + array + "' is not allowed in the h5part layout (no '/', not 'Block')");
    return species_path + "/" + array;
  }

  void describe_array(File&, const std::string&, const std::string&, Dataset&, uint64_t) const override {}

  std::vector<std::string> list_arrays(const File& f, const std::string& species_path) const override {
    std::vector<std::string> out;
    Group step = f.group(species_path);
    for (const auto& name : step.list())
      if (step.kind(name) == ObjectKind::Dataset) out.push_back(name);
    return out;
  }

  std::vector<std::string> list_species(const File& f, uint64_t step) const override {
    return list_arrays(f, step_path(step)).empty() ? std::vector<std::string>{}
                                                   : std::vector<std::string>{"particles"};
  }

  std::string field_path(uint64_t step, const std::string& name) const override {
    return step_path(step) + "/Block/" + name;
  }

  std::string component_path(const std::string& field_path, int component, int) const override {
    return field_path + "/" + std::to_string(component);
  }

  // H5hut stores origin and spacing as (x, y, z): the reverse of the array order (k, j, i).
  void describe_field(File& f, const std::string& field_path, const FieldSpec& spec) const override {
    const std::size_t nd = spec.global_shape.size();
    Group g = f.group(field_path);
    g.set_attribute("__Origin__", reversed(or_default(spec.origin, nd, 0.0)));
    g.set_attribute("__Spacing__", reversed(or_default(spec.spacing, nd, 1.0)));
  }

  int count_components(const File& f, const std::string& field_path) const override {
    return f.kind(field_path) == ObjectKind::Group ? static_cast<int>(f.group(field_path).list().size()) : 0;
  }

  FieldGeometry geometry(const File& f, const std::string& field_path, std::size_t ndim) const override {
    Group g = f.group(field_path);
    auto origin = g.has_attribute("__Origin__") ? reversed(g.attribute("__Origin__").as_vector<double>())
                                                : std::vector<double>(ndim, 0.0);
    auto spacing = g.has_attribute("__Spacing__") ? reversed(g.attribute("__Spacing__").as_vector<double>())
                                                  : std::vector<double>(ndim, 1.0);
    return {origin, spacing};
  }

  std::vector<std::string> list_fields(const File& f, uint64_t step) const override {
    std::string p = step_path(step) + "/Block";
    return f.kind(p) == ObjectKind::Group ? f.group(p).list() : std::vector<std::string>{};
  }
};

}  // namespace

std::unique_ptr<LayoutRules> make_layout(SeriesLayout layout) {
  if (layout == SeriesLayout::H5Part) return std::make_unique<H5PartLayout>();
  return std::make_unique<OpenPmdLayout>();
}

SeriesLayout detect_layout(const File& f) {
  if (f.has_attribute("openPMD")) return SeriesLayout::OpenPMD;
  for (const auto& name : f.list())
    if (name.rfind("Step#", 0) == 0) return SeriesLayout::H5Part;
  throw UsageError("file '" + f.filename() + "' is not a series: it has neither an 'openPMD' attribute nor 'Step#' groups");
}

}  // namespace h5loom::detail
