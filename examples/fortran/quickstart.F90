! h5loom from Fortran in one page (docs/fortran.md): a netCDF file whose
! variable t(x, time) each rank fills in part, then reads back whole.
!   mpirun -n 2 quickstart_f [FILE] [ENGINE]      (default: quickstart_f.nc, hdf5)
program quickstart
  use, intrinsic :: iso_c_binding
  use mpi
  use h5loom
  implicit none
  integer :: ierr, rank, nranks, x, t, v, i
  type(loom_nc_file) :: nc
  character(len=256) :: path = 'quickstart_f.nc', engine = 'hdf5'
  real(c_double), allocatable :: mine(:), all(:, :)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (command_argument_count() >= 1) call get_command_argument(1, path)
  if (command_argument_count() >= 2) call get_command_argument(2, engine)

  ! Define mode: dimensions fastest first (x, then the record dimension), as netCDF-Fortran has them.
  call check(loom_nc_create(trim(path), nc, engine=trim(engine)))
  call check(loom_nc_def_dim(nc, 'x', int(4 * nranks, c_int64_t), x))
  call check(loom_nc_def_dim(nc, 'time', LOOM_NC_UNLIMITED, t))
  call check(loom_nc_def_var(nc, 't', LOOM_FLOAT64, [x, t], v))
  call check(loom_nc_put_att_text(nc, v, 'units', 'K'))
  call check(loom_nc_enddef(nc))

  ! Data mode: one record; each rank writes its four values of x (start and count 1-based, x first).
  call check(loom_nc_set_records(nc, 1_c_int64_t))
  mine = [(280d0 + 4 * rank + i, i = 1, 4)]
  call check(loom_nc_put_vara(nc, v, mine, [int(4 * rank + 1, c_int64_t), 1_c_int64_t], [4_c_int64_t, 1_c_int64_t]))
  call check(loom_nc_close(nc))

  call check(loom_nc_open(trim(path), LOOM_MODE_READ, nc, engine=trim(engine)))
  allocate(all(4 * nranks, 1))
  call check(loom_nc_get_vara(nc, v, all))   ! collective: every rank reads it all
  call check(loom_nc_close(nc))
  if (rank == 0) write(*, '(a, *(f6.1))') 'quickstart_f: t = ', all(:, 1)
  call MPI_Finalize(ierr)

contains

  subroutine check(status)
    integer, intent(in) :: status
    integer :: e
    if (status /= LOOM_OK) then
      write(0, '(a, a)') 'quickstart_f: ', loom_error_message()
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine

end program quickstart
