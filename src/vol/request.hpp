// HDF5 requests (event sets) over h5loom's (request.cpp).
#pragma once

#include <hdf5.h>

#include "h5loom/h5loom.hpp"

namespace h5loom::vol {

// Gives HDF5 `request` through `req` (an H5*_async call's event-set slot) if it
// has not completed, else completes it; a null `req` (a synchronous call)
// completes it now, raising its error. `op` names the call in HDF5's error
// stack (H5ESget_err_info).
void hand_over(Request request, void** req, const char* op);
// At exit, before MPI is finalised: completes the flushes and closes
// (H5Fflush_async, H5Fclose_async) whose event sets were never waited for,
// collectively as at a wait.
void complete_pending();

namespace routed {
extern const H5VL_request_class_t kRequest;
}  // namespace routed

}  // namespace h5loom::vol
