// Errors: h5loom's exceptions become entries of HDF5's error stack under the
// connector's own error class, so an application sees h5loom's message (which
// names the file, the object and the value) when its HDF5 call fails.
#include <cstdio>

#include "vol/vol.hpp"

namespace h5loom::vol {

namespace {
hid_t error_class = H5I_INVALID_HID;
hid_t major_error = H5I_INVALID_HID;
hid_t minor_error = H5I_INVALID_HID;
}  // namespace

void register_errors() {
  if (error_class >= 0) return;
  error_class = H5Eregister_class("h5loom VOL connector", "h5loom", "1");
  if (error_class < 0) return;
  major_error = H5Ecreate_msg(error_class, H5E_MAJOR, "h5loom");
  minor_error = H5Ecreate_msg(error_class, H5E_MINOR, "operation failed");
}

void unregister_errors() {
  if (error_class < 0) return;
  if (minor_error >= 0) H5Eclose_msg(minor_error);
  if (major_error >= 0) H5Eclose_msg(major_error);
  H5Eunregister_class(error_class);
  error_class = major_error = minor_error = H5I_INVALID_HID;
}

void push_error(const char* function, const std::string& message) {
  if (error_class < 0) register_errors();
  if (error_class < 0) {  // HDF5 refused: at least say it
    std::fprintf(stderr, "h5loom VOL connector: %s: %s\n", function, message.c_str());
    return;
  }
  H5Epush2(H5E_DEFAULT, "h5loom/vol", function, 0, error_class, major_error, minor_error, "%s", message.c_str());
}

void unsupported(const std::string& what) {
  throw UsageError(what + " is not supported by the h5loom VOL connector (docs/vol.md lists what is)");
}

KeepErrorPrinting::KeepErrorPrinting() { H5Eget_auto2(H5E_DEFAULT, &func_, &data_); }
KeepErrorPrinting::~KeepErrorPrinting() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

}  // namespace h5loom::vol
