// HDF5's event sets (H5EScreate, H5Fflush_async, H5Fclose_async, H5ESwait,
// H5ESget_err_info) over h5loom's requests. The operations that complete
// later are a file's flush through the async wrapper (docs/async.md) and a
// file's close: H5Fflush_async and H5Fclose_async return at once and
// H5ESwait completes them - collectively, as every h5loom flush and close.
// Every other operation completes in its call (an H5Dwrite_async's buffer is
// copied or written before it returns), and HDF5 then keeps no request for it.
#include "vol/request.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "vol/vol.hpp"

namespace h5loom::vol {

namespace {

struct VolRequest {
  Request request;
  const char* op;     // the call that made it, for HDF5's error stack
  std::string error;  // the operation's error, once it failed
};

VolRequest& as_request(void* req) { return *static_cast<VolRequest*>(req); }

// The requests HDF5 holds, in the order they were made: at exit, those
// never waited for complete before MPI is finalised (complete_pending) - in
// that order, the same on every rank, since each is collective on its own
// file's ranks.
std::vector<VolRequest*>& held() {
  static std::vector<VolRequest*> requests;
  return requests;
}

// Completes `r` (collective), keeping its error; true if it failed now.
bool complete(VolRequest& r) {
  if (!r.error.empty()) return false;
  try {
    r.request.wait();
  } catch (const std::exception& e) {
    r.error = e.what();
    return true;
  }
  return false;
}

// The wait is collective for a flush: every rank calls H5ESwait (or the
// next collective call completes it). A finite timeout cannot end a wait
// that needs every rank, so only 0 (a test) returns early.
herr_t request_wait(void* req, uint64_t timeout, H5VL_request_status_t* status) {
  VolRequest& r = as_request(req);
  if (r.error.empty() && timeout == 0 && !r.request.test()) {
    *status = H5VL_REQUEST_STATUS_IN_PROGRESS;
    return 0;
  }
  complete(r);
  *status = r.error.empty() ? H5VL_REQUEST_STATUS_SUCCEED : H5VL_REQUEST_STATUS_FAIL;
  return 0;
}

herr_t request_notify(void*, H5VL_request_notify_t, void*) {
  push_error(__func__, "the h5loom VOL connector's requests take no completion callbacks");
  return -1;
}

// A flush cannot be taken back once every rank has asked for it.
herr_t request_cancel(void*, H5VL_request_status_t* status) {
  *status = H5VL_REQUEST_STATUS_CANT_CANCEL;
  return 0;
}

herr_t request_specific(void* req, H5VL_request_specific_args_t* args) {
  VolRequest& r = as_request(req);
  switch (args->op_type) {
    case H5VL_REQUEST_GET_ERR_STACK:
      // A new stack each time it is asked for (H5ESget_err_info hands it to
      // the application, which closes it).
      push_error(r.op, r.error);
      args->args.get_err_stack.err_stack_id = H5Eget_current_stack();
      return 0;
    case H5VL_REQUEST_GET_EXEC_TIME:
      args->args.get_exec_time.exec_ts = 0;  // not recorded
      args->args.get_exec_time.exec_time = 0;
      return 0;
  }
  return -1;
}

herr_t request_optional(void*, H5VL_optional_args_t*) {
  push_error(__func__, "the h5loom VOL connector's requests have no optional operations");
  return -1;
}

// A close freed without a wait completes here (File::close_async's request:
// collectively, as HDF5 frees the event set's operations on every rank).
herr_t request_free(void* req) {
  auto& requests = held();
  requests.erase(std::remove(requests.begin(), requests.end(), static_cast<VolRequest*>(req)), requests.end());
  delete static_cast<VolRequest*>(req);
  return 0;
}

}  // namespace

void hand_over(Request request, void** req, const char* op) {
  if (!req) return request.wait();  // a synchronous call: complete it now
  *req = nullptr;
  if (request.test()) return request.wait();  // already complete: HDF5 keeps nothing
  auto* r = new VolRequest{std::move(request), op, {}};
  held().push_back(r);
  *req = r;
}

void complete_pending() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // the files' state reports them not closed
  for (VolRequest* r : held())
    if (!r->request.test() && complete(*r))
      std::fprintf(stderr, "h5loom VOL connector: %s never waited for, completed at exit: %s\n", r->op,
                   r->error.c_str());
}

namespace routed {
const H5VL_request_class_t kRequest = {request_wait,     request_notify,   request_cancel,
                                       request_specific, request_optional, request_free};
}  // namespace routed

}  // namespace h5loom::vol
