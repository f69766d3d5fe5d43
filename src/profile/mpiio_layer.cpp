// The profile's MPI-IO layer: the MPI-IO calls that HDF5 makes for the hdf5
// engine, caught through MPI's profiling interface (each MPI_File_* defined
// here forwards to its PMPI_File_* twin). It takes effect where libh5loom's
// symbols come before libmpi's (programs linked with the shared libh5loom);
// inside the Python extension, which is loaded privately, it does not.
// Offsets are in bytes: the view's displacement plus the offset in etypes
// (for a non-contiguous file type, where the access starts).
#include <mpi.h>

#include <map>
#include <mutex>
#include <string>

#include "profile/profiler.hpp"

namespace {

struct View {
  std::string name;
  MPI_Offset disp = 0;
  int etype_size = 1;
};

std::mutex mu;
std::map<MPI_File, View>& views() {
  static auto* v = new std::map<MPI_File, View>;
  return *v;
}

View view_of(MPI_File fh) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = views().find(fh);
  return it == views().end() ? View{"(MPI file)", 0, 1} : it->second;
}

uint64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return uint64_t(count) * uint64_t(size);
}

using h5loom::profile::Kind;
using h5loom::profile::Layer;
using h5loom::profile::Scope;

}  // namespace

extern "C" {

int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  Scope s(Layer::MpiIo, Kind::Meta, "MPI_File_open", filename ? filename : "");
  int rc = PMPI_File_open(comm, filename, amode, info, fh);
  if (rc == MPI_SUCCESS && h5loom::profile::enabled()) {
    std::lock_guard<std::mutex> lock(mu);
    views()[*fh] = View{filename ? filename : "", 0, 1};
  }
  return rc;
}

int MPI_File_close(MPI_File* fh) {
  View v = view_of(*fh);
  Scope s(Layer::MpiIo, Kind::Meta, "MPI_File_close", v.name);
  {
    std::lock_guard<std::mutex> lock(mu);
    views().erase(*fh);
  }
  return PMPI_File_close(fh);
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char* datarep,
                      MPI_Info info) {
  if (h5loom::profile::enabled()) {
    int size = 1;
    PMPI_Type_size(etype, &size);
    std::lock_guard<std::mutex> lock(mu);
    auto& v = views()[fh];
    v.disp = disp, v.etype_size = size > 0 ? size : 1;
  }
  return PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
}

int MPI_File_sync(MPI_File fh) {
  Scope s(Layer::MpiIo, Kind::Meta, "MPI_File_sync", view_of(fh).name);
  return PMPI_File_sync(fh);
}

#define H5LOOM_MPIIO_AT(NAME, KIND, BUF)                                                                     \
  int NAME(MPI_File fh, MPI_Offset offset, BUF buf, int count, MPI_Datatype datatype, MPI_Status* status) { \
    if (!h5loom::profile::enabled()) return P##NAME(fh, offset, buf, count, datatype, status);             \
    View v = view_of(fh);                                                                                  \
    Scope s(Layer::MpiIo, KIND, #NAME, v.name, uint64_t(v.disp + offset * v.etype_size),                   \
            bytes_of(count, datatype));                                                                    \
    return P##NAME(fh, offset, buf, count, datatype, status);                                              \
  }

H5LOOM_MPIIO_AT(MPI_File_write_at, Kind::Write, const void*)
H5LOOM_MPIIO_AT(MPI_File_write_at_all, Kind::Write, const void*)
H5LOOM_MPIIO_AT(MPI_File_read_at, Kind::Read, void*)
H5LOOM_MPIIO_AT(MPI_File_read_at_all, Kind::Read, void*)

#undef H5LOOM_MPIIO_AT

}  // extern "C"
