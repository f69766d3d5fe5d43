! h5loom for Fortran (docs/fortran.md): a module over the C API (h5loom.h)
! through ISO_C_BINDING - files, datasets, attributes, the series veneer, and
! the netCDF and PIO layers.
!
! Fortran's view, as netCDF-Fortran gives it:
!  * dimensions are listed fastest first (a Fortran array a(nx, ny) is the
!    C-order dataset [ny, nx]): shapes, starts, counts and chunks are reversed
!    on the way to C, and starts count from 1;
!  * netCDF dimension and variable ids count from 1; LOOM_NC_GLOBAL (0) names
!    the global attributes;
!  * a PIO map is PIO's: 1-based offsets into the Fortran-order array, 0 for a hole.
! Every function returns a status: LOOM_OK (0) or an error code; the message
! of the last error is loom_error_message(). Communicators are Fortran handles
! (use mpi's integers, or mpi_f08's %MPI_VAL); absent means MPI_COMM_WORLD.
module h5loom
  use, intrinsic :: iso_c_binding
  use mpi, only: MPI_COMM_WORLD
  implicit none
  private

  ! ---- constants (h5loom.h) ----
  integer, parameter, public :: LOOM_OK = 0
  integer(c_int), parameter, public :: LOOM_INT8 = 0, LOOM_INT16 = 1, LOOM_INT32 = 2, LOOM_INT64 = 3, &
                                       LOOM_UINT8 = 4, LOOM_UINT16 = 5, LOOM_UINT32 = 6, LOOM_UINT64 = 7, &
                                       LOOM_FLOAT32 = 8, LOOM_FLOAT64 = 9
  integer(c_int), parameter, public :: LOOM_MODE_READ = 0, LOOM_MODE_READWRITE = 1, LOOM_MODE_CREATE = 2
  integer(c_int), parameter, public :: LOOM_REARRANGER_BOX = 0, LOOM_REARRANGER_SUBSET = 1
  integer(c_int), parameter, public :: LOOM_SERIES_OPENPMD = 0, LOOM_SERIES_H5PART = 1
  integer(c_int64_t), parameter, public :: LOOM_NC_UNLIMITED = 0
  integer, parameter, public :: LOOM_NC_GLOBAL = 0
  integer(c_int), parameter :: LOOM_WRITE_COPY = 1
  integer(c_int), parameter :: LOOM_SELECT_ALL = 0, LOOM_SELECT_HYPERSLAB = 2

  ! ---- handles ----
  type, public :: loom_file
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: loom_object   ! a group (the root too) or a dataset
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: loom_request  ! a flush or close that completes later (docs/async.md)
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: loom_nc_file
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: loom_decomposition
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: loom_rearrangement
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: loom_series
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: loom_step
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: loom_particles
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: loom_field
    type(c_ptr) :: p = c_null_ptr
  end type

  ! loom_selection (h5loom.h)
  type, bind(c) :: c_selection
    integer(c_int) :: kind = LOOM_SELECT_ALL
    integer(c_int) :: ndim = 0
    type(c_ptr) :: start = c_null_ptr, count = c_null_ptr, stride = c_null_ptr, block = c_null_ptr
  end type

  public :: loom_error_message
  public :: loom_file_create, loom_file_open, loom_file_flush, loom_file_close, loom_file_root
  public :: loom_file_flush_async, loom_file_close_async, loom_test, loom_wait
  public :: loom_create_dataset, loom_open_dataset, loom_dataset_write, loom_dataset_read, loom_object_close
  public :: loom_attr_write, loom_attr_write_text
  public :: loom_series_create, loom_series_close, loom_series_write_step, loom_step_end, loom_step_free
  public :: loom_step_particles, loom_particles_set_local_count, loom_particles_write, loom_particles_free
  public :: loom_step_create_field, loom_field_write, loom_field_free
  public :: loom_nc_create, loom_nc_open, loom_nc_def_dim, loom_nc_def_var, loom_nc_def_var_fill, &
            loom_nc_def_var_deflate, loom_nc_put_att, loom_nc_put_att_text, loom_nc_get_att_text, loom_nc_enddef, &
            loom_nc_redef, loom_nc_inq_varid, loom_nc_inq_dimlen, loom_nc_set_records, loom_nc_put_vara, &
            loom_nc_get_vara, loom_nc_sync, loom_nc_close
  public :: loom_decomposition_from_map, loom_decomposition_from_file, loom_decomposition_local_size, &
            loom_decomposition_dims, loom_decomposition_map, &
            loom_decomposition_free, loom_rearrangement_create, loom_rearrangement_free, &
            loom_nc_write_darray, loom_nc_read_darray

  ! ---- typed transfers: one specific per element type, the loom type passed for you ----
  interface loom_dataset_write
    module procedure dataset_write_i4, dataset_write_i8, dataset_write_r4, dataset_write_r8
  end interface
  interface loom_dataset_read
    module procedure dataset_read_i4, dataset_read_i8, dataset_read_r4, dataset_read_r8
  end interface
  interface loom_attr_write
    module procedure attr_write_i4, attr_write_i8, attr_write_r4, attr_write_r8
  end interface
  interface loom_particles_write
    module procedure particles_write_i4, particles_write_i8, particles_write_r4, particles_write_r8
  end interface
  interface loom_field_write
    module procedure field_write_r4, field_write_r8
  end interface
  interface loom_nc_def_var_fill
    module procedure nc_def_var_fill_i2, nc_def_var_fill_i4, nc_def_var_fill_i8, nc_def_var_fill_r4, nc_def_var_fill_r8
  end interface
  interface loom_nc_put_att
    module procedure nc_put_att_i4, nc_put_att_r4, nc_put_att_r8
  end interface
  interface loom_nc_put_vara
    module procedure nc_put_vara_i2, nc_put_vara_i4, nc_put_vara_i8, nc_put_vara_r4, nc_put_vara_r8
  end interface
  interface loom_nc_get_vara
    module procedure nc_get_vara_i2, nc_get_vara_i4, nc_get_vara_i8, nc_get_vara_r4, nc_get_vara_r8
  end interface
  interface loom_nc_write_darray
    module procedure nc_write_darray_i4, nc_write_darray_i8, nc_write_darray_r4, nc_write_darray_r8
  end interface
  interface loom_nc_read_darray
    module procedure nc_read_darray_i4, nc_read_darray_i8, nc_read_darray_r4, nc_read_darray_r8
  end interface

  ! ---- the C API ----
  interface
    function c_last_error_message() bind(c, name="loom_last_error_message")
      import :: c_ptr
      type(c_ptr) :: c_last_error_message
    end function
    function c_strlen(s) bind(c, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function
    function c_file_open_f(name, mode, comm, engine, out) bind(c, name="loom_file_open_f")
      import :: c_char, c_int, c_ptr
      character(kind=c_char), dimension(*) :: name, engine
      integer(c_int), value :: mode, comm
      type(c_ptr) :: out
      integer(c_int) :: c_file_open_f
    end function
    function c_file_flush(f) bind(c, name="loom_file_flush")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int) :: c_file_flush
    end function
    function c_file_close(f) bind(c, name="loom_file_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int) :: c_file_close
    end function
    function c_file_flush_async(f, durable, out) bind(c, name="loom_file_flush_async")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int), value :: durable
      type(c_ptr) :: out
      integer(c_int) :: c_file_flush_async
    end function
    function c_file_close_async(f, out) bind(c, name="loom_file_close_async")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      type(c_ptr) :: out
      integer(c_int) :: c_file_close_async
    end function
    function c_test(r, done) bind(c, name="loom_test")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
      integer(c_int) :: done
      integer(c_int) :: c_test
    end function
    function c_wait(r) bind(c, name="loom_wait")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
      integer(c_int) :: c_wait
    end function
    function c_file_root(f, out) bind(c, name="loom_file_root")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      type(c_ptr) :: out
      integer(c_int) :: c_file_root
    end function
    function c_group_create_dataset(parent, path, dtype, ndim, shape, max_shape, chunks, out) &
        bind(c, name="loom_group_create_dataset")
      import :: c_int, c_ptr, c_char, c_int64_t
      type(c_ptr), value :: parent, max_shape, chunks
      character(kind=c_char), dimension(*) :: path
      integer(c_int), value :: dtype, ndim
      integer(c_int64_t), dimension(*) :: shape
      type(c_ptr) :: out
      integer(c_int) :: c_group_create_dataset
    end function
    function c_group_open_dataset(parent, path, out) bind(c, name="loom_group_open_dataset")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: parent
      character(kind=c_char), dimension(*) :: path
      type(c_ptr) :: out
      integer(c_int) :: c_group_open_dataset
    end function
    function c_dataset_write(d, sel, mem_type, n, data, mode) bind(c, name="loom_dataset_write")
      import :: c_int, c_ptr, c_size_t, c_selection
      type(c_ptr), value :: d, data
      type(c_selection) :: sel
      integer(c_int), value :: mem_type, mode
      integer(c_size_t), value :: n
      integer(c_int) :: c_dataset_write
    end function
    function c_dataset_read(d, sel, mem_type, n, out) bind(c, name="loom_dataset_read")
      import :: c_int, c_ptr, c_size_t, c_selection
      type(c_ptr), value :: d, out
      type(c_selection) :: sel
      integer(c_int), value :: mem_type
      integer(c_size_t), value :: n
      integer(c_int) :: c_dataset_read
    end function
    function c_object_close(o) bind(c, name="loom_object_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: o
      integer(c_int) :: c_object_close
    end function
    function c_attr_write_array(o, name, dtype, count, values) bind(c, name="loom_attr_write_array")
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: o, values
      character(kind=c_char), dimension(*) :: name
      integer(c_int), value :: dtype
      integer(c_size_t), value :: count
      integer(c_int) :: c_attr_write_array
    end function
    function c_attr_write_string(o, name, value) bind(c, name="loom_attr_write_string")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: o
      character(kind=c_char), dimension(*) :: name, value
      integer(c_int) :: c_attr_write_string
    end function
    function c_series_create_f(name, comm, engine, layout, out) bind(c, name="loom_series_create_f")
      import :: c_int, c_ptr, c_char
      character(kind=c_char), dimension(*) :: name, engine
      integer(c_int), value :: comm, layout
      type(c_ptr) :: out
      integer(c_int) :: c_series_create_f
    end function
    function c_series_close(s) bind(c, name="loom_series_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: s
      integer(c_int) :: c_series_close
    end function
    function c_series_write_step(s, n, time, dt, out) bind(c, name="loom_series_write_step")
      import :: c_int, c_ptr, c_int64_t, c_double
      type(c_ptr), value :: s
      integer(c_int64_t), value :: n
      real(c_double), value :: time, dt
      type(c_ptr) :: out
      integer(c_int) :: c_series_write_step
    end function
    function c_step_end(st) bind(c, name="loom_step_end")
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int) :: c_step_end
    end function
    function c_step_free(st) bind(c, name="loom_step_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: st
      integer(c_int) :: c_step_free
    end function
    function c_step_particles(st, species, out) bind(c, name="loom_step_particles")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: st
      character(kind=c_char), dimension(*) :: species
      type(c_ptr) :: out
      integer(c_int) :: c_step_particles
    end function
    function c_particles_set_local_count(p, n, offset, global) bind(c, name="loom_particles_set_local_count")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: p
      integer(c_int64_t), value :: n
      integer(c_int64_t) :: offset, global
      integer(c_int) :: c_particles_set_local_count
    end function
    function c_particles_write(p, array, dtype, data) bind(c, name="loom_particles_write_copy")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: p, data
      character(kind=c_char), dimension(*) :: array
      integer(c_int), value :: dtype
      integer(c_int) :: c_particles_write
    end function
    function c_particles_free(p) bind(c, name="loom_particles_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: p
      integer(c_int) :: c_particles_free
    end function
    function c_step_create_field(st, name, ndim, global_shape, components, dtype, origin, spacing, out) &
        bind(c, name="loom_step_create_field")
      import :: c_int, c_ptr, c_char, c_int64_t
      type(c_ptr), value :: st, origin, spacing
      character(kind=c_char), dimension(*) :: name
      integer(c_int), value :: ndim, components, dtype
      integer(c_int64_t), dimension(*) :: global_shape
      type(c_ptr) :: out
      integer(c_int) :: c_step_create_field
    end function
    function c_field_write(f, component, dtype, local, local_shape, offset, ghost) bind(c, name="loom_field_write")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: f, local
      integer(c_int), value :: component, dtype
      integer(c_int64_t), dimension(*) :: local_shape, offset
      integer(c_int64_t), value :: ghost
      integer(c_int) :: c_field_write
    end function
    function c_field_free(f) bind(c, name="loom_field_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int) :: c_field_free
    end function
    ! netCDF
    function c_nc_create_f(path, comm, engine, out) bind(c, name="loom_nc_create_f")
      import :: c_int, c_ptr, c_char
      character(kind=c_char), dimension(*) :: path, engine
      integer(c_int), value :: comm
      type(c_ptr) :: out
      integer(c_int) :: c_nc_create_f
    end function
    function c_nc_open_f(path, mode, comm, engine, out) bind(c, name="loom_nc_open_f")
      import :: c_int, c_ptr, c_char
      character(kind=c_char), dimension(*) :: path, engine
      integer(c_int), value :: mode, comm
      type(c_ptr) :: out
      integer(c_int) :: c_nc_open_f
    end function
    function c_nc_def_dim(f, name, length, dimid) bind(c, name="loom_nc_def_dim")
      import :: c_int, c_ptr, c_char, c_int64_t
      type(c_ptr), value :: f
      character(kind=c_char), dimension(*) :: name
      integer(c_int64_t), value :: length
      integer(c_int) :: dimid
      integer(c_int) :: c_nc_def_dim
    end function
    function c_nc_def_var(f, name, dtype, ndims, dimids, varid) bind(c, name="loom_nc_def_var")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: f
      character(kind=c_char), dimension(*) :: name
      integer(c_int), value :: dtype, ndims
      integer(c_int), dimension(*) :: dimids
      integer(c_int) :: varid
      integer(c_int) :: c_nc_def_var
    end function
    function c_nc_def_var_deflate(f, varid, shuffle, level) bind(c, name="loom_nc_def_var_deflate")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int), value :: varid, shuffle, level
      integer(c_int) :: c_nc_def_var_deflate
    end function
    function c_nc_def_var_fill(f, varid, dtype, fill) bind(c, name="loom_nc_def_var_fill")
      import :: c_int, c_ptr
      type(c_ptr), value :: f, fill
      integer(c_int), value :: varid, dtype
      integer(c_int) :: c_nc_def_var_fill
    end function
    function c_nc_put_att(f, varid, name, dtype, n, values) bind(c, name="loom_nc_put_att")
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: f, values
      integer(c_int), value :: varid, dtype
      character(kind=c_char), dimension(*) :: name
      integer(c_size_t), value :: n
      integer(c_int) :: c_nc_put_att
    end function
    function c_nc_put_att_text(f, varid, name, text) bind(c, name="loom_nc_put_att_text")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: f
      integer(c_int), value :: varid
      character(kind=c_char), dimension(*) :: name, text
      integer(c_int) :: c_nc_put_att_text
    end function
    function c_nc_get_att_text(f, varid, name, buf, bufsize, needed) bind(c, name="loom_nc_get_att_text")
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: f
      integer(c_int), value :: varid
      character(kind=c_char), dimension(*) :: name, buf
      integer(c_size_t), value :: bufsize
      integer(c_size_t) :: needed
      integer(c_int) :: c_nc_get_att_text
    end function
    function c_nc_enddef(f) bind(c, name="loom_nc_enddef")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int) :: c_nc_enddef
    end function
    function c_nc_redef(f) bind(c, name="loom_nc_redef")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int) :: c_nc_redef
    end function
    function c_nc_sync(f) bind(c, name="loom_nc_sync")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int) :: c_nc_sync
    end function
    function c_nc_close(f) bind(c, name="loom_nc_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int) :: c_nc_close
    end function
    function c_nc_inq_varid(f, name, varid) bind(c, name="loom_nc_inq_varid")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: f
      character(kind=c_char), dimension(*) :: name
      integer(c_int) :: varid
      integer(c_int) :: c_nc_inq_varid
    end function
    function c_nc_inq_dim(f, dimid, name, bufsize, needed, length) bind(c, name="loom_nc_inq_dim")
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: f, name, needed
      integer(c_int), value :: dimid
      integer(c_size_t), value :: bufsize
      integer(c_int64_t) :: length
      integer(c_int) :: c_nc_inq_dim
    end function
    function c_nc_inq_var(f, varid, name, bufsize, needed, dtype, ndims, dimids) bind(c, name="loom_nc_inq_var")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: f, name, needed, dtype, dimids
      integer(c_int), value :: varid
      integer(c_size_t), value :: bufsize
      integer(c_int) :: ndims
      integer(c_int) :: c_nc_inq_var
    end function
    function c_nc_set_records(f, n) bind(c, name="loom_nc_set_records")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: f
      integer(c_int64_t), value :: n
      integer(c_int) :: c_nc_set_records
    end function
    function c_nc_put_vara(f, varid, ndims, start, count, dtype, n, data) bind(c, name="loom_nc_put_vara")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: f, start, count, data
      integer(c_int), value :: varid, ndims, dtype
      integer(c_size_t), value :: n
      integer(c_int) :: c_nc_put_vara
    end function
    function c_nc_get_vara(f, varid, ndims, start, count, dtype, n, out) bind(c, name="loom_nc_get_vara")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: f, start, count, out
      integer(c_int), value :: varid, ndims, dtype
      integer(c_size_t), value :: n
      integer(c_int) :: c_nc_get_vara
    end function
    function c_nc_write_darray(r, f, varid, frame, dtype, n, local) bind(c, name="loom_nc_write_darray")
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: r, f, local
      integer(c_int), value :: varid, dtype
      integer(c_int64_t), value :: frame
      integer(c_size_t), value :: n
      integer(c_int) :: c_nc_write_darray
    end function
    function c_nc_read_darray(r, f, varid, frame, dtype, n, local) bind(c, name="loom_nc_read_darray")
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: r, f, local
      integer(c_int), value :: varid, dtype
      integer(c_int64_t), value :: frame
      integer(c_size_t), value :: n
      integer(c_int) :: c_nc_read_darray
    end function
    ! PIO
    function c_decomposition_from_map_f(comm, ndim, shape, n, map, base, out) &
        bind(c, name="loom_decomposition_from_map_f")
      import :: c_int, c_ptr, c_int64_t, c_size_t
      integer(c_int), value :: comm, ndim, base
      integer(c_int64_t), dimension(*) :: shape, map
      integer(c_size_t), value :: n
      type(c_ptr) :: out
      integer(c_int) :: c_decomposition_from_map_f
    end function
    function c_decomposition_from_file_f(comm, path, out) bind(c, name="loom_decomposition_from_file_f")
      import :: c_int, c_ptr, c_char
      integer(c_int), value :: comm
      character(kind=c_char), dimension(*) :: path
      type(c_ptr) :: out
      integer(c_int) :: c_decomposition_from_file_f
    end function
    function c_decomposition_local(d, local_size, map) bind(c, name="loom_decomposition_local")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: d, map
      integer(c_size_t) :: local_size
      integer(c_int) :: c_decomposition_local
    end function
    function c_decomposition_shape(d, ndim, shape) bind(c, name="loom_decomposition_shape")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: d
      integer(c_int) :: ndim
      integer(c_int64_t), dimension(*) :: shape
      integer(c_int) :: c_decomposition_shape
    end function
    function c_decomposition_free(d) bind(c, name="loom_decomposition_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: d
      integer(c_int) :: c_decomposition_free
    end function
    function c_rearrangement_create(d, num_iotasks, stride, base, kind, out) bind(c, name="loom_rearrangement_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: d
      integer(c_int), value :: num_iotasks, stride, base, kind
      type(c_ptr) :: out
      integer(c_int) :: c_rearrangement_create
    end function
    function c_rearrangement_free(r) bind(c, name="loom_rearrangement_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
      integer(c_int) :: c_rearrangement_free
    end function
  end interface

contains

  ! ---- small helpers ----

  ! A Fortran string as C wants it: trailing blanks dropped, NUL-terminated.
  function c_string(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s) // c_null_char
  end function

  function comm_or_world(comm) result(c)
    integer, intent(in), optional :: comm
    integer(c_int) :: c
    c = MPI_COMM_WORLD
    if (present(comm)) c = comm
  end function

  function engine_or_default(engine) result(c)
    character(len=*), intent(in), optional :: engine
    character(kind=c_char, len=:), allocatable :: c
    if (present(engine)) then
      c = c_string(engine)
    else
      c = c_null_char
    end if
  end function

  ! Fortran-order extents (fastest first) as C's (slowest first).
  function reversed(dims) result(r)
    integer(c_int64_t), intent(in) :: dims(:)
    integer(c_int64_t) :: r(size(dims))
    r = dims(size(dims):1:-1)
  end function

  !> The message of the last failed call on this thread ("" after a success).
  function loom_error_message() result(msg)
    character(len=:), allocatable :: msg
    type(c_ptr) :: p
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    p = c_last_error_message()
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: msg)
    do i = 1, n
      msg(i:i) = chars(i)
    end do
  end function

  ! ---- files, datasets, attributes ----

  !> A new file (an existing one is replaced); collective over comm.
  integer function loom_file_create(name, file, comm, engine) result(status)
    character(len=*), intent(in) :: name
    type(loom_file), intent(out) :: file
    integer, intent(in), optional :: comm
    character(len=*), intent(in), optional :: engine
    status = c_file_open_f(c_string(name), LOOM_MODE_CREATE, comm_or_world(comm), engine_or_default(engine), file%p)
  end function

  !> An existing file: mode LOOM_MODE_READ or LOOM_MODE_READWRITE.
  integer function loom_file_open(name, mode, file, comm, engine) result(status)
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: mode
    type(loom_file), intent(out) :: file
    integer, intent(in), optional :: comm
    character(len=*), intent(in), optional :: engine
    status = c_file_open_f(c_string(name), mode, comm_or_world(comm), engine_or_default(engine), file%p)
  end function

  integer function loom_file_flush(file) result(status)
    type(loom_file), intent(in) :: file
    status = c_file_flush(file%p)
  end function

  integer function loom_file_close(file) result(status)
    type(loom_file), intent(inout) :: file
    status = c_file_close(file%p)
    file%p = c_null_ptr
  end function

  !> A flush point that returns at once (durable unless `durable` is .false.);
  !> with the async wrapper the data moves while the program computes, and
  !> the flush completes at loom_wait or the next collective call.
  integer function loom_file_flush_async(file, request, durable) result(status)
    type(loom_file), intent(in) :: file
    type(loom_request), intent(out) :: request
    logical, intent(in), optional :: durable
    integer(c_int) :: level
    level = 1
    if (present(durable)) then
      if (.not. durable) level = 0
    end if
    status = c_file_flush_async(file%p, level, request%p)
  end function

  !> A close that returns at once: `file` is freed, and loom_wait(request)
  !> completes the close (collective), returning its error on every rank.
  integer function loom_file_close_async(file, request) result(status)
    type(loom_file), intent(inout) :: file
    type(loom_request), intent(out) :: request
    status = c_file_close_async(file%p, request%p)
    file%p = c_null_ptr
  end function

  !> Local, never blocks: `done` once the request has completed.
  integer function loom_test(request, done) result(status)
    type(loom_request), intent(in) :: request
    logical, intent(out) :: done
    integer(c_int) :: flag
    flag = 0
    status = c_test(request%p, flag)
    done = flag /= 0
  end function

  !> Waits for the request (collective) and frees it, even on error.
  integer function loom_wait(request) result(status)
    type(loom_request), intent(inout) :: request
    status = c_wait(request%p)
    request%p = c_null_ptr
  end function

  integer function loom_file_root(file, root) result(status)
    type(loom_file), intent(in) :: file
    type(loom_object), intent(out) :: root
    status = c_file_root(file%p, root%p)
  end function

  !> A dataset of `dtype` (LOOM_FLOAT64, ...) and Fortran-order `dims` under `parent`.
  integer function loom_create_dataset(parent, path, dtype, dims, dataset) result(status)
    type(loom_object), intent(in) :: parent
    character(len=*), intent(in) :: path
    integer(c_int), intent(in) :: dtype
    integer(c_int64_t), intent(in) :: dims(:)
    type(loom_object), intent(out) :: dataset
    status = c_group_create_dataset(parent%p, c_string(path), dtype, int(size(dims), c_int), reversed(dims), &
                                    c_null_ptr, c_null_ptr, dataset%p)
  end function

  integer function loom_open_dataset(parent, path, dataset) result(status)
    type(loom_object), intent(in) :: parent
    character(len=*), intent(in) :: path
    type(loom_object), intent(out) :: dataset
    status = c_group_open_dataset(parent%p, c_string(path), dataset%p)
  end function

  integer function loom_object_close(object) result(status)
    type(loom_object), intent(inout) :: object
    status = c_object_close(object%p)
    object%p = c_null_ptr
  end function

  ! A transfer of a box given 1-based, Fortran-order start and count (both
  ! absent: the whole dataset): the selection points at `s` and `c`.
  integer function dataset_transfer(dataset, dtype, n, data, start, count, writing) result(status)
    type(loom_object), intent(in) :: dataset
    integer(c_int), intent(in) :: dtype
    integer(c_size_t), intent(in) :: n
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    logical, intent(in) :: writing
    type(c_selection) :: sel
    integer(c_int64_t), target :: s(32), c(32)
    integer :: k
    if (present(start) .and. present(count)) then
      ! The C call checks ndim against the dataset's rank: start and count of
      ! another length are an error (LOOM_ERR_SELECTION), never a misread box.
      k = min(size(start), size(count), 32)
      s(1:k) = reversed(start(1:k)) - 1
      c(1:k) = reversed(count(1:k))
      sel%kind = LOOM_SELECT_HYPERSLAB
      sel%ndim = int(k, c_int)
      if (size(start) /= size(count) .or. size(start) > 32) sel%ndim = -1
      sel%start = c_loc(s)
      sel%count = c_loc(c)
    end if
    if (writing) then
      status = c_dataset_write(dataset%p, sel, dtype, n, data, LOOM_WRITE_COPY)
    else
      status = c_dataset_read(dataset%p, sel, dtype, n, data)
    end if
  end function

  !> Writes `data` (copied at once) into the box [start, start+count) - 1-based,
  !> Fortran order - or, with neither given, the whole dataset.
  integer function dataset_write_i4(dataset, data, start, count) result(status)
    type(loom_object), intent(in) :: dataset
    integer(c_int32_t), intent(in), target, contiguous :: data(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = dataset_transfer(dataset, LOOM_INT32, size(data, kind=c_size_t), c_loc(data), start, count, .true.)
  end function
  integer function dataset_write_i8(dataset, data, start, count) result(status)
    type(loom_object), intent(in) :: dataset
    integer(c_int64_t), intent(in), target, contiguous :: data(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = dataset_transfer(dataset, LOOM_INT64, size(data, kind=c_size_t), c_loc(data), start, count, .true.)
  end function
  integer function dataset_write_r4(dataset, data, start, count) result(status)
    type(loom_object), intent(in) :: dataset
    real(c_float), intent(in), target, contiguous :: data(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = dataset_transfer(dataset, LOOM_FLOAT32, size(data, kind=c_size_t), c_loc(data), start, count, .true.)
  end function
  integer function dataset_write_r8(dataset, data, start, count) result(status)
    type(loom_object), intent(in) :: dataset
    real(c_double), intent(in), target, contiguous :: data(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = dataset_transfer(dataset, LOOM_FLOAT64, size(data, kind=c_size_t), c_loc(data), start, count, .true.)
  end function

  !> Collective: each rank reads its box (or the whole dataset) into `out`.
  integer function dataset_read_i4(dataset, out, start, count) result(status)
    type(loom_object), intent(in) :: dataset
    integer(c_int32_t), intent(inout), target, contiguous :: out(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = dataset_transfer(dataset, LOOM_INT32, size(out, kind=c_size_t), c_loc(out), start, count, .false.)
  end function
  integer function dataset_read_i8(dataset, out, start, count) result(status)
    type(loom_object), intent(in) :: dataset
    integer(c_int64_t), intent(inout), target, contiguous :: out(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = dataset_transfer(dataset, LOOM_INT64, size(out, kind=c_size_t), c_loc(out), start, count, .false.)
  end function
  integer function dataset_read_r4(dataset, out, start, count) result(status)
    type(loom_object), intent(in) :: dataset
    real(c_float), intent(inout), target, contiguous :: out(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = dataset_transfer(dataset, LOOM_FLOAT32, size(out, kind=c_size_t), c_loc(out), start, count, .false.)
  end function
  integer function dataset_read_r8(dataset, out, start, count) result(status)
    type(loom_object), intent(in) :: dataset
    real(c_double), intent(inout), target, contiguous :: out(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = dataset_transfer(dataset, LOOM_FLOAT64, size(out, kind=c_size_t), c_loc(out), start, count, .false.)
  end function

  !> Numeric attributes: a 1-D array (one value: pass [x]).
  integer function attr_write_i4(object, name, values) result(status)
    type(loom_object), intent(in) :: object
    character(len=*), intent(in) :: name
    integer(c_int32_t), intent(in), target, contiguous :: values(:)
    status = c_attr_write_array(object%p, c_string(name), LOOM_INT32, size(values, kind=c_size_t), c_loc(values))
  end function
  integer function attr_write_i8(object, name, values) result(status)
    type(loom_object), intent(in) :: object
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in), target, contiguous :: values(:)
    status = c_attr_write_array(object%p, c_string(name), LOOM_INT64, size(values, kind=c_size_t), c_loc(values))
  end function
  integer function attr_write_r4(object, name, values) result(status)
    type(loom_object), intent(in) :: object
    character(len=*), intent(in) :: name
    real(c_float), intent(in), target, contiguous :: values(:)
    status = c_attr_write_array(object%p, c_string(name), LOOM_FLOAT32, size(values, kind=c_size_t), c_loc(values))
  end function
  integer function attr_write_r8(object, name, values) result(status)
    type(loom_object), intent(in) :: object
    character(len=*), intent(in) :: name
    real(c_double), intent(in), target, contiguous :: values(:)
    status = c_attr_write_array(object%p, c_string(name), LOOM_FLOAT64, size(values, kind=c_size_t), c_loc(values))
  end function

  integer function loom_attr_write_text(object, name, text) result(status)
    type(loom_object), intent(in) :: object
    character(len=*), intent(in) :: name, text
    status = c_attr_write_string(object%p, c_string(name), c_string(text))
  end function

  ! ---- the series veneer (openPMD / H5Part) ----

  integer function loom_series_create(name, layout, series, comm, engine) result(status)
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: layout
    type(loom_series), intent(out) :: series
    integer, intent(in), optional :: comm
    character(len=*), intent(in), optional :: engine
    status = c_series_create_f(c_string(name), comm_or_world(comm), engine_or_default(engine), layout, series%p)
  end function

  integer function loom_series_close(series) result(status)
    type(loom_series), intent(inout) :: series
    status = c_series_close(series%p)
    series%p = c_null_ptr
  end function

  integer function loom_series_write_step(series, n, time, dt, step) result(status)
    type(loom_series), intent(in) :: series
    integer(c_int64_t), intent(in) :: n
    real(c_double), intent(in) :: time, dt
    type(loom_step), intent(out) :: step
    status = c_series_write_step(series%p, n, time, dt, step%p)
  end function

  integer function loom_step_end(step) result(status)
    type(loom_step), intent(in) :: step
    status = c_step_end(step%p)
  end function

  integer function loom_step_free(step) result(status)
    type(loom_step), intent(inout) :: step
    status = c_step_free(step%p)
    step%p = c_null_ptr
  end function

  integer function loom_step_particles(step, species, particles) result(status)
    type(loom_step), intent(in) :: step
    character(len=*), intent(in) :: species
    type(loom_particles), intent(out) :: particles
    status = c_step_particles(step%p, c_string(species), particles%p)
  end function

  !> Collective: this rank's particle count; its offset (0-based) and the global count come back.
  integer function loom_particles_set_local_count(particles, n, offset, global) result(status)
    type(loom_particles), intent(in) :: particles
    integer(c_int64_t), intent(in) :: n
    integer(c_int64_t), intent(out), optional :: offset, global
    integer(c_int64_t) :: o, g
    status = c_particles_set_local_count(particles%p, n, o, g)
    if (present(offset)) offset = o
    if (present(global)) global = g
  end function

  !> The local count's values of a record ("x", "px", "id", ...); written when the step ends.
  integer function particles_write_i4(particles, array, data) result(status)
    type(loom_particles), intent(in) :: particles
    character(len=*), intent(in) :: array
    integer(c_int32_t), intent(in), target, contiguous :: data(:)
    status = c_particles_write(particles%p, c_string(array), LOOM_INT32, c_loc(data))
  end function
  integer function particles_write_i8(particles, array, data) result(status)
    type(loom_particles), intent(in) :: particles
    character(len=*), intent(in) :: array
    integer(c_int64_t), intent(in), target, contiguous :: data(:)
    status = c_particles_write(particles%p, c_string(array), LOOM_INT64, c_loc(data))
  end function
  integer function particles_write_r4(particles, array, data) result(status)
    type(loom_particles), intent(in) :: particles
    character(len=*), intent(in) :: array
    real(c_float), intent(in), target, contiguous :: data(:)
    status = c_particles_write(particles%p, c_string(array), LOOM_FLOAT32, c_loc(data))
  end function
  integer function particles_write_r8(particles, array, data) result(status)
    type(loom_particles), intent(in) :: particles
    character(len=*), intent(in) :: array
    real(c_double), intent(in), target, contiguous :: data(:)
    status = c_particles_write(particles%p, c_string(array), LOOM_FLOAT64, c_loc(data))
  end function

  integer function loom_particles_free(particles) result(status)
    type(loom_particles), intent(inout) :: particles
    status = c_particles_free(particles%p)
    particles%p = c_null_ptr
  end function

  !> A mesh of Fortran-order `global_shape` with `components` (1 for a scalar field).
  integer function loom_step_create_field(step, name, global_shape, components, dtype, field) result(status)
    type(loom_step), intent(in) :: step
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: global_shape(:)
    integer(c_int), intent(in) :: components, dtype
    type(loom_field), intent(out) :: field
    status = c_step_create_field(step%p, c_string(name), int(size(global_shape), c_int), reversed(global_shape), &
                                 components, dtype, c_null_ptr, c_null_ptr, field%p)
  end function

  !> This rank's block (its shape is the local shape) at 1-based Fortran-order `offset`.
  integer function field_write_r4(field, component, local, offset) result(status)
    type(loom_field), intent(in) :: field
    integer, intent(in) :: component
    real(c_float), intent(in), target, contiguous :: local(..)
    integer(c_int64_t), intent(in) :: offset(:)
    integer(c_int64_t) :: shape_f(rank(local))
    shape_f = shape(local, kind=c_int64_t)
    status = c_field_write(field%p, int(component, c_int), LOOM_FLOAT32, c_loc(local), reversed(shape_f), &
                           reversed(offset) - 1, 0_c_int64_t)
  end function
  integer function field_write_r8(field, component, local, offset) result(status)
    type(loom_field), intent(in) :: field
    integer, intent(in) :: component
    real(c_double), intent(in), target, contiguous :: local(..)
    integer(c_int64_t), intent(in) :: offset(:)
    integer(c_int64_t) :: shape_f(rank(local))
    shape_f = shape(local, kind=c_int64_t)
    status = c_field_write(field%p, int(component, c_int), LOOM_FLOAT64, c_loc(local), reversed(shape_f), &
                           reversed(offset) - 1, 0_c_int64_t)
  end function

  integer function loom_field_free(field) result(status)
    type(loom_field), intent(inout) :: field
    status = c_field_free(field%p)
    field%p = c_null_ptr
  end function

  ! ---- netCDF ----

  integer function loom_nc_create(path, ncfile, comm, engine) result(status)
    character(len=*), intent(in) :: path
    type(loom_nc_file), intent(out) :: ncfile
    integer, intent(in), optional :: comm
    character(len=*), intent(in), optional :: engine
    status = c_nc_create_f(c_string(path), comm_or_world(comm), engine_or_default(engine), ncfile%p)
  end function

  integer function loom_nc_open(path, mode, ncfile, comm, engine) result(status)
    character(len=*), intent(in) :: path
    integer(c_int), intent(in) :: mode
    type(loom_nc_file), intent(out) :: ncfile
    integer, intent(in), optional :: comm
    character(len=*), intent(in), optional :: engine
    status = c_nc_open_f(c_string(path), mode, comm_or_world(comm), engine_or_default(engine), ncfile%p)
  end function

  !> length LOOM_NC_UNLIMITED: the record dimension. dimid counts from 1.
  integer function loom_nc_def_dim(ncfile, name, length, dimid) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: length
    integer, intent(out) :: dimid
    integer(c_int) :: id
    status = c_nc_def_dim(ncfile%p, c_string(name), length, id)
    dimid = id + 1
  end function

  !> dimids fastest first (the record dimension last), as netCDF-Fortran takes them.
  integer function loom_nc_def_var(ncfile, name, dtype, dimids, varid) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: dtype
    integer, intent(in) :: dimids(:)
    integer, intent(out) :: varid
    integer(c_int) :: ids(max(1, size(dimids))), id
    if (size(dimids) > 0) ids(1:size(dimids)) = int(dimids(size(dimids):1:-1) - 1, c_int)
    status = c_nc_def_var(ncfile%p, c_string(name), dtype, int(size(dimids), c_int), ids, id)
    varid = id + 1
  end function

  integer function loom_nc_def_var_deflate(ncfile, varid, shuffle, level) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid, level
    logical, intent(in) :: shuffle
    status = c_nc_def_var_deflate(ncfile%p, int(varid - 1, c_int), merge(1_c_int, 0_c_int, shuffle), int(level, c_int))
  end function

  integer function nc_def_var_fill_i2(ncfile, varid, fill) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int16_t), intent(in), target :: fill
    status = c_nc_def_var_fill(ncfile%p, int(varid - 1, c_int), LOOM_INT16, c_loc(fill))
  end function
  integer function nc_def_var_fill_i4(ncfile, varid, fill) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int32_t), intent(in), target :: fill
    status = c_nc_def_var_fill(ncfile%p, int(varid - 1, c_int), LOOM_INT32, c_loc(fill))
  end function
  integer function nc_def_var_fill_i8(ncfile, varid, fill) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int64_t), intent(in), target :: fill
    status = c_nc_def_var_fill(ncfile%p, int(varid - 1, c_int), LOOM_INT64, c_loc(fill))
  end function
  integer function nc_def_var_fill_r4(ncfile, varid, fill) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    real(c_float), intent(in), target :: fill
    status = c_nc_def_var_fill(ncfile%p, int(varid - 1, c_int), LOOM_FLOAT32, c_loc(fill))
  end function
  integer function nc_def_var_fill_r8(ncfile, varid, fill) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    real(c_double), intent(in), target :: fill
    status = c_nc_def_var_fill(ncfile%p, int(varid - 1, c_int), LOOM_FLOAT64, c_loc(fill))
  end function

  ! varid 0 (LOOM_NC_GLOBAL): the file's attributes.
  integer(c_int) function c_varid(varid)
    integer, intent(in) :: varid
    c_varid = int(varid - 1, c_int)
  end function

  integer function nc_put_att_i4(ncfile, varid, name, values) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    integer(c_int32_t), intent(in), target, contiguous :: values(:)
    status = c_nc_put_att(ncfile%p, c_varid(varid), c_string(name), LOOM_INT32, size(values, kind=c_size_t), &
                          c_loc(values))
  end function
  integer function nc_put_att_r4(ncfile, varid, name, values) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    real(c_float), intent(in), target, contiguous :: values(:)
    status = c_nc_put_att(ncfile%p, c_varid(varid), c_string(name), LOOM_FLOAT32, size(values, kind=c_size_t), &
                          c_loc(values))
  end function
  integer function nc_put_att_r8(ncfile, varid, name, values) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    real(c_double), intent(in), target, contiguous :: values(:)
    status = c_nc_put_att(ncfile%p, c_varid(varid), c_string(name), LOOM_FLOAT64, size(values, kind=c_size_t), &
                          c_loc(values))
  end function

  integer function loom_nc_put_att_text(ncfile, varid, name, text) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name, text
    status = c_nc_put_att_text(ncfile%p, c_varid(varid), c_string(name), c_string(text))
  end function

  !> The text of an attribute into `text` (blank-padded; cut if longer).
  integer function loom_nc_get_att_text(ncfile, varid, name, text) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    character(len=*), intent(out) :: text
    character(kind=c_char) :: buf(len(text) + 1)
    integer(c_size_t) :: needed
    integer :: i
    text = ' '
    status = c_nc_get_att_text(ncfile%p, c_varid(varid), c_string(name), buf, size(buf, kind=c_size_t), needed)
    if (status /= LOOM_OK) return
    do i = 1, int(min(needed, int(len(text), c_size_t)))
      text(i:i) = buf(i)
    end do
  end function

  integer function loom_nc_enddef(ncfile) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    status = c_nc_enddef(ncfile%p)
  end function
  integer function loom_nc_redef(ncfile) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    status = c_nc_redef(ncfile%p)
  end function
  integer function loom_nc_sync(ncfile) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    status = c_nc_sync(ncfile%p)
  end function
  integer function loom_nc_close(ncfile) result(status)
    type(loom_nc_file), intent(inout) :: ncfile
    status = c_nc_close(ncfile%p)
    ncfile%p = c_null_ptr
  end function

  integer function loom_nc_inq_varid(ncfile, name, varid) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    character(len=*), intent(in) :: name
    integer, intent(out) :: varid
    integer(c_int) :: id
    status = c_nc_inq_varid(ncfile%p, c_string(name), id)
    varid = id + 1
  end function

  integer function loom_nc_inq_dimlen(ncfile, dimid, length) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: dimid
    integer(c_int64_t), intent(out) :: length
    status = c_nc_inq_dim(ncfile%p, int(dimid - 1, c_int), c_null_ptr, 0_c_size_t, c_null_ptr, length)
  end function

  integer function loom_nc_set_records(ncfile, n) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer(c_int64_t), intent(in) :: n
    status = c_nc_set_records(ncfile%p, n)
  end function

  ! put/get: start and count 1-based, Fortran order (both absent: the whole variable).
  integer function nc_vara(ncfile, varid, dtype, n, data, start, count, writing) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int), intent(in) :: dtype
    integer(c_size_t), intent(in) :: n
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    logical, intent(in) :: writing
    integer(c_int64_t), target :: s(32), c(32)
    type(c_ptr) :: sp, cp
    integer(c_int) :: k
    ! The C call checks k against the variable's dimensions: start and count
    ! of another length are an error (LOOM_ERR_SELECTION), never a misread box.
    sp = c_null_ptr
    cp = c_null_ptr
    k = 0
    if (present(start) .and. present(count)) then
      k = int(min(size(start), size(count), 32), c_int)
      if (size(start) /= size(count) .or. size(start) > 32) k = -1  ! refused by C, naming ndims
      if (k > 0) then
        s(1:k) = reversed(start(1:k)) - 1
        c(1:k) = reversed(count(1:k))
      end if
      sp = c_loc(s)
      cp = c_loc(c)
    end if
    if (writing) then
      status = c_nc_put_vara(ncfile%p, c_varid(varid), k, sp, cp, dtype, n, data)
    else
      status = c_nc_get_vara(ncfile%p, c_varid(varid), k, sp, cp, dtype, n, data)
    end if
  end function

  !> This rank's box (copied at once; numbers convert as netCDF converts them).
  integer function nc_put_vara_i2(ncfile, varid, data, start, count) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int16_t), intent(in), target, contiguous :: data(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = nc_vara(ncfile, varid, LOOM_INT16, size(data, kind=c_size_t), c_loc(data), start, count, .true.)
  end function
  integer function nc_put_vara_i4(ncfile, varid, data, start, count) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int32_t), intent(in), target, contiguous :: data(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = nc_vara(ncfile, varid, LOOM_INT32, size(data, kind=c_size_t), c_loc(data), start, count, .true.)
  end function
  integer function nc_put_vara_i8(ncfile, varid, data, start, count) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int64_t), intent(in), target, contiguous :: data(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = nc_vara(ncfile, varid, LOOM_INT64, size(data, kind=c_size_t), c_loc(data), start, count, .true.)
  end function
  integer function nc_put_vara_r4(ncfile, varid, data, start, count) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    real(c_float), intent(in), target, contiguous :: data(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = nc_vara(ncfile, varid, LOOM_FLOAT32, size(data, kind=c_size_t), c_loc(data), start, count, .true.)
  end function
  integer function nc_put_vara_r8(ncfile, varid, data, start, count) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    real(c_double), intent(in), target, contiguous :: data(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = nc_vara(ncfile, varid, LOOM_FLOAT64, size(data, kind=c_size_t), c_loc(data), start, count, .true.)
  end function

  !> Collective: each rank its own box (or the whole variable).
  integer function nc_get_vara_i2(ncfile, varid, out, start, count) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int16_t), intent(inout), target, contiguous :: out(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = nc_vara(ncfile, varid, LOOM_INT16, size(out, kind=c_size_t), c_loc(out), start, count, .false.)
  end function
  integer function nc_get_vara_i4(ncfile, varid, out, start, count) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int32_t), intent(inout), target, contiguous :: out(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = nc_vara(ncfile, varid, LOOM_INT32, size(out, kind=c_size_t), c_loc(out), start, count, .false.)
  end function
  integer function nc_get_vara_i8(ncfile, varid, out, start, count) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int64_t), intent(inout), target, contiguous :: out(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = nc_vara(ncfile, varid, LOOM_INT64, size(out, kind=c_size_t), c_loc(out), start, count, .false.)
  end function
  integer function nc_get_vara_r4(ncfile, varid, out, start, count) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    real(c_float), intent(inout), target, contiguous :: out(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = nc_vara(ncfile, varid, LOOM_FLOAT32, size(out, kind=c_size_t), c_loc(out), start, count, .false.)
  end function
  integer function nc_get_vara_r8(ncfile, varid, out, start, count) result(status)
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    real(c_double), intent(inout), target, contiguous :: out(..)
    integer(c_int64_t), intent(in), optional :: start(:), count(:)
    status = nc_vara(ncfile, varid, LOOM_FLOAT64, size(out, kind=c_size_t), c_loc(out), start, count, .false.)
  end function

  ! ---- PIO ----

  !> PIO's map: 1-based offsets into the Fortran-order array of `dims`, 0 for a hole.
  integer function loom_decomposition_from_map(dims, map, decomposition, comm) result(status)
    integer(c_int64_t), intent(in) :: dims(:), map(:)
    type(loom_decomposition), intent(out) :: decomposition
    integer, intent(in), optional :: comm
    ! A column-major array of dims(1..n) is the row-major array of the reversed
    ! dims, element for element: the offsets stay as they are.
    status = c_decomposition_from_map_f(comm_or_world(comm), int(size(dims), c_int), reversed(dims), &
                                        size(map, kind=c_size_t), map, 1_c_int, decomposition%p)
  end function

  !> A PIO "version 2001" map file; the file's task t goes to rank t % size.
  integer function loom_decomposition_from_file(path, decomposition, comm) result(status)
    character(len=*), intent(in) :: path
    type(loom_decomposition), intent(out) :: decomposition
    integer, intent(in), optional :: comm
    status = c_decomposition_from_file_f(comm_or_world(comm), c_string(path), decomposition%p)
  end function

  !> This rank's map as PIO has it: 1-based offsets, 0 for a hole (allocated here).
  integer function loom_decomposition_map(decomposition, map) result(status)
    type(loom_decomposition), intent(in) :: decomposition
    integer(c_int64_t), allocatable, target, intent(out) :: map(:)
    integer(c_size_t) :: n
    status = c_decomposition_local(decomposition%p, n, c_null_ptr)
    if (status /= LOOM_OK) return
    allocate(map(n))
    if (n == 0) return
    status = c_decomposition_local(decomposition%p, n, c_loc(map(1)))
    map = map + 1  ! 0-based with -1 holes -> PIO's 1-based with 0 holes
  end function

  integer function loom_decomposition_local_size(decomposition, n) result(status)
    type(loom_decomposition), intent(in) :: decomposition
    integer(c_size_t), intent(out) :: n
    status = c_decomposition_local(decomposition%p, n, c_null_ptr)
  end function

  !> The global dimensions, Fortran order (fastest first), as allocated `dims`.
  integer function loom_decomposition_dims(decomposition, dims) result(status)
    type(loom_decomposition), intent(in) :: decomposition
    integer(c_int64_t), allocatable, intent(out) :: dims(:)
    integer(c_int64_t) :: c_dims(32)
    integer(c_int) :: ndim
    status = c_decomposition_shape(decomposition%p, ndim, c_dims)
    if (status /= LOOM_OK) return
    dims = reversed(c_dims(1:ndim))
  end function

  integer function loom_decomposition_free(decomposition) result(status)
    type(loom_decomposition), intent(inout) :: decomposition
    status = c_decomposition_free(decomposition%p)
    decomposition%p = c_null_ptr
  end function

  !> num_iotasks I/O tasks, stride ranks apart from rank base (0-based, as PIO_Init's base).
  integer function loom_rearrangement_create(decomposition, num_iotasks, stride, base, kind, rearrangement) &
      result(status)
    type(loom_decomposition), intent(in) :: decomposition
    integer, intent(in) :: num_iotasks, stride, base
    integer(c_int), intent(in) :: kind
    type(loom_rearrangement), intent(out) :: rearrangement
    status = c_rearrangement_create(decomposition%p, int(num_iotasks, c_int), int(stride, c_int), int(base, c_int), &
                                    kind, rearrangement%p)
  end function

  integer function loom_rearrangement_free(rearrangement) result(status)
    type(loom_rearrangement), intent(inout) :: rearrangement
    status = c_rearrangement_free(rearrangement%p)
    rearrangement%p = c_null_ptr
  end function

  !> Collective (PIO's write_darray): this rank's values, in map order, into record
  !> `frame` (1-based, as PIO's PIO_setframe; the records grow as needed).
  integer function nc_write_darray_i4(rearrangement, ncfile, varid, frame, local) result(status)
    type(loom_rearrangement), intent(in) :: rearrangement
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int64_t), intent(in) :: frame
    integer(c_int32_t), intent(in), target, contiguous :: local(:)
    status = c_nc_write_darray(rearrangement%p, ncfile%p, c_varid(varid), frame - 1, LOOM_INT32, &
                               size(local, kind=c_size_t), c_loc(local))
  end function
  integer function nc_write_darray_i8(rearrangement, ncfile, varid, frame, local) result(status)
    type(loom_rearrangement), intent(in) :: rearrangement
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int64_t), intent(in) :: frame
    integer(c_int64_t), intent(in), target, contiguous :: local(:)
    status = c_nc_write_darray(rearrangement%p, ncfile%p, c_varid(varid), frame - 1, LOOM_INT64, &
                               size(local, kind=c_size_t), c_loc(local))
  end function
  integer function nc_write_darray_r4(rearrangement, ncfile, varid, frame, local) result(status)
    type(loom_rearrangement), intent(in) :: rearrangement
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int64_t), intent(in) :: frame
    real(c_float), intent(in), target, contiguous :: local(:)
    status = c_nc_write_darray(rearrangement%p, ncfile%p, c_varid(varid), frame - 1, LOOM_FLOAT32, &
                               size(local, kind=c_size_t), c_loc(local))
  end function
  integer function nc_write_darray_r8(rearrangement, ncfile, varid, frame, local) result(status)
    type(loom_rearrangement), intent(in) :: rearrangement
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int64_t), intent(in) :: frame
    real(c_double), intent(in), target, contiguous :: local(:)
    status = c_nc_write_darray(rearrangement%p, ncfile%p, c_varid(varid), frame - 1, LOOM_FLOAT64, &
                               size(local, kind=c_size_t), c_loc(local))
  end function

  !> Collective (PIO's read_darray): this rank's values of record `frame` (holes: the fill value).
  integer function nc_read_darray_i4(rearrangement, ncfile, varid, frame, local) result(status)
    type(loom_rearrangement), intent(in) :: rearrangement
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int64_t), intent(in) :: frame
    integer(c_int32_t), intent(inout), target, contiguous :: local(:)
    status = c_nc_read_darray(rearrangement%p, ncfile%p, c_varid(varid), frame - 1, LOOM_INT32, &
                              size(local, kind=c_size_t), c_loc(local))
  end function
  integer function nc_read_darray_i8(rearrangement, ncfile, varid, frame, local) result(status)
    type(loom_rearrangement), intent(in) :: rearrangement
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int64_t), intent(in) :: frame
    integer(c_int64_t), intent(inout), target, contiguous :: local(:)
    status = c_nc_read_darray(rearrangement%p, ncfile%p, c_varid(varid), frame - 1, LOOM_INT64, &
                              size(local, kind=c_size_t), c_loc(local))
  end function
  integer function nc_read_darray_r4(rearrangement, ncfile, varid, frame, local) result(status)
    type(loom_rearrangement), intent(in) :: rearrangement
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int64_t), intent(in) :: frame
    real(c_float), intent(inout), target, contiguous :: local(:)
    status = c_nc_read_darray(rearrangement%p, ncfile%p, c_varid(varid), frame - 1, LOOM_FLOAT32, &
                              size(local, kind=c_size_t), c_loc(local))
  end function
  integer function nc_read_darray_r8(rearrangement, ncfile, varid, frame, local) result(status)
    type(loom_rearrangement), intent(in) :: rearrangement
    type(loom_nc_file), intent(in) :: ncfile
    integer, intent(in) :: varid
    integer(c_int64_t), intent(in) :: frame
    real(c_double), intent(inout), target, contiguous :: local(:)
    status = c_nc_read_darray(rearrangement%p, ncfile%p, c_varid(varid), frame - 1, LOOM_FLOAT64, &
                              size(local, kind=c_size_t), c_loc(local))
  end function

end module h5loom
