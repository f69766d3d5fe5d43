// Datasets: H5Dcreate/H5Dopen/H5Dwrite/H5Dread/H5Dset_extent over h5loom::Dataset.
//
// Writes are copied (an HDF5 application may reuse its buffer when H5Dwrite
// returns) and deferred to the next flush point, as h5loom's writes are;
// reads are collective over the file's communicator, as h5loom's are.
#include <algorithm>
#include <cstring>

#include "core/mpi_util.hpp"
#include "hdf5lib/filters.hpp"
#include "hdf5lib/hid.hpp"
#include "hdf5lib/types.hpp"
#include "vol/transfer.hpp"

namespace h5loom::vol {

using hdf5lib::Hid;

namespace {

Object& as_object(void* obj) { return *static_cast<Object*>(obj); }

// What H5Dcreate asks for, as a DatasetSpec; refuses what h5loom datasets cannot be.
DatasetSpec spec_of(OpenFile& f, const std::string& path, hid_t type, hid_t space, hid_t dcpl) {
  DatasetSpec spec;
  spec.dtype = model_type(type, path);
  spec.named_type = shared_named_type(f, type);
  const std::string where = "dataset '" + path + "'";
  switch (H5Sget_simple_extent_type(space)) {
    case H5S_SCALAR:
      // h5loom datasets have at least one dimension: a scalar is stored as one
      // element of shape [1] (and reads back so: docs/vol.md).
      spec.shape = spec.max_shape = {1};
      break;
    case H5S_NULL: spec.null_space = true; break;  // no shape (the object model checks the engine keeps it)
    case H5S_SIMPLE: {
      const int rank = H5Sget_simple_extent_ndims(space);
      std::vector<hsize_t> dims(rank), maxdims(rank);
      H5Sget_simple_extent_dims(space, dims.data(), maxdims.data());
      spec.shape = hdf5lib::from_hsize(dims.data(), rank);
      spec.max_shape = hdf5lib::from_hsize(maxdims.data(), rank);
      break;
    }
    default: throw SelectionError("invalid dataspace for " + where);
  }
  const int rank = int(spec.shape.size());
  // Without creation properties the engine picks the layout (HDF5 would
  // refuse an extendable contiguous dataset; h5loom chunks it).
  if (dcpl == H5P_DEFAULT || dcpl < 0 || H5Pequal(dcpl, H5P_DATASET_CREATE_DEFAULT) > 0) return spec;
  if (H5Pget_nfilters(dcpl) > 0) {
    if (!f.filters) unsupported("filters (compression, checksums) with an engine without the conformance group 'filters'");
    spec.filters = hdf5lib::filters_of(dcpl, where);
  }
  if (H5Pget_external_count(dcpl) > 0) unsupported("external storage set by H5Pset_external on " + where);
  switch (H5Pget_layout(dcpl)) {
    case H5D_CHUNKED: {
      spec.layout = Layout::Chunked;
      spec.layout_auto = false;
      std::vector<hsize_t> chunks(rank);
      if (H5Pget_chunk(dcpl, rank, chunks.data()) != rank)
        throw SelectionError("the chunk dimensions of " + where + " differ in rank from its dataspace");
      spec.chunks = hdf5lib::from_hsize(chunks.data(), rank);
      break;
    }
    case H5D_VIRTUAL: unsupported("virtual datasets (H5Pset_virtual) for " + where);
    default:  // contiguous, or compact (HDF5's small-data form of contiguous)
      spec.layout = Layout::Contiguous;
      spec.layout_auto = false;
      break;
  }
  H5D_fill_value_t fill = H5D_FILL_VALUE_DEFAULT;
  if (H5Pfill_value_defined(dcpl, &fill) >= 0 && fill == H5D_FILL_VALUE_USER_DEFINED &&
      spec.dtype.has_variable_length_parts())  // (reading it would allocate parts for nothing)
    throw DatatypeError("cannot create " + where + " of type " + spec.dtype.name() +
                        " with a fill value: datasets of variable-length data have none (unwritten elements are empty)");
  if (H5Pfill_value_defined(dcpl, &fill) >= 0 && fill == H5D_FILL_VALUE_USER_DEFINED && !spec.dtype.is_varstring() &&
      !spec.dtype.has_references()) {
    if (!f.fill) unsupported("fill values (H5Pset_fill_value) with an engine without the conformance group 'fill'");
    Hid mt = hdf5lib::memory_type(spec.dtype);
    spec.fill.assign(datatype_size(spec.dtype), 0);
    // Fixed-length strings: the bytes as given (converting would re-pad them).
    const hid_t as = spec.dtype.is_string() ? type : mt.get();
    if (H5Pget_fill_value(dcpl, as, spec.fill.data()) < 0) throw DatatypeError("cannot read the fill value of " + where);
  }
  return spec;
}

void* dataset_create(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t lcpl, hid_t type, hid_t space,
                     hid_t dcpl, hid_t dapl, hid_t, void**) {
  return H5LOOM_VOL_GUARD((void*)nullptr, {
    Object& o = as_object(obj);
    check_plist(lcpl, H5P_LINK_CREATE, "link creation");
    check_plist(dcpl, H5P_DATASET_CREATE, "dataset creation");
    check_plist(dapl, H5P_DATASET_ACCESS, "dataset access");
    if (!name) {  // H5Dcreate_anon: parked under a hidden name, or (without links) made when H5Olink names it
      if (o.h5().mode() == Mode::Read)
        throw ReadOnlyError("cannot create a dataset: file '" + o.file->name + "' is open read-only");
      DatasetSpec spec = spec_of(*o.file, "an anonymous dataset", type, space, dcpl);
      std::string parked;
      if (o.file->links) {
        do  // (past any a crash left: the group is the connector's own)
          parked = std::string(kParkedGroup) + "/" + std::to_string(o.file->next_parked++);
        while (o.h5().kind(parked) != ObjectKind::None);
        o.h5().create_dataset(parked, spec);
      }
      auto* d = new Object(H5I_DATASET, o, parked);
      d->anonymous = Object::Anonymous{spec, {}, parked};
      d->keep_create(dcpl);
      d->keep_access(dapl);
      return (void*)d;
    }
    const std::string path = join(locate(o, loc), name);
    DatasetSpec spec = spec_of(*o.file, path, type, space, dcpl);
    if (o.h5().mode() != Mode::Read) require_parent(*o.file, path, lcpl);
    o.h5().create_dataset(path, spec);
    auto* d = new Object(H5I_DATASET, o, path);
    d->keep_access(dapl);
    return (void*)d;
  });
}

void* dataset_open(void* obj, const H5VL_loc_params_t* loc, const char* name, hid_t dapl, hid_t, void**) {
  return H5LOOM_VOL_GUARD((void*)nullptr, {
    Object& o = as_object(obj);
    check_plist(dapl, H5P_DATASET_ACCESS, "dataset access");
    const Located at = follow_external_links(o.file, join(locate(o, loc), name ? name : "."));
    auto* d = opened_object(H5I_DATASET, o, at);
    d->keep_access(dapl);
    return (void*)d;
  });
}

std::string describe(const Object& d) { return "dataset '" + d.path + "' in file '" + d.file->name + "'"; }

void write_one(Object& d, hid_t mem_type, hid_t mem_space, hid_t file_space, const void* buf) {
  Dataset& ds = d.ds();
  const Datatype dtype = ds.dtype();
  const Dims shape = ds.shape();
  const FileSelection fsel = file_selection(file_space, shape, describe(d));
  const MemorySelection msel = memory_selection(mem_space, file_space, fsel);
  if (fsel.n == 0) return;
  if (!buf) throw UsageError("no buffer to write to " + describe(d));
  std::vector<unsigned char> gathered;
  const void* dense = buf;
  if (msel.space >= 0) {
    gathered = gather(msel, mem_type, buf);
    dense = gathered.data();
  }
  // Compound members the memory type lacks keep their values: read them first
  // (possible only where the read needs no other rank, and the selection is one).
  std::function<Elements()> background;
  if (d.h5().size() == 1 && !fsel.irregular)
    background = [&] {
      Elements cur(dtype, fsel.n);
      ds.read_raw(fsel.sel, dtype, cur.data(), fsel.n);
      return cur;
    };
  if (!fsel.irregular && dense == buf && same_type(mem_type, dtype)) {
    ds.write_raw(fsel.sel, dtype, buf, fsel.n, /*copy=*/true);
    return;
  }
  Elements e = to_model(mem_type, dense, fsel.n, dtype, background);
  if (!fsel.irregular) {
    if (e.strings) ds.write_raw(fsel.sel, dtype, e.data(), e.n, /*copy=*/true);
    else ds.write_raw(fsel.sel, dtype, e.data(), e.n, e.owner());
    return;
  }
  std::size_t at = 0;
  const std::size_t size = e.strings ? 0 : datatype_size(dtype);
  for (std::size_t p = 0; p < fsel.piece_start.size(); ++p) {
    Dims count(shape.size(), 1);
    count.back() = fsel.piece_len[p];
    const Selection piece = Selection::box(fsel.piece_start[p], count);
    if (e.strings) ds.write_raw(piece, dtype, e.strings->data() + at, fsel.piece_len[p], /*copy=*/true);
    else ds.write_raw(piece, dtype, e.bytes->data() + at * size, fsel.piece_len[p], e.owner());
    at += fsel.piece_len[p];
  }
}

// Irregular selections are read through their bounding box; so that a
// selection of two far corners cannot ask for the whole dataset, the box may
// hold at most this many bytes more than the selection.
constexpr uint64_t kMaxBoxOverhead = uint64_t(256) << 20;

// independent: this rank alone (an independent transfer of a file whose
// engine reads per rank), else collective over the file's communicator.
void read_one(Object& d, hid_t mem_type, hid_t mem_space, hid_t file_space, void* buf, bool independent, hid_t dxpl) {
  Dataset& ds = d.ds();
  const Datatype dtype = ds.dtype();
  const Dims shape = ds.shape();
  FileSelection fsel;
  MemorySelection msel;
  // A collective read: a selection refused on one rank is refused on all.
  auto check = [&] {
    fsel = file_selection(file_space, shape, describe(d));
    msel = memory_selection(mem_space, file_space, fsel);
    if (fsel.n > 0 && !buf) throw UsageError("no buffer to read " + describe(d) + " into");
    if (fsel.irregular) {
      const uint64_t box = fsel.sel.num_elements(shape), size = dtype.is_varstring() ? 32 : datatype_size(dtype);
      if ((box - fsel.n) * size > kMaxBoxOverhead)
        throw SelectionError("the point or irregular selection of " + describe(d) + " spans " + std::to_string(box) +
                             " elements for " + std::to_string(fsel.n) + " selected; the h5loom VOL connector reads such "
                             "selections through their bounding box, which may exceed the selection by at most 256 MiB");
    }
  };
  if (d.h5().size() > 1 && !independent) mpi::agree(d.h5().comm(), check);
  else check();
  auto read = [&](const Selection& sel, void* out, std::size_t n) {
    if (independent) ds.read_raw_independent(sel, dtype, out, n);
    else ds.read_raw(sel, dtype, out, n);
  };
  Elements got(dtype, fsel.n);
  if (!fsel.irregular) {
    if (!independent || fsel.n) read(fsel.sel, fsel.n ? got.data() : nullptr, fsel.n);
  } else {
    Elements box(dtype, fsel.sel.num_elements(shape));
    read(fsel.sel, box.data(), box.n);
    std::size_t at = 0;
    for (std::size_t p = 0; p < fsel.piece_start.size(); ++p) {
      Dims rel(shape.size());
      for (std::size_t k = 0; k < shape.size(); ++k) rel[k] = fsel.piece_start[p][k] - fsel.sel.start()[k];
      got.copy_from(box, row_major_index(rel, fsel.sel.count()), at, fsel.piece_len[p]);
      at += fsel.piece_len[p];
    }
  }
  if (fsel.n == 0) return;
  if (msel.space < 0) return from_model(got, mem_type, buf, dxpl);
  // Into the application's selection: convert in a dense copy whose current
  // values come from the buffer (compound members the file lacks keep them).
  std::vector<unsigned char> dense = gather(msel, mem_type, buf);
  from_model(got, mem_type, dense.data(), dxpl);
  scatter(msel, mem_type, dense.data(), buf);
}

herr_t dataset_write(size_t count, void* dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[], hid_t,
                     const void* buf[], void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    for (size_t i = 0; i < count; ++i) write_one(as_object(dset[i]), mem_type[i], mem_space[i], file_space[i], buf[i]);
    return herr_t(0);
  });
}

// Whether a read with transfer properties `dxpl` is this rank's alone: HDF5's
// default (and H5FD_MPIO_INDEPENDENT) on more than one rank, when the engine
// reads per rank; else collective, as every h5loom read is.
bool reads_alone(const Object& d, hid_t dxpl) {
  if (d.h5().size() == 1 || !d.file->independent_read) return false;
  H5FD_mpio_xfer_t mode = H5FD_MPIO_INDEPENDENT;
  if (dxpl != H5P_DEFAULT && dxpl != H5P_DATASET_XFER_DEFAULT && H5Pget_dxpl_mpio(dxpl, &mode) < 0)
    mode = H5FD_MPIO_INDEPENDENT;
  return mode != H5FD_MPIO_COLLECTIVE;
}

herr_t dataset_read(size_t count, void* dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[], hid_t dxpl,
                    void* buf[], void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    for (size_t i = 0; i < count; ++i) {
      Object& d = as_object(dset[i]);
      read_one(d, mem_type[i], mem_space[i], file_space[i], buf[i], reads_alone(d, dxpl), dxpl);
    }
    return herr_t(0);
  });
}

hid_t space_of(const Dims& shape, const Dims& max_shape) {
  auto dims = hdf5lib::to_hsize(shape), maxdims = hdf5lib::to_hsize(max_shape.empty() ? shape : max_shape);
  hid_t s = H5Screate_simple(int(dims.size()), dims.data(), maxdims.data());
  if (s < 0) throw SelectionError("cannot make the dataspace " + dims_to_string(shape));
  return s;
}

herr_t dataset_get(void* obj, H5VL_dataset_get_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& d = as_object(obj);
    Dataset& ds = d.ds();
    switch (args->op_type) {
      case H5VL_DATASET_GET_SPACE:
        args->args.get_space.space_id = ds.null_space() ? H5Screate(H5S_NULL) : space_of(ds.shape(), ds.max_shape());
        return herr_t(0);
      case H5VL_DATASET_GET_TYPE: {
        Hid t = hdf5lib::file_type(ds.dtype());
        if ((args->args.get_type.type_id = H5Tcopy(t.get())) < 0) throw DatatypeError("cannot copy the datatype");
        return herr_t(0);
      }
      case H5VL_DATASET_GET_DCPL: {
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        if (dcpl < 0) throw UsageError("cannot make dataset creation properties");
        if (ds.layout() == Layout::Chunked) {
          auto chunks = hdf5lib::to_hsize(ds.chunks());
          H5Pset_chunk(dcpl, int(chunks.size()), chunks.data());
          hdf5lib::set_filters(dcpl, ds.filters(), "the creation properties of dataset '" + d.path + "'");
        }
        const auto fill = ds.fill_value();
        if (!fill.empty()) {
          Hid mt = hdf5lib::memory_type(ds.dtype());
          H5Pset_fill_value(dcpl, mt.get(), fill.data());
        }
        args->args.get_dcpl.dcpl_id = dcpl;
        return herr_t(0);
      }
      case H5VL_DATASET_GET_DAPL:
        if ((args->args.get_dapl.dapl_id =
                 d.access_plist >= 0 ? H5Pcopy(d.access_plist) : H5Pcreate(H5P_DATASET_ACCESS)) < 0)
          throw UsageError("cannot make dataset access properties");
        return herr_t(0);
      case H5VL_DATASET_GET_STORAGE_SIZE:
        // The bytes of its elements: what the engine stores for them is its own affair.
        *args->args.get_storage_size.storage_size =
            ds.dtype().is_varstring() ? 0 : product(ds.shape()) * datatype_size(ds.dtype());
        return herr_t(0);
      case H5VL_DATASET_GET_SPACE_STATUS:
        unsupported("the space allocation status of datasets (H5Dget_space_status)");
    }
    unsupported("dataset get operation " + std::to_string(int(args->op_type)));
  });
}

herr_t dataset_specific(void* obj, H5VL_dataset_specific_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    Object& d = as_object(obj);
    switch (args->op_type) {
      case H5VL_DATASET_SET_EXTENT: {
        Dataset& ds = d.ds();
        const Dims cur = ds.shape();
        const Dims want = hdf5lib::from_hsize(args->args.set_extent.size, int(cur.size()));
        // As HDF5: only chunked datasets take H5Dset_extent, even to their own
        // extent (the object model lets a contiguous dataset keep its shape).
        if (ds.layout() != Layout::Chunked)
          throw SelectionError("cannot set the extent of dataset '" + d.path + "' in file '" + d.file->name +
                               "' to " + dims_to_string(want) + ": its layout is contiguous (only chunked datasets "
                               "change their extent)");
        // (shrinking: engines with "shrink"; the object model names the others)
        if (want != cur) ds.resize(want);
        return herr_t(0);
      }
      case H5VL_DATASET_FLUSH:
        if (d.file->intent & H5F_ACC_RDWR) d.h5().flush();
        return herr_t(0);
      case H5VL_DATASET_REFRESH: return herr_t(0);
    }
    unsupported("dataset operation " + std::to_string(int(args->op_type)));
  });
}

herr_t dataset_optional(void*, H5VL_optional_args_t* args, hid_t, void**) {
  return H5LOOM_VOL_GUARD(herr_t(-1), {
    unsupported("native dataset operation " + std::to_string(args->op_type) +
                " (chunk queries, H5Dget_offset, direct chunk I/O, ...)");
    return herr_t(0);
  });
}

// H5Dclose is collective in parallel HDF5; closing the last handle of a
// dataset of a file with more than one rank is a flush point (Visible), so
// that what was written through it is what later reads see - independent ones
// included, as native HDF5's independent writes reach the file in the call.
herr_t dataset_close(void* obj, hid_t, void**) {
  auto* d = static_cast<Object*>(obj);
  herr_t flushed = 0;
  if (d->file && d->file->file.is_open() && d->h5().size() > 1 && d->h5().mode() != Mode::Read) {
    bool last = true;
    for (const auto& [serial, live] : d->file->live)
      if (live != d && live->type == H5I_DATASET && live->path == d->path) last = false;
    if (last)
      flushed = H5LOOM_VOL_GUARD(herr_t(-1), {
        d->h5().flush(FlushLevel::Visible);
        return herr_t(0);
      });
  }
  const herr_t released = release(d);
  return flushed < 0 ? flushed : released;
}

}  // namespace

const H5VL_dataset_class_t kDatasetClass = {dataset_create,   dataset_open,     dataset_read, dataset_write,
                                            dataset_get,      dataset_specific, dataset_optional, dataset_close};

}  // namespace h5loom::vol
