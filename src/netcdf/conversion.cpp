#include "netcdf/conversion.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

#include "netcdf/conventions.hpp"

namespace h5loom::netcdf {

void convert_numbers(Datatype from, const void* in, Datatype to, void* out, std::size_t n, const std::string& where) {
  dispatch_scalar(from.scalar(), [&](auto from_tag) {
    using From = decltype(from_tag);
    dispatch_scalar(to.scalar(), [&](auto to_tag) {
      using To = decltype(to_tag);
      const auto* src = static_cast<const From*>(in);
      auto* dst = static_cast<To*>(out);
      for (std::size_t i = 0; i < n; ++i) {
        const double x = double(src[i]);
        if constexpr (std::is_integral_v<To>) {
          // [lowest, 2^digits): both ends exact in double (int64's max is not: it rounds up to 2^63)
          const double lowest = double(std::numeric_limits<To>::lowest());
          const double past_max = std::ldexp(1.0, std::numeric_limits<To>::digits);
          if (!(x >= lowest && x < past_max))
            throw DatatypeError(where + ": value " + std::to_string(x) + " (element " + std::to_string(i) +
                                ") does not fit " + to.name() + " (netCDF's NC_ERANGE)");
          dst[i] = static_cast<To>(src[i]);
        } else {
          if (std::isfinite(x) && std::abs(x) > double(std::numeric_limits<To>::max()))
            throw DatatypeError(where + ": value " + std::to_string(x) + " (element " + std::to_string(i) +
                                ") does not fit " + to.name() + " (netCDF's NC_ERANGE)");
          dst[i] = static_cast<To>(x);
        }
      }
    });
  });
}

bool needs_conversion(const Datatype& memory, const Datatype& stored, const std::string& where) {
  if (memory.in_memory() == stored) return false;
  if (!conventions::is_netcdf_numeric(memory) || !conventions::is_netcdf_numeric(stored))
    throw DatatypeError(where + ": cannot convert between " + memory.name() + " and " + stored.name());
  return true;
}

}  // namespace h5loom::netcdf
