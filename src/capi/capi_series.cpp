// The series C API (include/h5loom/h5loom.h, docs/series.md): series in the
// openPMD or H5Part layout, steps, particle species and block fields, each entry
// point a thin call of the C++ series veneer (h5loom/series.hpp) run through
// guarded() or collective() (capi_internal.hpp).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "capi/capi_internal.hpp"
#include "h5loom/series.hpp"

using namespace h5loom::capi;

struct loom_series_s {
  h5loom::Series series;
  std::vector<uint64_t> steps;  // taken by loom_series_step_count
  SharedComm agree;
};
struct loom_step_s {
  h5loom::Step step;
  SharedComm agree;
};
struct loom_particles_s {
  h5loom::ParticleSpecies particles;
  SharedComm agree;
};
struct loom_field_s {
  h5loom::Field field;
  SharedComm agree;
};

extern "C" {

static h5loom::SeriesLayout to_layout(loom_series_layout l) {
  if (l != LOOM_SERIES_OPENPMD && l != LOOM_SERIES_H5PART)
    throw h5loom::ConfigError(in_call("invalid loom_series_layout value " + std::to_string(static_cast<int>(l)) +
                                      " for 'layout'"));
  return l == LOOM_SERIES_H5PART ? h5loom::SeriesLayout::H5Part : h5loom::SeriesLayout::OpenPMD;
}

// create, append and open: agreed over the communicator they are given.
static loom_status open_series(const char* function, const char* name, MPI_Comm comm, loom_series** out,
                               const std::function<void()>& more_checks,
                               const std::function<h5loom::Series()>& open) {
  return open_over(
      function, comm, out,
      [&] {
        text(name, "name");
        more_checks();
      },
      [&] {
        h5loom::Series s = open();
        auto agree_comm = std::make_shared<AgreeComm>(s.file().comm());
        return new loom_series_s{std::move(s), {}, std::move(agree_comm)};
      });
}

loom_status loom_series_create(const char* name, MPI_Comm comm, const char* engine, loom_series_layout layout,
                               loom_series** out) {
  return open_series(__func__, name, comm, out, [&] { to_layout(layout); }, [&] {
    h5loom::SeriesOptions o;
    o.file = options(comm, engine);
    o.layout = to_layout(layout);
    return h5loom::Series::create(name, o);
  });
}

loom_status loom_series_append(const char* name, MPI_Comm comm, const char* engine, loom_series** out) {
  return open_series(__func__, name, comm, out, [] {},
                     [&] { return h5loom::Series::append(name, options(comm, engine)); });
}

loom_status loom_series_open(const char* name, MPI_Comm comm, const char* engine, loom_series** out) {
  return open_series(__func__, name, comm, out, [] {},
                     [&] { return h5loom::Series::open(name, options(comm, engine)); });
}

// With a Fortran communicator handle (the Fortran module's way in).
loom_status loom_series_create_f(const char* name, MPI_Fint comm, const char* engine, loom_series_layout layout,
                                 loom_series** out) {
  h5loom::ensure_mpi();  // MPI_Comm_f2c needs MPI
  return loom_series_create(name, MPI_Comm_f2c(comm), engine, layout, out);
}
loom_status loom_series_open_f(const char* name, MPI_Fint comm, const char* engine, loom_series** out) {
  h5loom::ensure_mpi();
  return loom_series_open(name, MPI_Comm_f2c(comm), engine, out);
}

loom_status loom_series_close(loom_series* s) {
  return collective(__func__, comm_of(s), [&] { need(s, "s", "series"); },
                    [&] {
                      std::unique_ptr<loom_series_s> owned(s);
                      owned->series.close();
                    });
}

loom_status loom_series_layout_of(loom_series* s, loom_series_layout* out) {
  return guarded(__func__, [&] {
    need(s, "s", "series");
    need_out(out, "out");
    *out = s->series.layout() == h5loom::SeriesLayout::H5Part ? LOOM_SERIES_H5PART : LOOM_SERIES_OPENPMD;
  });
}

loom_status loom_series_root(loom_series* s, loom_group** out) {
  return guarded(__func__, [&] {
    need(s, "s", "series");
    need_out(out, "out");
    *out = new_object(h5loom::Group(s->series.file()), s->agree);
  });
}

loom_status loom_series_step_count(loom_series* s, size_t* count) {
  return guarded(__func__, [&] {
    need(s, "s", "series");  // before anything reads through it
    need_out(count, "count");
    s->steps = s->series.steps();
    *count = s->steps.size();
  });
}

loom_status loom_series_step_number(loom_series* s, size_t index, uint64_t* step) {
  return guarded(__func__, [&] {
    need(s, "s", "series");
    need_out(step, "step");
    if (index >= s->steps.size())
      throw h5loom::SelectionError("step index " + std::to_string(index) + " out of range for series '" +
                                   s->series.file().filename() + "' with " + std::to_string(s->steps.size()) +
                                   " steps (call loom_series_step_count first)");
    *step = s->steps[index];
  });
}

loom_status loom_series_write_step(loom_series* s, uint64_t n, double time, double dt, loom_step** out) {
  return collective(
      __func__, comm_of(s),
      [&] {
        need(s, "s", "series");
        need_out(out, "out");
      },
      [&] { *out = new loom_step_s{s->series.write_step(n, time, dt), s->agree}; });
}

loom_status loom_series_step(loom_series* s, uint64_t n, loom_step** out) {
  return guarded(__func__, [&] {
    need(s, "s", "series");
    need_out(out, "out");
    *out = new loom_step_s{s->series.step(n), s->agree};
  });
}

loom_status loom_step_time(loom_step* st, double* time, double* dt) {
  return guarded(__func__, [&] {
    need(st, "st", "step");
    if (time) *time = st->step.time();
    if (dt) *dt = st->step.dt();
  });
}

loom_status loom_step_group(loom_step* st, loom_group** out) {
  return guarded(__func__, [&] {
    need(st, "st", "step");
    need_out(out, "out");
    *out = new_object(st->step.group(), st->agree);
  });
}

loom_status loom_step_end(loom_step* st) {
  return collective(__func__, comm_of(st), [&] { need(st, "st", "step"); }, [&] { st->step.close(); });
}

loom_status loom_step_free(loom_step* st) {
  delete st;  // NULL: nothing to free, as free(NULL)
  return guarded(__func__, [] {});
}

loom_status loom_step_particles(loom_step* st, const char* species, loom_particles** out) {
  return guarded(__func__, [&] {
    need(st, "st", "step");
    text(species, "species");
    need_out(out, "out");
    *out = new loom_particles_s{st->step.particles(species), st->agree};
  });
}

loom_status loom_particles_set_local_count(loom_particles* p, uint64_t n, uint64_t* offset, uint64_t* global) {
  return collective(
      __func__, comm_of(p), [&] { need(p, "p", "particles"); },
      [&] {
        // The global count is a sum over the ranks: it must not wrap (a
        // negative count passed as uint64_t is a huge one). The sum is exact
        // in two 32-bit halves, and the same on every rank, so every rank
        // raises the same error.
        unsigned long long halves[2] = {n >> 32, n & 0xffffffffu}, sums[2] = {0, 0};
        MPI_Allreduce(halves, sums, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, p->agree->comm);
        if (sums[0] + (sums[1] >> 32) > 0xffffffffu)
          throw h5loom::SelectionError(in_call("the local counts 'n' of the ranks add up to more than 2^64 - 1 "
                                               "particles (this rank: " + std::to_string(n) + "; a negative count?)"));
        auto& sp = p->particles;
        sp.set_local_count(n);
        if (offset) *offset = sp.offset();
        if (global) *global = sp.global_count();
      });
}

loom_status loom_particles_write(loom_particles* p, const char* array, loom_datatype dtype, const void* data) {
  return guarded(__func__, [&] {
    need(p, "p", "particles");
    text(array, "array");
    auto type = to_datatype(dtype);
    need_buffer(data, p->particles.local_count(), "data");
    p->particles.write_raw(array, type, data, nullptr);
  });
}

loom_status loom_particles_write_copy(loom_particles* p, const char* array, loom_datatype dtype, const void* data) {
  return guarded(__func__, [&] {
    need(p, "p", "particles");
    text(array, "array");
    auto type = to_datatype(dtype);
    const uint64_t n = p->particles.local_count();
    need_buffer(data, n, "data");
    fits_in_memory(n, h5loom::datatype_size(type), "the local count");
    const auto* bytes = static_cast<const unsigned char*>(data);
    auto owned = std::make_shared<std::vector<unsigned char>>(bytes, bytes + n * h5loom::datatype_size(type));
    p->particles.write_raw(array, type, owned->data(), std::shared_ptr<const void>(owned, owned->data()));
  });
}

loom_status loom_particles_global_count(loom_particles* p, uint64_t* out) {
  return guarded(__func__, [&] {
    need(p, "p", "particles");
    need_out(out, "out");
    *out = p->particles.global_count();
  });
}

loom_status loom_particles_read_range(loom_particles* p, const char* array, loom_datatype dtype, uint64_t begin,
                                      uint64_t end, void* out) {
  h5loom::Datatype type{};
  return collective(
      __func__, comm_of(p),
      [&] {
        need(p, "p", "particles");
        text(array, "array");
        type = to_datatype(dtype);
        if (end < begin)
          throw h5loom::SelectionError(in_call("'end' " + std::to_string(end) + " is before 'begin' " +
                                               std::to_string(begin)));
        fits_in_memory(end - begin, h5loom::datatype_size(type), "end - begin");
        need_buffer(out, end - begin, "out");
      },
      [&] { p->particles.read_range_raw(array, begin, end, type, out); });
}

loom_status loom_particles_read_indices(loom_particles* p, const char* array, loom_datatype dtype, size_t count,
                                        const uint64_t* indices, void* out) {
  h5loom::Datatype type{};
  return collective(
      __func__, comm_of(p),
      [&] {
        need(p, "p", "particles");
        text(array, "array");
        type = to_datatype(dtype);
        fits_in_memory(count, std::max(sizeof(uint64_t), h5loom::datatype_size(type)), "count");
        need_buffer(indices, count, "indices");
        need_buffer(out, count, "out");
      },
      [&] {
        std::vector<uint64_t> idx(indices, indices + count);
        p->particles.read_indices_raw(array, idx, type, out);
      });
}

loom_status loom_particles_my_share(loom_particles* p, uint64_t* begin, uint64_t* end) {
  return guarded(__func__, [&] {
    auto [b, e] = need(p, "p", "particles")->particles.my_share();
    if (begin) *begin = b;
    if (end) *end = e;
  });
}

loom_status loom_particles_free(loom_particles* p) {
  delete p;  // NULL: nothing to free, as free(NULL)
  return guarded(__func__, [] {});
}

loom_status loom_step_create_field(loom_step* st, const char* name, int ndim, const uint64_t* global_shape,
                                   int components, loom_datatype dtype, const double* origin, const double* spacing,
                                   loom_field** out) {
  h5loom::FieldSpec spec;
  return collective(
      __func__, comm_of(st),
      [&] {
        need(st, "st", "step");
        text(name, "name");
        need_out(out, "out");
        check_ndim(ndim, "ndim");
        if (!global_shape)
          throw h5loom::UsageError(in_call("null array 'global_shape' for field '" + std::string(name) + "'"));
        spec.global_shape = dims(ndim, global_shape, "global_shape");
        if (components != 1 && components != 3)
          throw h5loom::SelectionError(in_call("'components' is " + std::to_string(components) +
                                               " for field '" + name + "': 1 (scalar) or 3 (vector)"));
        spec.components = components;
        spec.dtype = to_datatype(dtype);
        if (origin) spec.origin.assign(origin, origin + ndim);
        if (spacing) spec.spacing.assign(spacing, spacing + ndim);
      },
      [&] { *out = new loom_field_s{st->step.field(name, spec), st->agree}; });
}

loom_status loom_step_open_field(loom_step* st, const char* name, loom_field** out) {
  return guarded(__func__, [&] {
    need(st, "st", "step");
    text(name, "name");
    need_out(out, "out");
    const h5loom::Step& step = st->step;
    *out = new loom_field_s{step.field(name), st->agree};
  });
}

loom_status loom_field_info(loom_field* f, int* ndim, uint64_t* shape, int* components, loom_datatype* dtype) {
  return guarded(__func__, [&] {
    auto& fld = need(f, "f", "field")->field;
    if (ndim) *ndim = static_cast<int>(fld.global_shape().size());
    if (shape) std::copy(fld.global_shape().begin(), fld.global_shape().end(), shape);
    if (components) *components = fld.components();
    if (dtype) *dtype = static_cast<loom_datatype>(fld.dtype().scalar());
  });
}

// A box's end (start + size, or + twice a ghost or halo width) must not wrap:
// the checks below it would pass and the copy would leave the buffers.
static void check_box_end(uint64_t start, uint64_t size, uint64_t width, const char* what) {
  if (width > (UINT64_MAX - size) / 2 || start > UINT64_MAX - size - 2 * width)
    throw h5loom::SelectionError(in_call(std::string(what) + " overflows: start " + std::to_string(start) +
                                         ", size " + std::to_string(size) + ", width " + std::to_string(width)));
}

loom_status loom_field_write(loom_field* f, int component, loom_datatype dtype, const void* local,
                             const uint64_t* local_shape, const uint64_t* offset, uint64_t ghost) {
  return guarded(__func__, [&] {
    auto& fld = need(f, "f", "field")->field;
    int nd = static_cast<int>(fld.global_shape().size());
    if (!local_shape) throw h5loom::UsageError(in_call("null array 'local_shape' for field '" + fld.name() + "'"));
    if (!offset) throw h5loom::UsageError(in_call("null array 'offset' for field '" + fld.name() + "'"));
    if (component < 0)
      throw h5loom::SelectionError(in_call("'component' is " + std::to_string(component) + " for field '" +
                                           fld.name() + "'"));
    auto type = to_datatype(dtype);
    uint64_t elements = 1;
    for (int k = 0; k < nd; ++k) {
      check_box_end(offset[k], 0, ghost, "'offset' plus the ghost width");
      fits_in_memory(elements, local_shape[k] ? local_shape[k] : 1, "local_shape");
      elements *= local_shape[k];
    }
    fits_in_memory(elements, h5loom::datatype_size(type), "local_shape");
    need_buffer(local, elements, "local");
    fld.write_raw(type, local, dims(nd, local_shape, "local_shape"), dims(nd, offset, "offset"), ghost, component);
  });
}

loom_status loom_field_read(loom_field* f, int component, loom_datatype dtype, const uint64_t* lo,
                            const uint64_t* count, uint64_t halo, const void* fill, void* out) {
  h5loom::Datatype type{};
  return collective(
      __func__, comm_of(f),
      [&] {
        auto& fld = need(f, "f", "field")->field;
        int nd = static_cast<int>(fld.global_shape().size());
        if (!lo) throw h5loom::UsageError(in_call("null array 'lo' for field '" + fld.name() + "'"));
        if (!count) throw h5loom::UsageError(in_call("null array 'count' for field '" + fld.name() + "'"));
        if (component < 0)
          throw h5loom::SelectionError(in_call("'component' is " + std::to_string(component) + " for field '" +
                                               fld.name() + "'"));
        type = to_datatype(dtype);
        uint64_t padded = 1, box = 1;
        for (int k = 0; k < nd; ++k) {
          check_box_end(lo[k], count[k], halo, "the box 'lo' + 'count' plus the halo");
          box *= count[k] ? 1 : 0;
          const uint64_t side = count[k] + 2 * halo;
          fits_in_memory(padded, side ? side : 1, "count + 2 * halo");
          padded *= side;
        }
        if (box) {
          fits_in_memory(padded, h5loom::datatype_size(type), "count + 2 * halo");
          need_buffer(out, padded, "out");
        }
      },
      [&] {
        std::vector<unsigned char> zero(8, 0);
        f->field.read_raw(type, out, dims(static_cast<int>(f->field.global_shape().size()), lo, "lo"),
                          dims(static_cast<int>(f->field.global_shape().size()), count, "count"), halo,
                          fill ? fill : zero.data(), component);
      });
}

loom_status loom_field_free(loom_field* f) {
  delete f;  // NULL: nothing to free, as free(NULL)
  return guarded(__func__, [] {});
}

}  // extern "C"
