! PIO's pioperformance pattern through h5loom's Fortran module (docs/fortran.md):
! for a decomposition file, and each engine x rearranger x number of I/O tasks,
! write `nvars` integer, real*4 and real*8 variables over the decomposition's
! dimensions and `nframes` records into a netCDF-4 file with write_darray,
! read them back with read_darray, check every element the map holds, and
! print write and read rates.
!
!   mpirun -n 4 pioperformance [NAMELIST]   (default: pioperf.nl)
!
! The namelist (PIO's &pioperf, with h5loom's engines):
!   &pioperf
!     decompfile  = 'piodecomp.dat'    ! PIO "version 2001" map
!     engines     = 'hdf5', 'log'      ! h5loom engines that write HDF5 files
!     rearrangers = 1, 2               ! 1 box, 2 subset
!     niotasks    = 1, 2, 4            ! counts above the number of ranks are skipped
!     nframes     = 2
!     nvars       = 2
!     dir         = '.'                ! where the files go (they stay, for ncdump, xarray, ...)
!   /
! Exit status 0 if every check passed.
program pioperformance
  use, intrinsic :: iso_c_binding
  use mpi
  use h5loom
  implicit none

  integer, parameter :: max_list = 16
  character(len=512) :: decompfile = '', dir = '.'
  character(len=64) :: engines(max_list) = ''
  integer :: rearrangers(max_list) = 0, niotasks(max_list) = 0
  integer :: nframes = 1, nvars = 1
  namelist /pioperf/ decompfile, engines, rearrangers, niotasks, nframes, nvars, dir

  character(len=512) :: nlfile
  integer :: ierr, rank, nranks, unit, ie, ir, it, failures, total_failures
  type(loom_decomposition) :: decomp
  integer(c_int64_t), allocatable :: map(:), dims(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)

  nlfile = 'pioperf.nl'
  if (command_argument_count() >= 1) call get_command_argument(1, nlfile)
  open(newunit=unit, file=trim(nlfile), status='old', action='read', iostat=ierr)
  if (ierr /= 0) call fail('cannot open namelist file ' // trim(nlfile))
  read(unit, nml=pioperf, iostat=ierr)
  if (ierr /= 0) call fail('cannot read namelist &pioperf from ' // trim(nlfile))
  close(unit)

  call check(loom_decomposition_from_file(trim(decompfile), decomp), 'reading ' // trim(decompfile))
  call check(loom_decomposition_map(decomp, map), 'taking the map')
  call check(loom_decomposition_dims(decomp, dims), 'taking the dimensions')
  if (size(dims) > 7) call fail('the map has more than 7 dimensions')
  if (nvars < 1 .or. nvars > 16) call fail('nvars must be 1 to 16')
  if (rank == 0) then
    write(*, '(a, a, a, *(i0, :, " x "))') 'pioperformance: ', trim(decompfile), ', dimensions ', dims
    write(*, '(a, i0, a, i0, a, i0, a)') '  ', nranks, ' ranks, ', nvars, ' variables of each type, ', &
      nframes, ' frames'
    write(*, '(a8, a8, a9, a14, a14, a7)') 'engine', 'rearr', 'iotasks', 'write MiB/s', 'read MiB/s', 'check'
  end if

  total_failures = 0
  do ie = 1, max_list
    if (len_trim(engines(ie)) == 0) cycle
    do ir = 1, max_list
      if (rearrangers(ir) /= 1 .and. rearrangers(ir) /= 2) cycle
      do it = 1, max_list
        if (niotasks(it) < 1 .or. niotasks(it) > nranks) cycle
        call run_case(trim(engines(ie)), rearrangers(ir), niotasks(it), failures)
        total_failures = total_failures + failures
      end do
    end do
  end do

  call check(loom_decomposition_free(decomp), 'freeing the decomposition')
  call MPI_Allreduce(MPI_IN_PLACE, total_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) write(*, '(a, i0, a)') 'pioperformance: ', total_failures, ' elements differ'
  call MPI_Finalize(ierr)
  if (total_failures /= 0) stop 1

contains

  ! The value every element gets: exact in real*4 for maps of up to a million elements.
  pure integer function value_of(offset, var, frame)
    integer(c_int64_t), intent(in) :: offset
    integer, intent(in) :: var, frame
    value_of = int(offset) + 1000000 * var + 100000 * frame
  end function

  subroutine run_case(engine, rearranger, iotasks, failures)
    character(len=*), intent(in) :: engine
    integer, intent(in) :: rearranger, iotasks
    integer, intent(out) :: failures
    type(loom_rearrangement) :: rearr
    type(loom_nc_file) :: nc
    character(len=600) :: path
    integer :: ndims, d, v, f, dimids(8), varids(3, 16), kind
    integer(c_int64_t) :: i, frame
    integer(c_int32_t), allocatable :: ibuf(:)
    real(c_float), allocatable :: fbuf(:)
    real(c_double), allocatable :: dbuf(:)
    double precision :: t0, write_time, read_time, bytes
    character(len=16) :: name
    character(len=2), parameter :: suffix(3) = ['_i', '_f', '_d']
    integer(c_int), parameter :: types(3) = [LOOM_INT32, LOOM_FLOAT32, LOOM_FLOAT64]

    kind = LOOM_REARRANGER_BOX
    if (rearranger == 2) kind = LOOM_REARRANGER_SUBSET
    call check(loom_rearrangement_create(decomp, iotasks, 1, 0, kind, rearr), 'making the rearrangement')
    write(path, '(a, "/pioperf-", a, "-r", i0, "-io", i0, "-np", i0, ".nc")') trim(dir), engine, rearranger, &
      iotasks, nranks
    ndims = size(dims)
    allocate(ibuf(size(map)), fbuf(size(map)), dbuf(size(map)))

    ! ---- write ----
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    call check(loom_nc_create(trim(path), nc, engine=engine), 'creating ' // trim(path))
    do d = 1, ndims
      write(name, '("dim", i0)') d
      call check(loom_nc_def_dim(nc, trim(name), dims(d), dimids(d)), 'defining ' // trim(name))
    end do
    call check(loom_nc_def_dim(nc, 'time', LOOM_NC_UNLIMITED, dimids(ndims + 1)), 'defining time')
    do v = 1, nvars
      do f = 1, 3
        write(name, '("v", i0, a)') v, suffix(f)
        call check(loom_nc_def_var(nc, trim(name), types(f), &
                                   dimids(1:ndims + 1), varids(f, v)), 'defining ' // trim(name))
      end do
    end do
    call check(loom_nc_put_att_text(nc, LOOM_NC_GLOBAL, 'title', 'pioperformance through h5loom'), 'title')
    call check(loom_nc_enddef(nc), 'ending define mode')
    do frame = 1, nframes
      do v = 1, nvars
        do i = 1, size(map)
          ibuf(i) = value_of(map(i), v, int(frame))
        end do
        fbuf = real(ibuf, c_float)
        dbuf = real(ibuf, c_double)
        call check(loom_nc_write_darray(rearr, nc, varids(1, v), frame, ibuf), 'writing an integer variable')
        call check(loom_nc_write_darray(rearr, nc, varids(2, v), frame, fbuf), 'writing a real*4 variable')
        call check(loom_nc_write_darray(rearr, nc, varids(3, v), frame, dbuf), 'writing a real*8 variable')
      end do
    end do
    call check(loom_nc_close(nc), 'closing ' // trim(path))
    write_time = MPI_Wtime() - t0

    ! ---- read back and check ----
    failures = 0
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    call check(loom_nc_open(trim(path), LOOM_MODE_READ, nc, engine=engine), 'opening ' // trim(path))
    do frame = 1, nframes
      do v = 1, nvars
        call check(loom_nc_read_darray(rearr, nc, varids(1, v), frame, ibuf), 'reading an integer variable')
        call check(loom_nc_read_darray(rearr, nc, varids(2, v), frame, fbuf), 'reading a real*4 variable')
        call check(loom_nc_read_darray(rearr, nc, varids(3, v), frame, dbuf), 'reading a real*8 variable')
        do i = 1, size(map)
          if (map(i) == 0) cycle  ! a hole: read as the fill value
          if (ibuf(i) /= value_of(map(i), v, int(frame))) failures = failures + 1
          if (fbuf(i) /= real(value_of(map(i), v, int(frame)), c_float)) failures = failures + 1
          if (dbuf(i) /= real(value_of(map(i), v, int(frame)), c_double)) failures = failures + 1
        end do
      end do
    end do
    call check(loom_nc_close(nc), 'closing ' // trim(path))
    read_time = MPI_Wtime() - t0

    bytes = 16d0 * dble(product(dims)) * dble(nvars) * dble(nframes)  ! 4 + 4 + 8 bytes per element
    call MPI_Allreduce(MPI_IN_PLACE, write_time, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(MPI_IN_PLACE, read_time, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) write(*, '(a8, a8, i9, f14.1, f14.1, a7)') engine, merge('box   ', 'subset', rearranger == 1), &
      iotasks, bytes / write_time / 1048576d0, bytes / read_time / 1048576d0, merge('ok    ', 'FAILED', failures == 0)
    call check(loom_rearrangement_free(rearr), 'freeing the rearrangement')
  end subroutine

  subroutine check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= LOOM_OK) call fail(what // ': ' // loom_error_message())
  end subroutine

  subroutine fail(message)
    character(len=*), intent(in) :: message
    integer :: e
    write(0, '(a, i0, a, a)') 'pioperformance: rank ', rank, ': ', message
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine

end program pioperformance
