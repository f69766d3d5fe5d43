#include "hdf5lib/filters.hpp"

namespace h5loom::hdf5lib {

std::string describe_filter(const Filter& f) {
  std::string out = (f.name.empty() ? "filter" : "'" + f.name + "'") + " (id " + std::to_string(f.id) + ")";
  if (!f.params.empty()) {
    out += " [";
    for (std::size_t i = 0; i < f.params.size(); ++i) out += (i ? ", " : "") + std::to_string(f.params[i]);
    out += "]";
  }
  return out;
}

void require_applicable(const std::vector<Filter>& filters, const Dims& chunks, const Dims& shape,
                        const std::string& where) {
  if (!filters.empty() && chunks.empty())
    throw UsageError("cannot create " + where + " with filters: its shape " + dims_to_string(shape) +
                     " has a fixed dimension of 0, which HDF5 cannot chunk");
  for (const auto& f : filters) {
    if (f.optional) continue;  // skipped where it cannot apply, as HDF5 does
    const htri_t available = H5Zfilter_avail(static_cast<H5Z_filter_t>(f.id));
    if (available <= 0) {
      H5Eclear2(H5E_DEFAULT);
      throw UsageError("cannot create " + where + " with " + describe_filter(f) + ": this HDF5 (" H5_VERS_INFO
                       ") has no such filter - register it (H5Zregister) or put its plugin in HDF5_PLUGIN_PATH");
    }
  }
}

void set_filters(hid_t dcpl, const std::vector<Filter>& filters, const std::string& where) {
  for (const auto& f : filters)
    check(H5Pset_filter(dcpl, static_cast<H5Z_filter_t>(f.id), f.optional ? H5Z_FLAG_OPTIONAL : H5Z_FLAG_MANDATORY,
                        f.params.size(), f.params.data()),
          "setting " + describe_filter(f) + " on " + where);
}

std::vector<Filter> filters_of(hid_t dcpl, const std::string& where) {
  const int n = H5Pget_nfilters(dcpl);
  if (n < 0) fail("reading the filters of " + where);
  std::vector<Filter> out;
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0;
    std::size_t count = 32;  // the most client values a filter may have here
    std::vector<unsigned> values(count);
    char name[256] = {};
    unsigned config = 0;
    const H5Z_filter_t id = H5Pget_filter2(dcpl, unsigned(i), &flags, &count, values.data(), sizeof name, name, &config);
    if (id < 0) fail("reading filter " + std::to_string(i) + " of " + where);
    if (count > values.size()) {  // more than guessed: ask again for all of them
      values.resize(count);
      if (H5Pget_filter2(dcpl, unsigned(i), &flags, &count, values.data(), sizeof name, name, &config) < 0)
        fail("reading filter " + std::to_string(i) + " of " + where);
    }
    Filter f;
    f.id = static_cast<uint32_t>(id);
    f.params.assign(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(count));
    f.optional = (flags & H5Z_FLAG_OPTIONAL) != 0;
    f.name = name;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace h5loom::hdf5lib
