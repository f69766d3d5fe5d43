// The C API of PIO's decompositions and rearrangers: thin handles over h5loom::pio.
#include <algorithm>
#include <functional>

#include "capi_internal.hpp"
#include "h5loom/pio.hpp"

using namespace h5loom::capi;


extern "C" {

static loom_status make_decomposition(const char* function, MPI_Comm comm, loom_decomposition** out,
                                      const std::function<void()>& check,
                                      const std::function<h5loom::pio::Decomposition()>& make) {
  return open_over(function, comm, out, check, [&] {
    auto d = make();
    auto agree_comm = std::make_shared<AgreeComm>(d.comm());
    return new loom_decomposition_s{std::move(d), std::move(agree_comm)};
  });
}

loom_status loom_decomposition_from_map(MPI_Comm comm, int ndim, const uint64_t* shape, size_t n, const int64_t* map,
                                        int base, loom_decomposition** out) {
  return make_decomposition(
      __func__, comm, out,
      [&] {
        if (ndim < 1 || ndim > 32) throw h5loom::SelectionError(in_call("ndim " + std::to_string(ndim) + " is not 1 to 32"));
        need_out(shape, "shape");
        if (n) need_out(map, "map");
      },
      [&] {
        return h5loom::pio::Decomposition::from_map(opening_comm(comm), h5loom::Dims(shape, shape + ndim),
                                                     std::vector<int64_t>(map, map + n), base);
      });
}

loom_status loom_decomposition_from_file(MPI_Comm comm, const char* path, loom_decomposition** out) {
  return make_decomposition(__func__, comm, out, [&] { text(path, "path"); },
                            [&] { return h5loom::pio::Decomposition::from_file(opening_comm(comm), path); });
}

loom_status loom_decomposition_from_map_f(MPI_Fint comm, int ndim, const uint64_t* shape, size_t n, const int64_t* map,
                                          int base, loom_decomposition** out) {
  h5loom::ensure_mpi();  // MPI_Comm_f2c needs MPI
  return loom_decomposition_from_map(MPI_Comm_f2c(comm), ndim, shape, n, map, base, out);
}

loom_status loom_decomposition_from_file_f(MPI_Fint comm, const char* path, loom_decomposition** out) {
  h5loom::ensure_mpi();
  return loom_decomposition_from_file(MPI_Comm_f2c(comm), path, out);
}

loom_status loom_decomposition_local(const loom_decomposition* d, size_t* local_size, int64_t* map) {
  return guarded(__func__, [&] {
    need(d, "d", "decomposition");
    need_out(local_size, "local_size");
    const auto& m = d->decomposition.map();
    *local_size = m.size();
    if (map) std::copy(m.begin(), m.end(), map);
  });
}

loom_status loom_decomposition_shape(const loom_decomposition* d, int* ndim, uint64_t* shape) {
  return guarded(__func__, [&] {
    need(d, "d", "decomposition");
    need_out(ndim, "ndim");
    const auto& s = d->decomposition.global_shape();
    *ndim = int(s.size());
    if (shape) std::copy(s.begin(), s.end(), shape);
  });
}

loom_status loom_decomposition_free(loom_decomposition* d) {
  return guarded(__func__, [&] { delete d; });
}

loom_status loom_rearrangement_create(const loom_decomposition* d, int num_iotasks, int stride, int base,
                                      loom_rearranger kind, loom_rearrangement** out) {
  if (out) *out = nullptr;
  return collective(
      __func__, comm_of(d),
      [&] {
        need(d, "d", "decomposition");
        need_out(out, "out");
        if (kind != LOOM_REARRANGER_BOX && kind != LOOM_REARRANGER_SUBSET)
          throw h5loom::UsageError(in_call("invalid loom_rearranger value " + std::to_string(int(kind))));
      },
      [&] {
        h5loom::pio::IOSystem io{d->decomposition.comm(), num_iotasks, stride, base};
        h5loom::pio::Rearrangement r(d->decomposition, io,
                                     kind == LOOM_REARRANGER_BOX ? h5loom::pio::Rearranger::Box
                                                                 : h5loom::pio::Rearranger::Subset);
        *out = new loom_rearrangement_s{std::move(r), d->agree};
      });
}

loom_status loom_rearrangement_free(loom_rearrangement* r) {
  return guarded(__func__, [&] { delete r; });
}

// write and read: agreed over the rearrangement's ranks once the handles and the type are checked.
static loom_status darray(const char* function, loom_rearrangement* r, loom_dataset* d, const loom_type* type,
                          const std::function<void(h5loom::pio::Rearrangement&, h5loom::Dataset&,
                                                   const h5loom::Datatype&)>& transfer) {
  h5loom::Datatype t;
  return collective(
      function, comm_of(r),
      [&] {
        need(r, "r", "rearrangement");
        as_dataset(d);
        t = transferable(type, "type");
      },
      [&] { transfer(r->rearrangement, *d->dataset, t); });
}

loom_status loom_darray_write(loom_rearrangement* r, loom_dataset* d, uint64_t frame, const loom_type* type, size_t n,
                              const void* local) {
  return darray(__func__, r, d, type, [&](auto& rearrangement, auto& dataset, const auto& t) {
    rearrangement.write_raw(dataset, t, local, n, frame);
  });
}

loom_status loom_darray_read(loom_rearrangement* r, loom_dataset* d, uint64_t frame, const loom_type* type, size_t n,
                             void* local) {
  return darray(__func__, r, d, type, [&](auto& rearrangement, auto& dataset, const auto& t) {
    rearrangement.read_raw(dataset, t, local, n, frame);
  });
}

}  // extern "C"
