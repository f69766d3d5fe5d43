#include "netcdf/conversion.hpp"

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
        if (!detail::is_value_of<To>(src[i]))
          throw DatatypeError(where + ": value " + detail::value_text(src[i]) + " (element " + std::to_string(i) +
                              ") does not fit " + to.name() + " (netCDF's NC_ERANGE)");
        dst[i] = static_cast<To>(src[i]);
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
