// The C API of netCDF files: thin handles over h5loom::netcdf (include/h5loom/netcdf.hpp).
// Dimension and variable ids are positions: dimensions by id, variables in definition order.
#include <algorithm>
#include <cstring>
#include <functional>

#include "capi_internal.hpp"
#include "h5loom/netcdf.hpp"

using namespace h5loom::capi;
namespace nc = h5loom::netcdf;

struct loom_nc_file_s {
  nc::File file;
  SharedComm agree;
};

namespace {

nc::Variable variable(loom_nc_file* f, int varid) {
  const auto vars = f->file.variables();
  if (varid < 0 || std::size_t(varid) >= vars.size())
    throw h5loom::UsageError(in_call("varid " + std::to_string(varid) + ": the file has " +
                                     std::to_string(vars.size()) + " variables (ids 0 to " +
                                     std::to_string(int(vars.size()) - 1) + ")"));
  return vars[std::size_t(varid)];
}

std::string dimension_name(loom_nc_file* f, int dimid) {
  const auto dims = f->file.dimensions();
  if (dimid < 0 || std::size_t(dimid) >= dims.size())
    throw h5loom::UsageError(in_call("dimid " + std::to_string(dimid) + ": the file has " +
                                     std::to_string(dims.size()) + " dimensions"));
  return dims[std::size_t(dimid)].name;
}

h5loom::AttributeValue attribute(loom_nc_file* f, int varid, const char* name) {
  return varid == LOOM_NC_GLOBAL ? f->file.attribute(name) : variable(f, varid).attribute(name);
}

void set_attribute(loom_nc_file* f, int varid, const char* name, const h5loom::AttributeValue& value) {
  if (varid == LOOM_NC_GLOBAL) f->file.set_attribute(name, value);
  else variable(f, varid).set_attribute(name, value);
}

// start/count: both NULL (the whole variable, ndims 0) or both ndims entries,
// ndims the variable's.
void box(loom_nc_file* f, int varid, int ndims, const uint64_t* start, const uint64_t* count, h5loom::Dims& s,
         h5loom::Dims& c) {
  const int have = int(variable(f, varid).dimensions().size());
  if (!start && !count && ndims == 0) return;
  if (ndims != have)
    throw h5loom::SelectionError(in_call("ndims " + std::to_string(ndims) + " for variable '" +
                                         variable(f, varid).name() + "' of " + std::to_string(have) + " dimensions"));
  need_out(start, "start");
  need_out(count, "count");
  s = dims(ndims, start, "start");
  c = dims(ndims, count, "count");
}

}  // namespace

extern "C" {

static loom_status open_nc(const char* function, const char* path, loom_mode mode, MPI_Comm comm, const char* engine,
                           bool create, loom_nc_file** out) {
  return open_over(
      function, comm, out,
      [&] {
        text(path, "path");
        if (!create && mode != LOOM_MODE_READ && mode != LOOM_MODE_READWRITE)
          throw h5loom::UsageError(in_call("mode " + std::to_string(int(mode)) +
                                           ": open takes LOOM_MODE_READ or LOOM_MODE_READWRITE (loom_nc_create makes files)"));
      },
      [&] {
        auto file = create ? nc::File::create(path, options(comm, engine))
                           : nc::File::open(path, static_cast<h5loom::Mode>(mode), options(comm, engine));
        auto agree_comm = std::make_shared<AgreeComm>(file.storage().comm());
        return new loom_nc_file_s{std::move(file), std::move(agree_comm)};
      });
}

loom_status loom_nc_create(const char* path, MPI_Comm comm, const char* engine, loom_nc_file** out) {
  return open_nc(__func__, path, LOOM_MODE_CREATE, comm, engine, true, out);
}
loom_status loom_nc_open(const char* path, loom_mode mode, MPI_Comm comm, const char* engine, loom_nc_file** out) {
  return open_nc(__func__, path, mode, comm, engine, false, out);
}
loom_status loom_nc_create_f(const char* path, MPI_Fint comm, const char* engine, loom_nc_file** out) {
  h5loom::ensure_mpi();  // MPI_Comm_f2c needs MPI
  return open_nc(__func__, path, LOOM_MODE_CREATE, MPI_Comm_f2c(comm), engine, true, out);
}
loom_status loom_nc_open_f(const char* path, loom_mode mode, MPI_Fint comm, const char* engine, loom_nc_file** out) {
  h5loom::ensure_mpi();
  return open_nc(__func__, path, mode, MPI_Comm_f2c(comm), engine, false, out);
}

loom_status loom_nc_def_dim(loom_nc_file* f, const char* name, uint64_t length, int* dimid) {
  return collective(
      __func__, comm_of(f),
      [&] {
        need(f, "f", "netCDF file");
        text(name, "name");
      },
      [&] {
        const int id = f->file.define_dimension(name, length).id;
        if (dimid) *dimid = id;
      });
}

loom_status loom_nc_def_var(loom_nc_file* f, const char* name, loom_datatype type, int ndims, const int* dimids,
                            int* varid) {
  h5loom::Datatype t;
  return collective(
      __func__, comm_of(f),
      [&] {
        need(f, "f", "netCDF file");
        text(name, "name");
        t = to_datatype(type, "type");
        check_ndim(ndims, "ndims");
        if (ndims) need_out(dimids, "dimids");
      },
      [&] {
        std::vector<std::string> names;
        for (int i = 0; i < ndims; ++i) names.push_back(dimension_name(f, dimids[i]));
        f->file.define_variable(name, t, names);
        if (varid) *varid = int(f->file.variables().size()) - 1;
      });
}

loom_status loom_nc_def_var_chunking(loom_nc_file* f, int varid, const uint64_t* chunks) {
  return collective(__func__, comm_of(f), [&] { need(f, "f", "netCDF file"); },
                    [&] {
                      auto v = variable(f, varid);
                      nc::VariableOptions o;
                      if (chunks) o.chunks = dims(int(v.dimensions().size()), chunks, "chunks");
                      const auto kept = v.storage();  // the compression already asked for stays
                      o.deflate_level = kept.deflate_level;
                      o.shuffle = kept.shuffle;
                      v.set_storage(o);
                    });
}

loom_status loom_nc_def_var_deflate(loom_nc_file* f, int varid, int shuffle, int deflate_level) {
  return collective(__func__, comm_of(f), [&] { need(f, "f", "netCDF file"); },
                    [&] {
                      auto v = variable(f, varid);
                      nc::VariableOptions o = v.storage();
                      o.shuffle = shuffle != 0;
                      o.deflate_level = deflate_level;
                      v.set_storage(o);
                    });
}

loom_status loom_nc_def_var_fill(loom_nc_file* f, int varid, loom_datatype type, const void* fill) {
  h5loom::Datatype t;
  return collective(
      __func__, comm_of(f),
      [&] {
        need(f, "f", "netCDF file");
        t = to_datatype(type, "type");
        need_out(fill, "fill");
      },
      [&] {
        auto v = variable(f, varid);
        // The value as the variable's type (a Fortran default real for a double variable, say).
        const auto given = h5loom::AttributeValue::from_raw(h5loom::AttributeValue::Kind::Array, t, 1, fill);
        std::vector<unsigned char> value(v.dtype().size());
        h5loom::dispatch_scalar(v.dtype().scalar(), [&](auto tag) {
          using T = decltype(tag);
          const T x = given.as_vector<T>().at(0);
          std::memcpy(value.data(), &x, sizeof x);
        });
        v.set_attribute("_FillValue",
                        h5loom::AttributeValue::from_raw(h5loom::AttributeValue::Kind::Array, v.dtype(), 1, value.data()));
      });
}

loom_status loom_nc_enddef(loom_nc_file* f) {
  return collective(__func__, comm_of(f), [&] { need(f, "f", "netCDF file"); }, [&] { f->file.end_define(); });
}

loom_status loom_nc_redef(loom_nc_file* f) {
  return collective(__func__, comm_of(f), [&] { need(f, "f", "netCDF file"); }, [&] { f->file.redefine(); });
}

loom_status loom_nc_put_att(loom_nc_file* f, int varid, const char* name, loom_datatype type, size_t n,
                            const void* values) {
  h5loom::Datatype t;
  return collective(
      __func__, comm_of(f),
      [&] {
        need(f, "f", "netCDF file");
        text(name, "name");
        t = to_datatype(type, "type");
        if (n == 0) throw h5loom::UsageError(in_call("n is 0: a netCDF attribute holds at least one number"));
        fits_in_memory(n, t.size(), "n");
        need_buffer(values, n, "values");
      },
      [&] {
        set_attribute(f, varid, name, h5loom::AttributeValue::from_raw(h5loom::AttributeValue::Kind::Array, t, n, values));
      });
}

loom_status loom_nc_put_att_text(loom_nc_file* f, int varid, const char* name, const char* value) {
  return collective(
      __func__, comm_of(f),
      [&] {
        need(f, "f", "netCDF file");
        text(name, "name");
        text(value, "text");
      },
      [&] { set_attribute(f, varid, name, h5loom::AttributeValue(std::string(value))); });
}

loom_status loom_nc_get_att(loom_nc_file* f, int varid, const char* name, loom_datatype type, size_t n, void* out) {
  h5loom::Datatype t;
  return collective(
      __func__, comm_of(f),
      [&] {
        need(f, "f", "netCDF file");
        text(name, "name");
        t = to_datatype(type, "type");
        need_buffer(out, n, "out");
      },
      [&] {
        const auto value = attribute(f, varid, name);
        if (!value.is_numeric())
          throw h5loom::DatatypeError(in_call("attribute '" + std::string(name) +
                                              "' holds text: loom_nc_get_att_text reads it"));
        if (value.size() != n)
          throw h5loom::SelectionError(in_call("attribute '" + std::string(name) + "' holds " +
                                               std::to_string(value.size()) + " numbers, not n = " + std::to_string(n)));
        h5loom::dispatch_scalar(t.scalar(), [&](auto tag) {
          using T = decltype(tag);
          const auto v = value.as_vector<T>();
          std::memcpy(out, v.data(), v.size() * sizeof(T));
        });
      });
}

loom_status loom_nc_get_att_text(loom_nc_file* f, int varid, const char* name, char* buf, size_t bufsize,
                                 size_t* needed) {
  return collective(
      __func__, comm_of(f),
      [&] {
        need(f, "f", "netCDF file");
        text(name, "name");
        check_string_out(buf, bufsize);
      },
      [&] {
        const auto value = attribute(f, varid, name);
        if (!value.is_string())
          throw h5loom::DatatypeError(in_call("attribute '" + std::string(name) + "' is not text"));
        copy_out(value.as_string(), buf, bufsize, needed);
      });
}

loom_status loom_nc_inq(loom_nc_file* f, int* ndims, int* nvars, int* unlimited_dimid) {
  return guarded(__func__, [&] {
    need(f, "f", "netCDF file");
    const auto dims = f->file.dimensions();
    if (ndims) *ndims = int(dims.size());
    if (nvars) *nvars = int(f->file.variables().size());
    if (unlimited_dimid) {
      *unlimited_dimid = -1;
      for (const auto& d : dims)
        if (d.unlimited) *unlimited_dimid = d.id;
    }
  });
}

loom_status loom_nc_inq_dimid(loom_nc_file* f, const char* name, int* dimid) {
  return guarded(__func__, [&] {
    need(f, "f", "netCDF file");
    need_out(dimid, "dimid");
    *dimid = f->file.dimension(text(name, "name")).id;
  });
}

loom_status loom_nc_inq_dim(loom_nc_file* f, int dimid, char* name, size_t bufsize, size_t* needed, uint64_t* length) {
  return guarded(__func__, [&] {
    need(f, "f", "netCDF file");
    check_string_out(name, bufsize);
    const auto d = f->file.dimension(dimension_name(f, dimid));
    copy_out(d.name, name, bufsize, needed);
    if (length) *length = d.length;
  });
}

loom_status loom_nc_inq_varid(loom_nc_file* f, const char* name, int* varid) {
  return guarded(__func__, [&] {
    need(f, "f", "netCDF file");
    need_out(varid, "varid");
    text(name, "name");
    const auto vars = f->file.variables();
    for (std::size_t i = 0; i < vars.size(); ++i)
      if (vars[i].name() == name) {
        *varid = int(i);
        return;
      }
    throw h5loom::NotFoundError(in_call("no variable '" + std::string(name) + "'"));
  });
}

loom_status loom_nc_inq_var(loom_nc_file* f, int varid, char* name, size_t bufsize, size_t* needed,
                            loom_datatype* type, int* ndims, int* dimids) {
  return guarded(__func__, [&] {
    need(f, "f", "netCDF file");
    check_string_out(name, bufsize);
    const auto v = variable(f, varid);
    copy_out(v.name(), name, bufsize, needed);
    if (type) *type = static_cast<loom_datatype>(v.dtype().scalar());
    const auto names = v.dimensions();
    if (ndims) *ndims = int(names.size());
    if (dimids)
      for (std::size_t i = 0; i < names.size(); ++i) dimids[i] = f->file.dimension(names[i]).id;
  });
}

loom_status loom_nc_set_records(loom_nc_file* f, uint64_t n) {
  return collective(__func__, comm_of(f), [&] { need(f, "f", "netCDF file"); }, [&] { f->file.set_records(n); });
}

loom_status loom_nc_put_vara(loom_nc_file* f, int varid, int ndims, const uint64_t* start, const uint64_t* count,
                             loom_datatype type, size_t n, const void* data) {
  return guarded(__func__, [&] {
    need(f, "f", "netCDF file");
    const h5loom::Datatype t = to_datatype(type, "type");
    fits_in_memory(n, t.size(), "n");
    need_buffer(data, n, "data");
    h5loom::Dims s, c;
    box(f, varid, ndims, start, count, s, c);
    variable(f, varid).write_raw(s, c, t, data, n);
  });
}

loom_status loom_nc_get_vara(loom_nc_file* f, int varid, int ndims, const uint64_t* start, const uint64_t* count,
                             loom_datatype type, size_t n, void* out) {
  h5loom::Datatype t;
  h5loom::Dims s, c;
  return collective(
      __func__, comm_of(f),
      [&] {
        need(f, "f", "netCDF file");
        t = to_datatype(type, "type");
        fits_in_memory(n, t.size(), "n");
        need_buffer(out, n, "out");
        box(f, varid, ndims, start, count, s, c);
      },
      [&] { variable(f, varid).read_raw(s, c, t, out, n); });
}

// write_darray / read_darray: agreed over the file's ranks once the handles, the type and the buffer are checked.
static loom_status darray(const char* function, loom_rearrangement* r, loom_nc_file* f, int varid,
                          loom_datatype type, size_t n, const void* buffer,
                          const std::function<void(nc::Variable&, h5loom::pio::Rearrangement&,
                                                   const h5loom::Datatype&)>& transfer) {
  h5loom::Datatype t;
  return collective(
      function, comm_of(f),
      [&] {
        need(f, "f", "netCDF file");
        need(r, "r", "rearrangement");
        t = to_datatype(type, "type");
        variable(f, varid);
        fits_in_memory(n, t.size(), "n");
        need_buffer(buffer, n, "local");
      },
      [&] {
        auto v = variable(f, varid);
        transfer(v, r->rearrangement, t);
      });
}

loom_status loom_nc_write_darray(loom_rearrangement* r, loom_nc_file* f, int varid, uint64_t frame,
                                 loom_datatype type, size_t n, const void* local) {
  return darray(__func__, r, f, varid, type, n, local, [&](auto& v, auto& rearrangement, const auto& t) {
    f->file.write_darray(v, rearrangement, frame, t, local, n);
  });
}

loom_status loom_nc_read_darray(loom_rearrangement* r, loom_nc_file* f, int varid, uint64_t frame, loom_datatype type,
                                size_t n, void* local) {
  return darray(__func__, r, f, varid, type, n, local, [&](auto& v, auto& rearrangement, const auto& t) {
    f->file.read_darray(v, rearrangement, frame, t, local, n);
  });
}

loom_status loom_nc_sync(loom_nc_file* f) {
  return collective(__func__, comm_of(f), [&] { need(f, "f", "netCDF file"); }, [&] { f->file.sync(); });
}

loom_status loom_nc_close(loom_nc_file* f) {
  if (!f) return LOOM_OK;
  return collective(__func__, comm_of(f), [] {},
                    [&] {
                      std::unique_ptr<loom_nc_file_s> owned(f);  // freed whatever close does
                      owned->file.close();
                    });
}

}  // extern "C"
