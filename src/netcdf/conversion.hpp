// netCDF's numeric conversions: a read or write in another numeric type than
// the variable's converts, as nc_get_vara_double of a float variable does.
#pragma once

#include <cstddef>
#include <string>

#include "h5loom/datatype.hpp"

namespace h5loom::netcdf {

// `n` numbers of `from` at `in` as `to` at `out`; a value `to` cannot hold is
// netCDF's NC_ERANGE - here a DatatypeError naming it and `where`.
void convert_numbers(Datatype from, const void* in, Datatype to, void* out, std::size_t n, const std::string& where);
// Whether a transfer of `memory` elements to or from a variable of `stored`
// converts (DatatypeError naming `where` if they are not both numbers).
bool needs_conversion(const Datatype& memory, const Datatype& stored, const std::string& where);

}  // namespace h5loom::netcdf
