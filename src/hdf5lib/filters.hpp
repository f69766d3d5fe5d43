// HDF5's filter pipeline and h5loom's Filter list (DatasetSpec::filters): the
// hdf5 engine sets them on the datasets it creates, the log engine checks them,
// the VOL connector reads them from applications' creation properties.
#pragma once

#include <string>
#include <vector>

#include "hdf5lib/hid.hpp"
#include "h5loom/types.hpp"

namespace h5loom::hdf5lib {

// "deflate (1) [6]": for messages.
std::string describe_filter(const Filter& f);

// UsageError naming the dataset (`where`, of shape `shape`) if it has filters
// and cannot have them: no chunks (`chunks`, as resolve_chunks chose them: a
// fixed dimension of 0), or a mandatory filter this HDF5 cannot apply -
// neither built in nor registered nor found as a plugin.
void require_applicable(const std::vector<Filter>& filters, const Dims& chunks, const Dims& shape,
                        const std::string& where);

// Adds `filters` to the dataset creation properties `dcpl` (chunked already).
void set_filters(hid_t dcpl, const std::vector<Filter>& filters, const std::string& where);

// The filters of the dataset creation properties `dcpl`, in order.
std::vector<Filter> filters_of(hid_t dcpl, const std::string& where);

}  // namespace h5loom::hdf5lib
