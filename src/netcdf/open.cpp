// Opening a netCDF-4 file (include/h5loom/netcdf.hpp's File::open): its
// dimensions from the dimension scales, each variable's from its
// DIMENSION_LIST - h5loom's files and netCDF-C's (docs/formats/netcdf4.md, "Reading").
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "netcdf/conventions.hpp"
#include "netcdf/state.hpp"

namespace h5loom::netcdf {

namespace conv = conventions;

namespace {

// netCDF-C names a dimension's scale so when a variable that is not its
// coordinate variable has the dimension's name.
constexpr const char* kNonCoordPrefix = "_nc4_non_coord_";

std::optional<int> int_attribute(const Dataset& ds, const char* name) {
  if (!ds.has_attribute(name)) return std::nullopt;
  const AttributeValue v = ds.attribute(name);
  if (!v.is_numeric() || v.size() != 1)
    throw CorruptionError("attribute '" + std::string(name) + "' of '" + ds.path() + "' should be one integer, not " +
                          v.to_string());
  return v.as<int>();
}

bool is_scale(const Dataset& ds) {
  if (!ds.has_attribute(conv::kClass)) return false;
  return conv::text_of(ds.attribute(conv::kClass)) == std::string(conv::kDimensionScale);
}

}  // namespace

File File::open(const std::string& path, Mode mode, const FileOptions& options) {
  auto state = std::make_shared<detail::NcState>();
  state->file = h5loom::File::open(path, mode, options);
  h5loom::File& file = *state->file;
  const std::vector<std::string> members = file.supports("order") ? file.list_in_creation_order() : file.list();

  struct Found {
    std::string link;
    Dataset ds;
  };
  std::vector<Found> datasets;
  for (const auto& name : members)
    if (file.kind(name) == ObjectKind::Dataset) datasets.push_back({name, file.dataset(name)});

  // Dimensions: the scales, by _Netcdf4Dimid, else in the order met.
  std::map<std::string, int> dim_of_path;  // scale path -> id
  std::vector<std::pair<std::optional<int>, detail::DimState>> scales;
  for (const auto& [link, ds] : datasets) {
    if (!is_scale(ds) || ds.ndim() != 1) continue;
    detail::DimState d;
    d.name = link.rfind(kNonCoordPrefix, 0) == 0 ? link.substr(std::strlen(kNonCoordPrefix)) : link;
    d.length = ds.shape()[0];
    d.unlimited = ds.max_shape()[0] == kUnlimited;
    d.in_file = true;
    if (d.name != link) d.link = link;
    scales.emplace_back(int_attribute(ds, conv::kDimid), std::move(d));
  }
  int next_id = 0;
  for (const auto& s : scales)
    if (s.first) next_id = std::max(next_id, *s.first + 1);
  std::map<int, detail::DimState> by_id;
  for (auto& [id, d] : scales) {
    d.id = id ? *id : next_id++;
    if (d.id < 0 || by_id.count(d.id))
      throw CorruptionError("netCDF file '" + path + "': dimension '" + d.name + "' has the id " +
                            std::to_string(d.id) + (d.id < 0 ? "" : ", which another dimension has"));
    by_id.emplace(d.id, d);
  }
  for (auto& [id, d] : by_id) {
    if (id != int(state->dims.size()))
      throw CorruptionError("netCDF file '" + path + "': dimension ids are not 0.." +
                            std::to_string(by_id.size() - 1) + " (dimension '" + d.name + "' has " +
                            std::to_string(id) + ")");
    dim_of_path[d.scale_path()] = id;
    state->dims.push_back(d);
  }

  // Variables: every dataset but the hidden scales, in the order met.
  for (const auto& [link, ds] : datasets) {
    const bool scale = is_scale(ds) && ds.ndim() == 1;
    if (scale && ds.has_attribute(conv::kName) && conv::names_a_hidden_dimension(ds.attribute(conv::kName))) continue;
    detail::VarState v;
    v.name = link;
    v.dtype = ds.dtype().in_memory();
    v.dataset = ds;
    const std::string where = "variable '" + link + "' of netCDF file '" + path + "'";
    if (scale) {
      v.coordinate = true;
      v.dimids = {dim_of_path.at("/" + link)};
      state->dims.at(v.dimids[0]).coordinate = state->vars.size();
    } else if (ds.has_attribute(conv::kDimensionList)) {
      for (ObjectRef ref : conv::read_dimension_list(ds.attribute(conv::kDimensionList), where)) {
        const std::string target = file.dereference(ref);
        auto it = dim_of_path.find(target);
        if (it == dim_of_path.end())
          throw CorruptionError(where + ": its DIMENSION_LIST names '" + target + "', which is not a dimension scale");
        v.dimids.push_back(it->second);
      }
    } else if (ds.has_attribute(conv::kCoordinates)) {
      for (int id : ds.attribute(conv::kCoordinates).as_vector<int>()) {
        if (id < 0 || id >= int(state->dims.size()))
          throw CorruptionError(where + ": _Netcdf4Coordinates names dimension id " + std::to_string(id) +
                                ", and the file has " + std::to_string(state->dims.size()));
        v.dimids.push_back(id);
      }
    } else if (ds.ndim() != 0) {
      throw ConfigError(where + " has no dimension scales (DIMENSION_LIST) and no _Netcdf4Coordinates: not a "
                        "netCDF-4 variable (a file written with NC_NODIMSCALE_ATTACH, or plain HDF5)");
    }
    if (v.dimids.size() != ds.ndim())
      throw CorruptionError(where + " has " + std::to_string(ds.ndim()) + " dimensions and its dimension list names " +
                            std::to_string(v.dimids.size()));
    state->vars.push_back(std::move(v));
  }
  // The record dimension's length: its longest variable (netCDF-C's rule).
  for (auto& v : state->vars)
    if (state->is_record(v)) {
      auto& d = state->dims.at(v.dimids[0]);
      d.length = std::max(d.length, v.dataset->shape()[0]);
    }
  return File(std::move(state));
}

}  // namespace h5loom::netcdf
